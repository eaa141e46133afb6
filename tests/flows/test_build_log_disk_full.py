"""A full disk under a build's outputs (issue 33): the build log stops after its first failed
write instead of printing a "--- Logging error ---" block per record, closing it raises nothing,
and the build ends with one `error:` line naming the folder and what was kept, exit 1 (the code
docs/operations/faults.md gives).

The disk fills for real on a small tmpfs when the tests run as root; otherwise (or where mounting
is refused) the log file's writes get ENOSPC injected, which is what the kernel returns."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from classforge_bench.pipeline.cli import flowlog as cli_flowlog
from classforge_bench.pipeline.cli.flowlog import disk_full_line, flow_log, write_failure

ROOT = Path(__file__).resolve().parents[2]
RECORDS = 1000  # a build logs thousands of records; the failed disk must cost one, not thousands


class _FullStream:
    """A log file's stream on a disk with no space left."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def close(self) -> None:
        self.flush()


@pytest.fixture(params=["small tmpfs", "injected ENOSPC"])
def full_disk(request, tmp_path, monkeypatch) -> Path:
    """A folder whose filesystem has no space left for the build log."""
    folder = tmp_path / "out"
    folder.mkdir()
    if request.param == "injected ENOSPC":
        monkeypatch.setattr(cli_flowlog.LogFile, "_open", lambda self: _FullStream())
        return folder
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the injected variant covers this user")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(folder)], check=False))
    filler = folder / "filler"
    with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as fh:
        while True:
            fh.write(b"\0" * 4096)
    return folder


def _log_a_build(logger: str = "prefect.task_runs") -> None:
    for i in range(RECORDS):
        try:
            raise OSError(errno.ENOSPC, f"cannot write candidate {i}")
        except OSError:
            logging.getLogger(logger).warning("candidate %d failed", i, exc_info=True)


def test_the_build_log_stops_after_one_failed_write(full_disk, capfd, monkeypatch):
    # Only the build log's handler is under test: handlers an earlier in-process flow left on these
    # loggers (Prefect's API handler, which warns outside a flow run) are set aside meanwhile.
    for name in ("", "prefect", "prefect.task_runs", "prefect.flow_runs"):
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])
    prefect = logging.getLogger("prefect")
    level = prefect.level
    prefect.setLevel(logging.INFO)
    try:
        with flow_log(full_disk / "built") as log_path:
            _log_a_build()
    finally:
        prefect.setLevel(level)
    err = capfd.readouterr().err
    assert "--- Logging error ---" not in err and "Traceback" not in err
    failure = write_failure(log_path)
    assert failure is not None and failure.errno == errno.ENOSPC
    line = disk_full_line(None, log_path)
    assert line is not None and f"the disk under {full_disk / 'built'} is full" in line and "Kept:" in line


# The CLI's end of a build (`_run_build_flow`) in a fresh process, so the terminal is the process's
# own stderr and Prefect's console handler writes to it as in a real run. The flow is a stand-in:
# it logs a build's worth of records, then ends as a flow does whose output write found no space.
_BUILD = textwrap.dedent("""
    import errno, logging, os, sys
    from pathlib import Path
    import typer
    from classforge_bench.pipeline.cli import build as cli, flowlog as cli_flowlog
    from classforge_bench.pipeline.config import Config
    from classforge_bench.pipeline.core.store import StoreWriteError

    folder, inject, records = Path(sys.argv[1]), sys.argv[2] == "inject", int(sys.argv[3])

    class FullStream:
        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        flush = close = lambda self: self.write("")

    if inject:
        cli_flowlog.LogFile._open = lambda self: FullStream()

    class State:
        message = "Flow run encountered an exception: StoreWriteError"
        def result(self, raise_on_failure=True):
            return StoreWriteError(errno.ENOSPC, f"cannot write {folder}/x.json: No space left on device")

    def flow(return_state, **_):
        for i in range(records):
            try:
                raise OSError(errno.ENOSPC, f"cannot write candidate {i}")
            except OSError:
                logging.getLogger("classforge_bench.pipeline.construct.build").warning(
                    "candidate %d failed", i, exc_info=True)
        return State()

    class Inline:
        def run(self, fn):
            return fn()

    cfg = Config()
    cfg.construction.output_root = folder
    try:
        cli._run_build_flow(cfg, Inline(), flow)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
""")


def test_the_build_ends_with_one_error_line_and_exit_1(full_disk, request):
    inject = "inject" if "injected" in request.node.name else "real"
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(full_disk / "built"), inject, str(RECORDS)],
        cwd=full_disk.parent,
        env=dict(os.environ, PYTHONPATH=str(ROOT), PREFECT_HOME=str(full_disk.parent / "prefect")),
        capture_output=True,
        text=True,
        timeout=600,
    )
    err = done.stderr
    assert done.returncode == 1, err[-3000:]
    # The terminal keeps its one line per record; no logging error, no traceback is added to them.
    assert "--- Logging error ---" not in err and "Traceback" not in err, err[:3000]
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and err.rstrip("\n").endswith(errors[0])
    assert errors[0].startswith(f"error: the disk under {full_disk / 'built' / 'default'} is full")
