"""Live progress of an in-process Prefect flow run, for `classforge build` on a terminal.

Prefect logs every task run's end ("Finished in state Completed()") on the `prefect.task_runs`
logger with the task's name attached; this handler turns those records into per-stage counts
(one `build-candidate` run per candidate pair). Off a terminal nothing is added: Prefect's own log
lines are already one plain line per event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TASK_LOGGER = "prefect.task_runs"
FINISHED = "Finished in state "


class TaskRunCounter(logging.Handler):
    """Calls `on_finished(task_name, state_name)` for every task run that finishes."""

    def __init__(self, on_finished: Callable[[str, str], None]) -> None:
        super().__init__(level=logging.INFO)
        self.on_finished = on_finished

    def emit(self, record: logging.LogRecord) -> None:
        name = getattr(record, "task_name", None)
        message = record.getMessage()
        if name and message.startswith(FINISHED):
            state = message.removeprefix(FINISHED).split("(", 1)[0].strip()
            self.on_finished(name, state)


@contextmanager
def task_progress(console) -> Iterator[None]:
    """A Rich progress display with one row per Prefect task (stage), counting finished runs."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    rows: dict[str, int] = {}
    failed: dict[str, int] = {}
    with Progress(SpinnerColumn(), TextColumn("[bold]build[/bold] {task.description}"), TextColumn("{task.completed} done"),
                  TextColumn("{task.fields[failed]}"), TimeElapsedColumn(), console=console, transient=False) as bar:

        def finished(name: str, state: str) -> None:
            if name not in rows:
                rows[name] = bar.add_task(name, total=None, failed="")
            if state not in ("Completed", "Cached"):
                failed[name] = failed.get(name, 0) + 1
            bar.update(rows[name], advance=1, failed=f"({failed[name]} not completed)" if name in failed else "")

        handler = TaskRunCounter(finished)
        logger = logging.getLogger(TASK_LOGGER)
        logger.addHandler(handler)
        try:
            yield
        finally:
            logger.removeHandler(handler)
