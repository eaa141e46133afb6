"""One funnel order in every output of a run: terminal, card, report, plot and Prefect artifact.

The funnel below arrives in the order funnel.json gives back (sorted keys) with structure dropping
8 of 35 classes before imports: every output must list structure first, and the classes' yield must
run from the 35 structure saw, not the 27 imports saw."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import FunnelReport, StageCounts

COUNTS = {
    "clone": (2, 2),
    "compile": (12, 10),
    "dedup": (7, 6),
    "imports": (27, 20),
    "provenance": (9, 7),
    "references": (20, 12),
    "release": (3, 3),
    "select": (14, 12),
    "structure": (35, 27),
    "testability": (12, 9),
    "tests": (5, 4),
    "compose": (6, 5),
    "task": (3, 3),
    "judges": (4, 3),
    "solution": (3, 3),
    "pairing": (6, 6),
}
EXPECTED = [s for s in R.PIPELINE_ORDER if s in COUNTS]


def _funnel() -> FunnelReport:
    return FunnelReport(stages={k: StageCounts(seen=a, kept=b) for k, (a, b) in sorted(COUNTS.items())})


def _markdown_stages(text: str) -> list[str]:
    """Stage names in the funnel table of a Markdown page (the first cell of six-column rows)."""
    rows = (line.split("|") for line in text.splitlines())
    return [cells[1].strip() for cells in rows if len(cells) == 8 and cells[1].strip() in COUNTS]


def test_terminal_card_report_plot_and_artifact_show_one_order(
    write: Callable[..., Path], tmp_path: Path, monkeypatch: Any
) -> None:
    from classforge_bench.flows import build_benchmark
    from classforge_bench.pipeline.cli.app import funnel_table
    from classforge_bench.pipeline.llm.ledger import Usage
    from classforge_bench.pipeline.release.plots import funnel_figure
    from classforge_bench.pipeline.release.report import write_report

    funnel = _funnel()
    assert EXPECTED.index("structure") < EXPECTED.index("imports")

    console = Console(record=True, width=200)
    console.print(funnel_table(funnel))
    terminal = [line.split("│")[1].strip() for line in console.export_text().splitlines() if line.count("│") > 2]
    terminal = [s for s in terminal if s in COUNTS]

    release = write(funnel=funnel)
    card = (release / "README.md").read_text(encoding="utf-8")
    report = write_report(release, tmp_path / "report").markdown

    fig = funnel_figure(funnel)
    plot = [t.get_text().split(" (")[0] for t in fig.axes[0].get_yticklabels()][::-1]

    published: dict[str, list[dict]] = {}
    monkeypatch.setattr(build_benchmark, "create_table_artifact", lambda rows, key, **_: published.update({key: rows}))
    monkeypatch.setattr(build_benchmark, "create_markdown_artifact", lambda **_: None)
    summary = build_benchmark.BuildRunSummary.model_validate(
        {
            "snapshot": tmp_path,
            "classes": 6,
            "repos": 2,
            "tasks": 3,
            "incomplete": 0,
            "stopped": None,
            "build_dir": tmp_path,
            "release": release,
            "version": "v",
            "note": "released",
            "funnel": FunnelReport.model_validate_json(funnel.model_dump_json()).model_dump(),
            "usage": Usage(),
        }
    )
    state = build_benchmark.Completed(message="released")
    build_benchmark.publish_artifacts(summary, state)
    artifact = [row["stage"] for row in published["build-funnel"]]

    outputs = {
        "terminal": terminal,
        "card": _markdown_stages(card),
        "report": _markdown_stages(report),
        "plot": plot,
        "artifact": artifact,
    }
    assert outputs == dict.fromkeys(outputs, EXPECTED)
    # the classes' yield runs from the first class stage (structure: 35) to the last (dedup: 6)
    assert "6 of 35 classes" in card and "6 of 35 classes" in report


def test_a_merge_and_a_reread_keep_the_order() -> None:
    funnel = _funnel()
    late = FunnelReport(stages={"task": StageCounts(seen=1, kept=1), "structure": StageCounts(seen=1, kept=1)})
    assert list(late.merge(funnel).stages) == EXPECTED
    assert list(FunnelReport.model_validate_json(funnel.model_dump_json()).stages) == EXPECTED
