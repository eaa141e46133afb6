"""While `classforge build` runs its flow: every log record, tracebacks included, goes to a log
file next to the build; the terminal keeps Prefect's one-line-per-event lines but no traceback.

A failure raised inside the flow is then one line on the terminal (the CLI's `error: ...`, naming
the log file) instead of Prefect's traceback followed by that line.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

LOG_NAME = "build.log"
# Prefect's engine loggers: a run or task that fails logs its traceback here, then its final state.
_ENGINE_LOGGERS = (
    "prefect.flow_runs",
    "prefect.task_runs",
    "prefect.engine",
    "prefect.task_engine",
    "prefect.flow_engine",
)


class TerminalOneLine(logging.Filter):
    """On a terminal handler: the engine's failure records are left to the CLI's one line (they are
    in the log file); any other record's traceback is cut to its last line."""

    def filter(self, record: logging.LogRecord) -> bool:
        engine = record.name.startswith(_ENGINE_LOGGERS)
        if engine and (record.levelno >= logging.ERROR or "encountered an exception" in record.getMessage()):
            return False
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc}; traceback in {LOG_NAME})"
            record.args = None
            record.exc_info, record.exc_text = None, None
        return True


class LogFile(logging.FileHandler):
    """The build log. A write that fails with an operating-system error (a full disk) stops it for
    good: the stdlib's handler would print a "--- Logging error ---" block with a traceback for
    every record after it (thousands in a build), and raise again when closed. The failure is
    kept for the CLI's closing line (`write_failure`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8")
        self.failed: OSError | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - the stdlib's name
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            super().handleError(record)  # a record that cannot be formatted: the stdlib's report
            return
        self._stop(exc)

    def flush(self) -> None:
        if self.failed is None:
            try:
                super().flush()
            except OSError as exc:
                self._stop(exc)

    def close(self) -> None:
        try:
            super().close()
        except OSError as exc:  # the last buffered lines could not be written either
            self._stop(exc)

    def _stop(self, exc: OSError) -> None:
        if self.failed is None:
            self.failed = exc
            _write_failures[self.baseFilename] = exc


# Log files that stopped on a write error in this process, by absolute path (`LogFile.baseFilename`).
_write_failures: dict[str, OSError] = {}


def write_failure(log_path: Path) -> OSError | None:
    """The error that stopped the log file at `log_path`, if one did."""
    return _write_failures.get(os.path.abspath(log_path))


def disk_full_line(result: object, log_path: Path) -> str | None:
    """The CLI's one line when the disk under the build's outputs filled (the log file stopped, or
    the flow ended on a write that found no space), else None."""
    stopped = write_failure(log_path)
    cause = result if isinstance(result, OSError) else None
    full = [e for e in (cause, stopped) if e is not None and e.errno in (errno.ENOSPC, errno.EDQUOT)]
    if not full:
        return None
    folder = log_path.parent
    where = f"; the build log {log_path} stops where the disk filled" if stopped is not None else ""
    return (
        f"the disk under {folder} is full ({full[0].strerror or full[0]}): the build stopped{where}. "
        "Kept: every file written before (each written whole), the finished candidates and stages, the "
        "harvest and every paid LLM answer stored; free space and run the same command again: finished "
        "work is reused and no answer is paid twice"
    )


def _writing_loggers() -> list[logging.Logger]:
    """The root logger and every logger that keeps its records from it (Prefect's
    `prefect._internal`, uvicorn's, fastapi's): a traceback logged there bypasses the root's handlers."""
    found = [logging.getLogger()]
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and logger.handlers and not logger.propagate:
            found.append(logger)
    return found


@contextmanager
def flow_log(folder: Path) -> Iterator[Path]:
    """Attach the log file (first, so it formats tracebacks before the terminal filter cuts them)
    and the terminal filter to the handlers of every logger that writes; undo both on the way out."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOG_NAME
    file_handler = LogFile(path)
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    loggers = _writing_loggers()
    # Prefect's console handler (and a plain stream handler a user configured); not a log file, not
    # another tool's capture handler.
    terminal = {
        id(h): h
        for logger in loggers
        for h in logger.handlers
        if isinstance(h, logging.StreamHandler)
        and not isinstance(h, logging.FileHandler)
        and (type(h).__module__.startswith("prefect.") or type(h) is logging.StreamHandler)
    }
    one_line = TerminalOneLine()
    for handler in terminal.values():
        handler.addFilter(one_line)
    for logger in loggers:
        logger.handlers.insert(0, file_handler)
    restore_server = embedded_server_writes_to(path)
    try:
        yield path
    finally:
        restore_server()
        for logger in loggers:
            logger.removeHandler(file_handler)
        file_handler.close()
        for handler in terminal.values():
            handler.removeFilter(one_line)


def embedded_server_writes_to(path: Path) -> Callable[[], None]:
    """Prefect's embedded server is a uvicorn subprocess that inherits this process's stderr, and
    under load it printed SQLite "database is locked" tracebacks (retried, harmless) between the
    build's lines; no logging setting of ours reaches that process. Its stderr goes to the build log
    instead: the spawn of the server (it is started lazily, by the flow's first API call) runs with
    file descriptor 2 pointing at the log. Returns the undo."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():  # the user's own server: nothing is spawned, nothing to import
        return lambda: None
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the process-wide instance Prefect's clients start
    spawn = server._run_uvicorn_command  # Prefect 3.8's spawn; tests/flows pin that it exists

    def spawn_writing_to_log() -> subprocess.Popen:
        sys.stderr.flush()
        saved = os.dup(2)
        # Other threads' stderr lands in the log for the instant of the spawn, not longer.
        try:
            with open(path, "ab") as log:
                os.dup2(log.fileno(), 2)
                return spawn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)

    server._run_uvicorn_command = spawn_writing_to_log  # type: ignore[method-assign]  # this instance only, undone below
    return lambda: server.__dict__.pop("_run_uvicorn_command", None)


def flow_failure(result: object, state_message: str | None, log_path: Path) -> tuple[str, int]:
    """The CLI's one line and exit code for a flow that raised: a project error says what was wrong
    (exit 2 for configuration, 1 otherwise), anything else is named with where its traceback is."""
    from classforge_bench.pipeline.config import ConfigError
    from classforge_bench.pipeline.core.errors import ClassforgeError

    if isinstance(result, ClassforgeError):
        return f"{result} (log: {log_path})", 2 if isinstance(result, ConfigError) else 1
    if isinstance(result, BaseException):
        return f"build failed: {type(result).__name__}: {result} (traceback in {log_path})", 1
    return f"build failed: {state_message} (log: {log_path})", 1
