"""Static checks of a fused skeleton, with libcst (it keeps comments and layout, so the skeleton
is judged exactly as it will be shipped).

A skeleton in ClassEval's format: imports, one class with a docstring, `__init__` with a docstring
and a body that only sets fields, and every other method reduced to its signature and a docstring
with a description, `:param` for each parameter, `:return:` and a `>>>` example.

All checks run and every problem is listed; the verdict's reason is the first failing check in
the order below, so the reason code is stable for a given skeleton.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from libcst.helpers import get_full_name_for_node
from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.class_analysis import is_stdlib_module
from classforge_bench.pipeline.core.funnel import Verdict
from classforge_bench.pipeline.core.source import is_placeholder_body, parse

# The order in which reasons are reported when several checks fail.
CHECK_ORDER = (
    R.NO_CODE,
    R.SKELETON_SYNTAX,
    R.COPIED_SOURCE,
    R.NOT_ONE_CLASS,
    R.COPIED_EXAMPLE,
    R.EXTRA_TOP_LEVEL,
    R.NON_STDLIB_IMPORT,
    R.NO_CLASS_DOCSTRING,
    R.NO_CONSTRUCTOR,
    R.TOO_FEW_METHODS,
    R.PRIVATE_METHOD,
    R.UNDOCUMENTED_METHOD,
    R.BODY_NOT_ELIDED,
    R.CONSTRUCTOR_CALLS_METHOD,
)


class Problem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reason: str
    detail: str


class CheckReport(BaseModel):
    """Problems found by a static check; the drop reason is the earliest in `check_order`."""

    model_config = ConfigDict(extra="forbid")
    check_order: ClassVar[tuple[str, ...]] = ()

    problems: list[Problem] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def verdict(self) -> Verdict:
        if self.ok:
            return Verdict.kept()
        first = min(self.problems, key=lambda p: self.check_order.index(p.reason))
        return Verdict.drop(first.reason, "; ".join(p.detail for p in self.problems))


class SkeletonReport(CheckReport):
    check_order: ClassVar[tuple[str, ...]] = CHECK_ORDER

    class_name: str | None = None
    methods: list[str] = Field(default_factory=list, description="methods other than __init__, in order")

    @property
    def public_methods(self) -> list[str]:
        return [n for n in self.methods if not is_private(n)]

    @property
    def private_methods(self) -> list[str]:
        return [n for n in self.methods if is_private(n)]

    def method_count(self) -> str:
        """'5 public methods (and 2 private: _a, _b)': what every message says about the count."""
        public, private = self.public_methods, self.private_methods
        out = f"{len(public)} public method{'' if len(public) == 1 else 's'}"
        return out + (f" (and {len(private)} private: {', '.join(private)})" if private else "")


def import_problems(module: cst.Module) -> list[str]:
    """Imports anywhere in the module that are relative or outside the standard library."""
    bad: list[str] = []

    class Imports(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for alias in node.names:
                name = get_full_name_for_node(alias.name) or ""
                if not is_stdlib_module(name):
                    bad.append(f"import {name}")

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            name = get_full_name_for_node(node.module) if node.module is not None else ""
            if node.relative:
                bad.append(f"from {'.' * len(node.relative)}{name or ''} import ... (relative)")
            elif not is_stdlib_module(name or ""):
                bad.append(f"from {name} import ...")

    module.visit(Imports())
    return bad


def _is_docstring_line(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import_line(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def is_elided(fn: cst.FunctionDef) -> bool:
    """The body stands for an elided one, by the one definition the harvest and the loaders share
    (the function is rendered on its own and read with `ast`)."""
    node = parse(cst.Module(body=[fn]).code).body[0]
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_placeholder_body(node)


def _param_names(fn: cst.FunctionDef, skip_first: bool) -> list[str]:
    p = fn.params
    names = [x.name.value for x in [*p.posonly_params, *p.params]]
    if skip_first and names:
        names = names[1:]
    if isinstance(p.star_arg, cst.Param):
        names.append(p.star_arg.name.value)
    names += [x.name.value for x in p.kwonly_params]
    if p.star_kwarg is not None:
        names.append(p.star_kwarg.name.value)
    return names


def _is_static(fn: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in fn.decorators)


def _description(doc: str) -> str:
    for line in doc.splitlines():
        s = line.strip()
        if s and not s.startswith((":", ">>>")):
            return s
    return ""


def doc_problems(fn: cst.FunctionDef, is_constructor: bool) -> list[str]:
    """What a method's docstring is missing (empty list when complete)."""
    doc = fn.get_docstring(clean=True)
    if not doc:
        return ["no docstring"]
    missing: list[str] = []
    if not _description(doc):
        missing.append("no description")
    for name in _param_names(fn, skip_first=not _is_static(fn)):
        if not re.search(rf":param\s+(?:[\w\[\], .|]+\s+)?\*{{0,2}}{re.escape(name)}\s*:", doc):
            missing.append(f":param {name}:")
    if not is_constructor:
        if not re.search(r":returns?\b", doc):
            missing.append(":return:")
        if ">>>" not in doc:
            missing.append(">>> example")
    return missing


@dataclass
class _SelfCalls(cst.CSTVisitor):
    """Calls `self.<name>(...)` on one of `methods` inside a constructor."""

    receiver: str
    methods: set[str]
    found: list[str] = field(default_factory=list)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == self.receiver
            and func.attr.value in self.methods
            and func.attr.value not in self.found
        ):
            self.found.append(func.attr.value)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def is_private(name: str) -> bool:
    """A `_name` method; dunders (`__str__`) are public protocol."""
    return name.startswith("_") and not _is_dunder(name)


def _module_problems(module: cst.Module, add) -> list[cst.ClassDef]:
    """One class, nothing else at top level but imports and a docstring, standard-library imports only."""
    classes = [s for s in module.body if isinstance(s, cst.ClassDef)]
    if len(classes) != 1:
        names = ", ".join(c.name.value for c in classes) or "none"
        add(R.NOT_ONE_CLASS, f"expected exactly one top-level class, found {len(classes)} ({names})")
    extra = [s for s in module.body if not (isinstance(s, cst.ClassDef) or _is_import_line(s) or _is_docstring_line(s))]
    if extra:
        snippet = module.code_for_node(extra[0]).strip().splitlines()[0][:80]
        add(R.EXTRA_TOP_LEVEL, f"{len(extra)} top-level statement(s) besides imports and the class, e.g. {snippet!r}")
    bad_imports = import_problems(module)
    if bad_imports:
        add(R.NON_STDLIB_IMPORT, "not standard library: " + ", ".join(bad_imports))
    return classes


def _method_problems(functions: list[cst.FunctionDef], init: cst.FunctionDef | None, add) -> None:
    """Every method documented; every body but the constructor's elided."""
    undocumented = []
    not_elided = []
    for fn in functions:
        missing = doc_problems(fn, is_constructor=fn is init)
        if missing:
            undocumented.append(f"{fn.name.value} ({', '.join(missing)})")
        if fn is init:
            continue
        if not is_elided(fn):
            not_elided.append(fn.name.value)
    if undocumented:
        add(R.UNDOCUMENTED_METHOD, "incomplete docstrings: " + "; ".join(undocumented))
    if not_elided:
        add(R.BODY_NOT_ELIDED, "bodies must be elided (docstring only): " + ", ".join(not_elided))


def constructor_calls(init: cst.FunctionDef, methods: set[str], add) -> None:
    """Report (through `add`) the class's own methods the constructor calls on its receiver: a
    skeleton's methods are elided, so a constructor that calls one cannot run."""
    params = [*init.params.posonly_params, *init.params.params]
    if params:
        visitor = _SelfCalls(params[0].name.value, methods)
        init.visit(visitor)
        if visitor.found:
            add(R.CONSTRUCTOR_CALLS_METHOD, "__init__ calls " + ", ".join(f"self.{m}()" for m in visitor.found))


def check_skeleton(code: str, min_methods: int) -> SkeletonReport:
    """Every structural problem of a composed skeleton; the first one's reason is the verdict's."""
    report = SkeletonReport()

    def add(reason: str, detail: str) -> None:
        report.problems.append(Problem(reason=reason, detail=detail))

    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        add(R.SKELETON_SYNTAX, f"does not parse: {str(exc).splitlines()[0]} (line {exc.raw_line})")
        return report
    classes = _module_problems(module, add)
    if not classes:
        return report
    cls = classes[0]
    report.class_name = cls.name.value
    if not cls.get_docstring():
        add(R.NO_CLASS_DOCSTRING, f"class {cls.name.value} has no docstring")
    body = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
    functions = [s for s in body if isinstance(s, cst.FunctionDef)]
    report.methods = [f.name.value for f in functions if f.name.value != "__init__"]
    init = next((f for f in functions if f.name.value == "__init__"), None)
    if init is None:
        add(R.NO_CONSTRUCTOR, f"class {cls.name.value} has no __init__")
    if len(report.public_methods) < min_methods:
        add(R.TOO_FEW_METHODS, f"{report.method_count()} besides __init__, at least {min_methods} public required")
    private = report.private_methods
    if private:
        add(
            R.PRIVATE_METHOD, "methods must be public (they are generated and tested one by one): " + ", ".join(private)
        )
    _method_problems(functions, init, add)
    if init is not None:
        constructor_calls(init, set(report.methods), add)
    return report
