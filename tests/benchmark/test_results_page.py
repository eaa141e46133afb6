"""The results page (`classforge leaderboard`, and `evaluate`'s own results.html), on real runs of
the special models over ClassEval tasks, checked as data and in a real headless Chromium."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from classforge_bench.benchmark.leaderboard import BASE, board_of, load_board, suites_of
from classforge_bench.benchmark.metrics import Estimate, MetricsReport
from classforge_bench.benchmark.results import GroupScores, load_results
from classforge_bench.benchmark.results_page import PAGE_FILE, render_page, write_leaderboard
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig

TASKS = ["ClassEval_8", "ClassEval_11", "ClassEval_47"]
REPO = Path(__file__).resolve().parents[2]


def _run(classeval_path: Path, root: Path, models: list[str], tasks: list[str], n: int) -> Path:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=root, n_samples=n, bootstrap_resamples=300)
    return evaluate(EvaluationRequest(dataset=classeval_path, models=models, task_ids=tasks), cfg, env={}).run_dir


@pytest.fixture(scope="module")
def runs(classeval_path, tmp_path_factory) -> list[Path]:
    """Two runs: reference and empty with one sample per task, and reference with three on two tasks."""
    root = tmp_path_factory.mktemp("results")
    return [
        _run(classeval_path, root, ["reference", "empty"], TASKS, 1),
        _run(classeval_path, root, ["reference"], TASKS[:2], 3),
    ]


def test_one_row_per_model_and_strategy_of_every_run_and_only_ks_that_have_a_value(runs):
    board = load_board([runs[0].parent])  # the folder of run folders stands for both
    assert [(r.model, r.run_id) for r in board.rows] == [
        ("reference", runs[0].name),
        ("empty", runs[0].name),
        ("reference", runs[1].name),
    ]
    assert board.ks == {BASE: [1, 3]}  # pass@3 from the second run; pass@5 from none
    single = render_page(board_of([load_results(runs[0])]))
    assert "pass@1" in single and "pass@3" not in single and "pass@5" not in single


def test_outcome_grid_names_what_nobody_and_everybody_solves(runs):
    board = load_board(runs)
    assert board.solved_by_nobody() == []
    assert board.solved_by_everybody() == []  # empty solves nothing, so no task is solved by all
    only_reference = board_of([load_results(runs[1])])
    assert only_reference.solved_by_everybody() == TASKS[:2]
    # Both reference rows solve what they scored, but only the first two tasks did both score: a
    # task one row did not run is not solved by every row (docs/results-page.md).
    (dataset,) = board.datasets  # both runs scored the same file: one table
    both_references = dataclasses.replace(dataset, rows=[r for r in dataset.rows if r.model == "reference"])
    assert len(both_references.rows) == 2 and both_references.solved_by_everybody() == TASKS[:2]
    empty = board.rows[1]
    assert {t: (c.status, c.full, c.n) for t, c in empty.tasks.items()} == dict.fromkeys(TASKS, ("failed", 0, 1))
    assert "ClassEval_47" not in board.rows[2].tasks  # not selected by the second run: "not run"


def test_evaluate_writes_its_page_and_the_page_needs_no_matplotlib(runs, tmp_path):
    page = (runs[0] / PAGE_FILE).read_text(encoding="utf-8")
    table = page.split('id="ranked-1"')[1].split("</table>")[0]
    assert table.count("<tr>") == 3 and "<svg" in page  # the head, reference and empty
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the page must fetch nothing"
    code = (
        "import sys; from pathlib import Path; from classforge_bench.benchmark.results_page import write_leaderboard; "
        f"write_leaderboard([Path({str(runs[0])!r})], Path({str(tmp_path / 'p.html')!r})); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


class PlusScores(GroupScores):
    """What a run with plus-tier tests may carry: another MetricsReport beside the base one."""

    plus: MetricsReport | None = None


def test_plus_scores_beside_a_runs_scores_get_columns_and_a_base_comparison(runs):
    results = load_results(runs[0])
    plus = results.scores[0].model_copy(deep=True)
    plus.metrics.method_level.full[1] = Estimate(value=0.5, ci_low=0.25, ci_high=0.75)
    board = board_of([results.model_copy(update={"plus_scores": [plus]})])
    assert board.suites == [BASE, "plus"] and list(board.rows[0].suites) == [BASE, "plus"]
    assert list(board.rows[1].suites) == [BASE]  # no plus scores for the empty model
    page = render_page(board)
    assert "plus · Method full pass@1" in page and ">-50.0<" in page


def test_another_suite_gets_its_own_columns_and_a_base_comparison(runs):
    results = load_results(runs[0])
    ref = results.scores[0]
    lower = ref.metrics.model_copy(deep=True)
    lower.class_level.full[1] = Estimate(value=2 / 3, ci_low=0.0, ci_high=1.0)
    results.scores = [PlusScores(**ref.model_dump(), plus=lower)] + results.scores[1:]
    assert list(suites_of(results.scores[0])) == [BASE, "plus"]
    page = render_page(board_of([results]))
    assert "plus · Class full pass@1" in page
    assert "Base tests vs plus" in page and ">-33.3<" in page


def _column(page, table: str, title: str) -> int:
    heads = page.locator(f"#{table} thead th").all_inner_texts()
    return next(i for i, h in enumerate(heads) if h.strip().rstrip("▲▼ ").strip() == title)


def test_the_page_in_a_headless_browser(runs, browser, tmp_path):
    path, board = write_leaderboard(runs, tmp_path / "leaderboard.html")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems, requests = [], []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    assert problems == []
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    rows = page.locator("#ranked-1 tbody tr")
    assert rows.count() == len(board.rows) == 3
    models = lambda: [rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())]  # noqa: E731
    head = page.locator("#ranked-1 thead th").nth(_column(page, "ranked-1", "Class pass@1"))
    head.click()  # numbers sort high to low first
    assert models() == ["reference", "reference", "empty"] and head.get_attribute("aria-sort") == "descending"
    head.click()
    assert models() == ["empty", "reference", "reference"] and head.get_attribute("aria-sort") == "ascending"
    page.locator("#ranked-1 thead th").nth(1).click()  # text sorts A to Z first
    assert models() == ["empty", "reference", "reference"]
    assert page.locator("svg.chart").count() >= 3
    shot = Path(os.environ.get("CLASSFORGE_SCREENSHOT_DIR", tmp_path)) / "results-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    page.close()


def test_the_command_writes_the_page_and_names_a_folder_without_results(runs, tmp_path):
    cli = [sys.executable, "-m", "classforge_bench.pipeline.cli", "leaderboard"]
    done = subprocess.run(
        cli + [str(runs[0]), str(runs[1]), "-o", str(tmp_path / "lb.html")], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert " ".join(done.stdout.split()).startswith(
        f"3 rows from 2 run(s) over 1 dataset(s) written to {tmp_path / 'lb.html'}"
    )
    assert (tmp_path / "lb.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = subprocess.run(cli + [str(runs[0]), str(tmp_path / "nothing")], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == f"error: {tmp_path / 'nothing'}: no results.json in it or in the folders directly under it\n"


def test_charts_are_svg_with_every_value_written_beside_its_bar():
    import xml.etree.ElementTree as ET

    from classforge_bench.benchmark.svg import PALETTE, Bar, bar_chart, stacked_chart

    ns = {"s": "http://www.w3.org/2000/svg"}
    chart = ET.fromstring(
        bar_chart([Bar("a / x", 50.0, 40.0, 60.0, "50.0 [40.0, 60.0]", colour=2), Bar("b <&>", 0.0)], title="pass@1")
    )
    values = [t.text for t in chart.findall("s:text[@class='value']", ns)]
    assert values == ["50.0 [40.0, 60.0]", "0.0"]
    assert [t.text for t in chart.findall("s:text[@class='label']", ns)] == ["a / x", "b <&>"]
    bars = chart.findall("s:rect", ns)
    assert bars[0].get("fill") == PALETTE[2] and float(bars[0].get("width")) == 180.0  # half of 360 px
    assert len(chart.findall("s:path[@class='whisker']", ns)) == 1  # only the bar with an interval
    stacked = ET.fromstring(stacked_chart([("m", {"logic": 3, "syntax": 1})], ["syntax", "logic"], title="t"))
    assert [t.text for t in stacked.findall("s:text[@class='inbar']", ns)] == ["1", "3"]
    assert [t.text for t in stacked.findall("s:text[@class='legend']", ns)] == ["syntax", "logic"]
