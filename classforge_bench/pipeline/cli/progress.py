"""Live progress of an in-process Prefect flow run, for `classforge build` on a terminal.

Prefect logs every task run's end ("Finished in state Completed()") on the `prefect.task_runs`
logger with the task's name attached; this handler turns those records into per-stage counts
(one `build-candidate` run per candidate pair). A flow announces how many runs a mapped stage
will have (`STAGE_TOTAL` in a record's extra, see `classforge_bench.flows.build_benchmark`), so its row reads
"k of n" from the start and stops its clock at n; a stage never announced runs once, and its row
is finished when that run ends. Inside a candidate, the flow logs each stage as it starts
(`CANDIDATE_STAGE`): the `build-candidate` row names the candidates in flight and their stage
("CircuitBreaker: tests"), so a long candidate shows where it is rather than sitting at "0 of 3". Off a terminal nothing is added: Prefect's own log lines are
already one plain line per event.

While the live rows are drawn they own the terminal: every logging handler that writes to the
terminal (Prefect's console handler on the root logger, its server's and its internal stream
handlers) prints through the live display, above the rows, instead of over them; the per-run
"Finished in state" lines the rows count are held back from the terminal. Handlers that write
files (a build's log) are left alone and receive every record.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from classforge_bench.flows.build_benchmark import CANDIDATE_STAGE, STAGE_TOTAL

TASK_LOGGER = "prefect.task_runs"
FINISHED = "Finished in state "
NOT_FINAL = {"AwaitingRetry", "Retrying", "Scheduled", "Pending", "Running"}
_ROUTED_LOGGERS = ("", "prefect", "uvicorn", "fastapi", "httpx")


class TaskRunCounter(logging.Handler):
    """Calls `on_finished(task_name, state_name)` for every task run that finishes,
    `on_total(task_name, runs)` when a flow announces a stage's size, and
    `on_stage(task_name, task_run_name, shown)` when a candidate starts a stage (`shown`, e.g.
    "CircuitBreaker: tests") and when its run ends (`shown` None)."""

    def __init__(
        self,
        on_finished: Callable[[str, str], None],
        on_total: Callable[[str, int], None] | None = None,
        on_stage: Callable[[str, str, str | None], None] | None = None,
    ) -> None:
        super().__init__(level=logging.INFO)
        self.on_finished = on_finished
        self.on_total = on_total
        self.on_stage = on_stage

    def emit(self, record: logging.LogRecord) -> None:
        announced = getattr(record, STAGE_TOTAL, None)
        if announced is not None and self.on_total is not None:
            self.on_total(*announced)
            return
        name = getattr(record, "task_name", None)
        run = str(getattr(record, "task_run_name", ""))
        started = getattr(record, CANDIDATE_STAGE, None)
        if started is not None:
            if self.on_stage is not None and name:
                label, stage = started
                self.on_stage(name, run, f"{label.split(' (', 1)[0]}: {stage}")  # a pair's label ends in its id
            return
        message = record.getMessage()
        if name and message.startswith(FINISHED):
            state = message.removeprefix(FINISHED).split("(", 1)[0].strip()
            if self.on_stage is not None:
                self.on_stage(name, run, None)  # a retry starts its stages again
            if state not in NOT_FINAL:
                self.on_finished(name, state)


class HeldBack(logging.Filter):
    """Keeps the lines the live rows already show (a task run's end, a stage's size, a candidate's
    stage) off the terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, STAGE_TOTAL, None) is not None or getattr(record, CANDIDATE_STAGE, None) is not None:
            return False
        return not (getattr(record, "task_name", None) and record.getMessage().startswith(FINISHED))


class _ThroughLive:
    """Stands in for a Prefect console handler's Rich console: the same highlighted text, with
    its theme's colours resolved, printed through the live display's console."""

    def __init__(self, live_console, own_console) -> None:
        self.live, self.own = live_console, own_console

    def print(self, message, **kwargs) -> None:
        from rich.text import Span, Text

        text = message if isinstance(message, Text) else self.own.render_str(str(message), highlight=True)
        text.spans = [
            Span(s.start, s.end, self.own.get_style(s.style, default="none") if isinstance(s.style, str) else s.style)
            for s in text.spans
        ]
        self.live.print(text, soft_wrap=True)


def _terminal_handlers() -> list[logging.StreamHandler]:
    """Each handler that writes to the terminal once (Prefect shares one among several loggers)."""
    loggers = [logging.getLogger(name) for name in _ROUTED_LOGGERS]
    loggers += [
        logging.getLogger(name)
        for name in list(logging.root.manager.loggerDict)
        if name.startswith(_ROUTED_LOGGERS[1:])
    ]
    found: dict[int, logging.StreamHandler] = {}
    for logger in dict.fromkeys(loggers):
        for handler in getattr(logger, "handlers", []):  # loggerDict also holds placeholders
            stream = getattr(handler, "stream", None)
            if (
                isinstance(handler, logging.StreamHandler)
                and not isinstance(handler, logging.FileHandler)
                and (stream in (sys.__stderr__, sys.__stdout__) or getattr(stream, "isatty", lambda: False)())
            ):
                found[id(handler)] = handler
    return list(found.values())


@contextmanager
def routed_through(console) -> Iterator[None]:
    """Every terminal logging handler prints through `console` (a live display's) until the end."""
    from rich.file_proxy import FileProxy

    undo: list[Callable[[], object]] = []
    held = HeldBack()
    for handler in _terminal_handlers():
        if hasattr(handler, "console"):  # Prefect's console handler prints with its own Rich console
            own = handler.console
            handler.console = _ThroughLive(console, own)
            undo.append(partial(setattr, handler, "console", own))
        else:
            stream = handler.setStream(FileProxy(console, handler.stream))
            undo.append(partial(handler.setStream, stream))
        handler.addFilter(held)
        undo.append(partial(handler.removeFilter, held))
    try:
        yield
    finally:
        for step in reversed(undo):
            step()


def count_column():
    """'k of n' once a stage's size is known, 'k done' before."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class CountColumn(ProgressColumn):
        def render(self, task) -> Text:
            done = int(task.completed)
            return Text(f"{done} of {int(task.total)}" if task.total is not None else f"{done} done")

    return CountColumn()


@contextmanager
def task_progress(console, get_time: Callable[[], float] | None = None) -> Iterator[object]:
    """A Rich progress display with one row per Prefect task (stage), counting finished runs;
    yields the `rich.progress.Progress`."""
    from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
    from rich.table import Column

    rows: dict[str, TaskID] = {}
    done: dict[str, int] = {}
    failed: dict[str, int] = {}
    announced: set[str] = set()
    in_flight: dict[str, dict[str, str]] = {}  # task name -> run name -> "candidate: the stage it started last"
    with Progress(
        SpinnerColumn(finished_text="✓"),
        TextColumn("[bold]build[/bold] {task.description}"),
        count_column(),
        TextColumn("{task.fields[failed]}"),
        TimeElapsedColumn(),
        # one line whatever the terminal's width: a wrapped row would leave stale copies above the rows
        TextColumn("{task.fields[now]}", table_column=Column(no_wrap=True, overflow="ellipsis")),
        console=console,
        transient=False,
        get_time=get_time,
    ) as bar:

        def row(name: str, runs: int | None) -> TaskID:
            if name not in rows:
                rows[name] = bar.add_task(name, total=runs, failed="", now="")
            return rows[name]

        def total(name: str, runs: int) -> None:
            announced.add(name)
            bar.update(row(name, runs), total=runs)

        def stage(name: str, run: str, shown: str | None) -> None:
            running = in_flight.setdefault(name, {})
            if shown is None:
                running.pop(run, None)
            else:
                running[run] = shown
            now = list(running.values())
            more = f" (+{len(now) - 2} more)" if len(now) > 2 else ""
            bar.update(row(name, None), now=", ".join(now[:2]) + more)

        def finished(name: str, state: str) -> None:
            row(name, None)
            done[name] = done.get(name, 0) + 1
            if state not in ("Completed", "Cached"):
                failed[name] = failed.get(name, 0) + 1
            # a stage never announced runs once: its run's end is the stage's end
            bar.update(
                rows[name],
                completed=done[name],
                total=None if name in announced else done[name],
                failed=f"({failed[name]} not completed)" if name in failed else "",
            )

        handler = TaskRunCounter(finished, total, stage)
        loggers = [logging.getLogger(TASK_LOGGER), logging.getLogger("prefect.flow_runs")]
        for logger in loggers:
            logger.addHandler(handler)
        try:
            with routed_through(bar.console):
                yield bar
        finally:
            for logger in loggers:
                logger.removeHandler(handler)
