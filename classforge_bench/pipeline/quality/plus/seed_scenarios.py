"""Scenarios made from a task's own (base) tests: EvalPlus's seed-input mutation at class level.

From each test class of the base tests:

* each test as written (`base`);
* up to `mutants` literal mutants of each test (`mutant`: one literal in an input position changed
  type-preservingly, literals.py), distinct bodies only, at most three tries per wanted mutant;
* up to `splices` ordered pairs of tests of the class run on one object (`splice`: the second
  test's constructor call dropped and its variable renamed to the first's), and one mutant of each
  (`splice-mutant`).

Everything is drawn from one `random.Random(rng_key)`, so the same tests and key give the same
scenarios, at any load. The scenarios are test bodies, not yet tests: seeds.py turns them into plus
tests inside the task's contract, benchmarks/classeval_differential.py runs them as they are.
"""

from __future__ import annotations

import ast
import copy
import random

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.quality.plus.literals import input_nodes, mutate_node


class Scenario(BaseModel):
    """One test body to run, with its test class's fixtures (unindented sources)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    test_class: str
    test: str = Field(description="the base test's name; `a+b` for a splice")
    kind: str = Field(description="base, mutant, splice or splice-mutant")
    setup: str | None = None
    teardown: str | None = None
    body: str


def source_of(body: list[ast.stmt]) -> str:
    return "\n".join(ast.unparse(s) for s in body)


def constructor_target(body: list[ast.stmt], class_name: str) -> tuple[int | None, str | None]:
    """(index, target) of the body's first `target = ClassName(...)`."""
    for k, stmt in enumerate(body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id == class_name
        ):
            return k, ast.unparse(stmt.targets[0])
    return None, None


class _Rename(ast.NodeTransformer):
    """A variable (or `self.x`) renamed to another expression."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def _replacement(self, node: ast.expr) -> ast.expr:
        return ast.copy_location(parsing.parse_expression(self.new).body, node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self._replacement(node) if node.id == self.old else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if ast.unparse(node) == self.old:
            return self._replacement(node)
        self.generic_visit(node)
        return node


def _mutants(body: list[ast.stmt], count: int, rng: random.Random) -> list[str]:
    """Up to `count` distinct one-literal mutants of `body` (three tries each)."""
    seen: list[str] = []
    for _ in range(count * 3):
        if len(seen) >= count:
            break
        mutated = copy.deepcopy(body)
        nodes = input_nodes(mutated)
        if not nodes:
            break
        if not mutate_node(rng.choice(nodes), rng):
            continue
        text = source_of(mutated)
        if text not in seen:
            seen.append(text)
    return seen


def _splice(first: ast.FunctionDef, second: ast.FunctionDef, class_name: str) -> list[ast.stmt] | None:
    """`second`'s body after `first`'s on `first`'s object; None when only one of them builds one."""
    ka, va = constructor_target(first.body, class_name)
    kb, vb = constructor_target(second.body, class_name)
    if (ka is None) != (kb is None):
        return None
    tail = copy.deepcopy(second.body)
    if kb is not None and va is not None and vb is not None:
        del tail[kb]
        tail = [_Rename(vb, va).visit(s) for s in tail]
    return copy.deepcopy(first.body) + tail


def _class_scenarios(
    cls: ast.ClassDef, class_name: str, mutants: int, splices: int, rng: random.Random
) -> list[Scenario]:
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    fixtures = {
        "setup": source_of(methods["setUp"].body) if "setUp" in methods else None,
        "teardown": source_of(methods["tearDown"].body) if "tearDown" in methods else None,
    }
    tests = [f for name, f in methods.items() if name.startswith("test")]
    out: list[Scenario] = []
    for fn in tests:
        out.append(Scenario(test_class=cls.name, test=fn.name, kind="base", body=source_of(fn.body), **fixtures))
        for text in _mutants(fn.body, mutants, rng):
            out.append(Scenario(test_class=cls.name, test=fn.name, kind="mutant", body=text, **fixtures))
    pairs = [(a, b) for a in tests for b in tests if a is not b]
    rng.shuffle(pairs)
    for a, b in pairs[:splices]:
        body = _splice(a, b, class_name)
        if body is None:
            continue
        name = f"{a.name}+{b.name}"
        out.append(Scenario(test_class=cls.name, test=name, kind="splice", body=source_of(body), **fixtures))
        mutated = copy.deepcopy(body)
        nodes = input_nodes(mutated)
        if nodes and mutate_node(rng.choice(nodes), rng):
            out.append(
                Scenario(test_class=cls.name, test=name, kind="splice-mutant", body=source_of(mutated), **fixtures)
            )
    return out


def scenarios(base_tests: str, class_name: str, rng_key: str, *, mutants: int, splices: int) -> list[Scenario]:
    """Every scenario of the base tests' test classes (module docstring), in test-class order."""
    rng = random.Random(rng_key)
    try:
        tree = parsing.parse(base_tests)
    except SyntaxError:
        return []
    out: list[Scenario] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out += _class_scenarios(node, class_name, mutants, splices, rng)
    return out
