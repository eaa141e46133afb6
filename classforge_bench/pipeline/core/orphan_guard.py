"""A watcher that ends a process's children when the process is gone, however it went (kill -9).

    python -m classforge_bench.pipeline.core.orphan_guard <pid>

Prefect's embedded API server (uvicorn) is a child of `classforge build` that Prefect stops at
interpreter exit; a SIGKILL of the CLI skips that, and the server ran on (hours, 250 MB). This
guard, started by the CLI in its own session (a terminal's Ctrl-C does not reach it), notes the
CLI's children every POLL_S (pid and start time, so a recycled pid is never hit), and once the CLI
is gone sends each one still alive SIGTERM, then SIGKILL after GRACE_S, and exits. Linux only
(/proc); elsewhere `start_guard` starts nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

POLL_S = 0.5
GRACE_S = 5.0


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22: start time, after the parenthesised name


def children_of(pid: int) -> dict[int, str]:
    """The live children of `pid` with their start times."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended while we looked
        if int(fields[1]) == pid:
            found[int(entry.name)] = fields[19]
    return found


def _end(children: dict[int, str]) -> None:
    alive = {pid: t for pid, t in children.items() if _start_time(pid) == t}
    for pid in alive:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {pid: t for pid, t in alive.items() if _start_time(pid) == t}
    for pid in alive:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # gone already, or not ours to end


def watch(pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the CLI handles Ctrl-C; the guard outlives it
    me = os.getpid()
    children: dict[int, str] = {}
    while os.getppid() == pid:
        children = {c: t for c, t in children_of(pid).items() if c != me}
        time.sleep(POLL_S)
    _end(children)


def start_guard() -> subprocess.Popen[bytes] | None:
    """Watch this process from a separate one (None where /proc is missing)."""
    if not Path(f"/proc/{os.getpid()}/stat").exists():
        return None
    return subprocess.Popen(
        [sys.executable, "-m", "classforge_bench.pipeline.core.orphan_guard", str(os.getpid())],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


if __name__ == "__main__":
    watch(int(sys.argv[1]))
