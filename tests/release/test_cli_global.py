"""The command line's global behaviour: --version, -h, one-line errors on stderr, option validation."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app

STRATEGIES = "'holistic', 'incremental', 'compositional', 'bottom_up', 'top_down'"


def test_version_and_short_help() -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0 and shown.stdout.strip() == f"classforge {version('classforge-bench')}"
    for args in (["-h"], ["evaluate", "-h"], ["build", "-h"]):
        helped = runner.invoke(app, args, prog_name="classforge")
        assert helped.exit_code == 0 and "Usage: classforge" in helped.stdout, args


def test_mistyped_choice_is_one_line_listing_the_valid_values() -> None:
    result = CliRunner().invoke(app, ["evaluate", "--dataset", "x.json", "--strategy", "holsitic"])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: Invalid value for '--strategy'") and "'holsitic' is not one of" in line
    assert STRATEGIES in line and "pydantic" not in line
    levels = CliRunner().invoke(app, ["evaluate", "--dataset", "x.json", "--levels", "labells"])
    assert levels.exit_code == 2 and len(levels.stderr.splitlines()) == 1 and "'labels', 'model'" in levels.stderr


@pytest.mark.parametrize(
    ("cutoff", "says"),
    [("2025-13-01", "is not a date"), ("2999-01-01", "is in the future"), ("yesterday", "expected YYYY-MM-DD")],
)
def test_bad_cutoff_is_rejected_before_any_server_starts(
    cutoff: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_prefect() -> None:
        raise AssertionError("Prefect must not start for a bad --cutoff")

    monkeypatch.setattr("classforge_bench.pipeline.cli.build._prefect_defaults", no_prefect)
    result = CliRunner().invoke(app, ["build", "--cutoff", cutoff])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: Invalid value for '--cutoff'") and says in line


def test_unknown_command_and_missing_dataset_are_one_line() -> None:
    runner = CliRunner()
    unknown = runner.invoke(app, ["evalute"], prog_name="classforge")
    assert unknown.exit_code == 2 and unknown.stderr.splitlines() == [
        "error: No such command 'evalute'. Did you mean 'evaluate'? (see 'classforge -h')"
    ]
    missing = runner.invoke(app, ["evaluate"])
    assert missing.exit_code == 2 and missing.stderr.splitlines() == [
        "error: --dataset is required (or --regrade RESULTS_DIR)"
    ]


def test_error_line_is_whole_under_a_long_path_and_a_narrow_terminal(tmp_path: Path) -> None:
    """A 150-character directory and COLUMNS=40: the installed command's error is one line, on stderr."""
    deep = tmp_path / ("d" * 150) / ("e" * 60)
    deep.mkdir(parents=True)
    bad = deep / "tasks.jsonl"
    bad.write_text('{"task_id": "T1", "class_name": \n', encoding="utf-8")
    classforge = Path(sys.executable).with_name("classforge")
    env = {**os.environ, "COLUMNS": "40", "TERM": "dumb"}
    proc = subprocess.run(
        [str(classforge), "evaluate", "--dataset", str(bad), "--model", "reference"],
        cwd=deep,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""  # no progress bar in a pipe, so no stray newline either
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {bad}:1: not valid JSON")


def test_tables_and_status_lines_are_whole_in_a_pipe_with_columns_40(
    release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    result = CliRunner().invoke(app, ["export", str(release), "--repo", "acme/bench"], env={"COLUMNS": "40"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("data/test-00000-of-00001.parquet" in line and len(line) > 40 for line in lines)
    assert any(line.startswith("dry run (") and line.endswith("nothing was uploaded.") for line in lines)


def test_report_in_a_pipe_is_the_markdown_itself(release: Path, tmp_path: Path) -> None:
    """Piped into a file or another program, `report` gives its Markdown unchanged: no line cut at the
    console width, no line padded with spaces (Rich renders Markdown to the width of a console)."""
    result = CliRunner().invoke(app, ["report", str(release), "--out", str(tmp_path / "r")], env={"COLUMNS": "40"})
    assert result.exit_code == 0, result.output
    written = (tmp_path / "r" / "report.md").read_text(encoding="utf-8").rstrip("\n")
    assert result.stdout.startswith(written + "\n")
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]


def test_help_names_what_to_type_not_python_types() -> None:
    """Flags take no value and a repeatable option takes one value at a time: `<bool>` and
    `<list[str]>` in the help told a user neither."""
    runner = CliRunner()
    for command in ("harvest", "build", "evaluate", "report", "verify-release", "export", "check-endpoint"):
        shown = runner.invoke(app, [command, "-h"], prog_name="classforge", env={"COLUMNS": "200"})
        assert shown.exit_code == 0
        assert "<bool>" not in shown.stdout and "<list[" not in shown.stdout, command
    evaluate = runner.invoke(app, ["evaluate", "-h"], env={"COLUMNS": "200"}).stdout
    assert "<holistic|incremental|compositional|bottom_up|top_down>" in evaluate
    assert any("--model" in line and "<str>" in line for line in evaluate.splitlines())


def test_a_mistyped_choice_names_no_pydantic_internals() -> None:
    result = CliRunner().invoke(app, ["evaluate", "--dataset", "x.json", "--strategy", "holstic"])
    (line,) = result.stderr.splitlines()
    assert "Value error" not in line
    assert line.startswith("error: Invalid value for '--strategy' / '-s': 'holstic' is not one of " + STRATEGIES)


def test_an_evaluate_error_in_a_pipe_is_the_error_line_alone(tmp_path: Path) -> None:
    """No blank line before the error: a progress bar is drawn on a terminal only (in a pipe Rich's
    transient bar left a lone newline on stdout)."""
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"task_id": "T1", "class_name": \n', encoding="utf-8")
    result = CliRunner().invoke(app, ["evaluate", "--dataset", str(bad), "--model", "reference"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[0].startswith(f"error: {bad}:1: not valid JSON")
