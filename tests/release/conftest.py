"""Fixtures for the release tests: one release written per module, copied when a test modifies it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from release_taskgen import as_tasks, make_tasks, release_kwargs

from classforge_bench.pipeline.release.writer import write_release


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release written once per module; tests must not modify it (use `release_copy`)."""
    root = tmp_path_factory.mktemp("releases")
    return write_release(as_tasks(make_tasks()), output_root=root, **release_kwargs())


@pytest.fixture
def release_copy(release: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy" / release.name
    shutil.copytree(release, dest)
    return dest


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """write(tasks=None, **overrides) -> a release under tmp_path/releases; rows become Task records."""

    def _write(tasks: list[dict[str, Any]] | None = None, **overrides: Any) -> Path:
        overrides.setdefault("output_root", tmp_path / "releases")
        rows = make_tasks() if tasks is None else tasks
        return write_release(as_tasks(rows), **release_kwargs(**overrides))

    return _write
