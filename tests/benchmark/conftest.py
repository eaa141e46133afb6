"""Shared fixtures: the real ClassEval release, read in place (never copied into the repo)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from samples_kit import BANK, BROKEN, bank_variant, fence

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


# ClassEval lines in every shape a samples file meets (tests/benchmark/samples_kit.py writes them)
@pytest.fixture
def lines(classeval) -> list[dict]:
    bank = classeval.by_id()[BANK].solution_code
    return [
        # 0: the canonical class wrapped in prose -> completed, passes
        {
            "task_id": BANK,
            "completion": "Sure! Here is the class.\n" + fence(bank) + "\nHope this helps.",
            "model": "m1",
        },
        # 1: no code at all -> no_code
        {"task_id": BANK, "completion": "I am sorry, I cannot help with that.", "model": "m1"},
        # 2: a syntax error -> compile_error, never run
        {
            "task_id": BANK,
            "completion": fence(bank.replace("def view_balance(self):", "def view_balance(self)")),
            "model": "m1",
        },
        # 3: withdraw loops forever -> stopped at its share of the limit; the other classes keep their outcomes
        {
            "task_id": BANK,
            "completion": fence(bank_variant(bank, "        while True:\n            pass")),
            "model": "m1",
        },
        # 4: the module hangs while it is imported -> timeout (no per-class runs: they would all hang)
        {"task_id": BANK, "completion": fence("while True:\n    pass\n\n" + bank), "model": "m1"},
        # 5: an undefined name at import -> load_error, a dependency error
        {"task_id": BANK, "completion": fence("LIMIT = DEFAULT_LIMIT\n\n" + bank), "model": "m1"},
        # 6: withdraw uses a field the class does not have -> completed, dependency error in its tests
        {
            "task_id": BANK,
            "completion": fence(bank_variant(bank, "        self.total -= amount\n        return self.total")),
            "model": "m1",
            "strategy": "holistic",
        },
        # 7: a sample of a broken task -> task_broken, unscored
        {"task_id": BROKEN, "completion": fence(classeval.by_id()[BROKEN].solution_code), "model": "m1"},
    ]
