"""Methods that may block or wait for a person: left out of the search's copy and of the walks.

A call such as `queue.get()` with nothing queued waits forever; the search then spends its whole
budget in one call and every walk that makes it hangs until the recorder's alarm. Read from the
reference's source (no run): a method whose own body makes one of these calls is named, with the
call, so the funnel can say why (`plus-generator-blocked`).
"""

from __future__ import annotations

import ast

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class

_INTERACTIVE = {"input", "getpass", "breakpoint"}
_NETWORK = {"socket", "create_connection", "urlopen", "accept", "recv", "recvfrom", "connect", "serve_forever"}
_WAITS = {"get", "join", "wait", "acquire"}  # blocking when called with no argument (no timeout)
_WAITERS = ("queue", "thread", "event", "cond", "lock", "sem", "process", "pool", "barrier")
_WAITER_TYPES = {
    "Queue", "LifoQueue", "PriorityQueue", "SimpleQueue", "JoinableQueue", "Event", "Lock", "RLock",
    "Condition", "Semaphore", "BoundedSemaphore", "Barrier", "Thread", "Process",
}  # fmt: skip
_LONGEST_SLEEP_S = 0.5  # a shorter literal sleep only slows the search down


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _nonblocking(call: ast.Call) -> bool:
    """`get(timeout=1)`, `get(block=False)`, `join(2)`, `cache.get(key)`: an argument bounds the wait
    or makes it another method (a dict's get)."""
    return bool(call.args) or any(k.arg in ("timeout", "block", "blocking") for k in call.keywords)


def waiter_fields(cls: ast.ClassDef) -> set[str]:
    """`self.x` the class sets to a queue, event, lock, thread...: `self.jobs = queue.Queue()`."""
    return {
        ast.unparse(t)
        for node in ast.walk(cls)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _name(node.value.func) in _WAITER_TYPES
        for t in node.targets
    }


def blocking_call(call: ast.Call, waiters: set[str] | None = None) -> bool:
    name = _name(call.func)
    if name in _INTERACTIVE or name in _NETWORK:
        return True
    if name == "sleep":
        delay = call.args[0] if call.args else None
        return not (
            isinstance(delay, ast.Constant) and isinstance(delay.value, int | float) and delay.value <= _LONGEST_SLEEP_S
        )
    if name in _WAITS and isinstance(call.func, ast.Attribute):
        receiver = ast.unparse(call.func.value)
        named = receiver in (waiters or set()) or any(w in receiver.lower() for w in _WAITERS)
        return named and not _nonblocking(call)
    return False


def blocking_methods(solution: str, class_name: str) -> dict[str, str]:
    """Method -> the first blocking or interactive call its body makes."""
    try:
        cls = find_class(parsing.parse(solution), class_name)
    except SyntaxError:
        return {}
    if cls is None:
        return {}
    waiters = waiter_fields(cls)
    found: dict[str, str] = {}
    for fn in class_methods(cls):
        call = next((n for n in ast.walk(fn) if isinstance(n, ast.Call) and blocking_call(n, waiters)), None)
        if call is not None:
            found[fn.name] = ast.unparse(call)[:80]
    return found


def without_methods(source: str, class_name: str, names: set[str]) -> str:
    """The module with those methods of the class removed (the search's copy only)."""
    if not names:
        return source
    tree = parsing.parse(source)
    cls = find_class(tree, class_name)
    if cls is None:
        return source
    kept = [n for n in cls.body if not (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in names)]
    cls.body = kept or [ast.Pass()]
    return ast.unparse(tree)
