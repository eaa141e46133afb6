"""Run one prepared command line: a deadline, capped output, a whole-group kill, resource usage.

The process is started in a new session so that one `killpg` reaches everything it spawned that
did not start its own session; the isolation layer (a PID namespace) covers those that did.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from classforge_bench.pipeline.core.stop_hooks import at_stop

_DRAIN_AFTER_EXIT_S = 0.5


@dataclass
class Finished:
    exit_code: int | None
    signal: int | None
    timed_out: bool
    wall_s: float
    cpu_s: float
    peak_rss_kb: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool


@dataclass
class _Capped:
    cap: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    closed: bool = False

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > max(room, 0):
            self.truncated = True


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        # Nothing left in the group (or only processes that changed uid and are not ours to kill).
        pass


def _wait_exit(pid: int, deadline: float, streams: dict[int, _Capped]) -> bool:
    """Pump output until the process exits (True) or the deadline passes (False). It stays unreaped."""
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        for fd in streams:
            poller.register(fd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            for fd, _ in poller.poll(max(1, int(remaining * 1000))):
                if fd == pidfd:
                    return True
                _pump(fd, streams, poller)
    finally:
        os.close(pidfd)


def _pump(fd: int, streams: dict[int, _Capped], poller: select.poll | None = None) -> None:
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return
    if chunk:
        streams[fd].feed(chunk)
        return
    streams[fd].closed = True
    if poller is not None:
        poller.unregister(fd)


def _drain(streams: dict[int, _Capped], until: float) -> None:
    """Read what is left after the process tree is gone; orphans holding a pipe cannot stall us."""
    open_fds = [fd for fd, s in streams.items() if not s.closed]
    while open_fds and time.monotonic() < until:
        ready, _, _ = select.select(open_fds, [], [], max(0.0, until - time.monotonic()))
        if not ready:
            break
        for fd in ready:
            _pump(fd, streams)
        open_fds = [fd for fd, s in streams.items() if not s.closed]


def run_command(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    wall_s: float,
    output_cap: int,
    user: int | None = None,
    after_exit=None,
) -> Finished:
    """Run `argv`, kill its process group at `wall_s`, and report how it ended.

    `after_exit` runs once the main process has ended but before output is drained, so a caller
    can kill escaped processes that would otherwise keep the pipes open.
    """
    start = time.monotonic()
    proc = _spawn(argv, cwd, env, user)
    # A stopped build ends with os._exit: the group started in its own session would outlive it.
    with at_stop(f"killing sandbox process group {proc.pid}", lambda: _kill_group(proc.pid)):
        return _supervise(proc, start, wall_s, output_cap, after_exit)


def _supervise(proc: subprocess.Popen[bytes], start: float, wall_s: float, output_cap: int, after_exit) -> Finished:
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # _spawn opens both pipes
    out_fd, err_fd = stdout.fileno(), stderr.fileno()
    os.set_blocking(out_fd, False)
    os.set_blocking(err_fd, False)
    streams = {out_fd: _Capped(output_cap), err_fd: _Capped(output_cap)}
    try:
        exited = _wait_exit(proc.pid, start + wall_s, streams)
        # The main process is a zombie or still running: its pid cannot be reused yet, so the
        # group kill cannot hit a stranger.
        _kill_group(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if after_exit is not None:
            after_exit()
        _drain(streams, time.monotonic() + _DRAIN_AFTER_EXIT_S)
    finally:
        if proc.returncode is None:
            _kill_group(proc.pid)
            proc.wait()
        stdout.close()
        stderr.close()
    return _finished(proc.returncode, exited, wall, usage, streams[out_fd], streams[err_fd])


def _spawn(argv: Sequence[str], cwd: str, env: Mapping[str, str], user: int | None) -> subprocess.Popen[bytes]:
    """The child in a session of its own (so its whole group can be killed), pipes non-blocking;
    as `user` (its group too, and no supplementary groups) when given."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        user=user,
        group=user,
        extra_groups=[] if user is not None else None,
    )


def _finished(code: int, exited: bool, wall: float, usage, out: _Capped, err: _Capped) -> Finished:
    return Finished(
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        timed_out=not exited,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_kb=usage.ru_maxrss,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
    )
