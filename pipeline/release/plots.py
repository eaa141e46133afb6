"""PNG plots of a release: the funnel, the domains, and the size distributions.

Each plot has a `*_figure` builder (tests inspect its axes) and is saved through `pipeline.core.plotting`
(Agg canvas, no pyplot, deterministic bytes). Counts get integer axes; legends sit outside the
axes so they never cover data.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.core.funnel import FunnelReport
from pipeline.core.plotting import integer_axis, legend_outside, new_figure, save_png
from pipeline.release.stats import DatasetStats
from pipeline.release.tables import ordered_stages, stage_unit

PLOT_FILES = {"funnel": "funnel.png", "domains": "domains.png", "loc": "loc.png", "methods": "methods.png"}
UNIT_COLOURS = {"repositories": "#8172B3", "files": "#64B5CD", "classes": "#4C72B0", "candidate pairs": "#DD8452",
                "tasks": "#55A868"}


def funnel_figure(funnel: FunnelReport):
    """Kept of seen per stage, top to bottom in pipeline order, one colour per unit counted."""
    stages = ordered_stages(funnel)
    fig = new_figure(8.0, max(2.6, 0.38 * len(stages) + 1.4))
    ax = fig.add_subplot()
    if not stages:
        return _empty_panel(fig, ax, "Funnel", "no funnel counts were recorded")
    names = [f"{stage} ({stage_unit(stage)})" for stage, _ in stages][::-1]
    seen = [c.seen for _, c in stages][::-1]
    kept = [c.kept for _, c in stages][::-1]
    colours = [UNIT_COLOURS.get(stage_unit(stage), "#937860") for stage, _ in stages][::-1]
    ax.barh(names, seen, color="#DDDDDD", label="seen")
    ax.barh(names, kept, color=colours)
    for y, (k, s) in enumerate(zip(kept, seen)):
        ax.annotate(f"{k} of {s}", (s, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize="small")
    ax.set_xlim(0, max(seen) * 1.18 or 1)
    integer_axis(ax.xaxis)
    ax.set_xlabel("items per stage (each stage counts the unit in brackets)")
    ax.set_title("Funnel: kept of seen at each stage")
    from matplotlib.patches import Patch

    units = list(dict.fromkeys(stage_unit(stage) for stage, _ in stages))
    handles = [Patch(color="#DDDDDD", label="seen (dropped)")] + [
        Patch(color=UNIT_COLOURS.get(u, "#937860"), label=f"kept: {u}") for u in units]
    legend_outside(fig, handles)
    return fig


def domain_figure(stats: DatasetStats):
    """Tasks per domain: intra and cross as primary domain, plus cross tasks where it is the second domain."""
    rows = [r for r in stats.domains if r.involved]
    fig = new_figure(8.0, max(2.6, 0.4 * len(rows) + 1.6))
    ax = fig.add_subplot()
    if not rows:
        return _empty_panel(fig, ax, "Domain distribution", "no tasks")
    names = [r.domain for r in rows][::-1]
    intra = [r.intra for r in rows][::-1]
    cross = [r.cross for r in rows][::-1]
    second = [r.involved - r.tasks for r in rows][::-1]
    ax.barh(names, intra, label="intra-domain", color="#4C72B0")
    ax.barh(names, cross, left=intra, label="cross-domain (primary)", color="#DD8452")
    ax.barh(names, second, left=[a + b for a, b in zip(intra, cross)], label="cross-domain (second domain)",
            color="#DD8452", alpha=0.45, hatch="//")
    integer_axis(ax.xaxis)
    ax.set_xlabel("tasks")
    ax.margins(x=0.05)
    ax.set_title(f"Tasks per domain ({stats.total} tasks; a cross-domain task counts under both)")
    legend_outside(fig, ax.get_legend_handles_labels()[0])
    return fig


def histogram_figure(values: list[int], *, title: str, xlabel: str):
    """A distribution of per-task counts: one bar per value (integer bins), integer axes."""
    fig = new_figure()
    ax = fig.add_subplot()
    if not values:
        return _empty_panel(fig, ax, title, "no tasks")
    lo, hi = min(values), max(values)
    width = max(1, -(-(hi - lo + 1) // 20))   # at most 20 bins, each a whole number of units wide
    edges = [lo - 0.5 + i * width for i in range((hi - lo) // width + 2)]
    ax.hist(values, bins=edges, color="#4C72B0", edgecolor="white", label="tasks")
    mean = sum(values) / len(values)
    ax.axvline(mean, color="#C44E52", linestyle="--", label=f"mean {mean:.1f}")
    integer_axis(ax.xaxis)
    integer_axis(ax.yaxis)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("tasks")
    legend_outside(fig, ax.get_legend_handles_labels()[0])
    return fig


def _empty_panel(fig, ax, title: str, message: str):
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize="large", color="#555555", transform=ax.transAxes)
    return fig


def write_plots(stats: DatasetStats, out_dir: Path, funnel: FunnelReport | None = None) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = {
        "funnel": funnel_figure(funnel if funnel is not None else FunnelReport()),
        "domains": domain_figure(stats),
        "loc": histogram_figure([m.loc for m in stats.per_task], title="Lines of code per solution", xlabel="LOC"),
        "methods": histogram_figure([m.methods for m in stats.per_task], title="Methods per class",
                                    xlabel="methods (__init__ included)"),
    }
    return {name: save_png(fig, out_dir / PLOT_FILES[name]) for name, fig in figures.items()}
