"""The one place that answers three questions about a parsed module: where a definition's lines are
(decorators included), which class is meant by a name, and what the methods of a class are.

The harvest, the construction stages, the release statistics, the dataset formats and the evaluator
all slice original text by these spans, so a decorator is never cut off in one place and kept in
another.
"""

from __future__ import annotations

import ast

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def span(node: ast.stmt) -> tuple[int, int]:
    """1-based inclusive line span of a statement, decorators included."""
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno] + [d.lineno for d in decorators])
    end = node.end_lineno or node.lineno
    return start, end


def find_class(module: ast.Module, name: str, *, top_level_only: bool = False) -> ast.ClassDef | None:
    """The first class called `name`, top-level first, since that is where a skeleton puts it; a
    nested one only when no top-level class has the name and `top_level_only` is false."""
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    if top_level_only:
        return None
    for inner in ast.walk(module):
        if isinstance(inner, ast.ClassDef) and inner.name == name:
            return inner
    return None


def class_methods(cls: ast.ClassDef) -> list[FunctionNode]:
    """Every method statement of the class body in declaration order, redefinitions included."""
    return [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def methods_of(cls: ast.ClassDef) -> dict[str, FunctionNode]:
    """Method nodes by name in declaration order (a later redefinition wins, as in Python)."""
    return {fn.name: fn for fn in class_methods(cls)}


def docstring_node(body: list[ast.stmt]) -> ast.Expr | None:
    """The docstring statement opening `body`, if there is one."""
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[0]
    return None
