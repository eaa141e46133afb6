"""`verify-release` on a path that is no release folder: bad input, exit 2, like every other
command given a missing path (issue 33); a folder that exists but fails the checks stays exit 1."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app


def test_a_missing_release_folder_exits_2_with_one_error_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["verify-release", str(tmp_path / "nowhere"), "--no-load"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"error: release folder {tmp_path / 'nowhere'} does not exist"]


def test_a_file_for_a_release_folder_exits_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    result = CliRunner().invoke(app, ["verify-release", str(tmp_path / "file"), "--no-load"])
    assert result.exit_code == 2 and result.stderr.startswith("error: release folder ")


def test_an_empty_folder_is_a_problem_found_exit_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["verify-release", str(tmp_path), "--no-load"])
    assert result.exit_code == 1 and "problem:" in result.stderr
