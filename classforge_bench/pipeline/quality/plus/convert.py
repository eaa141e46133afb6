"""Pynguin's pytest functions into ClassEval-form unittest methods, readable and self-contained.

Each generated `def test_N():` becomes one unittest method: the module alias `under_test_.` goes
(ClassEval's tests run in the solution's namespace), a variable bound to a literal, a builtin or
the class itself is written inline where it is used once (or is immutable), a result checked
right after the call is checked in place, the remaining `var_N` get names (`chat`, `result`), and
`assert` becomes `self.assertEqual`/`assertTrue`/`assertRaises`... A test that cannot be
expressed so, checks nothing, or needs a module the task does not import is dropped, with its
reason. Grouping (method- or class-level) is decided by the methods of the class it calls.
"""

from __future__ import annotations

import ast
import re

import libcst as cst
from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core import parsing, reasons
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class
from classforge_bench.pipeline.core.task import PlusDrop
from classforge_bench.pipeline.quality.plus.asserts import AssertRewriter, ConversionFailed, transformed
from classforge_bench.pipeline.quality.plus.names import rename_variables

_ALIAS = "under_test_"
_MODULE = "under_test"


class PlusTest(BaseModel):
    """One converted test: a unittest method's source, and what it exercises."""

    model_config = ConfigDict(extra="forbid")
    origin: str = Field(description="the generated function it came from, e.g. test_3")
    methods: list[str] = Field(description="methods of the class it calls, in call order, constructor excluded")
    body: str = Field(description="the method's body statements, unindented")
    imports: list[str] = Field(default_factory=list, description="the task's import lines it uses")


class Conversion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tests: list[PlusTest] = Field(default_factory=list)
    dropped: list[PlusDrop] = Field(default_factory=list)


def task_modules(import_statement: list[str]) -> dict[str, tuple[str, str]]:
    """Module the task's `import` lines bind -> (the name it is bound to, the line): `import numpy
    as np` -> {"numpy": ("np", "import numpy as np")}."""
    bound: dict[str, tuple[str, str]] = {}
    for line in import_statement:
        try:
            tree = parsing.parse(line.strip())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    bound[alias.name] = (alias.asname or alias.name, line.strip())
    return bound


def _module_aliases(module: cst.Module) -> dict[str, str]:
    """`import datetime as module_0` -> {'module_0': 'datetime'} (Pynguin's aliases of other modules)."""
    aliases: dict[str, str] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Import):
            for alias in stmt.body[0].names:
                name = cst.Module([]).code_for_node(alias.name)
                asname = alias.asname.name if alias.asname else None  # an import's `as` names a Name
                local = asname.value if isinstance(asname, cst.Name) else name.split(".")[0]
                aliases[local] = name
    return aliases


class _Dealias(cst.CSTTransformer):
    """`under_test_.X` -> `X`; `module_0.f` -> `np.f` (the task's own name for numpy); records the
    task's import lines used, and the modules the task does not import."""

    def __init__(self, aliases: dict[str, str], bound: dict[str, tuple[str, str]]) -> None:
        self.aliases, self.bound = aliases, bound
        self.used: set[str] = set()
        self.foreign: set[str] = set()

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(updated.value, cst.Name):
            head = updated.value.value
            if head == _ALIAS:
                return updated.attr
            if head in self.aliases and head not in ("sys", "pytest", _MODULE):
                real = self.aliases[head]
                if real not in self.bound:
                    self.foreign.add(real)
                    return updated
                name, line = self.bound[real]
                self.used.add(line)
                return updated.with_changes(value=cst.parse_expression(name))
        return updated


def _class_methods(solution: str, class_name: str) -> set[str]:
    cls = find_class(parsing.parse(solution), class_name)
    return {fn.name for fn in class_methods(cls)} if cls is not None else set()


def _called_methods(body: str, methods: set[str]) -> list[str]:
    found = re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)\(", body)
    return list(dict.fromkeys(m for m in found if m in methods and m != "__init__"))


def _is_xfail(fn: cst.FunctionDef) -> bool:
    return any("xfail" in cst.Module([]).code_for_node(d.decorator) for d in fn.decorators)


def convert_function(
    fn: cst.FunctionDef, aliases: dict[str, str], bound: dict[str, tuple[str, str]], methods: set[str], class_name: str
) -> PlusTest | PlusDrop:
    """One generated test function -> a unittest body, or why it cannot be one."""
    origin = fn.name.value
    if _is_xfail(fn):
        # Pynguin marks a test whose last call raised unexpectedly: it checks a crash whose type it
        # does not state, almost always on an argument the task never promises to accept.
        return PlusDrop(origin=origin, reason=reasons.PLUS_EXPECTS_CRASH)
    dealias = _Dealias(aliases, bound)
    fn = transformed(fn, dealias)
    foreign = sorted(dealias.foreign)
    if foreign:
        return PlusDrop(origin=origin, reason=reasons.PLUS_FOREIGN_IMPORT, detail=", ".join(foreign))
    try:
        rewriter = AssertRewriter(class_name, bound)
        statements = rewriter.rewrite(list(fn.body.body))
    except ConversionFailed as exc:
        return PlusDrop(origin=origin, reason=reasons.PLUS_UNCONVERTIBLE, detail=str(exc))
    body = rename_variables(statements, class_name)
    # A test with no assertion is kept here: the state observation may give it some; what still
    # asserts nothing afterwards is dropped then (`unasserted`, plus-no-assertion).
    return PlusTest(
        origin=origin, methods=_called_methods(body, methods), body=body, imports=sorted(dealias.used | rewriter.used)
    )


def unasserted(tests: list[PlusTest]) -> tuple[list[PlusTest], list[PlusDrop]]:
    """The tests that assert something, and a plus-no-assertion drop for each of the others."""
    kept = [t for t in tests if "self.assert" in t.body]
    dropped = [
        PlusDrop(origin=t.origin, reason=reasons.PLUS_NO_ASSERTION) for t in tests if "self.assert" not in t.body
    ]
    return kept, dropped


def convert(generated: str, *, solution: str, class_name: str, import_statement: list[str]) -> Conversion:
    """Every test function of a Pynguin module, converted or dropped with a registered reason."""
    module = cst.parse_module(generated)
    aliases = _module_aliases(module)
    bound = task_modules(import_statement)
    methods = _class_methods(solution, class_name)
    out = Conversion()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value.startswith("test"):
            result = convert_function(stmt, aliases, bound, methods, class_name)
            if isinstance(result, PlusDrop):
                out.dropped.append(result)
            else:
                out.tests.append(result)
    return out
