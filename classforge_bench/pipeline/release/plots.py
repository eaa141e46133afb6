"""PNG plots of a release: the funnel, the domains, and the size distributions.

Each plot has a `*_figure` builder (tests inspect its axes) and is saved through `classforge_bench.pipeline.core.plotting`
(Agg canvas, no pyplot, deterministic bytes). Counts get integer axes; legends sit outside the
axes so they never cover data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.plotting import integer_axis, legend_outside, new_figure, save_png
from classforge_bench.pipeline.release.stats import DatasetStats
from classforge_bench.pipeline.release.tables import ordered_stages, stage_unit

PLOT_FILES = {"funnel": "funnel.png", "domains": "domains.png", "loc": "loc.png", "methods": "methods.png"}
UNIT_COLOURS = {
    "repositories": "#8172B3",
    "files": "#64B5CD",
    "classes": "#4C72B0",
    "candidate pairs": "#DD8452",
    "tasks": "#55A868",
}


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
        Patch(color=UNIT_COLOURS.get(u, "#937860"), label=f"kept: {u}") for u in units
    ]
    legend_outside(fig, handles)
    return fig


def domain_figure(stats: DatasetStats):
    """Tasks per domain: intra, cross and real-source tasks under their primary domain, plus cross
    tasks where it is the second domain."""
    rows = [r for r in stats.domains if r.involved]
    fig = new_figure(8.0, max(2.6, 0.4 * len(rows) + 1.6))
    ax = fig.add_subplot()
    if not rows:
        return _empty_panel(fig, ax, "Domain distribution", "no tasks")
    names = [r.domain for r in rows][::-1]
    # (legend label, annotation word, counts per row, bar style), stacked left to right
    segments: list[tuple[str, str, list[int], dict[str, Any]]] = [
        ("intra-domain", "intra", [r.intra for r in rows][::-1], {"color": "#4C72B0"}),
        ("cross-domain (primary)", "cross", [r.cross for r in rows][::-1], {"color": "#DD8452"}),
        ("real-source", "real", [r.real for r in rows][::-1], {"color": "#55A868"}),
        (
            "cross-domain (second domain)",
            "second",
            [r.involved - r.tasks for r in rows][::-1],
            {"color": "#DD8452", "alpha": 0.45, "hatch": "//"},
        ),
    ]
    shown = [segment for segment in segments if any(segment[2])]
    left = [0] * len(rows)
    for label, _, counts, style in shown:
        ax.barh(names, counts, left=left, label=label, **style)
        left = [a + b for a, b in zip(left, counts)]
    for y, total in enumerate(left):
        parts = ", ".join(f"{counts[y]} {word}" for _, word, counts, _ in shown if counts[y])
        ax.annotate(
            f"{total} ({parts})", (total, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize="small"
        )
    integer_axis(ax.xaxis)
    ax.set_xlabel("tasks")
    ax.set_xlim(0, max(left) * 1.45)
    ax.set_title(f"Tasks per domain ({stats.total} tasks; a cross-domain task counts under both)")
    legend_outside(fig, ax.get_legend_handles_labels()[0])
    return fig


def histogram_figure(values: list[int], *, title: str, xlabel: str):
    """A distribution of per-task counts: at most 20 bars, each over a whole-number range of values
    (1, 2, 5, 10, 20, 50... wide, starting at a multiple of the width) and labelled with that range,
    so a bar never seems to stand on a value it does not count."""
    fig = new_figure()
    ax = fig.add_subplot()
    if not values:
        return _empty_panel(fig, ax, title, "no tasks")
    width = bin_width(min(values), max(values))
    first, last = min(values) // width, max(values) // width
    starts = [b * width for b in range(first, last + 1)]
    edges = [start - 0.5 for start in starts] + [starts[-1] + width - 0.5]
    ax.hist(values, bins=edges, color="#4C72B0", edgecolor="white", label="tasks")
    mean = sum(values) / len(values)
    ax.axvline(mean, color="#C44E52", linestyle="--", label=f"mean {mean:.1f}")
    labels = [str(s) if width == 1 else f"{s}–{s + width - 1}" for s in starts]
    ax.set_xticks(
        [s + (width - 1) / 2 for s in starts],
        labels,
        rotation=45 if width > 1 and len(starts) > 8 else 0,
        ha="right" if width > 1 and len(starts) > 8 else "center",
    )
    integer_axis(ax.yaxis)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("tasks")
    legend_outside(fig, ax.get_legend_handles_labels()[0])
    return fig


def bin_width(lo: int, hi: int, max_bins: int = 20) -> int:
    """The narrowest of 1, 2, 5, 10, 20, 50... that covers lo..hi in at most `max_bins` aligned bins."""
    width, steps = 1, (2, 2.5, 2)  # 1 -> 2 -> 5 -> 10 -> 20 -> 50 ...
    i = 0
    while hi // width - lo // width + 1 > max_bins:
        width = int(width * steps[i % 3])
        i += 1
    return width


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
        "methods": histogram_figure(
            [m.methods for m in stats.per_task], title="Methods per class", xlabel="methods (__init__ included)"
        ),
    }
    return {name: save_png(fig, out_dir / PLOT_FILES[name]) for name, fig in figures.items()}
