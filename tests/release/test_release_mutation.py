"""Mutation scores in a release: the row column, the statistics, the card and the report."""

from __future__ import annotations

import json
from pathlib import Path

from release_taskgen import as_tasks, make_tasks, release_kwargs

from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.formats.release_rows import read_release_rows as read_release_tasks
from classforge_bench.pipeline.release.report import write_report
from classforge_bench.pipeline.release.writer import write_release

REPORT = {
    "mutants": 20,
    "killed": 15,
    "survived": 4,
    "timed_out": 1,
    "equivalent": 0,
    "invalid": 0,
    "score": 0.8,
    "timeouts_count_as": "killed",
    "max_mutants_per_method": 10,
    "seed": 0,
    "by_operator": {"arith": [5, 6]},
    "surviving": [
        {
            "mutant_id": "m1",
            "method": "LinkedStack.pop",
            "operator": "return",
            "line": 12,
            "description": "return x -> return None",
            "diff": "--- original\n+++ mutant\n",
        }
    ],
}


def scored_tasks() -> list[dict]:
    tasks = make_tasks()
    for task, score in zip(tasks, (0.8, 0.95, None)):
        task["mutation_score"] = score
        task["mutation"] = None if score is None else {**REPORT, "score": score}
    return tasks


def test_release_rows_stats_card_and_report_carry_the_mutation_score(tmp_path: Path) -> None:
    folder = write_release(as_tasks(scored_tasks()), output_root=tmp_path / "releases", **release_kwargs())
    rows = {r["task_id"]: r for r in read_release_tasks(folder)}
    assert [rows[t]["mutation_score"] for t in ("cf-0001", "cf-0002", "cf-0003")] == [0.8, 0.95, None]
    assert rows["cf-0001"]["mutation"]["surviving"][0]["diff"].startswith("--- original")

    stats = json.loads((folder / "stats.json").read_text())
    assert stats["mutation_score"] == {"mean": 87.5, "median": 87.5, "min": 80.0, "max": 95.0}
    assert [m["mutation_score"] for m in stats["per_task"]] == [80.0, 95.0, None]
    assert "non-equivalent mutants" in stats["definitions"]["mutation_score"]

    card = (folder / "README.md").read_text()
    row = "| Mutation score, % (2 of 3 tasks) | 87.50 | 87.50 | 80 | 95 |"
    assert row in card
    min_score = Config().construction.mutation.min_score
    assert f"kill at least {100 * min_score:g}% of the non-equivalent mutants" in card
    assert row in write_report(folder, tmp_path / "report").markdown


def test_a_release_without_scores_says_nothing_about_them(tmp_path: Path) -> None:
    config = Config()
    config.construction.mutation.enabled = False
    folder = write_release(as_tasks(make_tasks()), output_root=tmp_path / "releases", **release_kwargs(config=config))
    card = (folder / "README.md").read_text()
    assert "Mutation score" not in card and "mutants" not in card
    assert json.loads((folder / "stats.json").read_text())["mutation_score"] is None
