"""Plus scores: every scored sample run again against its task's base tests AND its plus suite.

As in EvalPlus, "plus" is stricter, never different: a sample passes a test class under plus when
it passes the base class and the plus tests for the same method (classforge_bench.pipeline.quality.plus.combine),
so the method-level metrics keep their meaning. A task without a plus suite scores the same in both.
"""

from __future__ import annotations

from classforge_bench.benchmark.record import SampleRecord
from classforge_bench.pipeline.core.task import Task


def plus_task(task: Task) -> Task:
    """The task with base + plus tests (itself when it has no plus tests)."""
    # Loaded only for a dataset with plus suites: it pulls in libcst (~1 s), which nothing else of
    # `evaluate` needs.
    from classforge_bench.pipeline.quality.plus.combine import combined_suite

    tests, classes, replaced = combined_suite(task.test, task.test_classes, task.plus)
    if not replaced and classes == task.test_classes:
        return task
    methods = [
        m.model_copy(update={"test_class": replaced.get(m.test_class, m.test_class)}) if m.test_class else m
        for m in task.methods_info
    ]
    return task.model_copy(update={"test": tests, "test_classes": classes, "methods_info": methods})


def has_plus(tasks: list[Task]) -> bool:
    return any(t.plus is not None and t.plus.tests for t in tasks)


def plus_scores(tasks: list[Task], records: list[SampleRecord], run_samples, reference, score) -> tuple[list, list]:
    """(plus scores, plus reference records): the executed samples run again on base + plus tests.

    `run_samples(generated, tasks_by_id, refs)` executes, `reference(tasks)` pre-runs the
    references, `score(tasks, broken, records)` scores; the runner passes its own, so execution,
    caching and scoring stay one implementation."""
    if not has_plus(tasks):
        return [], []
    combined = [plus_task(t) for t in tasks]
    refs = reference(combined)
    runnable = [r for r in records if r.scored and r.program is not None and r.bucket != "compile_error"]
    # each executed sample's generation, run again against other tests: a record of its own
    rerun = run_samples(
        [r.generated_again() for r in runnable], {t.task_id: t for t in combined}, {r.task_id: r for r in refs}
    )
    kept = {id(r) for r in runnable}
    plus_records = rerun + [r for r in records if id(r) not in kept]
    broken = {r.task_id for r in refs if r.broken}
    return score(combined, broken, plus_records), refs
