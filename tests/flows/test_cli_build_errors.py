"""`classforge build` errors: one line on stderr naming what was wrong, non-zero exit, whatever
the terminal width."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "40"})


def test_a_future_cutoff_is_refused_before_anything_starts(example_config):
    done = run("build", "--config", str(example_config), "--cutoff", "2999-01-01")
    assert done.exit_code == 2
    assert "2999-01-01 is in the future" in done.output
    assert not (example_config.parent / "harvested").exists()


def test_an_unsafe_snapshot_override_is_refused(example_config):
    done = run("build", "--config", str(example_config), "--snapshot", "../escape")
    assert done.exit_code == 2 and "snapshot must be a plain folder name" in done.output


@pytest.mark.parametrize("command", ["build", "evaluate"])
def test_a_dask_address_dask_cannot_parse_is_one_line_before_anything_starts(example_config, command):
    """Dask's own parse of a bad port is a ValueError traceback, from deep inside a started run."""
    extra = ["--dataset", str(example_config.parent), "--model", "reference"] if command == "evaluate" else []
    done = run(command, "--config", str(example_config), "--dask", "tcp://scheduler:port", *extra)
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert "scheduler address like tcp://HOST:PORT, got 'tcp://scheduler:port'" in done.output
    assert not (example_config.parent / "harvested").exists()


@pytest.mark.slow
def test_an_unwritable_build_folder_is_one_line_naming_it(prefect_harness, example_config, tmp_path):
    (tmp_path / "built").write_text("a file where the build folder should be")
    done = run("build", "--config", str(example_config))
    assert done.exit_code == 2  # found with the other output folders, before any work (issue 26)
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert f"construction.output_root: {tmp_path / 'built'} is a file, not a folder" in line, line


def test_a_build_folder_another_run_holds_is_refused_in_one_line_before_anything_runs(example_config, tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "built" / "example"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom classforge_bench.pipeline.core.folder_lock import FolderLock\n"
            f"FolderLock({str(folder)!r}, 'another build').acquire()\nprint('held', flush=True)\ntime.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(example_config.parents[0]),
        env={"PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[2])},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        done = run("build", "--config", str(example_config))
    finally:
        holder.kill()
        holder.wait()
    assert done.exit_code == 1
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    assert line.startswith("error: ") and f"{folder} is in use by another build (pid {holder.pid}" in line, line
    assert "Traceback" not in done.output
    assert not (tmp_path / "harvested").exists()  # refused before the harvest ran
