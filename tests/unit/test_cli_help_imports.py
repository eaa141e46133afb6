"""`classforge --help` imports what it draws (typer and rich) and nothing else the commands need later.

Wall time on a shared machine says more about the load than the code (7.6 s at load 30 for 0.28 s
CPU); what the help loads is what this checks, in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What --help never needs: the flow layer, models, the Hub, arrays, HTTP, configs (rich.table it does:
# typer draws the help's option tables with it).
NOT_FOR_HELP = [
    "prefect",
    "pydantic",
    "httpx",
    "yaml",
    "datasets",
    "huggingface_hub",
    "pyarrow",
    "numpy",
    "matplotlib",
    "openai",
    "classforge_bench.pipeline.config",
    "classforge_bench.flows",
]

SCRIPT = """
import json, sys
from typer.testing import CliRunner
from classforge_bench.pipeline.cli import app
result = CliRunner().invoke(app, sys.argv[2:])
assert result.exit_code == 0, result.output
print(json.dumps([m for m in json.loads(sys.argv[1]) if m in sys.modules]))
"""


def _loaded_for(args: list[str]) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(NOT_FOR_HELP), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_help_imports_nothing_it_does_not_draw() -> None:
    assert _loaded_for(["--help"]) == []


def test_a_command_help_imports_nothing_either() -> None:
    # typer itself (typer._adapters) loads pydantic to describe a command's parameters, not classforge
    assert [m for m in _loaded_for(["build", "--help"]) if m != "pydantic"] == []


def test_help_shows_types_a_person_types() -> None:
    """`--cutoff` is a date shown as <YYYY-MM-DD>; a bounded int is `<int>` with its bound, not `<int range>`."""
    from typer.testing import CliRunner

    from classforge_bench.pipeline.cli import app

    runner = CliRunner()
    for command in ("build", "harvest"):
        shown = runner.invoke(app, [command, "--help"], terminal_width=200).output
        assert "--cutoff" in shown and "<YYYY-MM-DD>" in shown and "<str>" not in shown.split("--cutoff")[1][:30]
    evaluate = runner.invoke(app, ["evaluate", "--help"], terminal_width=200).output
    assert "<int> [x>=1]" in evaluate and "int range" not in evaluate
