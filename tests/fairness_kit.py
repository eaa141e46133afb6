"""Fairness: a task's promise is that a correct implementation of its skeleton passes.

tests/data/fairness/<corpus>/<task_id>/blind_*.py are implementations written by people who saw only
the task's holistic prompt (never the reference, the tests or the source). Each must pass every base
and every plus test of its task; a failure is a test checking what the skeleton does not state."""

from __future__ import annotations

from pathlib import Path

from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.sandbox import run_suite

FAIRNESS = Path(__file__).resolve().parent / "data" / "fairness"


def blind_implementations(corpus: str, task: Task) -> list[Path]:
    return sorted((FAIRNESS / corpus / task.task_id).glob("blind_*.py"))


def unfair_verdicts(corpus: str, tasks: list[Task]) -> dict[str, str]:
    """`task/impl/tier` -> what failed, for every blind implementation that does not pass its task's
    base or plus tests; every task must have two implementations."""
    failures: dict[str, str] = {}
    for task in tasks:
        impls = blind_implementations(corpus, task)
        assert len(impls) >= 2, f"{task.task_id} ({task.class_name}): {len(impls)} blind implementations"
        suites = [("base", task.test, task.test_classes)]
        if task.plus is not None and task.plus.test:
            suites.append(("plus", task.plus.test, task.plus.test_classes))
        for impl in impls:
            for tier, tests, classes in suites:
                result = run_suite(impl.read_text(encoding="utf-8"), tests, classes, coverage=False, item_id=impl.stem)
                if not result.passed:
                    failing = [c.name for c in result.classes if not c.passed] or [result.status.value]
                    failures[f"{task.task_id}/{impl.stem}/{tier}"] = f"{result.status.value}: {', '.join(failing)}"
    return failures
