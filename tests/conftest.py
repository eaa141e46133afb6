"""Shared fixtures. Nothing here touches the network."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from classforge_bench.pipeline.harvest.repo_builder import CommitSpec, build_repo

PREFECT_STARTUP_S = 600


def pytest_configure(config: pytest.Config) -> None:
    # Tests run with no credentials: nothing can reach a real service by accident.
    for var in ("GITHUB_TOKEN", "OPENAI_API_KEY", "HF_TOKEN"):
        os.environ.pop(var, None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    # Every Prefect server a test starts (the harness, a `classforge build` subprocess) gets the time a
    # busy machine needs: at load 15-23 one took over 60 s to answer. A healthy one answers in seconds.
    os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = str(PREFECT_STARTUP_S)
    # Tests run threads (pools, Prefect runners) like the product's entry points do: same guard.
    from classforge_bench.pipeline.core.parsing import guard_interpreter

    guard_interpreter()


@pytest.fixture(autouse=True)
def _own_reference_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`classforge evaluate` keeps references in the user's cache (XDG); a test's runs keep theirs in
    its own folder, so no test finds another's runs (nor writes to the real home)."""
    from classforge_bench.benchmark import runner

    monkeypatch.setattr(
        runner, "user_cache_dir", lambda env: tmp_path / "user-cache" / "classforge" / "references" if env else None
    )


def when(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC) if "+" not in text else datetime.fromisoformat(text)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """make_repo("owner__name", [("2025-03-01", {"a.py": "..."}), ...]) -> path of a real git repo."""

    def _make(
        name: str, commits: list[tuple[str, dict[str, str | bytes]]] | list[CommitSpec], root: Path | None = None
    ) -> Path:
        specs = [
            c if isinstance(c, CommitSpec) else CommitSpec(when(c[0]), f"commit {i}", c[1])
            for i, c in enumerate(commits)
        ]
        dest = (root or tmp_path / "repos") / name
        build_repo(dest, specs)
        return dest

    return _make
