"""`classforge build` progress: Prefect's task-run records become per-stage counts; on a fake
clock, rows read "k of n" from the flow's announcement on and stop their clocks with their stage;
terminal log handlers print above the rows instead of over them."""

from __future__ import annotations

import io
import logging

import pytest
from rich.console import Console

from classforge_bench.flows.build_benchmark import CANDIDATE_STAGE, STAGE_TOTAL
from classforge_bench.pipeline.cli.progress import TASK_LOGGER, TaskRunCounter, task_progress

pytestmark = pytest.mark.filterwarnings("ignore:Logger 'prefect:UserWarning")  # no flow run: the API handler warns


def _record(task_name: str | None, message: str) -> logging.LogRecord:
    record = logging.LogRecord(TASK_LOGGER, logging.INFO, __file__, 1, message, None, None)
    if task_name is not None:
        record.task_name = task_name  # what Prefect's task-run logger adapter attaches
        record.task_run_name = f"{task_name}-abc"
    return record


def test_counter_sees_finished_task_runs_only() -> None:
    seen: list[tuple[str, str]] = []
    handler = TaskRunCounter(lambda name, state: seen.append((name, state)))
    for rec in (
        _record("build-candidate", "Finished in state Completed()"),
        _record("build-candidate", "Finished in state Failed('Task run encountered an exception')"),
        _record("harvest-repository", "Finished in state Cached(type=COMPLETED)"),
        _record("build-candidate", "Beginning retry 1 of 2"),
        _record(None, "Finished in state Completed()"),
    ):
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
    assert logger.handlers == before  # the handler is removed afterwards
    text = out.getvalue()
    # never announced: each run's end is taken as the stage's end so far ("k of k", clock stopped)
    assert "build-candidate" in text and "3 of 3" in text and "(1 not completed)" in text
    assert "release" in text and "1 of 1" in text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _finished(name: str, state: str = "Completed") -> None:
    logging.getLogger(TASK_LOGGER).info(
        "Finished in state %s()", state, extra={"task_name": name, "task_run_name": f"{name}-1"}
    )


def _announce(name: str, runs: int) -> None:
    logging.getLogger("prefect.flow_runs").info(
        "%s: %d runs", name, runs, extra={STAGE_TOTAL: (name, runs), "flow_run_name": "run"}
    )


def _row(bar, name: str) -> str:
    task = next(t for t in bar.tasks if t.description == name)
    return " ".join(str(col.render(task)) for col in bar.columns[1:])


def test_rows_count_k_of_n_and_their_clocks_stop_when_the_stage_ends():
    clock = Clock()
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    logging.getLogger(TASK_LOGGER).setLevel(logging.INFO)
    logging.getLogger("prefect.flow_runs").setLevel(logging.INFO)
    with task_progress(console, get_time=clock) as bar:
        _finished("search-github")
        _announce("harvest-repository", 3)
        assert "0 of 3" in _row(bar, "harvest-repository")
        assert "1 of 1" in _row(bar, "search-github")
        clock.now += 5
        _finished("harvest-repository")
        _finished("harvest-repository", "AwaitingRetry")  # not a run's end: a retry follows
        _finished("harvest-repository", "Failed")
        assert "2 of 3" in _row(bar, "harvest-repository") and "(1 not completed)" in _row(bar, "harvest-repository")
        clock.now += 5
        _finished("harvest-repository")
        ended = _row(bar, "harvest-repository")
        assert "3 of 3" in ended and "0:00:10" in ended
        clock.now += 3600  # an hour later the finished rows still read the same
        assert _row(bar, "harvest-repository") == ended
        assert "0:00:00" in _row(bar, "search-github")
        assert all(t.finished for t in bar.tasks)


def _stage(label: str, stage: str) -> None:
    logging.getLogger(TASK_LOGGER).info(
        "candidate %s: %s",
        label,
        stage,
        extra={"task_name": "build-candidate", "task_run_name": f"candidate {label}", CANDIDATE_STAGE: (label, stage)},
    )


def test_the_candidate_row_names_each_running_candidates_stage():
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    logging.getLogger(TASK_LOGGER).setLevel(logging.INFO)
    logging.getLogger("prefect.flow_runs").setLevel(logging.INFO)
    with task_progress(console, get_time=Clock()) as bar:
        _announce("build-candidate", 3)
        _stage("Cart+Invoice (cand-1)", "compose")
        _stage("cls-breaker", "license")
        _stage("Cart+Invoice (cand-1)", "judges")
        row = _row(bar, "build-candidate")
        assert "0 of 3" in row and "Cart+Invoice: judges, cls-breaker: license" in row, row
        assert "compose" not in row, "a candidate shows the stage it started last"
        logging.getLogger(TASK_LOGGER).info(
            "Finished in state Completed()",
            extra={"task_name": "build-candidate", "task_run_name": "candidate Cart+Invoice (cand-1)"},
        )
        row = _row(bar, "build-candidate")
        assert "1 of 3" in row and "Cart+Invoice" not in row and "cls-breaker: license" in row, row


def test_terminal_log_handlers_print_above_the_rows_and_hold_back_what_the_rows_count():
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    root = logging.getLogger()
    terminal = logging.StreamHandler(sys_stderr := _FakeTty())
    terminal.setFormatter(logging.Formatter("%(asctime)s | %(message)s"))
    root.addHandler(terminal)
    logging.getLogger(TASK_LOGGER).setLevel(logging.INFO)
    try:
        with task_progress(console):
            logging.getLogger("prefect.flow_runs").warning("the model answered slowly", extra={"flow_run_name": "run"})
            _finished("search-github")
            _announce("build-candidate", 2)
        assert terminal.stream is sys_stderr  # handed back at the end
    finally:
        root.removeHandler(terminal)
    assert sys_stderr.getvalue() == ""  # nothing went around the live display
    shown = screen.getvalue()
    assert "the model answered slowly" in shown
    assert "Finished in state" not in shown and "runs" not in shown.replace("build-candidate", "")


class _FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True
