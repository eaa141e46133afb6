"""Static checks of a generated unittest suite against the skeleton's interface.

ClassEval's layout: the suite does not import the class under test (the solution is prepended), it
has one method-level test class per method, named `<ClassName>Test<MethodName>` (compared without
case and underscores, as ClassEval's tools do), and class-level test classes tied to no method.

Interface use is checked on what can be known statically: names bound to `ClassName(...)` (locals,
and `self.x`/`cls.x` set anywhere in a test class or its in-file bases). On those, every attribute
must be a method, field or class attribute of the skeleton, and every call must bind to the
method's signature. Anything a name does not reveal (aliases, return values) is left to the
judges and to the gate.
"""

from __future__ import annotations

import ast
from typing import ClassVar

from pydantic import Field

from classforge_bench.pipeline.construct.interface import ClassInterface
from classforge_bench.pipeline.construct.skeleton_checks import CheckReport, Problem
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.class_analysis import is_stdlib_module

CHECK_ORDER = (
    R.NO_CODE,
    R.TESTS_SYNTAX,
    R.NON_STDLIB_IMPORT,
    R.REDEFINES_CLASS,
    R.NO_TEST_CLASSES,
    R.EMPTY_TEST_CLASS,
    R.UNKNOWN_MEMBER,
    R.PRIVATE_MEMBER,
    R.SIGNATURE_MISMATCH,
    R.MISSING_METHOD_TEST_CLASS,
    R.METHOD_TEST_NOT_CALLING,
    R.NO_CLASS_LEVEL_TEST,
)


def name_key(name: str) -> str:
    """ClassEval's naming convention compared without case and underscores."""
    return name.replace("_", "").lower()


class TestsReport(CheckReport):
    check_order: ClassVar[tuple[str, ...]] = CHECK_ORDER

    test_classes: list[str] = Field(default_factory=list, description="runnable test classes, in file order")
    method_test_classes: dict[str, str] = Field(default_factory=dict, description="method -> its test class")
    class_level_test_classes: list[str] = Field(default_factory=list)
    test_counts: dict[str, int] = Field(default_factory=dict, description="test methods per test class")


def _import_problems(module: ast.Module) -> list[str]:
    bad = []
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            bad += [f"import {a.name}" for a in node.names if not is_stdlib_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                bad.append(f"from {'.' * node.level}{node.module or ''} import ... (relative)")
            elif not is_stdlib_module(node.module or ""):
                bad.append(f"from {node.module} import ...")
    return bad


def _base_names(cls: ast.ClassDef) -> list[str]:
    out = []
    for b in cls.bases:
        if isinstance(b, ast.Name):
            out.append(b.id)
        elif isinstance(b, ast.Attribute):
            out.append(b.attr)
    return out


def _test_case_classes(module: ast.Module) -> dict[str, ast.ClassDef]:
    """Top-level classes that derive from TestCase, directly or through classes of this file."""
    classes = {n.name: n for n in module.body if isinstance(n, ast.ClassDef)}
    memo: dict[str, bool] = {}

    def is_test(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in memo:
            return memo[name]
        if name in seen or name not in classes:
            return False
        result = any(
            b in ("TestCase", "IsolatedAsyncioTestCase") or is_test(b, seen | {name})
            for b in _base_names(classes[name])
        )
        memo[name] = result
        return result

    return {name: cls for name, cls in classes.items() if is_test(name)}


def _lineage(name: str, classes: dict[str, ast.ClassDef]) -> list[ast.ClassDef]:
    """The class and its in-file bases, nearest first."""
    out: list[ast.ClassDef] = []
    todo = [name]
    while todo:
        current = todo.pop(0)
        if current in classes and classes[current] not in out:
            out.append(classes[current])
            todo += _base_names(classes[current])
    return out


def _test_methods(lineage: list[ast.ClassDef]) -> list[str]:
    names: list[str] = []
    for cls in lineage:
        for n in cls.body:
            if (
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name.startswith("test")
                and n.name not in names
            ):
                names.append(n.name)
    return names


def _is_construction(node: ast.expr | None, class_name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == class_name


def _instance_attrs(lineage: list[ast.ClassDef], class_name: str) -> set[str]:
    """Names x with `self.x = ClassName(...)` or `cls.x = ClassName(...)` anywhere in the lineage."""
    attrs: set[str] = set()
    for cls in lineage:
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and _is_construction(node.value, class_name):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"):
                        attrs.add(t.attr)
    return attrs


class _UseChecker(ast.NodeVisitor):
    """Checks attribute use on instances of the class within one test class."""

    def __init__(self, iface: ClassInterface, instance_attrs: set[str], where: str) -> None:
        self.iface = iface
        self.instance_attrs = instance_attrs
        self.where = where
        self.locals: set[str] = set()
        self.problems: list[Problem] = []
        self._calls: dict[int, ast.Call] = {}

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        saved = self.locals
        self.locals = set()
        # Bindings first, so a use before the assignment line (loops) still counts.
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and _is_construction(sub.value, self.iface.class_name):
                self.locals |= {t.id for t in sub.targets if isinstance(t, ast.Name)}
            elif (
                isinstance(sub, ast.withitem)
                and _is_construction(sub.context_expr, self.iface.class_name)
                and isinstance(sub.optional_vars, ast.Name)
            ):
                self.locals.add(sub.optional_vars.id)
        self.generic_visit(node)
        self.locals = saved

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # one handler for both def kinds

    def visit_Call(self, node: ast.Call) -> None:
        self._calls[id(node.func)] = node
        if isinstance(node.func, ast.Name) and node.func.id == self.iface.class_name:
            self._check_call("__init__", node)
        self.generic_visit(node)

    def _is_instance(self, value: ast.expr) -> bool:
        if _is_construction(value, self.iface.class_name):
            return True  # TallyStack().push(...)
        if isinstance(value, ast.Name):
            return value.id in self.locals
        return (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id in ("self", "cls")
            and value.attr in self.instance_attrs
        )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        on_instance = self._is_instance(node.value)
        on_class = isinstance(node.value, ast.Name) and node.value.id == self.iface.class_name
        if on_instance or on_class:
            name = node.attr
            dunder = name.startswith("__") and name.endswith("__")
            if not dunder and not self.iface.member(name):
                reason = R.PRIVATE_MEMBER if name.startswith("_") else R.UNKNOWN_MEMBER
                self.problems.append(
                    Problem(
                        reason=reason,
                        detail=f"{self.where}: uses {name!r}, which {self.iface.class_name} does not define",
                    )
                )
            elif name in self.iface.methods and id(node) in self._calls:
                sig = self.iface.methods[name]
                if on_instance or sig.kind in ("static", "class"):
                    self._check_call(name, self._calls[id(node)])
        self.generic_visit(node)

    def _check_call(self, method: str, call: ast.Call) -> None:
        sig = self.iface.methods.get(method)
        if sig is None or sig.kind == "property":
            return
        n_pos = sum(1 for a in call.args if not isinstance(a, ast.Starred))
        problem = sig.call_problem(
            n_pos,
            [k.arg for k in call.keywords if k.arg is not None],
            any(isinstance(a, ast.Starred) for a in call.args),
            any(k.arg is None for k in call.keywords),
        )
        if problem:
            shown = self.iface.class_name if method == "__init__" else method
            self.problems.append(
                Problem(
                    reason=R.SIGNATURE_MISMATCH, detail=f"{self.where}: {problem.replace('__init__()', shown + '()')}"
                )
            )


def _calls_method(cls: ast.ClassDef, method: str) -> bool:
    if method.startswith("__") and method.endswith("__"):
        return True  # dunders run through operators and builtins (len, in, ==); not visible as names
    return any(isinstance(n, ast.Attribute) and n.attr == method for n in ast.walk(cls))


def check_tests(code: str, iface: ClassInterface) -> TestsReport:
    report = TestsReport()
    problems = report.problems

    def add(reason: str, detail: str) -> None:
        problems.append(Problem(reason=reason, detail=detail))

    try:
        module = parsing.parse(code)
    except SyntaxError as exc:
        add(R.TESTS_SYNTAX, f"does not parse: {exc.msg} (line {exc.lineno})")
        return report
    bad = _import_problems(module)
    if bad:
        add(R.NON_STDLIB_IMPORT, "not standard library: " + ", ".join(bad))
    cname = iface.class_name
    for node in module.body:
        defined = (isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == cname) or (
            isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == cname for t in node.targets)
        )
        if defined:
            add(R.REDEFINES_CLASS, f"the suite defines {cname} itself; it must test the prepended class")

    all_classes = {n.name: n for n in module.body if isinstance(n, ast.ClassDef)}
    test_cases = _test_case_classes(module)
    used_as_base = {b for c in test_cases.values() for b in _base_names(c)}
    for name, cls in test_cases.items():
        lineage = _lineage(name, all_classes)
        tests = _test_methods(lineage)
        if not tests:
            if name not in used_as_base:
                add(R.EMPTY_TEST_CLASS, f"{name} has no test methods")
            continue
        report.test_classes.append(name)
        report.test_counts[name] = len(tests)
        checker = _UseChecker(iface, _instance_attrs(lineage, cname), name)
        checker.visit(cls)
        problems.extend(checker.problems)
    if not report.test_classes:
        add(R.NO_TEST_CLASSES, "no unittest.TestCase class with test methods")
        return report

    by_key = {name_key(tc): tc for tc in report.test_classes}
    missing = []
    for method in iface.target_methods:
        tc = by_key.get(name_key(f"{cname}Test{method}"))
        if tc is None:
            missing.append(f"{method} (expected {cname}Test{_camel(method)})")
            continue
        report.method_test_classes[method] = tc
        if not _calls_method(test_cases[tc], method):
            add(R.METHOD_TEST_NOT_CALLING, f"{tc} never calls {method}")
    if missing:
        add(R.MISSING_METHOD_TEST_CLASS, "no method-level test class for: " + ", ".join(missing))
    tied = set(report.method_test_classes.values())
    report.class_level_test_classes = [tc for tc in report.test_classes if tc not in tied]
    if not report.class_level_test_classes:
        add(R.NO_CLASS_LEVEL_TEST, "no class-level test class (one that combines several methods)")
    return report


def _camel(method: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in method.strip("_").split("_"))
