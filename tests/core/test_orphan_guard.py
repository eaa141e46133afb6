"""The orphan guard: a process killed with SIGKILL leaves no child behind (Linux, /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from classforge_bench.pipeline.core.orphan_guard import children_of

ROOT = Path(__file__).resolve().parents[2]
PARENT = """
import subprocess, sys, time
from classforge_bench.pipeline.core.orphan_guard import start_guard
start_guard()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_children_of_a_killed_process_are_ended(sig):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))
    )
    try:
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 120
        while len(children_of(parent.pid)) < 2:  # the child and the guard
            assert time.monotonic() < deadline, "the guard never started"
            time.sleep(0.1)
        guard = next(pid for pid in children_of(parent.pid) if pid != child)
        time.sleep(5)  # the guard notes the children every 0.5 s (ten rounds, for a busy machine)
        parent.send_signal(sig)
        parent.wait(timeout=60)
        deadline = time.monotonic() + 120  # seconds in practice; generous for a busy machine
        while (_alive(child) or _alive(guard)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(child) and not _alive(guard)
    finally:
        if parent.poll() is None:
            parent.kill()
