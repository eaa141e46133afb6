"""The seed-mutation generator: plus tests made from a task's own (base) tests.

EvalPlus's seed-input mutation at class level. The scenarios (seed_scenarios.py: each base test,
its type-preserving literal mutants, call sequences of one test class spliced on one object) are
turned into plus tests inside the task's contract (task_contract.py):

1. each scenario becomes one self-contained body: its test class's setUp, the test, its tearDown,
   with the fixtures' `self.x` made local variables (a plus test runs without the base fixtures);
2. an argument the contract refuses is repaired (repair.py) or the scenario is dropped;
3. every assertion of the base test becomes a probe of what it checked (its first operand: a
   method's return value, a declared field, a value derived from them), with the expected value
   left out; `with self.assertRaises(...)` blocks are unwrapped (the reference decides whether
   they raise);
4. the reference runs the probes in the sandbox twice (two hash seeds, the second with its clock a
   day ahead: observe.py's recorder): each
   probe, each call's return value (None only where the description states it returns nothing,
   returns.py), the declared public fields after each call, and exceptions the description
   documents are asserted with what both runs agree on; a scenario in which the reference raises an
   undocumented exception is dropped (`plus-undocumented-exception`).

What comes out still goes through the suite's screening, validation and mutation-guided selection
(suite.py, selection.py). Deterministic: one seeded RNG per class, caps on mutants and splices.
"""

from __future__ import annotations

import ast
import builtins

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import parsing, reasons
from classforge_bench.pipeline.core.task import PlusDrop
from classforge_bench.pipeline.quality.plus.contract import instances
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.literals import is_assert_call
from classforge_bench.pipeline.quality.plus.observe import (
    CLOCK_SHIFT_S,
    Statement,
    Undocumented,
    agreed,
    program,
    record,
    touched,
)
from classforge_bench.pipeline.quality.plus.observe import with_state_checks as checked
from classforge_bench.pipeline.quality.plus.repair import repaired
from classforge_bench.pipeline.quality.plus.returns import returns_nothing
from classforge_bench.pipeline.quality.plus.seed_scenarios import Scenario, scenarios
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract

# Assertions whose expected value comes first and whose checked value is the container.
_CONTAINER_SECOND = ("assertIn", "assertNotIn")
_RAISES = ("assertRaises", "assertRaisesRegex")
SEEDS_VERSION = 3  # bump when a change of the scenarios, probes or observation changes what a suite holds


Path = tuple[str, str]  # (method, "handles KeyError"): an exception the reference handled inside a call


class SeedTest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test: PlusTest
    test_class: str = Field(description="the base test class the scenario came from")
    paths: list[Path] = Field(default_factory=list, description="exceptions the reference handled in its calls")


class Seeded(BaseModel):
    """What the generator gives the suite."""

    model_config = ConfigDict(extra="forbid")
    tests: list[SeedTest] = Field(default_factory=list)
    scenarios: int = 0
    repaired: int = Field(0, description="scenarios kept after an off-contract argument was replaced")
    dropped: list[PlusDrop] = Field(default_factory=list)
    imports: list[str] = Field(default_factory=list, description="the base tests' own import lines")
    base_paths: list[Path] = Field(
        default_factory=list, description="exceptions the reference handled in the base tests as written"
    )


def module_imports(base_tests: str) -> list[str]:
    """The base test module's import lines (but unittest): its tests' names come from them."""
    try:
        tree = parsing.parse(base_tests)
    except SyntaxError:
        return []
    lines = [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return [line for line in lines if line != "import unittest"]


def _bound(line: str) -> set[str]:
    node = parsing.parse(line).body[0]
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def used_imports(body: str, lines: list[str]) -> list[str]:
    names = {n.id for n in ast.walk(parsing.parse(body)) if isinstance(n, ast.Name)}
    return sorted({line for line in lines if _bound(line) & names})


class _Localise(ast.NodeTransformer):
    """`self.x` -> `x` for the fixtures' attributes."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.names:
            return ast.copy_location(ast.Name(id=self.names[node.attr], ctx=node.ctx), node)
        self.generic_visit(node)
        return node


def inline(scenario: Scenario) -> str | None:
    """setUp + test + tearDown as one body, `self.x` fixtures as local variables; None when it uses
    the test class's own helpers (`self.helper()`, a class attribute)."""
    text = "\n".join(part for part in (scenario.setup, scenario.body, scenario.teardown) if part)
    tree = parsing.parse(text)
    stored = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
        if isinstance(n.value, ast.Name) and n.value.id == "self"
    }
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(dir(builtins))
    names = {a: a if a not in taken else f"{a}_fixture" for a in sorted(stored)}
    tree = _Localise(names).visit(tree)
    leftover = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
        if not n.attr.startswith("assert")
    ]
    return None if leftover else ast.unparse(tree)


def _flattened(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements with `with self.assertRaises(...):` blocks unwrapped."""
    out: list[ast.stmt] = []
    for node in body:
        context = node.items[0].context_expr if isinstance(node, ast.With) and len(node.items) == 1 else None
        if (
            isinstance(node, ast.With)
            and context is not None
            and is_assert_call(context)
            and isinstance(context, ast.Call)
            and isinstance(context.func, ast.Attribute)
            and context.func.attr in _RAISES
        ):
            out += _flattened(node.body)
        else:
            out.append(node)
    return out


def _probe(call: ast.Call) -> ast.expr | None:
    """What an assertion checks: its first operand, or the other one when the first is a literal
    (`assertEqual(3, x.count())`), the container of `assertIn`; None when it checks no value."""
    assert isinstance(call.func, ast.Attribute)
    args = call.args
    if call.func.attr in _RAISES:  # the function form: assertRaises(E, f, *args)
        return ast.Call(func=args[1], args=args[2:], keywords=call.keywords) if len(args) > 1 else None
    if not args:
        return None
    if call.func.attr in _CONTAINER_SECOND and len(args) > 1:
        return args[1]
    if isinstance(args[0], ast.Constant) and len(args) > 1 and not isinstance(args[1], ast.Constant):
        return args[1]
    return None if isinstance(args[0], ast.Constant) else args[0]


class _Parts:
    """A scenario body's statements as the recorder runs them (observe.Statement)."""

    def __init__(self, tree: ast.Module, contract: TaskContract) -> None:
        self.contract = contract
        self.bound = instances(tree, contract.class_name)
        self.stepped: set[str] = set()  # variables assigned a step's value: probing them alone repeats that check

    def _hidden(self, node: ast.AST) -> bool:
        """It reads a field or constant the skeleton does not declare."""
        return any(
            isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id in self.bound | {self.contract.class_name}
            and not self.contract.observable(n.attr)
            for n in ast.walk(node)
        )

    def _of_class(self, node: ast.expr) -> bool:
        return bool(self.contract.called(node)) or bool(touched(ast.Expr(value=node), self.bound, ""))

    def _none_checked(self, expr: ast.expr) -> bool:
        called = self.contract.called(expr)
        docs = self.contract.docs
        return len(called) == 1 and called[0] in docs and returns_nothing(docs[called[0]], called[0])

    def step(self, expr: ast.expr, source: str, node: ast.stmt, target: str | None = None) -> Statement:
        """A recorded step: `expr` evaluated (its value assigned to `target`), then the instances
        `node` builds or calls observed."""
        return Statement(
            source=source,
            step=ast.unparse(expr),
            target=target,
            observe=touched(node, self.bound, self.contract.class_name),
            none_checked=self._none_checked(expr),
        )

    def of(self, node: ast.stmt, base: bool) -> Statement | str | None:
        """The statement's part; None: nothing to keep; a string: why the scenario cannot be used."""
        source = ast.unparse(node)
        if isinstance(node, ast.Expr) and is_assert_call(node.value):
            assert isinstance(node.value, ast.Call)
            probe = _probe(node.value)
            if probe is None or self._hidden(probe) or (isinstance(probe, ast.Name) and probe.id in self.stepped):
                return None
            return self.step(probe, ast.unparse(probe), ast.Expr(value=probe))
        if isinstance(node, ast.Expr):
            return self.step(node.value, source, node)
        single = isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        if single and isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and self._of_class(node.value):
            target = ast.unparse(node.targets[0])
            self.stepped.add(target)
            return self.step(node.value, source, node, target)
        if any(is_assert_call(n) for n in ast.walk(node)) and not base:
            return "an assertion inside a block keeps the base test's expected value"
        return Statement(source=source, observe=touched(node, self.bound, self.contract.class_name))


def probe_parts(body: str, contract: TaskContract, base: bool) -> list[Statement] | str:
    """The body's statements with each assertion turned into a probe (module docstring, step 3);
    a string: why the scenario cannot be used."""
    tree = parsing.parse(body)
    parts = _Parts(tree, contract)
    out: list[Statement] = []
    for node in _flattened(tree.body):
        part = parts.of(node, base)
        if isinstance(part, str):
            return part
        if part is not None:
            out.append(part)
    return out


def _drop(scenario: Scenario, index: int, reason: str, detail: str = "") -> PlusDrop:
    return PlusDrop(origin=origin(scenario, index), reason=reason, detail=detail[:300])


def origin(scenario: Scenario, index: int) -> str:
    return f"seed:{scenario.test_class}.{scenario.test}:{scenario.kind}:{index}"


class _Prepared(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenario: Scenario
    index: int
    body: str
    parts: list[Statement]
    imports: list[str]


def _prepare(made: list[Scenario], contract: TaskContract, import_lines: list[str], out: Seeded) -> list[_Prepared]:
    """Steps 1-3 of the module docstring for every scenario; what cannot be used is dropped into `out`."""
    ready: list[_Prepared] = []
    seen: set[str] = set()
    for i, scenario in enumerate(made):
        body = inline(scenario)
        if body is None:
            out.dropped.append(_drop(scenario, i, reasons.PLUS_SEED_FIXTURE))
            continue
        fixed = repaired(body, contract)
        if fixed is None:
            reason, detail = contract.argument_problem(body) or (reasons.PLUS_OFF_CONTRACT, "")
            out.dropped.append(_drop(scenario, i, reason, detail))
            continue
        body, changed = fixed
        if body in seen:
            out.dropped.append(_drop(scenario, i, reasons.PLUS_DUPLICATE))
            continue
        seen.add(body)
        parts = probe_parts(body, contract, base=scenario.kind == "base")
        if isinstance(parts, str):
            out.dropped.append(_drop(scenario, i, reasons.PLUS_SEED_BLOCK_ASSERTION, parts))
            continue
        out.repaired += changed > 0
        ready.append(
            _Prepared(scenario=scenario, index=i, body=body, parts=parts, imports=used_imports(body, import_lines))
        )
    return ready


def handled_paths(parts: list[Statement], rec: dict, contract: TaskContract) -> list[Path]:
    """(method, "handles E") for each exception the reference handled inside a recorded call."""
    found: list[Path] = []
    for k, part in enumerate(parts):
        called = contract.called(part.step) if part.step else []
        for name in rec["steps"].get(str(k), {}).get("handled", []) if called else []:
            found.append((called[-1], f"handles {name}"))
    return sorted(set(found))


def _observed(ready: _Prepared, first: dict, second: dict, contract: TaskContract, out: Seeded) -> SeedTest | PlusDrop:
    """Step 4 for one scenario: its test, or why there is none (a base scenario's paths go to `out`)."""
    pid = str(ready.index)
    rec = agreed(first.get(pid, {}), second.get(pid, {}))
    if not rec:
        error = first.get(pid, {}).get("error") or second.get(pid, {}).get("error") or "no agreed run"
        return _drop(ready.scenario, ready.index, reasons.PLUS_SEED_UNRECORDED, error)
    paths = handled_paths(ready.parts, rec, contract)
    if ready.scenario.kind == "base":
        out.base_paths = sorted(set(out.base_paths) | set(paths))
    body = checked(ready.parts, rec, contract)
    if isinstance(body, Undocumented):
        return _drop(ready.scenario, ready.index, reasons.PLUS_UNDOCUMENTED_EXCEPTION, body.detail)
    methods = [m for m in contract.called(body) if m != "__init__"]
    test = PlusTest(origin=origin(ready.scenario, ready.index), methods=methods, body=body, imports=ready.imports)
    return SeedTest(test=test, test_class=ready.scenario.test_class, paths=paths)


def seed_tests(
    base_tests: str,
    solution: str,
    contract: TaskContract,
    *,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str = "",
) -> Seeded:
    """The plus tests the base tests seed (module docstring), observed on `solution` (the reference)."""
    made = scenarios(
        base_tests,
        contract.class_name,
        f"{plus.seed}:{contract.class_name}",
        mutants=plus.seed_mutants,
        splices=plus.seed_splices,
    )
    out = Seeded(scenarios=len(made), imports=module_imports(base_tests))
    ready = _prepare(made, contract, list(dict.fromkeys(import_statement + out.imports)), out)
    if not ready:
        return out
    programs = {str(r.index): (program(r.parts), r.imports) for r in ready}
    first = record(programs, solution, sandbox, plus.hash_seed, item_id)
    second = (
        record(programs, solution, sandbox, (plus.hash_seed + 1) % 4294967296, item_id, CLOCK_SHIFT_S) if first else {}
    )
    for r in ready:
        made_test = _observed(r, first, second, contract, out)
        if isinstance(made_test, PlusDrop):
            out.dropped.append(made_test)
        else:
            out.tests.append(made_test)
    return out
