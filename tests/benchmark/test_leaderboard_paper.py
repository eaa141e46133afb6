"""`classforge leaderboard` as a paper needs it: three real runs over two datasets (ClassEval, whose
tasks carry no dates, and a classforge release of the same three tasks with first-seen dates), one
ranked table per dataset, model metadata and the after-cutoff window, and CSV/JSON/LaTeX exports
whose numbers are the page's, checked in a headless Chromium at 1280 px."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from classforge_bench.benchmark.leaderboard import load_board
from classforge_bench.benchmark.model_meta import ModelMeta, load_model_meta, parse_cutoffs, with_cutoffs
from classforge_bench.benchmark.results import ResultsError
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.standings import CONTAMINATED, UNDATED, standings
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.core.task import SourceRef
from classforge_bench.pipeline.formats.loader import load_dataset
from classforge_bench.pipeline.formats.release_rows import release_rows, to_arrow_table

REPO = Path(__file__).resolve().parents[2]
FIRST_SEEN = {"ClassEval_8": date(2025, 1, 10), "ClassEval_11": date(2025, 4, 10), "ClassEval_47": date(2025, 7, 10)}
MODELS_TOML = """
[models.reference]
name = "Reference solution"
size = "n/a"
cutoff = 2025-03-01
open = true

[models.empty]
size = "0B"
open = false
"""


def _dated_release(classeval_path: Path, folder: Path) -> Path:
    """The three ClassEval tasks as a classforge release whose sources carry first-seen dates."""
    import pyarrow.parquet as pq

    tasks = load_dataset(classeval_path, task_ids=list(FIRST_SEEN)).tasks
    dated = []
    for t in tasks:
        day = datetime.combine(FIRST_SEEN[t.task_id], datetime.min.time(), UTC)
        src = SourceRef(
            class_id=t.task_id, class_name=t.class_name, domain="d", repo="r", path="m.py", commit="0" * 40,
            first_seen_date=day,
        )  # fmt: skip
        dated.append(t.model_copy(update={"sources": [src]}))
    table, _ = to_arrow_table(release_rows(dated))
    (folder / "data").mkdir(parents=True)
    pq.write_table(table, folder / "data" / "test-00000.parquet")
    return folder


def _run(dataset: Path, root: Path, models: list[str], tasks: list[str], n: int) -> Path:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=root, n_samples=n, bootstrap_resamples=200)
    return evaluate(EvaluationRequest(dataset=dataset, models=models, task_ids=tasks), cfg, env={}).run_dir


@pytest.fixture(scope="module")
def runs(classeval_path, tmp_path_factory) -> list[Path]:
    """ClassEval with the empty model; the dated release with reference and empty; the dated
    release with reference, three samples, on two tasks."""
    base = tmp_path_factory.mktemp("lb")
    release = _dated_release(classeval_path, base / "releases" / "2026.11.28")
    root = base / "results"
    ids = list(FIRST_SEEN)
    return [
        _run(classeval_path, root, ["empty"], ids, 1),
        _run(release, root, ["reference", "empty"], ids, 1),
        _run(release, root, ["reference"], ids[:2], 3),
    ]


META = {"reference": ModelMeta(cutoff=date(2025, 3, 1)), "empty": ModelMeta(cutoff=date(2024, 1, 1))}


def test_task_first_seen_is_its_oldest_source_and_classeval_has_none(classeval, runs):
    assert all(t.first_seen is None for t in classeval.tasks)
    release = load_dataset(runs[0].parent.parent / "releases" / "2026.11.28")
    assert {t.task_id: t.first_seen for t in release.tasks} == FIRST_SEEN
    two = release.tasks[0].model_copy(deep=True)
    assert two.sources is not None
    older = two.sources[0].model_copy(update={"first_seen_date": datetime(2024, 5, 1, tzinfo=UTC)})
    assert two.model_copy(update={"sources": [two.sources[0], older]}).first_seen == date(2024, 5, 1)


def test_one_board_per_dataset_and_solved_by_nobody_within_it(runs):
    board = load_board(runs)
    assert [(d.label, len(d.rows)) for d in board.datasets] == [
        ("classeval/ClassEval_data.json", 1),
        ("releases/2026.11.28", 3),
    ]
    classeval, release = board.datasets
    # The same ids are solved by the reference on the other dataset: that must not count here.
    assert classeval.solved_by_nobody() == list(FIRST_SEEN)
    assert release.solved_by_nobody() == [] and release.solved_by_everybody() == []
    assert "2 different datasets" in board.notes[0] and "/" + board.datasets[0].label not in board.notes[0]


def test_ranked_with_the_cutoff_window_and_contamination_marks(runs):
    classeval, release = load_board(runs).datasets
    ranked = standings(release, META)
    assert [(s.rank, s.model, s.tasks) for s in ranked] == [(1, "reference", 3), (1, "reference", 2), (3, "empty", 3)]
    first, second, empty = ranked
    assert first.class_base is not None and first.class_base.value == 100.0
    # cutoff 2025-03-01: ClassEval_8 (January) is older, the other two are after it
    assert (first.window_tasks, first.older_tasks, first.flag) == (2, 1, CONTAMINATED)
    assert first.window is not None and first.window.value == 100.0
    assert (second.window_tasks, second.older_tasks) == (1, 1)  # it scored only ClassEval_8 and _11
    assert (empty.window_tasks, empty.older_tasks, empty.flag) == (3, 0, "")
    assert empty.window is not None and empty.window.value == 0.0
    (only,) = standings(classeval, META)
    assert (only.window, only.window_tasks, only.undated_tasks, only.flag) == (None, 0, 3, UNDATED)
    assert standings(classeval, {})[0].flag == "cutoff unknown"


def test_model_metadata_file_and_flags(tmp_path):
    toml = tmp_path / "models.toml"
    toml.write_text(MODELS_TOML, encoding="utf-8")
    meta = load_model_meta(toml)
    assert meta["reference"] == ModelMeta(name="Reference solution", size="n/a", cutoff=date(2025, 3, 1), open=True)
    as_json = tmp_path / "models.json"
    as_json.write_text(json.dumps({"models": {k: v.model_dump(mode="json") for k, v in meta.items()}}))
    assert load_model_meta(as_json) == meta
    merged = with_cutoffs(meta, parse_cutoffs(["empty=2024-01-01", "org/m=x=2023-12-31"]))
    assert merged["empty"].cutoff == date(2024, 1, 1) and merged["empty"].size == "0B"
    assert merged["org/m=x"].cutoff == date(2023, 12, 31)
    for bad in ("empty", "empty=soon", "=2024-01-01"):
        with pytest.raises(ResultsError, match="expected MODEL=YYYY-MM-DD"):
            parse_cutoffs([bad])
    (tmp_path / "bad.toml").write_text("[models.x]\nsize = 7\n", encoding="utf-8")
    with pytest.raises(ResultsError, match=r"bad.toml: not a model metadata file \(models.x.size: "):
        load_model_meta(tmp_path / "bad.toml")


@pytest.fixture(scope="module")
def written(runs, tmp_path_factory) -> tuple[Path, str]:
    """The command itself, with a metadata file and a --cutoff flag."""
    out = tmp_path_factory.mktemp("page")
    (out / "models.toml").write_text(MODELS_TOML, encoding="utf-8")
    cmd = [sys.executable, "-m", "classforge_bench.pipeline.cli", "leaderboard", *map(str, runs)]
    cmd += ["-o", "board.html", "--models", "models.toml", "--cutoff", "empty=2024-01-01"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=out)
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_the_command_writes_the_page_and_its_exports(written):
    out, stdout = written
    assert " ".join(stdout.split()) == (  # rich may wrap the line
        "4 rows from 3 run(s) over 2 dataset(s) written to board.html (tables also as board.csv, board.json, board.tex)"
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "board.csv",
        "board.html",
        "board.json",
        "board.tex",
        "models.toml",
    ]


def test_nothing_written_holds_an_absolute_path(runs, written, classeval_path):
    out, _ = written
    roots = {str(runs[0].parents[1]), str(out), str(Path.home()), str(REPO), str(classeval_path.parent)}
    files = [out / f"board.{ext}" for ext in ("html", "csv", "json", "tex")]
    files += [r / name for r in runs for name in ("summary.md", "results.html")]
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert [r for r in roots if r in text] == [], path


def _latex_rows(tex: str) -> list[list[str]]:
    body = re.findall(r"\\midrule\n(.*?)\\bottomrule", tex, re.S)
    return [[c.strip() for c in line.removesuffix(r" \\").split(" & ")] for part in body for line in part.splitlines()]


def test_the_page_in_chromium_at_1280_px_matches_the_exports(written, browser):
    out, _ = written
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto((out / "board.html").resolve().as_uri())
    page.wait_for_load_state("load")
    assert problems == []
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than 1280 px"
    assert page.locator("h2.dataset").all_inner_texts() == [
        "Dataset classeval/ClassEval_data.json",
        "Dataset releases/2026.11.28",
    ]
    tables = page.locator("table.ranked")
    assert tables.count() == 2
    for i in range(2):  # the ranked tables fit: no scrolling inside their own box either
        assert tables.nth(i).evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    heads = page.locator("#ranked-2 thead th").all_inner_texts()
    shown = []  # (rank, model, class pass@1, method pass@1, after-cutoff) per row, as the page shows them
    for d in (1, 2):
        for tr in page.locator(f"#ranked-{d} tbody tr").all():
            cells = [c.strip() for c in tr.locator("td").all_inner_texts()]
            num = [c.split("\n")[0].strip() for c in cells]
            col = {h.strip(): num[i] for i, h in enumerate(heads)}
            shown.append((col["#"], col["Model"], col["Class pass@1"], col["Method pass@1"], col[heads[-2].strip()]))
    page.screenshot(path=str(out / "shot.png"), full_page=True)
    page.close()
    assert shown == [
        ("1", "empty", "0.0?", "0.0", "-"),
        ("1", "Reference solution", "100.0\u2020", "100.0", "100.0 (2)"),
        ("1", "Reference solution", "100.0\u2020", "100.0", "100.0 (1)"),
        ("3", "empty", "0.0", "0.0", "0.0 (3)"),
    ]
    plain = [(r, m, c.rstrip("\u2020?"), me, w) for r, m, c, me, w in shown]

    with (out / "board.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    window = lambda p, n: "-" if p in ("", None) else f"{float(p):.1f} ({n})"  # noqa: E731
    from_csv = [
        (r["rank"], r["name"], f"{float(r['class_base_pass1']):.1f}", f"{float(r['method_base_pass1']):.1f}",
         window(r["window_pass1"], r["window_tasks"]))
        for r in rows
    ]  # fmt: skip
    assert from_csv == plain
    data = json.loads((out / "board.json").read_text(encoding="utf-8"))
    assert [d["dataset"] for d in data["datasets"]] == ["classeval/ClassEval_data.json", "releases/2026.11.28"]
    assert (
        data["datasets"][1]["first_seen"] == ["2025-01-10", "2025-07-10"] and data["datasets"][0]["first_seen"] is None
    )
    from_json = [
        (str(r["rank"]), r["name"], f"{r['class_base_pass1']:.1f}", f"{r['method_base_pass1']:.1f}",
         window(r["window_pass1"], r["window_tasks"]))
        for d in data["datasets"] for r in d["rows"]
    ]  # fmt: skip
    assert from_json == plain
    tex = (out / "board.tex").read_text(encoding="utf-8")
    assert tex.count(r"\begin{tabular}") == 2
    from_tex = [
        (r[0], r[1], r[5].replace(r"$^\dagger$", "\u2020"), r[7], r[9].replace("--", "-")) for r in _latex_rows(tex)
    ]
    assert from_tex == [(r, m, c.rstrip("?"), me, w) for r, m, c, me, w in shown]


def test_with_plus_columns_and_long_names_the_ranked_table_still_fits_1280_px(runs, browser, tmp_path):
    from classforge_bench.benchmark.leaderboard import board_of
    from classforge_bench.benchmark.results import load_results
    from classforge_bench.benchmark.results_page import write_page

    results = load_results(runs[1])
    plus = [g.model_copy(deep=True) for g in results.scores]
    board = board_of([results.model_copy(update={"plus_scores": plus})])
    meta = {
        "reference": ModelMeta(name="Qwen2.5-Coder-32B-Instruct-AWQ", size="32B", cutoff=date(2025, 3, 1), open=True),
        "empty": ModelMeta(name="deepseek-ai/DeepSeek-Coder-V2-Lite", size="16B", cutoff=date(2024, 6, 1), open=False),
    }
    path = write_page(board, tmp_path / "plus.html", meta=meta)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.resolve().as_uri())
    heads = page.locator("#ranked-1 thead th").all_inner_texts()
    assert "Class pass@1 plus" in heads and "Method pass@1 plus" in heads
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert page.locator("#ranked-1").evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    page.close()
