"""Every plot rendered and inspected: integer axes for counts, labels, legends clear of the data.

Release plots come from the release fixture; evaluator plots from real `evaluate` runs of the
reference and empty models on the same tasks (one sample per task: single-k bars; three samples:
lines over k; only passing samples: the "no failures" panel).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from release_taskgen import make_tasks

from classforge_bench.benchmark.plots import passk_figure, taxonomy_figure
from classforge_bench.benchmark.plots import write_plots as write_run_plots
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.core.funnel import FunnelReport, StageCounts
from classforge_bench.pipeline.release.plots import PLOT_FILES, domain_figure, funnel_figure, histogram_figure
from classforge_bench.pipeline.release.stats import compute_stats


def _drawn(fig):
    fig.canvas.draw()
    return fig


def _whole(values) -> bool:
    return all(float(v).is_integer() for v in values)


def _visible_ticks(axis) -> list[float]:
    lo, hi = sorted(axis.get_view_interval())
    return [t for t in axis.get_majorticklocs() if lo - 1e-9 <= t <= hi + 1e-9]


def _legend_clear_of_axes(fig) -> None:
    """Where matplotlib can tell: the legend's drawn box does not overlap any axes' drawn box."""
    assert fig.legends, "expected a figure legend"
    renderer = fig.canvas.get_renderer()
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), "legend overlaps the plotting area"


def test_funnel_plot_in_pipeline_order_with_units() -> None:
    funnel = FunnelReport(
        stages={
            "clone": StageCounts(seen=8, kept=8),
            "compile": StageCounts(seen=40, kept=39),
            "dedup": StageCounts(seen=19, kept=17),
            "judges": StageCounts(seen=3, kept=2),
            "task": StageCounts(seen=2, kept=2),
        }
    )
    fig = _drawn(funnel_figure(funnel))
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()][::-1]  # barh draws bottom-up
    assert labels == [
        "clone (repositories)",
        "compile (files)",
        "dedup (classes)",
        "judges (candidate pairs)",
        "task (tasks)",
    ]
    assert _whole(_visible_ticks(ax.xaxis)) and ax.get_xlabel() and ax.get_title()
    assert "2 of 3" in [t.get_text() for t in ax.texts]
    _legend_clear_of_axes(fig)


def test_domain_plot_shows_domains_seen_only_as_second_domain(release: Path) -> None:
    stats = compute_stats(make_tasks())
    fig = _drawn(domain_figure(stats))
    (ax,) = fig.axes
    names = {t.get_text() for t in ax.get_yticklabels()}
    # Game Development and Finance & E-commerce are only ever a task's domain2 in the fixture.
    assert {"Game Development", "Finance & E-commerce", "Utils", "Database Operations", "File Handling"} == names
    assert _whole(_visible_ticks(ax.xaxis)) and ax.get_xlabel() == "tasks"
    _legend_clear_of_axes(fig)


@pytest.mark.parametrize("values", [[28, 19, 23], [5, 5, 6], [7], list(range(10, 200, 3)), [17, 18, 21, 30, 45, 52]])
def test_histograms_have_integer_axes(values: list[int]) -> None:
    fig = _drawn(histogram_figure(values, title="t", xlabel="methods"))
    (ax,) = fig.axes
    assert _whole(_visible_ticks(ax.yaxis))
    assert all(re.fullmatch(r"\d+(–\d+)?", t.get_text()) for t in ax.get_xticklabels())  # whole-number ranges
    assert ax.get_xlabel() == "methods" and ax.get_ylabel() == "tasks"
    _legend_clear_of_axes(fig)


@pytest.mark.parametrize("values", [[17, 18, 21, 30, 45, 52], [28, 19, 23], list(range(10, 200, 3)), [3, 3, 4, 9]])
def test_every_histogram_bar_is_labelled_with_the_values_it_counts(values: list[int]) -> None:
    """A bar's tick sits at its centre and names a range; the bar's height is the count of values in it."""
    fig = _drawn(histogram_figure(values, title="LOC", xlabel="LOC"))
    (ax,) = fig.axes
    ticks = dict(zip(ax.get_xticks(), (t.get_text() for t in ax.get_xticklabels())))
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert sum(p.get_height() for p in bars) == len(values)
    for bar in bars:
        centre = bar.get_x() + bar.get_width() / 2
        label = next(text for x, text in ticks.items() if abs(x - centre) < 1e-9)
        lo, _, hi = label.partition("–")
        lo, hi = int(lo), int(hi or lo)
        assert bar.get_height() == sum(lo <= v <= hi for v in values), (label, bar.get_height())
        assert bar.get_x() < lo and hi < bar.get_x() + bar.get_width()  # the range lies inside the bar


def test_domain_bars_are_labelled_with_their_counts() -> None:
    stats = compute_stats(make_tasks())
    fig = _drawn(domain_figure(stats))
    (ax,) = fig.axes
    texts = {round(t.xy[1]): t.get_text() for t in ax.texts}  # bar index (y) -> its label
    by_name = {t.get_text(): texts[round(t.get_position()[1])] for t in ax.get_yticklabels()}
    rows = [r for r in stats.domains if r.involved]
    assert len(texts) == len(rows) == len(by_name)
    for row in rows:
        label = by_name[row.domain]
        assert label.startswith(f"{row.involved} (")
        assert (f"{row.intra} intra" in label) == bool(row.intra) and (f"{row.cross} cross" in label) == bool(row.cross)
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    assert all(axes_box.x1 >= t.get_window_extent(renderer).x1 for t in ax.texts), "a label runs past the axes"


def test_release_has_every_plot_and_the_card_embeds_them(release: Path) -> None:
    card = (release / "README.md").read_text()
    for name in PLOT_FILES.values():
        assert (release / "plots" / name).stat().st_size > 1000 and f"(plots/{name})" in card


def test_empty_funnel_is_a_plain_panel() -> None:
    fig = _drawn(funnel_figure(FunnelReport()))
    (ax,) = fig.axes
    assert not ax.axison and [t.get_text() for t in ax.texts] == ["no funnel counts were recorded"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ds") / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in make_tasks()), encoding="utf-8")
    return path


def _run(dataset: Path, out: Path, models: list[str], n: int):
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=out, bootstrap_resamples=200, n_samples=n, ks=[1, 3] if n >= 3 else [1])
    return evaluate(EvaluationRequest(dataset=dataset, models=models), cfg, env={})


def test_passk_with_one_sample_is_bars_and_taxonomy_counts_are_integers(dataset: Path, tmp_path: Path) -> None:
    out = _run(dataset, tmp_path / "r", ["reference", "empty"], n=1)
    fig = _drawn(passk_figure(out.results))
    left, _right = fig.axes
    # A bar per (strategy, model); no labelled 1-point lines (error-bar caps are unlabelled lines).
    assert len(left.patches) == 2 and not [ln for ln in left.lines if not ln.get_label().startswith("_")]
    assert left.get_ylabel() == "pass@k (%)" and "pass@1" in left.get_xlabel()
    heights = sorted(p.get_height() for p in left.patches)
    assert heights == [0.0, 100.0]  # empty fails everything, reference passes
    _legend_clear_of_axes(fig)
    tax = _drawn(taxonomy_figure(out.results))
    (ax,) = tax.axes
    assert (
        _whole(_visible_ticks(ax.yaxis)) and min(_visible_ticks(ax.yaxis)) >= 0 and ax.get_ylabel() == "failed samples"
    )
    _legend_clear_of_axes(tax)
    paths = write_run_plots(out.results, tmp_path / "png")
    assert all(p.stat().st_size > 1000 for p in paths)


def test_passk_with_three_samples_is_lines_over_k(dataset: Path, tmp_path: Path) -> None:
    out = _run(dataset, tmp_path / "r", ["reference"], n=3)
    fig = _drawn(passk_figure(out.results))
    left, _ = fig.axes
    (line,) = left.lines
    assert list(line.get_xdata()) == [1, 3] and list(left.get_xticks()) == [1, 3] and left.get_xlabel() == "k"
    _legend_clear_of_axes(fig)


def test_taxonomy_without_failures_is_a_plain_panel(dataset: Path, tmp_path: Path) -> None:
    out = _run(dataset, tmp_path / "r", ["reference"], n=1)
    fig = _drawn(taxonomy_figure(out.results))
    (ax,) = fig.axes
    assert not ax.axison
    assert [t.get_text() for t in ax.texts] == ["no failures: every one of the 3 scored samples passed"]
