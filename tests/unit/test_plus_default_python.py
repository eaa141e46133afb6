"""The plus generator's default interpreter is the checkout's .venv-plus (scripts/setup.sh makes it
beside pyproject.toml). After the move under classforge_bench/ it pointed one folder too deep, at
classforge_bench/.venv-plus, which never exists: every real-source class was dropped at `tests`
with no-test-generator while Pynguin was installed."""

from __future__ import annotations

from pathlib import Path

from classforge_bench.pipeline.quality.plus.generate import DEFAULT_PYTHON

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_default_generator_is_the_checkouts_venv_plus():
    assert (CHECKOUT / "pyproject.toml").is_file()
    assert DEFAULT_PYTHON == CHECKOUT / ".venv-plus" / "bin" / "python"
