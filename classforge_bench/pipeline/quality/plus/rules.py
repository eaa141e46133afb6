"""What a plus test must not assert, read from its source: each rule names its drop reason.

A generated regression test records whatever the reference did, including what no description
fixes: object addresses, private state, message wording, set order, the clock, host paths. A
correct solution may differ there, so such a test would fail it falsely. The rules run on the
converted unittest body (they apply to any test in that form) before anything is executed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from classforge_bench.pipeline.core import parsing, reasons

_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+|object at\b")
_CLOCK = {
    "time",
    "time_ns",
    "monotonic",
    "perf_counter",
    "process_time",
    "now",
    "today",
    "utcnow",
    "localtime",
    "gmtime",
    "ctime",
}
_MESSAGE_READS = {"args", "msg", "message", "strerror"}
_TEMP_ROOTS = ("/tmp/", "/tmp")


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _method(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def object_identity(tree: ast.AST) -> str | None:
    for call in _calls(tree):
        if _method(call) == "id":
            return "id()"
        if (
            _method(call) in ("assertIs", "assertIsNot")
            and len(call.args) == 2
            and not (isinstance(call.args[1], ast.Constant) and call.args[1].value in (True, False, None))
        ):
            return f"{_method(call)} between objects"
    found = next((s for s in _strings(tree) if _ADDRESS.search(s)), None)
    return f"a repr with an address: {found[:60]!r}" if found else None


def private_attribute(tree: ast.AST) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            return f".{node.attr}"
        if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__slots__"):
            return f".{node.attr}"
    return None


def exception_message(tree: ast.AST) -> str | None:
    for call in _calls(tree):
        if _method(call) in ("assertRaisesRegex", "assertWarnsRegex"):
            return _method(call)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _MESSAGE_READS and "exception" in ast.unparse(node.value):
            return ast.unparse(node)[:60]
        if (
            isinstance(node, ast.Call)
            and _method(node) in ("str", "repr")
            and node.args
            and "exception" in ast.unparse(node.args[0])
        ):
            return ast.unparse(node)[:60]
    return None


def _unordered_text(text: str) -> bool:
    """A set's or dict's printed form with two or more entries: its order is the hash order."""
    for chunk in re.findall(r"\{[^{}]*\}", text):
        try:
            value = parsing.literal_eval(chunk)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, (set, frozenset)) and len(value) > 1:
            return True
    return bool(re.search(r"\{'[^']*'(, '[^']*')+\}", text)) and "set" in text


def unordered(tree: ast.AST) -> str | None:
    found = next((s for s in _strings(tree) if _unordered_text(s)), None)
    if found:
        return f"the text of a set: {found[:60]!r}"
    for call in _calls(tree):
        if (
            _method(call) in ("list", "tuple", "next")
            and call.args
            and isinstance(call.args[0], (ast.Set, ast.SetComp))
        ):
            return f"the order of a set: {ast.unparse(call)[:60]}"
        if (
            _method(call) in ("list", "tuple")
            and call.args
            and isinstance(call.args[0], ast.Call)
            and _method(call.args[0]) in ("set", "frozenset")
        ):
            return f"the order of a set: {ast.unparse(call)[:60]}"
    return None


def clock(tree: ast.AST) -> str | None:
    for call in _calls(tree):
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _CLOCK
            and isinstance(func.value, (ast.Name, ast.Attribute))
        ):
            owner = ast.unparse(func.value)
            if owner.split(".")[-1] in ("time", "datetime", "date"):
                return ast.unparse(func)
    return None


_FILE_CALLS = {
    "open",
    "Path",
    "PurePath",
    "remove",
    "unlink",
    "rmtree",
    "mkdir",
    "makedirs",
    "rename",
    "copy",
    "copyfile",
    "exists",
    "isfile",
    "isdir",
    "listdir",
    "walk",
    "chdir",
    "rmdir",
    "stat",
    "touch",
}
_PATHISH = re.compile(r"path|file|dir|folder|filename", re.IGNORECASE)


def _absolute(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        if text.startswith(("~", "/")) and len(text) > 1 and not text.startswith(_TEMP_ROOTS):
            return text
    return None


def outside_temp_dir(tree: ast.AST) -> str | None:
    """An absolute or home path given to a file operation or a path-like parameter."""
    for call in _calls(tree):
        candidates = list(call.args) if _method(call) in _FILE_CALLS else []
        candidates += [kw.value for kw in call.keywords if kw.arg and _PATHISH.search(kw.arg)]
        for node in candidates:
            text = _absolute(node)
            if text is not None:
                return f"path {text[:60]!r} in {_method(call)}()"
    return None


RULES: list[tuple[str, Callable[[ast.AST], str | None]]] = [
    (reasons.PLUS_OBJECT_IDENTITY, object_identity),
    (reasons.PLUS_PRIVATE_ATTRIBUTE, private_attribute),
    (reasons.PLUS_EXCEPTION_MESSAGE, exception_message),
    (reasons.PLUS_UNORDERED, unordered),
    (reasons.PLUS_TIME, clock),
    (reasons.PLUS_OUTSIDE_TEMP_DIR, outside_temp_dir),
]


def violation(body: str) -> tuple[str, str] | None:
    """(reason, what) of the first rule the test body breaks, else None."""
    tree = parsing.parse(body)
    for reason, rule in RULES:
        found = rule(tree)
        if found:
            return reason, found
    return None
