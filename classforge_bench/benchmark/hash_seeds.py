"""Verdicts that depend on PYTHONHASHSEED: a pass that is the luck of one seed, reported as such.

Every run has one PYTHONHASHSEED (`sandbox.hash_seed`), and a program that iterates over a set of
strings (`list(set(majors))`) passes or fails by the order that seed gives: GPT-4's ClassEval_22
answer passes ClassEval's tests under 2 of 20 seeds, 0 among them. With `evaluate.hash_seeds` = N
(`classforge evaluate --hash-seeds N`), every scored sample that passes at class level under the
run's seed runs again under N other fixed seeds (1, 2, ... without the run's own), through the same
executor and store (a seed's runs are stored under keys of their own). Each is recorded in the
results (`hash_seed_checks`: the seeds, a pass or not under each); the summary and the results page
name the ones whose verdict moves. The scores are left as the run's seed made them, so runs with and
without the check compare; the check says which passes to read with care. The reference's own
program is not checked (its pre-run is shared by every seed's evaluation, and a task whose
reference depends on the seed is a broken task, not a sample's luck).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

from classforge_bench.benchmark.execution import Executor
from classforge_bench.benchmark.metrics import class_level_status
from classforge_bench.benchmark.record import SampleRecord
from classforge_bench.benchmark.results import HashSeedCheck
from classforge_bench.benchmark.strategies import reference_program
from classforge_bench.pipeline.core.task import Task

RunSamples = Callable[[list[SampleRecord], Executor], list[SampleRecord]]
"""run_samples(records, executor): the runner's execution of generated, not yet run records with that executor."""


def other_seeds(run_seed: int, n: int) -> list[int]:
    """The first `n` seeds 1, 2, ... that are not the run's own."""
    return [s for s, _ in zip((s for s in count(1) if s != run_seed), range(n))]


def passes(record: SampleRecord, task: Task) -> bool:
    """The sample passes every test class of its task (class-level success)."""
    outcome = record.outcome
    return outcome is not None and class_level_status(task, outcome) == "success"


def hash_seed_checks(
    records: list[SampleRecord], tasks: dict[str, Task], executor: Executor, n: int, run_samples: RunSamples
) -> list[HashSeedCheck]:
    """Each class-level pass (but the reference's own program) under `n` other seeds (module docstring)."""
    if n <= 0:
        return []
    checked = [r for r in records if passes(r, tasks[r.task_id]) and r.program != reference_program(tasks[r.task_id])]
    if not checked:
        return []
    seeds = other_seeds(executor.config.hash_seed, n)
    verdicts: list[list[bool]] = [[True] for _ in checked]
    for seed in seeds:
        other = executor.with_hash_seed(seed)
        again = run_samples([r.generated_again() for r in checked], other)
        executor.sandbox_runs += other.sandbox_runs
        for verdict, record in zip(verdicts, again, strict=True):
            verdict.append(passes(record, tasks[record.task_id]))
    return [
        HashSeedCheck(
            model=r.model,
            strategy=r.strategy,
            task_id=r.task_id,
            sample_index=r.sample_index,
            seeds=[executor.config.hash_seed, *seeds],
            passes=verdict,
        )
        for r, verdict in zip(checked, verdicts, strict=True)
    ]
