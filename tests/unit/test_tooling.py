"""The linters the code base is held to, run on the whole repository with the suite (CI runs them too).

Configuration lives in pyproject.toml ([tool.ruff], [tool.mypy]); `make lint`, `make typecheck` and
`make format` run the same commands by hand."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert importlib.util.find_spec(module), f"{module} is a dev dependency: pip install -e '.[dev]'"
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=1800)


def test_ruff_finds_nothing() -> None:
    """Lint and import order (`ruff check`; `make format` sorts imports and formats, the rest is fixed by hand)."""
    run = _run("ruff", "check", "--output-format", "concise", ".")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_the_tree_is_formatted() -> None:
    """`ruff format` (black's style at the project's line length) leaves nothing to change."""
    run = _run("ruff", "format", "--check", ".")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


@pytest.mark.slow  # a cold type check takes a minute or more; `make test-fast` leaves it to `make typecheck`
def test_mypy_finds_nothing() -> None:
    run = _run("mypy")
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    assert "Success: no issues found" in run.stdout
