"""The one way host-side code turns Python source into an AST or a code object.

CPython 3.11 before 3.11.8 keeps the `ast` module's recursion-depth counter in interpreter-wide
state (gh-106905). When a thread switch lands inside the C-to-Python AST conversion of
`ast.parse` (or the Python-to-C conversion of `compile(tree)`), another thread resets the
counter and one of them fails with "SystemError: AST constructor recursion depth mismatch" or a
spurious RecursionError. A switch there happens whenever the conversion's allocations trigger a
garbage collection that runs a finaliser, so any process with threads is exposed: the build's
candidate threads, the evaluator's generation pool, Prefect's task runners.

Every conversion therefore holds one process-wide lock. It costs nothing that matters: the
conversion is bound by the GIL anyway. Compiling a *string* never builds Python AST objects and is
not affected, but goes through here too so that callers need not know which is which.

Our code is not the only parser in the process: the standard library's traceback formatting
parses source lines (3.11's error carets), and Prefect parses flow files. `guard_interpreter()`,
called once at every entry point (the CLI, the flow, the build), makes `ast.parse` itself take
the same lock, so those calls cannot break a candidate's parse either.
"""

from __future__ import annotations

import ast
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType
from typing import Literal

# Re-entrant: a warnings filter or a finaliser running during a conversion may itself parse.
_AST_CONVERSION = threading.RLock()
_stdlib_parse = ast.parse

Mode = Literal["exec", "eval", "single", "func_type"]


@contextmanager
def _guarded(quiet: bool) -> Iterator[None]:
    with _AST_CONVERSION:
        if not quiet:
            yield
            return
        # Invalid escape sequences and the like in other people's code are theirs to fix; the
        # warnings would only bury our own output.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            yield


def parse(source: str | bytes, filename: str = "<unknown>", *, quiet: bool = True) -> ast.Module:
    """`ast.parse` of a module, safe under threads; `quiet` silences the source's
    Syntax/DeprecationWarnings."""
    with _guarded(quiet):
        return _stdlib_parse(source, filename=filename)


def parse_expression(source: str, filename: str = "<unknown>") -> ast.Expression:
    """`ast.parse(..., mode="eval")`, safe under threads."""
    with _guarded(True):
        return _stdlib_parse(source, filename=filename, mode="eval")


def compile_code(
    source: str | bytes | ast.Module | ast.Expression | ast.Interactive,
    filename: str,
    mode: Mode = "exec",
    *,
    quiet: bool = True,
) -> CodeType:
    """`compile(..., dont_inherit=True)`, safe under threads (an AST argument is converted back
    to C under the same lock)."""
    with _guarded(quiet):
        return compile(source, filename, mode, dont_inherit=True)


def literal_eval(source: str | ast.AST) -> object:
    """`ast.literal_eval` of a string (or a node), safe under threads (a string is parsed first)."""
    with _guarded(True):
        return ast.literal_eval(source)


def _locked_parse(source, filename="<unknown>", mode="exec", *, type_comments=False, feature_version=None):
    with _AST_CONVERSION:
        return _stdlib_parse(source, filename, mode, type_comments=type_comments, feature_version=feature_version)


def guard_interpreter() -> None:
    """Make every `ast.parse` of this process take the conversion lock (idempotent).

    Done on every interpreter, not only the affected 3.11 releases: the lock is cheap, and one
    behaviour everywhere is easier to trust than a list of patch releases."""
    if ast.parse is not _locked_parse:
        _locked_parse.__doc__ = _stdlib_parse.__doc__
        ast.parse = _locked_parse
