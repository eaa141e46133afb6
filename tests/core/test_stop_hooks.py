"""What a stop still does before `os._exit`: the registered hooks, and the sandbox run they end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from classforge_bench.pipeline.core.stop_hooks import at_stop, run_stop_hooks

ROOT = Path(__file__).resolve().parents[2]
SANDBOX_TESTS = ROOT / "tests" / "sandbox"


def test_hooks_run_newest_first_once_and_only_while_registered():
    ran: list[str] = []
    with at_stop("outer", lambda: ran.append("outer")):
        with at_stop("inner", lambda: ran.append("inner")):
            pass
        with at_stop("second inner", lambda: ran.append("second inner")):
            assert run_stop_hooks() == []
            assert run_stop_hooks() == []  # each hook runs at most once
    assert ran == ["second inner", "outer"]


def test_a_failing_hook_is_named_and_the_others_still_run():
    ran: list[str] = []

    def full_disk() -> None:
        raise OSError(28, "No space left on device")

    with at_stop("saving the usage of cand-1", full_disk), at_stop("later", lambda: ran.append("later")):
        said = run_stop_hooks()
    assert ran == ["later"]
    assert said == ["at the stop, saving the usage of cand-1 failed: [Errno 28] No space left on device"]


STOPPED_PROCESS = """
import os, sys, threading, time
from pathlib import Path
sys.path.insert(0, {sandbox_tests!r})
from sandbox_support import make_config
from classforge_bench.pipeline.core.stop_hooks import run_stop_hooks
from classforge_bench.pipeline.sandbox.base import RunLimits
from classforge_bench.pipeline.sandbox.local import LocalBackend

work = Path({work!r})
backend = LocalBackend(make_config(work_root=work, isolation={isolation!r}))
command = [sys.executable, "-c", "open('started', 'w').close(); import time; time.sleep(600)  # {marker}"]
threading.Thread(target=backend.run, args=({{}}, command, RunLimits(wall_s=600)), daemon=True).start()
while not list(work.glob("cf-sbx-*/**/started")):
    time.sleep(0.1)
said = run_stop_hooks()
print(said, flush=True)
os._exit(0 if said == [] else 1)  # as the CLI's stop does: no finally runs after this
"""


@pytest.mark.parametrize("isolation", ["auto", "none"])  # "none": no bubblewrap to end the group with its parent
def test_a_stop_ends_a_sandbox_run_under_way_and_removes_its_folder(tmp_path, isolation):
    """In a process that ends as a stopped build does, the run's processes and its folder are gone."""
    marker = f"cf-stop-test-{os.getpid()}-{time.monotonic_ns()}"
    script = STOPPED_PROCESS.format(
        sandbox_tests=str(SANDBOX_TESTS), work=str(tmp_path / "work"), marker=marker, isolation=isolation
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert list((tmp_path / "work").iterdir()) == []
    # SIGKILL is delivered at once but a busy machine may take a moment to end the processes.
    deadline = time.monotonic() + 120
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(marker) == []


def _processes_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            pass  # ended while we looked
    return found
