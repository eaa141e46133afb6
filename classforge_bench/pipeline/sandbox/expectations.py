"""What a faithful run must report, known from the test source before any code runs (host side).

The host parses the tests with `ast` and keeps the result to itself: the runner, which shares an
interpreter with the code under test, cannot talk the host out of expecting a test. Only the list
of test-machinery modules to import early travels into the sandbox.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods

# Test machinery the tests may use; imported before the solution so the snapshot covers it.
MACHINERY_MODULES = ("unittest.mock", "mock", "pytest")


class Expectation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    methods: list[str]
    open: bool


def _class_methods(classes: dict, name: str, seen: frozenset) -> tuple[set[str], bool]:
    """Test method names of a class from the AST, following bases defined in the same file.
    `open` is True when a base is unknown here, so inherited tests cannot be listed statically."""
    node = classes[name]
    methods = {f.name for f in class_methods(node) if f.name.startswith("test")}
    is_open = False
    for base in node.bases:
        base_name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        if base_name is not None and base_name in classes and base_name not in seen:
            more, more_open = _class_methods(classes, base_name, seen | {name})
            methods |= more
            is_open = is_open or more_open
        elif base_name not in ("TestCase", "IsolatedAsyncioTestCase", "object"):
            is_open = True
    return methods, is_open


def static_expectations(tests_src: str, listed: list[str]) -> dict[str, Expectation]:
    """What a faithful run must at least report for each listed class, known before any code runs."""
    try:
        tree = parsing.parse(tests_src)
    except (SyntaxError, ValueError):
        return {}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    expected = {}
    for name in listed:
        key = name.strip()
        if key in classes:
            methods, is_open = _class_methods(classes, key, frozenset())
            expected[name] = Expectation(kind="class", methods=sorted(methods), open=is_open)
        elif key in functions and key.startswith("test"):
            expected[name] = Expectation(kind="function", methods=[key], open=False)
    return expected


def machinery_imports(tests_src: str) -> list[str]:
    """Test-machinery modules the tests import; the runner imports them before the solution so
    they are part of the pristine snapshot."""
    try:
        tree = parsing.parse(tests_src)
    except (SyntaxError, ValueError):
        return []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found.update(n for n in names if n in MACHINERY_MODULES)
    return sorted(found)
