"""The thread-safe parse helper against CPython gh-106905 ("AST constructor recursion depth
mismatch"): a thread switch inside an AST conversion (a garbage collection running a finaliser is
enough) lets another thread reset the interpreter-wide depth counter. Reproduced deterministically
with a finaliser that hands over to a second thread, and as random stress like real runs."""

from __future__ import annotations

import ast
import gc
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable

import pytest

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.sandbox.expectations import static_expectations

AFFECTED = sys.version_info[:3] < (3, 11, 8) and sys.version_info[:2] == (3, 11)

NESTED = (
    "x = "
    + "[" * 40
    + "1"
    + "]" * 40
    + "\n"
    + "\n".join(f"def f{i}(a):\n    return [a + {i} for a in range(3) if a]" for i in range(30))
)


class _Finalised:
    """Garbage whose collection runs Python code: the eval loop may then switch threads."""

    def __del__(self) -> None:
        for _ in range(100):
            pass


def stress(convert: Callable[[], object], *, threads: int = 4, seconds: float, stop_at_first: bool) -> list[str]:
    errors: list[str] = []
    deadline = time.monotonic() + seconds

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < deadline and not (stop_at_first and errors):
            for _ in range(rng.randint(1, 200)):
                junk = _Finalised()
                junk.self = junk  # a cycle: only the collector frees it
            try:
                convert()
            except (SystemError, RecursionError) as exc:
                errors.append(repr(exc))

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        sys.setswitchinterval(previous)
    return errors


def interleaved(convert: Callable[[], object], other: Callable[[], object] | None = None) -> dict[str, str]:
    """Run `convert` in this thread and, from a finaliser that fires inside its AST conversion,
    run `other` (default: `convert`) in a second thread to completion: the exact switch that
    breaks 3.11.7. Collection stays off until `convert` reaches its parse (see `armed`)."""
    go, done = threading.Event(), threading.Event()
    failures: dict[str, str] = {}
    main = threading.current_thread()

    class Trigger:
        def __del__(self) -> None:
            if threading.current_thread() is main and not go.is_set():
                go.set()
                done.wait(0.5)  # with the lock the other thread waits for us: time out

    def second() -> None:
        go.wait(5)
        try:
            (other or convert)()
        except (SystemError, RecursionError) as exc:
            failures["other"] = repr(exc)
        done.set()

    thread = threading.Thread(target=second)
    thread.start()
    gc.collect()
    threshold = gc.get_threshold()
    gc.disable()
    trigger = Trigger()
    trigger.cycle = trigger
    del trigger
    gc.set_threshold(10)  # the conversion's first allocations collect the cycle above
    try:
        convert()
    except (SystemError, RecursionError) as exc:
        failures["main"] = repr(exc)
    finally:
        gc.enable()
        gc.set_threshold(*threshold)
        go.set()
        thread.join()
    return failures


def armed(parse: Callable[..., object]) -> Callable[..., object]:
    """`parse` that turns collection on at its last moment, so the finaliser fires inside it."""

    def run(*args: object, **kwargs: object) -> object:
        gc.enable()
        return parse(*args, **kwargs)

    return run


def format_a_traceback() -> str:
    """3.11's traceback carets parse the failing expression: a parse outside our code."""
    record: dict[str, None] = {"a": None}
    try:
        return str(2 * (record["a"]["b"] + 1))  # type: ignore[index]
    except TypeError:
        return traceback.format_exc()


@pytest.mark.skipif(not AFFECTED, reason=f"CPython {sys.version.split()[0]} has the gh-106905 fix")
def test_the_interleaving_breaks_the_unguarded_parser() -> None:
    """Proof, on this interpreter, that the interleaving below is the bug we guard against, and
    that a parse we do not own (a traceback formatted in another thread) triggers it too."""
    raw = armed(parsing._stdlib_parse)
    failures = interleaved(lambda: raw(NESTED))
    assert "AST constructor recursion depth mismatch" in failures.get("main", ""), failures
    failures = interleaved(lambda: raw(NESTED), other=format_a_traceback)
    assert "AST constructor recursion depth mismatch" in failures.get("main", ""), failures


def test_the_interleaving_cannot_break_the_helper(monkeypatch) -> None:
    monkeypatch.setattr(parsing, "_stdlib_parse", armed(parsing._stdlib_parse))
    assert interleaved(lambda: parsing.parse(NESTED)) == {}


def test_the_guard_protects_other_peoples_parses(monkeypatch) -> None:
    monkeypatch.setattr(ast, "parse", parsing._stdlib_parse)
    monkeypatch.setattr(parsing, "_stdlib_parse", armed(parsing._stdlib_parse))
    parsing.guard_interpreter()
    parsing.guard_interpreter()  # idempotent
    assert ast.parse is parsing._locked_parse
    assert 'record["a"]["b"]' in format_a_traceback()
    assert interleaved(lambda: parsing.parse(NESTED), other=format_a_traceback) == {}
    assert interleaved(lambda: ast.parse(NESTED)) == {}
    assert ast.dump(ast.parse("a = 1")) == ast.dump(parsing._stdlib_parse("a = 1"))


def test_parse_is_safe_under_threads() -> None:
    errors = stress(lambda: parsing.parse(NESTED), seconds=4, stop_at_first=False)
    assert errors == []


def test_compiling_an_ast_is_safe_under_threads() -> None:
    tree = ast.parse(NESTED)
    errors = stress(lambda: parsing.compile_code(tree, "<stress>"), seconds=4, stop_at_first=False)
    assert errors == []


def test_host_side_analysis_is_safe_under_threads() -> None:
    """The call that lost candidates (the gate's static expectations) now goes through the helper."""
    tests_src = NESTED + "\nimport unittest\nclass TestX(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    errors = stress(lambda: static_expectations(tests_src, ["TestX"]), seconds=3, stop_at_first=False)
    assert errors == []
    assert static_expectations(tests_src, ["TestX"])["TestX"].methods == ["test_a"]


def test_helpers_behave_like_the_stdlib() -> None:
    assert ast.dump(parsing.parse("a = 1")) == ast.dump(ast.parse("a = 1"))
    assert isinstance(parsing.parse_expression("a + 1"), ast.Expression)
    assert parsing.literal_eval("[1, 'a']") == [1, "a"]
    with pytest.raises(SyntaxError):
        parsing.parse("def (")
    namespace: dict[str, object] = {}
    exec(parsing.compile_code("y = 2", "<t>"), namespace)
    assert namespace["y"] == 2


def test_parse_keeps_other_peoples_warnings_quiet(recwarn: pytest.WarningsRecorder) -> None:
    parsing.parse('s = "\\d"')
    assert not [w for w in recwarn if issubclass(w.category, (SyntaxWarning, DeprecationWarning))]


def test_no_host_module_calls_ast_parse_directly() -> None:
    """Every host-side parse goes through the helper (the harness runs in its own process)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for package in ("classforge_bench",):
        for path in (root / package).rglob("*.py"):
            if path.name == "parsing.py" or path.name == "harness_script.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    fn = node.func
                    if (
                        isinstance(fn, ast.Attribute)
                        and isinstance(fn.value, ast.Name)
                        and fn.value.id == "ast"
                        and fn.attr in ("parse", "literal_eval")
                    ):
                        offenders.append(f"{path.relative_to(root)}:{node.lineno}")
                    if isinstance(fn, ast.Name) and fn.id == "compile":
                        offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []
