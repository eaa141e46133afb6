"""`classforge build` progress: Prefect's task-run records become per-stage counts."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from pipeline.cli_progress import TASK_LOGGER, TaskRunCounter, task_progress


def _record(task_name: str | None, message: str) -> logging.LogRecord:
    record = logging.LogRecord(TASK_LOGGER, logging.INFO, __file__, 1, message, None, None)
    if task_name is not None:
        record.task_name = task_name          # what Prefect's task-run logger adapter attaches
        record.task_run_name = f"{task_name}-abc"
    return record


def test_counter_sees_finished_task_runs_only() -> None:
    seen: list[tuple[str, str]] = []
    handler = TaskRunCounter(lambda name, state: seen.append((name, state)))
    for rec in (_record("build-candidate", "Finished in state Completed()"),
                _record("build-candidate", "Finished in state Failed('Task run encountered an exception')"),
                _record("harvest-repository", "Finished in state Cached(type=COMPLETED)"),
                _record("build-candidate", "Beginning retry 1 of 2"),
                _record(None, "Finished in state Completed()")):
        handler.handle(rec)
    assert seen == [("build-candidate", "Completed"), ("build-candidate", "Failed"), ("harvest-repository", "Cached")]


def test_progress_rows_per_stage_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    logger = logging.getLogger(TASK_LOGGER)
    before = list(logger.handlers)
    with task_progress(console):
        for state in ("Completed()", "Completed()", "Failed('x')"):
            logger.handle(_record("build-candidate", f"Finished in state {state}"))
        logger.handle(_record("release", "Finished in state Completed()"))
    assert logger.handlers == before    # the handler is removed afterwards
    text = out.getvalue()
    assert "build-candidate" in text and "3 done" in text and "(1 not completed)" in text
    assert "release" in text and "1 done" in text
