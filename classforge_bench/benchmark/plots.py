"""PNG plots of a run: pass@k per strategy, and the error taxonomy.

matplotlib's object API on an Agg canvas (no pyplot, no backend switch, thread-safe), imported
inside the functions so importing this module costs nothing. Builders (`*_figure`) are separate
from saving so tests can inspect the axes; legends sit outside the axes.
"""

from __future__ import annotations

from pathlib import Path

from classforge_bench.benchmark.results import RunResults
from classforge_bench.benchmark.taxonomy import CATEGORIES
from classforge_bench.pipeline.core.plotting import integer_axis, legend_outside, new_figure, save_png

PASSK_PNG = "passk.png"
TAXONOMY_PNG = "taxonomy.png"


def passk_figure(results: RunResults):
    """pass@k (%) per (strategy, model), class and method level side by side.

    Lines over k with the bootstrap interval as a band; when only one k was computed (n = 1) a line
    would be a single dot, so each group is a bar with its interval as an error bar instead.
    """
    groups = [g for g in results.scores if g.metrics is not None]
    ks = sorted(
        {k for g in groups for level in ("class_level", "method_level") for k in getattr(g.metrics, level).full}
    )
    fig = new_figure(11.0, 4.6)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, level, title in (
        (axes[0], "class_level", "Class-level full success"),
        (axes[1], "method_level", "Method-level full success"),
    ):
        ax.set_title(title)
        ax.set_ylim(0, 102)
        ax.grid(alpha=0.3, axis="y")
        if len(ks) == 1:
            _passk_bars(ax, groups, level, ks[0])
        else:
            _passk_lines(ax, groups, level, ks)
    axes[0].set_ylabel("pass@k (%)")
    if not groups:
        for ax in axes:
            ax.text(0.5, 0.5, "no scored samples", ha="center", va="center", transform=ax.transAxes, color="#555555")
    legend_outside(fig, axes[0].get_legend_handles_labels()[0])
    return fig


def _label(g) -> str:
    return f"{g.strategy} / {g.model}"


def _passk_lines(ax, groups, level: str, ks: list[int]) -> None:
    for g in groups:
        scores = getattr(g.metrics, level).full
        gk = sorted(scores)
        if not gk:
            continue
        line = ax.plot(gk, [100 * scores[k].value for k in gk], marker="o", label=_label(g))[0]
        ax.fill_between(
            gk,
            [100 * scores[k].ci_low for k in gk],
            [100 * scores[k].ci_high for k in gk],
            color=line.get_color(),
            alpha=0.12,
        )
    ax.set_xlabel("k")
    ax.set_xticks(ks)


def _passk_bars(ax, groups, level: str, k: int) -> None:
    for i, g in enumerate(groups):
        score = getattr(g.metrics, level).full.get(k)
        if score is None:
            continue
        value = 100 * score.value
        ax.bar(
            i,
            value,
            yerr=[[value - 100 * score.ci_low], [100 * score.ci_high - value]],
            capsize=4,
            color=f"C{i}",
            label=_label(g),
        )
    ax.set_xticks(range(len(groups)), [""] * len(groups))
    ax.set_xlabel(f"pass@{k} (one sample per task: a bar per strategy / model)")


def passk_plot(results: RunResults, path: Path) -> Path:
    return save_png(passk_figure(results), path)


def taxonomy_figure(results: RunResults):
    """Failed samples per error category, grouped bars per (strategy, model); a plain panel when none failed."""
    groups = results.scores
    fig = new_figure(max(7.0, 1.2 * len(CATEGORIES) + 2), 4.6)
    ax = fig.add_subplot()
    if not any(g.taxonomy.get(c, 0) for g in groups for c in CATEGORIES):
        ax.set_axis_off()
        ax.set_title("Error taxonomy of failed samples")
        scored = sum(g.n_scored for g in groups)
        ax.text(
            0.5,
            0.5,
            f"no failures: every one of the {scored} scored samples passed" if scored else "no scored samples",
            ha="center",
            va="center",
            fontsize="large",
            color="#555555",
            transform=ax.transAxes,
        )
        return fig
    width = 0.8 / max(1, len(groups))
    xs = range(len(CATEGORIES))
    for i, g in enumerate(groups):
        ax.bar(
            [x + i * width - 0.4 + width / 2 for x in xs],
            [g.taxonomy.get(c, 0) for c in CATEGORIES],
            width=width,
            label=_label(g),
        )
    ax.set_xticks(list(xs), [c.replace("_", "/") for c in CATEGORIES])
    integer_axis(ax.yaxis)  # counts of samples
    ax.set_ylim(bottom=0)
    ax.set_ylabel("failed samples")
    ax.set_title("Error taxonomy of failed samples")
    legend_outside(fig, ax.get_legend_handles_labels()[0])
    return fig


def taxonomy_plot(results: RunResults, path: Path) -> Path:
    return save_png(taxonomy_figure(results), path)


def write_plots(results: RunResults, run_dir: Path) -> list[Path]:
    return [passk_plot(results, Path(run_dir) / PASSK_PNG), taxonomy_plot(results, Path(run_dir) / TAXONOMY_PNG)]
