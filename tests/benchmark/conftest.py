"""Shared fixtures: the real ClassEval release, read in place (never copied into the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from classforge_bench.pipeline.formats.loader import LoadedDataset, load_dataset

_RELATIVE = Path("shared") / "data" / "classeval" / "ClassEval_data.json"
# beside the checkout (/work/main -> /work/shared) or beside a worktree's parent (/work/wt/x)
CLASSEVAL_JSON = next(
    (p / _RELATIVE for p in Path(__file__).resolve().parents[2:] if (p / _RELATIVE).is_file()),
    Path(__file__).resolve().parents[3] / _RELATIVE,
)


@pytest.fixture(scope="session")
def classeval_path() -> Path:
    if not CLASSEVAL_JSON.is_file():
        pytest.skip(f"ClassEval data not found at {CLASSEVAL_JSON}")
    return CLASSEVAL_JSON


@pytest.fixture(scope="session")
def classeval(classeval_path: Path) -> LoadedDataset:
    return load_dataset(classeval_path)
