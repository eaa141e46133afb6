"""The execution phase: each generated record's execution part filled, then its score, then its file.

A record generation ended (nothing to run) is scored at once. Otherwise its program runs against
its task's tests (`classforge_bench.benchmark.execution`: batched, stored by content, shared by
identical programs), except that a program that does not compile is not run (its outcome is the
compile error) and the reference's own program reuses the reference pre-run's execution. The
record's `Execution` is filled from the stored execution, the record scored
(`classforge_bench.benchmark.scoring.score_sample`) and handed to `sink` (the run folder's sample
files) as soon as it is final, so a killed run resumes from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from classforge_bench.benchmark.execution import (
    ExecutionJob,
    Executor,
    StoredExecution,
    environment_tag,
    job_for,
    to_outcome,
)
from classforge_bench.benchmark.outcomes import SampleOutcome, syntax_error_of
from classforge_bench.benchmark.progress import EvaluationError, PhaseCounter, Progress
from classforge_bench.benchmark.record import Execution, SampleRecord
from classforge_bench.benchmark.results import ReferenceRecord, SampleFiles
from classforge_bench.benchmark.scoring import score_sample
from classforge_bench.benchmark.strategies import reference_program
from classforge_bench.pipeline.core.task import Task

Sink = Callable[[SampleRecord], object]
Key = tuple[str, str, str, int]


def execution_of(
    stored: StoredExecution, task: Task, environment: str, reused: Literal["reference", "store"] | None
) -> Execution:
    """A record's execution part from the run its program had (or shared): the run's limit,
    environment, key and figures, and its outcome (none when the sandbox itself failed)."""
    w = stored.whole
    failed = stored.infrastructure_failure
    return Execution(
        limit_s=stored.limit_s,
        environment=environment,
        key=stored.key,
        suite_status=w.status.value,
        detail=w.detail,
        wall_s=w.wall_s,
        runs_wall_s=round(stored.wall_s, 4),
        cpu_s=w.cpu_s,
        peak_memory_mb=w.peak_memory_mb,
        isolation=w.isolation,
        per_class=stored.apart,
        reruns=len(stored.reruns),
        reused=reused,
        sandbox_failure=stored.runs[-1].detail if failed else None,
        outcome=None if failed else to_outcome(task.task_id, stored, task.test_classes),
    )


def class_floors(executor: Executor, ref: ReferenceRecord) -> dict[str, float]:
    """What each test class may use of a sample's limit at least: the limit's factor times the
    reference's time in it (its tests' own times, from the stored pre-run)."""
    stored = executor.store.get(ref.execution_key)
    if stored is None:
        return {}
    factor = executor.config.scale_factor
    return {c.name: round(factor * sum(m.duration_s or 0.0 for m in c.methods), 2) for c in stored.whole.classes}


def execute_samples(
    records: list[SampleRecord],
    tasks: Mapping[str, Task],
    refs: Mapping[str, ReferenceRecord],
    executor: Executor,
    progress: Progress | None = None,
    sink: Sink | None = None,
) -> list[SampleRecord]:
    """Fill every generated record's execution part (where it has a program) and its score, each
    record handed to `sink` as soon as it is final; returns `records`."""
    environment = environment_tag(executor.config)

    def final(
        record: SampleRecord,
        stored: StoredExecution | None = None,
        reused: Literal["reference", "store"] | None = None,
    ) -> None:
        task = tasks[record.task_id]
        if stored is not None:
            record.fill(execution_of(stored, task, environment, reused))
        score_sample(task, record)
        if sink is not None:
            sink(record)

    jobs: dict[str, ExecutionJob] = {}  # execution key -> its job
    waiting: dict[str, list[SampleRecord]] = {}  # execution key -> the records it runs for
    reusing: list[SampleRecord] = []
    floors: dict[str, dict[str, float]] = {}  # task -> its classes' floors (see class_floors)
    for record in records:
        program = record.program
        if program is None:
            final(record)  # generation ended it: nothing to run
            continue
        task, ref = tasks[record.task_id], refs[record.task_id]
        if not ref.broken and program == reference_program(task):
            # the reference's own program (model `reference`, or a model that answered with it)
            # already ran in the pre-run, with a more generous limit: its execution is this one's
            reusing.append(record)
            continue
        syntax = syntax_error_of(program)
        if syntax is not None:  # found by compiling, which never runs the code
            final(record.fill(Execution(outcome=SampleOutcome(status="compile_error", error=syntax))))
            continue
        if record.task_id not in floors:
            floors[record.task_id] = class_floors(executor, ref)
        job = job_for(task, program, ref.limit_s, floors[record.task_id])
        key = job.key(executor.config)
        jobs.setdefault(key, job)
        waiting.setdefault(key, []).append(record)
    for record in reusing:
        key = refs[record.task_id].execution_key
        stored = executor.store.get(key)
        if stored is None:  # the pre-run result is always stored when the reference passed
            raise EvaluationError(f"task {record.task_id}: the reference pre-run's execution {key} is missing")
        final(record, stored, "reference")
    counter = PhaseCounter("execution", len(jobs), progress)

    def executed(stored: StoredExecution) -> None:
        for record in waiting.get(stored.key, []):
            final(record, stored, "store" if stored.key in executor.reused_keys else None)
        counter.tick()

    executor.run(list(jobs.values()), on_done=executed)
    return records


def execution_phase(
    records: list[SampleRecord],
    broken_records: list[SampleRecord],
    order: list[Key],
    tasks: Mapping[str, Task],
    refs: Mapping[str, ReferenceRecord],
    executor: Executor,
    files: SampleFiles,
    finished: Mapping[Key, SampleRecord],
    progress: Progress | None,
) -> tuple[list[SampleRecord], int]:
    """The run's records in the run's order (this invocation's, and those an earlier run finished),
    each written to its file when final; and how many came from the earlier run. A samples file's
    records of broken tasks are scored as such, never run."""
    execute_samples(records, tasks, refs, executor, progress, sink=files.write)
    for record in broken_records:
        files.write(score_sample(tasks[record.task_id], record, broken=refs[record.task_id]))
    fresh = {r.key: r for r in [*records, *broken_records]}
    by_key = {**finished, **fresh}
    resumed = sum(1 for k in order if k in finished and k not in fresh)
    return [by_key[k] for k in order if k in by_key], resumed
