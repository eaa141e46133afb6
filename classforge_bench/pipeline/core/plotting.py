"""PNG figures for reports (releases, evaluation runs), made the same way everywhere.

matplotlib's object API on an Agg canvas (no pyplot): no global backend switch, no GUI, safe in
worker threads; matplotlib is imported inside the functions so importing this module costs
nothing. PNG metadata omits the matplotlib version, so the same data gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from classforge_bench.pipeline.core.extras import require
from classforge_bench.pipeline.core.store import atomic_open


def new_figure(width: float = 7.0, height: float = 4.0):
    require("matplotlib", "the plots")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig, path: Path) -> Path:
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png", metadata={"Software": None})
    return path


def integer_axis(axis) -> None:
    """Ticks only at whole numbers: an axis of counts never shows 0.2 tasks or 12.25 methods."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # one tick beats fractional ones


def legend_outside(fig, handles, *, labels=None) -> None:
    """The legend below the axes (constrained layout makes room), so it never covers data."""
    if not handles:
        return
    kwargs = {"labels": labels} if labels is not None else {}
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(4, len(handles)),
        fontsize="small",
        frameon=False,
        **kwargs,
    )
