"""Which imports a piece of code really executes on the Python the benchmark targets, and what a
standard-library star import can provide.

Two kinds of guarded imports never run on the target interpreter and must not count against a
class: the branch a `sys.version_info` comparison rules out (`if sys.version_info >= (3, 11):
from typing import Self` / `else: from typing_extensions import Self`) and the body of
`if TYPE_CHECKING:`. The target is the running interpreter, the same one whose
`sys.stdlib_module_names` decides what counts as standard library.
"""

from __future__ import annotations

import ast
import importlib
import operator
import sys
import warnings
from collections.abc import Iterator
from functools import cache

from classforge_bench.pipeline.core.class_analysis import is_stdlib_module

ImportNode = ast.Import | ast.ImportFrom

_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
# Importing these has visible side effects (a browser, printed text, a demo window).
_NEVER_IMPORT = frozenset(
    {"antigravity", "this", "__hello__", "__phello__", "idlelib", "turtledemo", "tkinter", "turtle"}
)


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _version_info(node: ast.expr) -> tuple[int, ...] | int | None:
    """`sys.version_info`, `sys.version_info[:2]` or `sys.version_info[0]` as the target's value."""
    target = tuple(sys.version_info[:3])
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "version_info"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    ):
        return target
    if isinstance(node, ast.Subscript) and _version_info(node.value) == target:
        s = node.slice
        if isinstance(s, ast.Constant) and isinstance(s.value, int) and 0 <= s.value < 3:
            return target[s.value]
        if (
            isinstance(s, ast.Slice)
            and s.lower is None
            and s.step is None
            and isinstance(s.upper, ast.Constant)
            and isinstance(s.upper.value, int)
        ):
            return target[: s.upper.value]
    return None


def _literal(node: ast.expr) -> tuple[int, ...] | int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts):
        return tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int))
    return None


def version_guard(test: ast.expr) -> bool | None:
    """The value of a `sys.version_info` comparison on the target Python; None if `test` is not one."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE):
        return None
    left, right = _version_info(test.left), _literal(test.comparators[0])
    if left is None or right is None or type(left) is not type(right):
        return None
    return bool(_COMPARE[type(test.ops[0])](left, right))


def _nested_statements(node: ast.AST) -> list[ast.AST]:
    """The statement blocks inside a statement; imports are statements, so expressions are never walked."""
    found: list[ast.AST] = []
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            found.extend(block)
    return found


def taken_branch(stmt: ast.AST) -> list[ast.stmt] | None:
    """The branch of an `if TYPE_CHECKING:` or `sys.version_info` test the target runs; None for
    any other statement."""
    if isinstance(stmt, ast.If):
        taken = False if is_type_checking(stmt.test) else version_guard(stmt.test)
        if taken is not None:
            return stmt.body if taken else stmt.orelse
    return None


def executed_imports(tree: ast.AST, *, every_branch: bool = False) -> Iterator[ImportNode]:
    """Every import statement in `tree` except those in branches that never run on the target
    (all of them with `every_branch`)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and not every_branch:
            taken = False if is_type_checking(node.test) else version_guard(node.test)
            if taken is not None:
                stack.extend(reversed(node.body if taken else node.orelse))
                continue
        stack.extend(reversed(_nested_statements(node)))


@cache
def stdlib_public_names(module: str) -> frozenset[str] | None:
    """The names `from <module> import *` binds, or None when that cannot be known without risk."""
    if not is_stdlib_module(module) or module.split(".")[0] in _NEVER_IMPORT:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated modules (distutils, imp) warn on import
            mod = importlib.import_module(module)
    except ImportError:  # a platform-only module or a missing C library: unknown
        return None
    exported = getattr(mod, "__all__", None)
    if exported is not None:
        return frozenset(str(n) for n in exported)
    return frozenset(n for n in vars(mod) if not n.startswith("_"))
