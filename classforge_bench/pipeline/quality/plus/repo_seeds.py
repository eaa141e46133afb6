"""Seeds from the repository (`RepoSeed`, read by the harvest: `harvest/seeds.py`) as input of the
plus tier, inside the task's contract.

A seed is how the repository's own tests, examples, README or other code build the class and call
it. It serves twice:

* as tests: each seed is a test body (the constructor, then its calls on that instance), screened
  by the contract like any generated test, then replayed on the reference by the state
  observation, which asserts what each call returned and the declared state (`observe.py`), and
  feeds the walks' pool with its constructor and arguments (`walks.py`). The repository's own
  expectations are not copied: the reference is the oracle, as for every generated test;
* a seed passing a UTC timestamp spelled `+00:00` also gives a test with the same instant spelled
  `Z` (`utc_twins`: a type-preserving mutation of the repository's literal);
* as Pynguin's initial population (`generate.py`): the search starts from the repository's call
  sequences and literals (an ISO date string, a key the class looks up) instead of random ones.

A call the repository expects to raise is kept only where the task's description documents that
exception (then the observation asserts it); otherwise the seed ends before it: the object after
an undocumented exception is no state a correct implementation must share. A call of a method the
class does not have ends the seed too (the repository may call another version of it).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.records import SEED_SELF, RepoSeed
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.names import snake
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract
from classforge_bench.pipeline.quality.plus.walks import Parameter, class_node, signatures

SEED_ORIGIN = "seed"  # origin prefix of the tests made from seeds (`seed_3 tests/test_x.py:41`)


def _method(call: str) -> str:
    return call.split("(", 1)[0]


def named(call: str, params: list[Parameter]) -> str:
    """The call with its positional arguments given by name (`union(1, 2)` -> `union(item1=1,
    item2=2)`): the contract's rules read arguments by parameter, so a seed is screened like any
    generated test. Left as written when the arguments do not map one to one onto `params`."""
    try:
        node = parsing.parse_expression(call).body
    except SyntaxError:
        return call
    if (
        not isinstance(node, ast.Call)
        or len(node.args) > len(params)
        or any(isinstance(a, ast.Starred) for a in node.args)
    ):
        return call
    given = {k.arg for k in node.keywords}
    if any(p.name in given for p in params[: len(node.args)]):
        return call
    keywords = [ast.keyword(arg=p.name, value=a) for p, a in zip(params, node.args)]
    return ast.unparse(ast.Call(func=node.func, args=[], keywords=keywords + node.keywords))


def _constructor(seed: RepoSeed, found: dict[str, list[Parameter]]) -> str:
    head = seed.constructor.split("(", 1)[0]
    method = head.split(".", 1)[1] if "." in head else "__init__"
    return named(seed.constructor, found.get(method, []))


def _signatures(solution: str, class_name: str) -> dict[str, list[Parameter]]:
    """Method -> its parameters (a factory classmethod's `cls` left out, as `self` is)."""
    cls = class_node(solution, class_name)
    return signatures(cls) if cls is not None else {}


def seed_calls(
    seed: RepoSeed, contract: TaskContract, found: dict[str, list[Parameter]] | None = None
) -> list[str] | None:
    """The calls of a seed that stay in the contract, in order (cut at the first one that does not),
    arguments by name where `found` (the class's signatures) says them; None when the seed's
    constructor itself is not the class's (a factory it does not have)."""
    if "." in seed.constructor.split("(", 1)[0] and _method(seed.constructor.split(".", 1)[1]) not in contract.methods:
        return None
    calls: list[str] = []
    for c in seed.calls:
        method = _method(c.call)
        if method not in contract.methods:
            break
        if c.raises is not None and contract.exception_for([method], [c.raises]) is None:
            break
        calls.append(named(c.call, (found or {}).get(method, [])))
    return calls


# An ISO 8601 timestamp at UTC written with the offset `+00:00` (a string literal's whole text).
_UTC_OFFSET = re.compile(r"""(['"])(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\+00:00\1""")


def _utc_as_z(text: str) -> str:
    return _UTC_OFFSET.sub(lambda m: f"{m.group(1)}{m.group(2)}Z{m.group(1)}", text)


def utc_twins(seeds: Sequence[RepoSeed]) -> list[RepoSeed]:
    """For each seed passing a UTC timestamp spelled `+00:00`, its twin spelled `Z`: the same
    instant in the other UTC form ISO 8601 gives it (a type-preserving mutation of the
    repository's literal, EvalPlus-style); code that reads ISO dates treats both, or shows it
    does not."""
    twins = []
    for seed in seeds:
        constructor, calls = (
            _utc_as_z(seed.constructor),
            [c.model_copy(update={"call": _utc_as_z(c.call)}) for c in seed.calls],
        )
        if constructor != seed.constructor or calls != seed.calls:
            twins.append(
                seed.model_copy(
                    update={"origin": f"{seed.origin} (UTC as Z)", "constructor": constructor, "calls": calls}
                )
            )
    return twins


def seed_tests(
    seeds: Sequence[RepoSeed], class_name: str, contract: TaskContract, solution: str = ""
) -> list[PlusTest]:
    """One test body per seed, and per twin of it (`utc_twins`): `name = Class(...)`, then
    `name.call(...)` per call kept (arguments by name, from `solution`'s signatures)."""
    name = snake(class_name)
    found = _signatures(solution, class_name) if solution else {}
    tests: list[PlusTest] = []
    for k, seed in enumerate([*seeds, *utc_twins(seeds)], 1):
        calls = seed_calls(seed, contract, found)
        if calls is None:
            continue
        lines = [f"{name} = {_constructor(seed, found)}"] + [f"{name}.{c.replace(SEED_SELF, name)}" for c in calls]
        body = "\n".join(lines) + "\n"
        methods = list(dict.fromkeys(_method(c) for c in calls))
        tests.append(PlusTest(origin=f"{SEED_ORIGIN}_{k} {seed.kind} {seed.origin}", methods=methods, body=body))
    return tests


def pynguin_seed_module(seeds: Sequence[RepoSeed], class_name: str, contract: TaskContract, solution: str = "") -> str:
    """The seeds as a pytest module Pynguin reads as its initial population (`seed_test_N`
    functions on `under_test`); calls expected to raise are left out: a seed starts the search from
    valid states, the search finds the failures."""
    found = _signatures(solution, class_name) if solution else {}
    functions: list[str] = []
    for k, seed in enumerate(seeds, 1):
        calls = seed_calls(seed, contract, found)
        if calls is None:
            continue
        expected = {named(c.call, found.get(_method(c.call), [])) for c in seed.calls if c.raises is not None}
        lines = [f"    {snake(class_name)}_0 = module_0.{_constructor(seed, found)}"]
        for i, call in enumerate(c for c in calls if c not in expected):
            lines.append(f"    var_{i} = {snake(class_name)}_0.{call.replace(SEED_SELF, f'{snake(class_name)}_0')}")
        functions.append(f"def seed_test_{k}():\n" + "\n".join(lines) + "\n")
    if not functions:
        return ""
    return "import under_test as module_0\n\n\n" + "\n\n".join(functions)
