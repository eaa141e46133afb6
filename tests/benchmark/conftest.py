"""Shared fixtures: the real ClassEval release, read in place (never copied into the repo)."""

from __future__ import annotations

import shutil
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


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium); the page is not checked in a browser")
    playwright = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    with playwright.sync_playwright() as p:
        # the system browser: Playwright's own download is not needed (and fails offline)
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()
