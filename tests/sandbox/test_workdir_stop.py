"""Ctrl-C during a build leaves no `cf-sbx-*` folder (issue 33): a stop ends the process with
os._exit, skipping every `finally`, so a sandbox folder removes itself at the stop from the moment
it is made (the sandbox probe's folder was not covered, and one was left in the temp folder)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A command under the build's stop handling holding two sandbox folders (a probe's, made the way
# the backend's probe makes it, and a run's) when the signal comes.
_COMMAND = textwrap.dedent("""
    import sys, threading
    from classforge_bench.pipeline.cli.stopping import Stoppable, say_stopped
    from classforge_bench.pipeline.sandbox.workdir import WorkDir

    def work():
        for _ in range(2):
            WorkDir.create(sys.argv[1], None).write({"solution.py": "x = 1\\n"})
        print("holding", flush=True)
        threading.Event().wait()

    Stoppable(say_stopped).run(work)
""")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_removes_every_sandbox_folder_the_process_made(tmp_path, sig):
    root = tmp_path / "tmp"
    proc = subprocess.Popen(
        [sys.executable, "-c", _COMMAND, str(root)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout.readline() == b"holding\n"
        assert len(list(root.glob("cf-sbx-*"))) == 2
        proc.send_signal(sig)
        code = proc.wait(120)  # a hang guard only
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.stdout.close()
        proc.stderr.close()
    assert code == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], err
    assert list(root.glob("cf-sbx-*")) == []
    assert "removing sandbox folder" not in err  # no hook failed


def test_a_folder_removed_by_its_run_is_not_removed_again_at_a_stop(tmp_path):
    from classforge_bench.pipeline.core.stop_hooks import run_stop_hooks
    from classforge_bench.pipeline.sandbox.workdir import WorkDir

    made = WorkDir.create(str(tmp_path), None)
    made.remove()
    assert not Path(made.path).exists()
    assert run_stop_hooks() == []  # nothing registered is left for it


def test_removing_a_folder_already_gone_leaves_its_parent_alone(tmp_path):
    """A stop may remove the folder before the run's own `finally` does; the second removal found
    nothing and, chmod-ing the missing folder's parent to 0700 to retry, took /tmp from every user."""
    from classforge_bench.pipeline.sandbox.workdir import WorkDir

    parent = tmp_path / "shared-tmp"
    parent.mkdir()
    parent.chmod(0o1777)
    work = WorkDir.create(str(parent), None)
    shutil.rmtree(work.path)  # gone before remove() runs
    work.remove()
    assert parent.stat().st_mode & 0o7777 == 0o1777


def test_a_folder_its_code_locked_is_still_removed(tmp_path):
    from classforge_bench.pipeline.sandbox.workdir import WorkDir

    work = WorkDir.create(str(tmp_path), None)
    locked = Path(work.path) / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    Path(work.path).chmod(0o500)
    work.remove()
    assert not Path(work.path).exists()
