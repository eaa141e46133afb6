"""Scoring a release folder: the results folder is named after the whole version, day included."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app


def test_the_run_id_keeps_the_release_day(release: Path, tmp_path: Path) -> None:
    assert release.name == "2025.06.01"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            "--dataset",
            str(release),
            "--model",
            "reference",
            "--n",
            "1",
            "--strategy",
            "holistic",
            "--out",
            str(tmp_path / "results"),
        ],
    )
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "results").iterdir()
    assert run_dir.name.startswith("2025.06.01__reference__"), run_dir.name
