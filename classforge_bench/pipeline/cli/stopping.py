"""Stopping `classforge build` on SIGINT or SIGTERM within seconds, whatever it is doing.

The work (the pre-flight probes, the Prefect flow) runs in a worker thread; the main thread only
waits for it and takes the signals. So no library can swap the handlers (Prefect installs its own
SIGTERM handler only in the main thread, and its graceful shutdown waited minutes for a request in
flight). On the first signal: wait for the paid answer being stored (paid.py), stop Prefect's
embedded server, print one line saying what was kept, and end the process: its sockets close, so
every request in flight is cancelled at the server. A terminal or pipe that is gone (EPIPE, EIO, a
reader that stopped reading) costs at most SAY_WAIT_S: the line is dropped, never waited for. A second signal ends it at once. A kill -9
cannot be handled: the orphan guard (core/orphan_guard.py) ends the server then.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from classforge_bench.pipeline.core.stop_hooks import run_stop_hooks
from classforge_bench.pipeline.llm import paid

T = TypeVar("T")
STORE_WAIT_S = 10.0
SAY_WAIT_S = 2.0  # a live terminal takes a line at once; longer means no one is reading
_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


def stop_prefect_server() -> None:
    """Stop the embedded API server(s) this process started, if Prefect was loaded at all."""
    server = sys.modules.get("prefect.server.api.server")
    if server is None:
        return
    for instance in list(server.SubprocessASGIServer._instances.values()):
        instance.stop()


def kept_line(signame: str) -> str:
    stored, in_flight = paid.summary()
    where = ", ".join(f"{n} in {path}" for path, n in stored.items()) or "none"
    cut = f"; {in_flight} request(s) in flight cut off (asked again next time)" if in_flight else ""
    return (
        f"stopped by {signame}: answers paid for in this run are stored ({where}); "
        f"the next build pays for none of them again{cut}"
    )


class Stoppable:
    """Run work in a worker thread under handlers that stop the process on SIGINT/SIGTERM (the
    previous handlers are given back when the work ends)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._stopping = False

    def run(self, fn: Callable[[], T]) -> T:
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: B036 - re-raised in the main thread, typer.Exit included
                box["error"] = exc

        previous = self._take_signals()
        try:
            worker = threading.Thread(target=work, name="classforge-build", daemon=True)
            worker.start()
            while worker.is_alive():
                worker.join(0.25)  # short waits: the handler runs between them
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _take_signals(self) -> dict[int, Any]:
        previous: dict[int, Any] = {}
        try:
            for sig in _EXIT:
                previous[sig] = signal.signal(sig, self._on_signal)
        except ValueError:
            pass  # not the main thread (an embedding caller): its own handlers stay
        return previous

    def _on_signal(self, signum: int, _frame: object) -> None:
        code = _EXIT.get(signal.Signals(signum), 128 + signum)
        if self._stopping:
            os._exit(code)  # the second signal: now
        self._stopping = True
        try:
            paid.hold(STORE_WAIT_S)
            # os._exit skips every close() and `finally`: answers a cache could only keep in memory are
            # stored now, and the work under way saves its spend and ends its sandbox runs.
            not_stored = paid.store_kept() + run_stop_hooks()
            self._say_or_drop([kept_line(signal.Signals(signum).name), *not_stored])
            stop_prefect_server()
        finally:
            os._exit(code)

    def _say_or_drop(self, lines: list[str]) -> None:
        """Say the stop lines, unless the terminal or pipe is gone: a write that fails, or does not
        finish within SAY_WAIT_S (a reader that no longer reads, another thread stuck writing),
        sends this process's output to /dev/null from then on, so nothing after it (Prefect's
        shutdown, a flush) can raise or block the exit."""
        said = threading.Event()

        def write() -> None:
            try:
                if sys.stdout.isatty():
                    sys.stdout.write("\x1b[?25h")  # the live rows hid the cursor; their exit code is skipped
                sys.stdout.flush()
                for line in lines:
                    self._say(line)
                sys.stderr.flush()
            except (OSError, ValueError):
                return  # EPIPE, EIO (a closed terminal), or a stream already closed
            said.set()

        writer = threading.Thread(target=write, name="classforge-stop-line", daemon=True)
        writer.start()
        writer.join(SAY_WAIT_S)
        if not said.is_set():
            _silence()


def _silence() -> None:
    """Point file descriptors 1 and 2 at /dev/null (a write already blocked on the old ones stays
    blocked in its thread, which the exit ends)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def say_stopped(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def stoppable_command() -> Stoppable:
    """For the running CLI command: start the orphan guard; `run` takes SIGINT/SIGTERM."""
    from classforge_bench.pipeline.core.orphan_guard import start_guard

    if not _guard:  # one guard per process watches all its children
        _guard.append(start_guard())  # ends Prefect's server if this process is killed (-9) before it can
    return Stoppable(say_stopped)


_guard: list[object] = []
