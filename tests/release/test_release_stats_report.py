"""Statistics (hand-checked against release_taskgen's table), report rendering and the report CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from release_taskgen import DEPTH, LOC, METHODS, as_tasks, make_tasks
from typer.testing import CliRunner

from classforge_bench.pipeline.formats.release_rows import release_rows as normalize_tasks
from classforge_bench.pipeline.release.errors import ReleaseError
from classforge_bench.pipeline.release.report import write_report
from classforge_bench.pipeline.release.stats import compute_stats

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_stats_match_hand_counts() -> None:
    stats = compute_stats(normalize_tasks(as_tasks(make_tasks())))
    assert (stats.total, stats.intra, stats.cross) == (3, 1, 2)
    per_task = {m.task_id: (m.loc, m.dependency_depth, m.methods, m.methods_to_generate) for m in stats.per_task}
    assert per_task == {"cf-0001": (28, 2, 6, 5), "cf-0002": (19, 3, 5, 4), "cf-0003": (23, 2, 5, 4)}
    assert sorted(LOC.values()) == [19, 23, 28] and sorted(DEPTH.values()) == [2, 2, 3]
    assert sorted(METHODS.values()) == [5, 5, 6]
    assert stats.loc.model_dump() == {"mean": 23.33, "median": 23.0, "min": 19.0, "max": 28.0}
    assert stats.dependency_depth.model_dump() == {"mean": 2.33, "median": 2.0, "min": 2.0, "max": 3.0}
    assert stats.methods.model_dump() == {"mean": 5.33, "median": 5.0, "min": 5.0, "max": 6.0}
    assert stats.methods_to_generate.model_dump() == {"mean": 4.33, "median": 4.0, "min": 4.0, "max": 5.0}
    rows = {r.domain: (r.tasks, r.intra, r.cross, r.involved) for r in stats.domains}
    assert rows["Utils"] == (1, 1, 0, 1)
    assert rows["Database Operations"] == (1, 0, 1, 1)
    assert rows["File Handling"] == (1, 0, 1, 1)
    assert rows["Game Development"] == (0, 0, 0, 1)  # only as domain2
    assert rows["Finance & E-commerce"] == (0, 0, 0, 1)
    assert rows["Security & Crypto"] == (0, 0, 0, 0)  # all 11 domains listed, as in Table 2
    assert len(rows) == 11 and sum(r[0] for r in rows.values()) == 3


def test_real_source_tasks_are_counted_drawn_and_named() -> None:
    """A real-source task is neither intra nor cross: its own column, bar segment and words."""
    import warnings

    from classforge_bench.pipeline.release.card import _contents_section
    from classforge_bench.pipeline.release.plots import domain_figure
    from classforge_bench.pipeline.release.tables import domain_table, task_kinds

    rows = make_tasks()
    for row in rows[1:]:
        row.update(composition_type=None, domain1="Security & Crypto", domain2=None)
    stats = compute_stats(normalize_tasks(as_tasks(rows)))
    assert (stats.intra, stats.cross, stats.real) == (1, 0, 2)
    security = next(r for r in stats.domains if r.domain == "Security & Crypto")
    assert (security.tasks, security.intra, security.cross, security.real, security.involved) == (2, 0, 0, 2, 2)
    table = domain_table(stats)
    assert "| Domain | Tasks | Intra | Cross | Real | Involved |" in table
    assert "| Security & Crypto | 2 | 0 | 0 | 2 | 2 |" in table and "| **Total** | 3 | 1 | 0 | 2 | - |" in table
    assert task_kinds(stats) == (
        "1 intra-domain and 0 cross-domain compositions; 2 real-source tasks (a harvested class as it is)"
    )
    for row in rows[:1]:
        row.update(composition_type=None, domain1="Utils", domain2=None)
    only_real = compute_stats(normalize_tasks(as_tasks(rows)))
    assert task_kinds(only_real) == "3 real-source tasks (a harvested class as it is)"
    assert "3 tasks in one split, `test`: 3 real-source tasks" in _contents_section(only_real, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty bar chart warned of identical x limits
        figure = domain_figure(only_real)
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert labels == ["real-source"]
    # compositions only: the table keeps ClassEval-Pro's columns
    assert "| Domain | Tasks | Intra | Cross | Involved |" in domain_table(
        compute_stats(normalize_tasks(as_tasks(make_tasks())))
    )


def test_stats_json_in_release(release: Path) -> None:
    stats = json.loads((release / "stats.json").read_text())
    assert stats["total"] == 3 and stats["loc"]["mean"] == 23.33
    assert "class statement" in stats["definitions"]["loc"]


def test_release_plots_are_png(release: Path) -> None:
    for name in ("funnel", "domains", "loc", "methods"):
        data = (release / "plots" / f"{name}.png").read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 1000, name


def test_report_renders_numbers_and_plots(release: Path, tmp_path: Path) -> None:
    result = write_report(release, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert md == result.markdown
    for needle in (
        "# classforge release 2025.06.01",
        "Tasks: **3** (1 intra-domain and 2 cross-domain compositions)",
        "| Utils | 1 | 1 | 0 | 1 |",
        "| Game Development | 0 | 0 | 0 | 1 |",
        "| LOC | 23.33 | 23 | 19 | 28 |",
        "| Dependency depth | 2.33 | 2 | 2 | 3 |",
        "| Methods | 5.33 | 5 | 5 | 6 |",
        "| Methods to generate | 4.33 | 4 | 4 | 5 |",
        "| harvest.filters | items | 40 | 12 | 30.0% | too_few_methods x20, third_party_import x8 |",
        "| solution | candidate pairs | 4 | 3 | 75.0% | coverage_below_threshold x1 |",
        "3 of 6 candidate pairs (50.0%); 12 of 40 items (30.0%)",
        "![funnel](funnel.png)",
        "| MIT | 3 |",
        "| Apache-2.0 | 1 |",
        "![domain distribution](domains.png)",
    ):
        assert needle in md, needle
    assert set(result.plots) == {"funnel", "domains", "loc", "methods"}
    for path in result.plots.values():
        assert path.parent == tmp_path / "report"
        assert path.read_bytes().startswith(PNG_MAGIC) and path.stat().st_size > 1000


def test_report_refuses_to_write_inside_the_release(release: Path) -> None:
    with pytest.raises(ReleaseError, match="cannot go inside the release folder"):
        write_report(release, release / "report")


def test_report_of_a_missing_release_names_it(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="release 9.9.9: .* is not a directory"):
        write_report(tmp_path / "9.9.9", tmp_path / "out")


def test_report_cli(release: Path, tmp_path: Path) -> None:
    from classforge_bench.pipeline.cli import app

    out = tmp_path / "cli-report"
    result = CliRunner().invoke(app, ["report", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "classforge release 2025.06.01" in result.output
    assert "23.33" in result.output
    assert (out / "report.md").is_file() and (out / "domains.png").read_bytes().startswith(PNG_MAGIC)
