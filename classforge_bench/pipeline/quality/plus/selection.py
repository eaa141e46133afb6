"""Mutation-guided selection: keep the plus tests that kill mutants the rest miss, or that show a
method's outcome the rest never assert.

A regression oracle pins everything the reference does that the contract admits; most of it the
base tests already check. Here every candidate (Pynguin's tests, the walks, the seed-mutation
tests; all validated, all inside the contract) runs with the base tests, in the evaluator's form
(combine.py), against every mutant of the reference (the build's engine: mutants.py, the default
MutationConfig's sample). A mutant some base test kills needs no plus test. Of the others, the
candidates are taken greedily: the one killing most mutants still alive (the first such in
candidate order on a tie), until no candidate kills one more. Then, in candidate order, a test is
kept when it asserts an outcome of a method (returns None, True, False, a value of a type, raises
E: outcomes.py), or drives the reference down a path (an exception it handles inside a method,
seeds.py), that neither the base tests nor the tests kept so far do: mutants seldom change the
kind of value a method returns or tell one handled failure from another, wrong solutions often do. The rest are dropped
(`plus-not-selected`); a candidate that fails on the reference when it runs after the base tests
is dropped as `plus-fails-reference`. A mutant that times out or that the sandbox gave no result
for kills nothing here (its tests cannot be told apart).

Deterministic: the mutants are a seeded sample, the verdicts do not depend on time (a mutant's
wall limit only decides timeouts, which select nothing).
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import MutationConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.task import PlusDrop, PlusSuite
from classforge_bench.pipeline.quality.mutants import MutantError, generate_mutants
from classforge_bench.pipeline.quality.mutation import mutant_limit
from classforge_bench.pipeline.quality.plus.combine import combined_suite
from classforge_bench.pipeline.quality.plus.generate import GeneratorUnavailable
from classforge_bench.pipeline.quality.plus.outcomes import asserted_outcomes, base_outcomes
from classforge_bench.pipeline.quality.plus.render import NamedTest, render
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract
from classforge_bench.pipeline.sandbox import SandboxBackend, get_backend, pool_size, run_suites
from classforge_bench.pipeline.sandbox.batch import can_batch, run_batches
from classforge_bench.pipeline.sandbox.results import SuiteRequest, SuiteResult, SuiteStatus, TestOutcome
from classforge_bench.pipeline.sandbox.suite import execute

log = logging.getLogger(__name__)

SELECTION_VERSION = 3  # bump when a change of which tests are kept changes what a suite holds


class Selection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kept: list[NamedTest] = Field(default_factory=list)
    drops: list[PlusDrop] = Field(default_factory=list)
    mutants: int = Field(0, description="mutants run")
    killed_by_base: int = 0
    killed_by_plus: int = Field(0, description="mutants the base tests leave alive that a kept plus test kills")
    unattributed: int = Field(0, description="mutants that timed out or got no result")
    for_outcomes: int = Field(0, description="tests kept for an outcome the others never assert")
    skipped: str = Field("", description="why no selection was made (every candidate kept), when none was")


def combined_ids(named: list[NamedTest]) -> dict[str, str]:
    """test id in the plus suite -> its id once combined with the base tests (combine.py's names)."""
    return {t.test_id: f"{t.test_class}Plus.test_plus_{t.name.removeprefix('test_')}" for t in named}


def _run_all(requests: list[SuiteRequest], sandbox: SandboxConfig, backend: SandboxBackend, batch: int) -> list:
    """Results in order: batched where the sandbox can, alone where a batch gave no trustworthy result."""
    results: list[SuiteResult | None] = [None] * len(requests)
    if batch > 0 and can_batch(backend) and len(requests) > 1:
        results, _ = run_batches(requests, backend, sandbox, workers=sandbox.workers or pool_size(sandbox), size=batch)
    left = [i for i, r in enumerate(results) if r is None or r.status is SuiteStatus.SANDBOX_ERROR]
    for i, result in zip(left, run_suites([requests[i] for i in left], sandbox, backend=backend)):
        results[i] = result
    return results


_OK = {o.value for o in TestOutcome if o.ok}


def failing(result: SuiteResult) -> set[str]:
    """The tests (and test classes without a test reported) of a run that did not pass."""
    return {test for test, outcome in result.outcomes().items() if outcome not in _OK}


def kill_matrix(results: list[SuiteResult], plus_ids: set[str]) -> tuple[list[set[str]], int, int]:
    """(per mutant the plus tests that kill it, empty where a base test does; mutants the base
    tests kill; mutants without a usable result)."""
    killers: list[set[str]] = []
    by_base = unattributed = 0
    for result in results:
        if result.status in (SuiteStatus.TIMEOUT, SuiteStatus.SANDBOX_ERROR):
            unattributed += 1
            killers.append(set())
            continue
        failed = failing(result)
        base_killed = bool(failed - plus_ids) or (not result.passed and not failed)
        by_base += base_killed
        killers.append(set() if base_killed else failed & plus_ids)
    return killers, by_base, unattributed


def greedy(order: list[str], killers: list[set[str]]) -> list[str]:
    """The candidates picked (module docstring), in the order they were picked."""
    alive = [k for k in killers if k]
    picked: list[str] = []
    while alive:
        counts = {c: sum(c in k for k in alive) for c in order if c not in picked}
        best = max(counts.values(), default=0)
        if best == 0:
            break
        choice = next(c for c in order if counts.get(c) == best)
        picked.append(choice)
        alive = [k for k in alive if choice not in k]
    return picked


Paths = tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]
"""(test origin -> the exceptions the reference handled in its calls, those of the base tests): seeds.py's."""


def new_outcomes(
    kept: list[NamedTest], picked: set[str], ids: dict[str, str], base_tests: str, contract: TaskContract, paths: Paths
) -> set[str]:
    """The tests not picked that assert an outcome, or take a path of the reference (an exception
    it handles inside a call), that nothing before them does (module docstring)."""

    def shows(t: NamedTest) -> set[tuple[str, str]]:
        return asserted_outcomes(t.test.body, contract) | set(paths[0].get(t.test.origin, []))

    shown = base_outcomes(base_tests, contract) | set(paths[1])
    for t in kept:
        if ids[t.test_id] in picked:
            shown |= shows(t)
    more: set[str] = set()
    for t in kept:
        found = shows(t) if ids[t.test_id] not in picked else set()
        if found - shown:
            more.add(ids[t.test_id])
            shown |= found
    return more


def _requests(
    named: list[NamedTest],
    solution: str,
    base: tuple[str, list[str]],
    import_statement: list[str],
    item_id: str,
    seed: int,
) -> SuiteRequest:
    code, classes = render(named, import_statement)
    suite = PlusSuite(test=code, test_classes=classes, tests=len(named))
    tests, test_classes, _ = combined_suite(base[0], base[1], suite)
    return SuiteRequest(
        item_id=item_id,
        solution=solution,
        tests=tests,
        test_classes=test_classes,
        mode="classeval",
        coverage=False,
        hash_seed=seed,
    )


def select_by_mutants(
    named: list[NamedTest],
    solution: str,
    base: tuple[str, list[str]],
    import_statement: list[str],
    sandbox: SandboxConfig,
    contract: TaskContract,
    config: MutationConfig | None = None,
    item_id: str = "",
    paths: Paths = ({}, []),
) -> Selection:
    """The candidates that kill mutants the base tests and the others miss; `base`: (the base
    tests' source, their test classes)."""
    config = config or MutationConfig()
    if not named:
        return Selection()
    ids = combined_ids(named)
    request = _requests(named, solution, base, import_statement, item_id, sandbox.hash_seed)
    backend = get_backend(sandbox)
    reference = execute(request, backend, sandbox)
    if reference.status is SuiteStatus.SANDBOX_ERROR:
        raise GeneratorUnavailable(f"the sandbox failed while selecting plus tests: {reference.detail}", item_id)
    outcomes, failed = reference.outcomes(), failing(reference)
    failing_plus = [t for t in named if ids[t.test_id] in failed or ids[t.test_id] not in outcomes]
    base_fails = sorted(failed - set(ids.values()))
    drops = [
        PlusDrop(
            origin=t.test.origin,
            reason=reasons.PLUS_FAILS_REFERENCE,
            detail="run after the base tests: " + str(outcomes.get(ids[t.test_id], "not run")),
        )
        for t in failing_plus
    ]
    kept = [t for t in named if t not in failing_plus]
    if base_fails or not kept:
        why = f"the reference fails its base tests ({', '.join(base_fails[:3])})" if base_fails else "no candidate"
        return Selection(kept=kept, drops=drops, skipped=why)
    return _select(
        kept, drops, solution, base, import_statement, sandbox, (contract, paths), config, item_id, reference.wall_s
    )


def _select(
    kept: list[NamedTest],
    drops: list[PlusDrop],
    solution: str,
    base: tuple[str, list[str]],
    import_statement: list[str],
    sandbox: SandboxConfig,
    described: tuple[TaskContract, Paths],
    config: MutationConfig,
    item_id: str,
    reference_wall_s: float,
) -> Selection:
    try:
        found = generate_mutants(
            solution, max_per_method=config.max_mutants_per_method, seed=config.seed, item_id=item_id
        )
    except MutantError as exc:
        return Selection(kept=kept, drops=drops, skipped=f"no mutants: {exc}")
    ids = combined_ids(kept)
    request = _requests(kept, solution, base, import_statement, item_id, sandbox.hash_seed)
    limit = mutant_limit(reference_wall_s, config, sandbox)
    requests = [
        request.model_copy(update={"item_id": f"{item_id}:{m.mutant_id}", "solution": m.source, "limit_s": limit})
        for m in found.mutants
    ]
    results = _run_all(requests, sandbox, get_backend(sandbox), config.batch_size)
    killers, by_base, unattributed = kill_matrix(results, set(ids.values()))
    by_mutants = set(greedy([ids[t.test_id] for t in kept], killers))
    picked = by_mutants | new_outcomes(kept, by_mutants, ids, base[0], *described)
    chosen = [t for t in kept if ids[t.test_id] in picked]
    drops = drops + [
        PlusDrop(origin=t.test.origin, reason=reasons.PLUS_NOT_SELECTED) for t in kept if ids[t.test_id] not in picked
    ]
    return Selection(
        kept=chosen,
        drops=drops,
        mutants=len(found.mutants),
        killed_by_base=by_base,
        killed_by_plus=sum(bool(k & picked) for k in killers),
        unattributed=unattributed,
        for_outcomes=len(picked - by_mutants),
    )
