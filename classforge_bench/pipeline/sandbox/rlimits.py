"""Resource limits for the sandboxed process tree, applied by a tiny exec wrapper.

The limits are set by the wrapper on itself just before it execs the isolation layer, so they are
in force before any sandboxed code runs (setting them from the parent after the start would race a
fork bomb) and no `preexec_fn` is needed (unsafe in our threaded worker pool).

RLIMIT_NPROC counts every process and thread of the *real uid*, system-wide. Run as root, the
backend gives each run its own otherwise-unused uid, so the count starts at zero and a fork bomb
hits the limit inside its own sandbox. Run as an ordinary user, the runs share that user's count,
so the limit is the user's current task count plus the allowance (approximate, documented).
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import threading
from pathlib import Path

from classforge_bench.pipeline.sandbox.base import RunLimits

# Processes the isolation layer itself needs besides the sandboxed command (bwrap, its init).
_LAYER_PROCESSES = 4
_MB = 1024 * 1024

_PY_WRAPPER = (
    "import os,resource,sys\n"
    "for n,s,h in ((resource.RLIMIT_CPU,{cpu},{cpu_hard}),(resource.RLIMIT_AS,{mem},{mem}),"
    "(resource.RLIMIT_FSIZE,{fsize},{fsize}),(resource.RLIMIT_NPROC,{nproc},{nproc}),"
    "(resource.RLIMIT_CORE,0,0)):\n"
    "    resource.setrlimit(n,(s,h))\n"
    "os.execvp(sys.argv[1],sys.argv[1:])\n"
)


def _values(limits: RunLimits, nproc: int) -> dict[str, int]:
    return {
        "cpu": limits.cpu_limit_s,
        "cpu_hard": limits.cpu_limit_s + 1,
        "mem": limits.memory_mb * _MB,
        "fsize": limits.max_file_mb * _MB,
        "nproc": nproc,
    }


def rlimit_prefix(limits: RunLimits, nproc: int) -> list[str]:
    """A command prefix that applies the limits and then execs the rest of the command line."""
    v = _values(limits, nproc)
    if shutil.which("prlimit"):
        return [
            "prlimit",
            f"--cpu={v['cpu']}:{v['cpu_hard']}",
            f"--as={v['mem']}",
            f"--fsize={v['fsize']}",
            f"--nproc={v['nproc']}",
            "--core=0",
            "--",
        ]
    return [sys.executable, "-I", "-S", "-c", _PY_WRAPPER.format(**v)]


def nproc_allowance(limits: RunLimits, dedicated_uid: bool) -> int:
    if dedicated_uid:
        return limits.max_processes + _LAYER_PROCESSES
    return _tasks_of_uid(os.getuid()) + limits.max_processes + _LAYER_PROCESSES


def _tasks_of_uid(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += sum(1 for _ in (entry / "task").iterdir())
        except OSError:
            continue  # the process ended while we looked
    return count


class UidPool:
    """Hands out uids no account uses, one per concurrent run, when we are root.

    Random within a large range so that several processes (workers, test runs) allocating at the
    same time practically never collide; never reused while in use within this process.
    """

    def __init__(self, base: int, span: int) -> None:
        self._base, self._span = base, span
        self._used: set[int] = set()
        self._lock = threading.Lock()

    @staticmethod
    def enabled() -> bool:
        return os.geteuid() == 0

    def acquire(self) -> int:
        with self._lock:
            while True:
                uid = self._base + secrets.randbelow(self._span)
                if uid not in self._used:
                    self._used.add(uid)
                    return uid

    def release(self, uid: int) -> None:
        with self._lock:
            self._used.discard(uid)
