"""`classforge build` says which repositories could not be cloned, with git's message, on stderr
(the harvest inside the build keeps going with the others)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app


@pytest.mark.slow
def test_build_names_a_repository_it_could_not_clone(prefect_harness, example_config: Path, tmp_path: Path) -> None:
    empty = tmp_path / "sources" / "empty-repo"
    empty.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    text = example_config.read_text(encoding="utf-8").replace("local_sources = []", f'local_sources = ["{empty}"]')
    example_config.write_text(text, encoding="utf-8")
    done = CliRunner().invoke(app, ["build", "--config", str(example_config)])
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: could not clone")]
    assert warnings == ["warning: could not clone local/empty-repo (empty-repository): remote has no HEAD commit"]
