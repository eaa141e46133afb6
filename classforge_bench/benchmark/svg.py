"""Charts as inline SVG text, drawn from Python: a results page needs no plotting library, no
script from elsewhere and no image file beside it, and costs nothing to write.

Two shapes cover the page: horizontal bars with an interval whisker and a value label on each
(pass@k, DEP), and horizontal stacked bars of counts with a legend (error taxonomy). Labels sit
in a left column sized to the longest one; every number drawn is also written beside its bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

CHAR_W = 6.6  # px per character of 11px sans-serif text, wide enough for digits and capitals
ROW_H = 22
PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float | None = None
    high: float | None = None
    text: str = ""  # the value label; the value itself when empty
    colour: int | None = None  # index into PALETTE, so one row keeps its colour across charts


def _frame(width: float, height: float, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
        f'<text x="0" y="14" class="chart-title">{escape(title)}</text>' + "".join(body) + "</svg>"
    )


def bar_chart(bars: list[Bar], *, title: str, scale_max: float = 100.0, plot_w: float = 360.0) -> str:
    """One bar per item from 0 to `scale_max`, its interval as a whisker and its value written after it."""
    label_w = max([len(b.label) for b in bars] + [4]) * CHAR_W + 8
    text_w = max([len(b.text or f"{b.value:.1f}") for b in bars] + [4]) * CHAR_W + 12
    width, top = label_w + plot_w + text_w, 24
    height = top + ROW_H * max(1, len(bars)) + 20
    x = lambda v: label_w + plot_w * max(0.0, min(v, scale_max)) / scale_max  # noqa: E731
    body = [f'<line x1="{x(0):.1f}" y1="{top}" x2="{x(0):.1f}" y2="{height - 18}" class="axis"/>']
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        v = tick * scale_max
        body.append(f'<text x="{x(v):.1f}" y="{height - 4}" class="tick">{v:g}</text>')
    for i, b in enumerate(bars):
        y = top + i * ROW_H
        body.append(f'<text x="{label_w - 6:.1f}" y="{y + 15}" class="label">{escape(b.label)}</text>')
        body.append(
            f'<rect x="{x(0):.1f}" y="{y + 4}" width="{x(b.value) - x(0):.1f}" height="{ROW_H - 8}" '
            f'fill="{PALETTE[(i if b.colour is None else b.colour) % len(PALETTE)]}"><title>{escape(b.label)}: {escape(b.text or f"{b.value:.1f}")}</title></rect>'
        )
        if b.low is not None and b.high is not None:
            body.append(
                f'<path d="M{x(b.low):.1f} {y + 11}H{x(b.high):.1f}M{x(b.low):.1f} {y + 7}V{y + 15}'
                f'M{x(b.high):.1f} {y + 7}V{y + 15}" class="whisker"/>'
            )
        end = max(x(b.value), x(b.high) if b.high is not None else 0)
        body.append(f'<text x="{end + 5:.1f}" y="{y + 15}" class="value">{escape(b.text or f"{b.value:.1f}")}</text>')
    return _frame(width, height, title, body)


def stacked_chart(
    rows: list[tuple[str, dict[str, int]]], categories: list[str], *, title: str, plot_w: float = 360.0
) -> str:
    """One bar per row split into `categories` (counts), each part labelled with its count, a legend below."""
    label_w = max([len(label) for label, _ in rows] + [4]) * CHAR_W + 8
    biggest = max([sum(counts.values()) for _, counts in rows] + [1])
    top = 24
    legend_y = top + ROW_H * max(1, len(rows)) + 8
    width, height = label_w + plot_w + 60, legend_y + 24
    body = []
    for i, (label, counts) in enumerate(rows):
        y, left = top + i * ROW_H, label_w
        body.append(f'<text x="{label_w - 6:.1f}" y="{y + 15}" class="label">{escape(label)}</text>')
        for j, cat in enumerate(categories):
            count = counts.get(cat, 0)
            if not count:
                continue
            w = plot_w * count / biggest
            body.append(
                f'<rect x="{left:.1f}" y="{y + 4}" width="{w:.1f}" height="{ROW_H - 8}" fill="{PALETTE[j % len(PALETTE)]}">'
                f"<title>{escape(label)}: {count} {escape(cat)}</title></rect>"
            )
            if w >= CHAR_W * len(str(count)) + 2:
                body.append(f'<text x="{left + w / 2:.1f}" y="{y + 15}" class="inbar">{count}</text>')
            left += w
        body.append(f'<text x="{left + 5:.1f}" y="{y + 15}" class="value">{sum(counts.values())}</text>')
    x = 0.0
    for j, cat in enumerate(categories):
        body.append(
            f'<rect x="{x:.1f}" y="{legend_y}" width="10" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>'
            f'<text x="{x + 14:.1f}" y="{legend_y + 9}" class="legend">{escape(cat)}</text>'
        )
        x += 24 + len(cat) * CHAR_W
    return _frame(max(width, x), height, title, body)
