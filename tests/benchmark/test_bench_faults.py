"""Faults during `classforge evaluate` (issue 33): two runs into one results folder, a run killed
mid-write, a full disk under the results. Each is injected the way it reaches users: two processes,
a temporary file a killed writer leaves, a small filesystem that fills (as root) or ENOSPC at the
write (as anyone)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_kit import config, dataset, samples

from classforge_bench.benchmark.runner import EvaluationRequest, evaluate

_CLI = "import sys; from classforge_bench.pipeline.cli import app; sys.exit(app())"
# ENOSPC at every fsync of an atomic write: what a full disk does to the results folder's files.
_DISK_FULL_CLI = (
    "import errno, os, sys\n"
    "def full(fd):\n"
    "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
    "os.fsync = full\n"
    "from classforge_bench.pipeline.cli import app\n"
    "sys.exit(app())\n"
)


def _args(data: Path, file: Path, root: Path) -> list[str]:
    return ["evaluate", "--dataset", str(data), "--samples", str(file), "--out", str(root), "--workers", "1"]


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_a_second_evaluate_into_the_same_results_folder_is_refused_naming_the_holder(tmp_path):
    data, file = dataset(tmp_path), samples(tmp_path, slow=1.0)  # slow samples keep the first run busy
    root = tmp_path / "results"
    first = subprocess.Popen(
        [sys.executable, "-c", _CLI, *_args(data, file, root)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600  # a polling bound only: a busy machine gets there later
        while time.monotonic() < deadline and first.poll() is None:
            if any(root.glob("*/samples/**/*.json")):  # past the lock and working
                break
            time.sleep(0.05)
        assert first.poll() is None, "the first run ended before a second could start"
        second = subprocess.run(
            [sys.executable, "-c", _CLI, *_args(data, file, root)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        still_running = first.poll() is None
    finally:
        first.kill()
        first.wait(60)
    assert still_running
    lines = _error_lines(second.stderr)
    assert second.returncode == 1, second.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert f"is in use by classforge evaluate (pid {first.pid} " in lines[0]


def test_a_temporary_file_left_by_a_killed_run_is_removed_by_the_next_run(tmp_path):
    data, file = dataset(tmp_path), samples(tmp_path)
    root = tmp_path / "results"
    first = evaluate(EvaluationRequest(dataset=data, samples_file=file), config(root), env={})
    # What `atomic_open` leaves when kill -9 lands between its write and its rename.
    left = [first.run_dir / ".results.json.k9x2ab.tmp", first.run_dir / "samples" / ".T0-m.json.zz81q0.tmp"]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"half": ', encoding="utf-8")
    again = evaluate(EvaluationRequest(dataset=data, samples_file=file), config(root), env={})
    assert again.run_dir == first.run_dir
    assert not list(again.run_dir.rglob(".*.tmp")) and not any(p.exists() for p in left)


def test_disk_full_during_evaluate_exits_1_with_one_error_line(tmp_path):
    data, file = dataset(tmp_path), samples(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _DISK_FULL_CLI, *_args(data, file, tmp_path / "results")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = _error_lines(done.stderr)
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "No space left on device" in lines[0]


def fill(folder: Path, leave: int) -> None:
    """Fill the filesystem under `folder`, then give back `leave` bytes."""
    filler = folder / "filler"
    with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as fh:
        while True:
            fh.write(b"\0" * 4096)
    os.truncate(filler, max(0, filler.stat().st_size - leave))


@pytest.fixture
def small_filesystem(tmp_path):
    """A 256 KiB tmpfs (root only; skipped otherwise, the injected test above covers non-root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_disk_full_on_a_small_filesystem_exits_1_with_one_error_line(tmp_path, small_filesystem):
    data, file = dataset(tmp_path), samples(tmp_path)
    fill(small_filesystem, leave=8192)  # room for the lock and a little: the run starts, then fills it
    done = subprocess.run(
        [sys.executable, "-c", _CLI, *_args(data, file, small_filesystem / "results")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = _error_lines(done.stderr)
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "No space left on device" in lines[0]
