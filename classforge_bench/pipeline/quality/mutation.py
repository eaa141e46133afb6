"""A task's mutation report: its tests run against every mutant of the reference, in the sandbox.

    run = measure_mutation(solution, tests, test_classes, config=mutation_cfg, sandbox=sandbox_cfg,
                           reference_wall_s=0.2, cache_root=Path("built/x/mutation-cache"))
    run.report.score        # killed / (mutants - equivalent), timeouts counted per the policy

A mutant is killed when the suite does not pass (a test fails or errors, the module no longer
imports, the run crashes or exceeds a resource limit), survived when every test passes, and timed
out when it runs past its limit: `timeout_factor` x the reference's run, at least
`timeout_floor_s`, at most `sandbox.wall_limit_s`. Timed-out mutants are reported apart and by
default count as killed (the tests did not let the change through; mutmut and PIT count them so
too); `timeouts_count_as` can make them survivors or leave them out of the score. A sandbox
failure says nothing about a mutant: it is retried once, then the whole report is unavailable.

Mutants run in batches (`batch_size`, `classforge_bench.pipeline.sandbox.batch`): one sandbox run per batch, one
runner forked per mutant, each with its own limit, folder and signed report. A mutant its batch
gave no trustworthy result for (the batch failed, its report is missing or rejected) runs alone,
one sandbox run each, and the run says how many did (`fell_back`). `batch_size = 0`, or a sandbox
that cannot sweep leftover processes between runners, runs every mutant alone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import MutationConfig, SandboxConfig
from classforge_bench.pipeline.core.errors import InfrastructureError, InputError
from classforge_bench.pipeline.core.task import MutationReport, SurvivingMutant
from classforge_bench.pipeline.quality.cache import CachedOutcome, MutationCache, content_key
from classforge_bench.pipeline.quality.mutants import Mutant, generate_mutants
from classforge_bench.pipeline.sandbox import (
    SandboxBackend,
    SuiteMode,
    SuiteRequest,
    SuiteResult,
    SuiteStatus,
    get_backend,
    pool_size,
    run_suites,
)
from classforge_bench.pipeline.sandbox.batch import can_batch, run_batches
from classforge_bench.pipeline.sandbox.suite import execute

log = logging.getLogger(__name__)

# Bump when a change here or in mutants.py changes what a cached outcome means.
ENGINE_VERSION = 1


class MutationError(InputError):
    """The task cannot be mutation-tested as it is (its reference fails, it does not parse)."""


class MutationUnavailable(InfrastructureError):
    """The sandbox failed; says nothing about the task, which is measured again next run."""


class MutantOutcome(str, Enum):
    KILLED = "killed"
    SURVIVED = "survived"
    TIMED_OUT = "timed_out"


class MutationRun(BaseModel):
    """A report with what it cost (timings stay out of task records)."""

    model_config = ConfigDict(extra="forbid")

    item_id: str = ""
    report: MutationReport
    wall_s: float
    sandbox_runs: int
    cached: int = Field(description="mutant outcomes taken from the cache")
    limit_s: float | None = Field(None, description="a mutant's wall limit (None when nothing ran)")
    batched: int = Field(0, description="mutant outcomes from batched runs (several mutants per sandbox run)")
    fell_back: int = Field(0, description="mutants run alone because their batch gave no trustworthy result")


def mutant_limit(reference_wall_s: float, config: MutationConfig, sandbox: SandboxConfig) -> float:
    return min(sandbox.wall_limit_s, max(config.timeout_floor_s, config.timeout_factor * reference_wall_s))


def _outcome(result: SuiteResult) -> MutantOutcome:
    if result.status is SuiteStatus.PASSED:
        return MutantOutcome.SURVIVED
    if result.status is SuiteStatus.TIMEOUT:
        return MutantOutcome.TIMED_OUT
    return MutantOutcome.KILLED


def _failing(result: SuiteResult, limit: int = 5) -> list[str]:
    found = [f"{c.name}.{m.name}" for c in result.classes for m in c.methods if not m.outcome.ok]
    return found[:limit] or ([result.status.value] if not result.passed else [])


def score_of(killed: int, survived: int, timed_out: int, policy: str) -> float | None:
    detected = killed + (timed_out if policy == "killed" else 0)
    scored = killed + survived + (timed_out if policy != "excluded" else 0)
    return None if scored == 0 else detected / scored


def build_report(
    mutants: list[Mutant], outcomes: dict[str, MutantOutcome], equivalent: int, invalid: int, config: MutationConfig
) -> MutationReport:
    counts = dict.fromkeys(MutantOutcome, 0)
    by_operator: dict[str, list[int]] = {}
    policy = config.timeouts_count_as
    for mutant in mutants:
        outcome = outcomes[mutant.mutant_id]
        counts[outcome] += 1
        if outcome is MutantOutcome.TIMED_OUT and policy == "excluded":
            continue
        tally = by_operator.setdefault(mutant.operator, [0, 0])
        tally[0] += outcome is MutantOutcome.KILLED or (outcome is MutantOutcome.TIMED_OUT and policy == "killed")
        tally[1] += 1
    surviving = [
        SurvivingMutant(**m.model_dump(include={"mutant_id", "method", "operator", "line", "description", "diff"}))
        for m in mutants
        if outcomes[m.mutant_id] is MutantOutcome.SURVIVED
    ]
    killed, survived, timed_out = (
        counts[MutantOutcome.KILLED],
        counts[MutantOutcome.SURVIVED],
        counts[MutantOutcome.TIMED_OUT],
    )
    return MutationReport(
        mutants=len(mutants) + equivalent,
        killed=killed,
        survived=survived,
        timed_out=timed_out,
        equivalent=equivalent,
        invalid=invalid,
        score=score_of(killed, survived, timed_out, policy),
        timeouts_count_as=policy,
        max_mutants_per_method=config.max_mutants_per_method,
        seed=config.seed,
        by_operator=dict(sorted(by_operator.items())),
        surviving=surviving,
    )


def _time_reference(request: SuiteRequest, backend: SandboxBackend, sandbox: SandboxConfig) -> float:
    result = execute(request, backend, sandbox)
    if result.status is SuiteStatus.SANDBOX_ERROR:
        raise MutationUnavailable(f"{request.item_id}: sandbox error timing the reference: {result.detail}")
    if not result.passed:
        raise MutationError(
            f"{request.item_id}: the reference does not pass its tests ({result.status.value}: {result.detail[:200]})"
        )
    return result.wall_s


def _run_missing(
    requests: list[SuiteRequest],
    keys: list[str],
    cache: MutationCache,
    sandbox: SandboxConfig,
    backend: SandboxBackend,
    workers: int | None,
) -> int:
    """Run the requests, caching each outcome as it finishes; returns the sandbox runs made."""
    runs = 0
    for attempt in range(2):
        if not requests:
            break

        def done(i: int, result: SuiteResult, keys: list[str] = keys) -> None:
            if result.status is not SuiteStatus.SANDBOX_ERROR:
                cache.put(
                    CachedOutcome(
                        key=keys[i], outcome=_outcome(result).value, failing=_failing(result), wall_s=result.wall_s
                    )
                )

        results = run_suites(requests, sandbox, backend=backend, workers=workers, on_done=done)
        runs += len(requests)
        failed = [i for i, r in enumerate(results) if r.status is SuiteStatus.SANDBOX_ERROR]
        if failed and attempt == 1:
            first = results[failed[0]]
            raise MutationUnavailable(f"{first.item_id}: sandbox error on {len(failed)} mutant run(s): {first.detail}")
        requests, keys = [requests[i] for i in failed], [keys[i] for i in failed]
    return runs


def _run_batched(
    requests: list[SuiteRequest],
    keys: list[str],
    cache: MutationCache,
    sandbox: SandboxConfig,
    backend: SandboxBackend,
    workers: int,
    size: int,
) -> tuple[list[int], int]:
    """Run the requests in batches, caching every trustworthy outcome; returns (the indexes
    without one, to be run alone, and the sandbox runs made)."""
    results, runs = run_batches(requests, backend, sandbox, workers=workers, size=size)
    left: list[int] = []
    for i, result in enumerate(results):
        if result is None or result.status is SuiteStatus.SANDBOX_ERROR:
            left.append(i)
        else:
            cache.put(
                CachedOutcome(
                    key=keys[i], outcome=_outcome(result).value, failing=_failing(result), wall_s=result.wall_s
                )
            )
    return left, runs


def _run_all(
    requests: list[SuiteRequest],
    keys: list[str],
    cache: MutationCache,
    sandbox: SandboxConfig,
    backend: SandboxBackend,
    config: MutationConfig,
) -> tuple[int, int, int]:
    """Batched where possible, alone otherwise; returns (sandbox runs, mutants decided in a batch,
    mutants that fell back to a run of their own)."""
    workers = config.workers or sandbox.workers
    runs, left = 0, list(range(len(requests)))
    if config.batch_size > 0 and can_batch(backend) and len(requests) > 1:
        left, runs = _run_batched(
            requests, keys, cache, sandbox, backend, workers or pool_size(sandbox), config.batch_size
        )
        if left:
            log.warning(
                "%s: %d of %d mutants got no trustworthy result from their batch; running them alone",
                requests[0].item_id.split(":")[0] or "<unnamed>",
                len(left),
                len(requests),
            )
    batched, fell_back = (len(requests) - len(left), len(left)) if runs else (0, 0)
    runs += _run_missing([requests[i] for i in left], [keys[i] for i in left], cache, sandbox, backend, workers)
    return runs, batched, fell_back


def _stored_outcome(cache: MutationCache, key: str) -> MutantOutcome:
    """A mutant's outcome once every mutant has run: each was cached before, or `_run_all` stored it."""
    record = cache.get(key)
    assert record is not None, f"mutant run {key}: no outcome stored"
    return MutantOutcome(record.outcome)


def measure_mutation(
    solution: str,
    tests: str,
    test_classes: Sequence[str],
    *,
    config: MutationConfig,
    sandbox: SandboxConfig,
    item_id: str = "",
    mode: SuiteMode = "classeval",
    reference_wall_s: float | None = None,
    cache_root: Path | None = None,
    backend: SandboxBackend | None = None,
) -> MutationRun:
    """The mutation report of `tests` on `solution`; see the module docstring. Without
    `reference_wall_s` the reference is run once to time it (and must pass)."""
    t0 = time.perf_counter()
    found = generate_mutants(solution, max_per_method=config.max_mutants_per_method, seed=config.seed, item_id=item_id)
    policy = (config.timeout_factor, config.timeout_floor_s, sandbox.wall_limit_s, sandbox.hash_seed)
    cache = MutationCache(cache_root, content_key(ENGINE_VERSION, solution, tests, list(test_classes), mode))
    keys = {
        m.mutant_id: content_key(ENGINE_VERSION, m.source, tests, list(test_classes), mode, policy)
        for m in found.mutants
    }
    missing = [m for m in found.mutants if cache.get(keys[m.mutant_id]) is None]
    backend = backend or get_backend(sandbox)
    base = SuiteRequest(
        item_id=item_id,
        solution=solution,
        tests=tests,
        test_classes=list(test_classes),
        mode=mode,
        coverage=False,
        hash_seed=sandbox.hash_seed,
    )
    limit, runs, batched, fell_back = None, 0, 0, 0
    if missing:
        if reference_wall_s is None:
            reference_wall_s, runs = _time_reference(base, backend, sandbox), 1
        limit = mutant_limit(reference_wall_s, config, sandbox)
        requests = [
            base.model_copy(update={"item_id": f"{item_id}:{m.mutant_id}", "solution": m.source, "limit_s": limit})
            for m in missing
        ]
        made, batched, fell_back = _run_all(
            requests, [keys[m.mutant_id] for m in missing], cache, sandbox, backend, config
        )
        runs += made
    outcomes = {m.mutant_id: _stored_outcome(cache, keys[m.mutant_id]) for m in found.mutants}
    report = build_report(found.mutants, outcomes, len(found.equivalent), found.invalid, config)
    return MutationRun(
        item_id=item_id,
        report=report,
        wall_s=time.perf_counter() - t0,
        sandbox_runs=runs,
        cached=len(found.mutants) - len(missing),
        limit_s=limit,
        batched=batched,
        fell_back=fell_back,
    )
