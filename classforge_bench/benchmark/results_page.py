"""The results page: one static HTML file comparing runs (models x strategies), readable offline.

Everything is inline: the style, a few lines of script that sort a table by a clicked column,
and the charts as SVG (`classforge_bench.benchmark.svg`). Nothing is fetched when the page is viewed, and writing
it imports no plotting library, so `evaluate` writes one for every run at no cost.

One section per dataset (and version): rows of runs over different datasets never share a table.
Each holds the ranked table (`classforge_bench.benchmark.standings`: base and plus pass@1 side by
side, model metadata, pass@1 on the tasks first seen after the model's cutoff), every pass@k and
DEP in a folded table, charts of pass@1 and DEP, base vs every other suite, the error taxonomy per
row, and the per-task outcome grid with the tasks no row solves and those every row solves. The
ranked tables fit a 1280 px window; the wider detail tables scroll inside their own box.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from pathlib import Path

from classforge_bench.benchmark.exports import write_exports
from classforge_bench.benchmark.leaderboard import BASE, KINDS, LEVELS, Board, DatasetBoard, Row, TaskCell, load_board
from classforge_bench.benchmark.metrics import Estimate
from classforge_bench.benchmark.model_meta import ModelMeta
from classforge_bench.benchmark.standings import (
    CONTAMINATED,
    NO_CUTOFF,
    UNDATED,
    Score,
    Standing,
    dated_range,
    standings,
)
from classforge_bench.benchmark.svg import Bar, bar_chart, stacked_chart
from classforge_bench.benchmark.taxonomy import CATEGORIES
from classforge_bench.pipeline.core.store import write_text

PAGE_FILE = "results.html"

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1232px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid #eee;white-space:nowrap}
th{background:#f4f4f4;text-align:left;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}table.sortable th:hover{background:#e6e6e6}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}td .ci{color:#777;font-size:12px}
.scroll{overflow-x:auto}.note{background:#fff7e0;padding:6px 10px;border-left:3px solid #e0a000}
.chart{margin:8px 24px 8px 0;font:11px sans-serif}.chart .label{text-anchor:end}.chart .tick{text-anchor:middle;fill:#666}
.chart .axis{stroke:#999}.chart .whisker{stroke:#222;fill:none}.chart .inbar{text-anchor:middle;fill:#fff}
.chart-title{font-weight:bold}.charts{display:flex;flex-wrap:wrap}.charts svg{max-width:100%;height:auto}
table.ranked th{white-space:normal;vertical-align:bottom}table.ranked td.name{white-space:normal;overflow-wrap:anywhere;min-width:120px;max-width:200px}table.ranked td .ci{display:block}
.flag{color:#b00020;font-weight:bold}h2.dataset{font-size:20px;border-bottom:2px solid #444;margin-top:40px}
details{margin:8px 0}summary{cursor:pointer;font-weight:bold}
td.solved{background:#b7e1b0}td.partial{background:#f3e3a0}td.failed{background:#f2b8b5}
td.broken,td.unscored{background:#ddd;color:#666}td.absent{background:#fff}
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.tabIndex = 0;
    function sort() {
      var numeric = th.classList.contains("num");
      var current = th.getAttribute("aria-sort");
      var asc = current ? current === "descending" : !numeric;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col], v = cell.getAttribute("data-v");
        if (!numeric) return cell.textContent.trim().toLowerCase();
        return v === null || v === "" ? null : parseFloat(v);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * (asc ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
  });
});
"""


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _num_cell(e: Estimate | None) -> str:
    if e is None:
        return '<td class="num" data-v="">-</td>'
    return (
        f'<td class="num" data-v="{e.value:.6f}">{pct(e.value)} '
        f'<span class="ci">[{pct(e.ci_low)}, {pct(e.ci_high)}]</span></td>'
    )


def _table(table_id: str, head: list[tuple[str, bool]], body: list[str], css: str = "sortable") -> str:
    """A sortable table; `head` is (title, numeric) per column, `body` the rows' <tr> markup."""
    ths = "".join(
        f'<th class="num" scope="col">{escape(t)}</th>' if num else f'<th scope="col">{escape(t)}</th>'
        for t, num in head
    )
    return (
        f'<div class="scroll"><table id="{table_id}" class="{css}"><thead><tr>{ths}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _suite_title(suite: str) -> str:
    return "" if suite == BASE else f"{suite} · "


def _score_columns(board: Board) -> list[tuple[str, str, str, int]]:
    return [
        (suite, level, kind, k)
        for suite in board.suites
        for level, _ in LEVELS
        for kind, _ in KINDS
        for k in board.ks[suite]
    ]


def leaderboard_table(board: Board) -> str:
    columns = _score_columns(board)
    names = dict(LEVELS) | dict(KINDS)
    head = [("Model", False), ("Strategy", False), ("Run", False), ("tasks", True), ("samples per task", True)]
    head += [(f"{_suite_title(s)}{names[level]} {names[kind]} pass@{k}", True) for s, level, kind, k in columns]
    head += [("DEP(M)", True), ("DEP(F)", True)]
    body = []
    for row in board.rows:
        cells = [
            f"<td>{escape(row.model)}</td>",
            f"<td>{escape(row.strategy)}</td>",
            f'<td title="{escape(row.dataset)}">{escape(row.run_id)}</td>',
            f'<td class="num" data-v="{row.tasks_scored}">{row.tasks_scored}</td>',
            f'<td class="num" data-v="{row.samples_per_task.split("-")[0]}">{escape(row.samples_per_task)}</td>',
        ]
        cells += [_num_cell(row.estimate(s, level, kind, k)) for s, level, kind, k in columns]
        cells += [_num_cell(row.dep_m), _num_cell(row.dep_f)]
        body.append(f"<tr>{''.join(cells)}</tr>")
    return _table(f"leaderboard{board.suffix}", head, body)


def _bars(board: Board, pick) -> list[Bar]:
    bars = []
    for i, row in enumerate(board.rows):
        e = pick(row)
        if e is not None:
            bars.append(
                Bar(
                    f"{row.label} ({row.run_id[-12:]})" if _ambiguous(board, row) else row.label,
                    100 * e.value,
                    100 * e.ci_low,
                    100 * e.ci_high,
                    f"{pct(e.value)} [{pct(e.ci_low)}, {pct(e.ci_high)}]",
                    colour=i,
                )
            )
    return bars


def _ambiguous(board: Board, row: Row) -> bool:
    return sum(r.label == row.label for r in board.rows) > 1


def charts(board: Board) -> str:
    out = []
    for suite in board.suites:
        k = board.ks[suite][0] if board.ks[suite] else 1
        for level, name in LEVELS:
            bars = _bars(board, lambda r, s=suite, lv=level, k=k: r.estimate(s, lv, "full", k))
            if bars:
                out.append(bar_chart(bars, title=f"{_suite_title(suite)}{name}-level full pass@{k} (%), 95% interval"))
    for attr, name in (("dep_m", "DEP(M)"), ("dep_f", "DEP(F)")):
        bars = _bars(board, lambda r, a=attr: getattr(r, a))
        if bars:
            out.append(bar_chart(bars, title=f"{name} (%), 95% interval"))
    return f'<div class="charts">{"".join(out)}</div>' if out else "<p>No scored samples: nothing to draw.</p>"


def suites_section(board: Board) -> str:
    """Base vs every other suite, at the smallest k both report: a drop shows tests the base missed."""
    others = [s for s in board.suites if s != BASE]
    if not others or BASE not in board.suites:
        return ""
    head = [("Model", False), ("Strategy", False), ("Run", False)]
    columns = []
    for suite in others:
        k = min(set(board.ks[BASE]) & set(board.ks[suite]), default=None)
        if k is None:
            continue
        for level, name in LEVELS:
            columns.append((suite, level, k))
            head += [
                (f"{name} full pass@{k} {BASE}", True),
                (f"{name} full pass@{k} {suite}", True),
                (f"{name} {suite} − {BASE}", True),
            ]
    body = []
    for row in board.rows:
        cells = [f"<td>{escape(row.model)}</td><td>{escape(row.strategy)}</td><td>{escape(row.run_id)}</td>"]
        for suite, level, k in columns:
            base, other = row.estimate(BASE, level, "full", k), row.estimate(suite, level, "full", k)
            delta = None if base is None or other is None else other.value - base.value
            cells += [
                _num_cell(base),
                _num_cell(other),
                '<td class="num" data-v="">-</td>'
                if delta is None
                else f'<td class="num" data-v="{delta:.6f}">{100 * delta:+.1f}</td>',
            ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    return "<h3>Base tests vs " + ", ".join(map(escape, others)) + "</h3>" + _table(f"suites{board.suffix}", head, body)


def taxonomy_section(board: Board) -> str:
    head = (
        [("Model", False), ("Strategy", False), ("Run", False)] + [(c, True) for c in CATEGORIES] + [("failed", True)]
    )
    body = [
        f"<tr><td>{escape(r.model)}</td><td>{escape(r.strategy)}</td><td>{escape(r.run_id)}</td>"
        + "".join(f'<td class="num" data-v="{r.taxonomy[c]}">{r.taxonomy[c]}</td>' for c in CATEGORIES)
        + f'<td class="num" data-v="{sum(r.taxonomy.values())}">{sum(r.taxonomy.values())}</td></tr>'
        for r in board.rows
    ]
    chart = stacked_chart(
        [(r.label, r.taxonomy) for r in board.rows], list(CATEGORIES), title="Failed samples per error category"
    )
    return (
        "<h3>Error taxonomy of failed samples</h3>"
        + _table(f"taxonomy{board.suffix}", head, body)
        + f'<div class="charts">{chart}</div>'
    )


def _grid_cell(cell: TaskCell | None) -> str:
    if cell is None:
        return '<td class="absent num" data-v="">not run</td>'
    if cell.status in ("broken", "unscored"):
        return f'<td class="{cell.status} num" data-v="">{cell.status}</td>'
    title = f"{cell.full} of {cell.n} samples pass every test; {cell.partial} pass at least partly"
    return f'<td class="{cell.status} num" data-v="{cell.full / cell.n:.6f}" title="{title}">{cell.full}/{cell.n}</td>'


def _task_list(title: str, tasks: list[str]) -> str:
    shown = ", ".join(map(escape, tasks)) if tasks else "none"
    return f"<p><b>{escape(title)} ({len(tasks)}):</b> {shown}</p>"


def task_grid(board: Board) -> str:
    head = [("Task", False), ("rows solving it", True)]
    head += [(f"{r.label} ({r.run_id[-12:]})" if _ambiguous(board, r) else r.label, True) for r in board.rows]
    body = []
    for task_id in board.task_ids:
        cells = [r.tasks.get(task_id) for r in board.rows]
        solving = sum(1 for c in cells if c is not None and c.full)
        body.append(
            f'<tr><td>{escape(task_id)}</td><td class="num" data-v="{solving}">{solving}</td>'
            + "".join(_grid_cell(c) for c in cells)
            + "</tr>"
        )
    return (
        "<h3>Per-task outcomes (samples passing every test of the task)</h3>"
        + _task_list("Solved by no row", board.solved_by_nobody())
        + _task_list("Solved by every row", board.solved_by_everybody())
        + "<p>A row solves a task when at least one of its samples passes every test class. Grey: the task's "
        "reference fails (broken) or no sample of the row could be scored.</p>"
        + _table(f"tasks{board.suffix}", head, body)
    )


def hash_seed_section(board: Board) -> str:
    """The passes that do not hold under every hash seed (evaluate.hash_seeds), per row; nothing
    when no row was checked."""
    checked = [(r, c) for r in board.rows for c in r.hash_seed_checks]
    if not checked:
        return ""
    moved = [(r, c) for r, c in checked if c.dependent]
    head = [("Row", False), ("Task", False), ("Sample", True), ("Verdict", False)]
    body = [
        f'<tr><td>{escape(r.label)}</td><td>{escape(c.task_id)}</td><td class="num" data-v="{c.sample_index}">'
        f"{c.sample_index}</td><td>{escape(c.verdict())}</td></tr>"
        for r, c in moved
    ]
    others = len(checked[0][1].seeds) - 1
    return (
        "<h3>Verdicts that depend on PYTHONHASHSEED</h3>"
        f"<p>{len(checked)} class-level passes run again under {others} other hash seeds: "
        f"<b>{len(moved)} do not hold under every seed</b> (the scores count them as the run's seed made them).</p>"
        + (_table(f"hashseeds{board.suffix}", head, body) if body else "")
    )


def _score_cell(score: Score | None, extra: str = "", title: str = "") -> str:
    if score is None:
        return '<td class="num" data-v="">-</td>'
    tip = f' title="{escape(title)}"' if title else ""
    return (
        f'<td class="num" data-v="{score.value:.1f}"{tip}>{score.text}{extra}'
        f'<span class="ci">[{score.low:.1f}, {score.high:.1f}]</span></td>'
    )


def _flag_mark(s: Standing) -> tuple[str, str]:
    if s.flag == CONTAMINATED:
        why = f"possibly contaminated: {s.older_tasks} of the tasks were first seen on or before the model's cutoff"
        return '<span class="flag" aria-label="possibly contaminated">†</span>', why
    if s.flag == UNDATED:
        return (
            '<span class="flag" aria-label="task dates unknown">?</span>',
            f"{s.undated_tasks} tasks carry no first-seen date",
        )
    return "", ""


def _window_cell(s: Standing) -> str:
    if s.window is None:
        why = "no cutoff given" if s.flag == NO_CUTOFF else f"{s.window_tasks or 0} tasks after the cutoff"
        return f'<td class="num" data-v="" title="{escape(why)}">-</td>'
    return _score_cell(s.window, f" ({s.window_tasks})", f"{s.window_tasks} tasks first seen after {s.cutoff}")


def ranked_table(board: DatasetBoard, ranked: list[Standing], table_id: str) -> str:
    """The dataset's ranked rows: what a paper's table shows, narrow enough for 1280 px."""
    plus = any(s.class_plus or s.method_plus for s in ranked)
    head = [("#", True), ("Model", False), ("Size", False), ("Weights", False), ("Cutoff", False), ("Strategy", False)]
    head += [("Tasks", True), ("Class pass@1", True)] + ([("Class pass@1 plus", True)] if plus else [])
    head += [("Method pass@1", True)] + ([("Method pass@1 plus", True)] if plus else [])
    head += [("After cutoff: class pass@1 (tasks)", True), ("Evaluated", False)]
    body = []
    for s in ranked:
        mark, why = _flag_mark(s)
        cells = [
            f'<td class="num" data-v="{s.rank}">{s.rank}</td>',
            f'<td class="name" title="run {escape(s.run_id)}">{escape(s.name)}</td>',
            f"<td>{escape(s.size or '-')}</td><td>{s.openness}</td>",
            f"<td>{s.cutoff.isoformat() if s.cutoff else '-'}</td><td>{escape(s.strategy)}</td>",
            f'<td class="num" data-v="{s.tasks}">{s.tasks}</td>',
            _score_cell(s.class_base, mark, why),
            _score_cell(s.class_plus) if plus else "",
            _score_cell(s.method_base),
            _score_cell(s.method_plus) if plus else "",
            _window_cell(s),
            f"<td>{s.evaluated.isoformat() if s.evaluated else '-'}</td>",
        ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    return _table(table_id, head, body, css="sortable ranked")


def _dates_note(board: DatasetBoard) -> str:
    span = dated_range(board)
    undated = sum(1 for d in board.first_seen.values() if d is None)
    if span is None:
        return (
            "Its tasks carry no first-seen date (ClassEval's have none), so no row has an after-cutoff score "
            "and no score on it can be told apart from training-data exposure."
        )
    text = f"Tasks first seen {span[0]} to {span[1]}"
    return text + (f"; {undated} undated (never counted as after a cutoff)." if undated else ".")


def _sub_board(board: Board, d: DatasetBoard, index: int) -> Board:
    suites = [s for s in board.suites if any(s in r.suites for r in d.rows)] or [BASE]
    ks = {s: sorted({k for r in d.rows if s in r.suites for k in r.suites[s].ks}) for s in suites}
    return Board(rows=d.rows, suites=suites, ks=ks, task_ids=d.task_ids, datasets=[d], suffix=f"-{index}")


def dataset_section(board: Board, d: DatasetBoard, index: int, meta: dict[str, ModelMeta]) -> str:
    sub = _sub_board(board, d, index)
    return (
        f'<section id="dataset-{index}"><h2 class="dataset">Dataset {escape(d.label)}</h2>'
        f"<p>sha256 <code>{d.sha256[:12]}</code>, {len(d.task_ids)} tasks. {escape(_dates_note(d))} "
        "Ranked by class-level full pass@1 on the base tests (%, 95% bootstrap interval below each value). "
        "<b>After cutoff</b>: class-level pass@1 on the tasks first seen after the model's training cutoff. "
        '<span class="flag">†</span> the score on all tasks includes tasks first seen on or before the cutoff '
        '(possibly contaminated); <span class="flag">?</span> some tasks carry no date.</p>'
        + ranked_table(d, standings(d, meta), f"ranked{sub.suffix}")
        + "<details><summary>Every pass@k, partial pass and DEP</summary>"
        + leaderboard_table(sub)
        + "</details><h3>Charts</h3>"
        + charts(sub)
        + suites_section(sub)
        + taxonomy_section(sub)
        + hash_seed_section(sub)
        + task_grid(sub)
        + "</section>"
    )


def render_page(board: Board, *, title: str = "classforge results", meta: dict[str, ModelMeta] | None = None) -> str:
    runs = list(dict.fromkeys((r.run_id, r.dataset) for r in board.rows))
    notes = "".join(f'<p class="note">Note: {escape(n)}.</p>' for n in board.notes)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sections = "".join(dataset_section(board, d, i, meta or {}) for i, d in enumerate(board.datasets, 1))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>{escape(title)}</title><style>{STYLE}</style></head>
<body><h1>{escape(title)}</h1>
<p>{len(board.rows)} rows (model × strategy) from {len(runs)} run(s) over {len(board.datasets)} dataset(s), written {stamp}:
{"; ".join(f"<code>{escape(r)}</code> on {escape(d)}" for r, d in runs) or "no runs"}.
pass@k in %, with 95% bootstrap intervals over tasks. Click a column to sort.</p>{notes}
{sections or "<p>No runs.</p>"}
<script>{SCRIPT}</script></body></html>
"""


def tables_of(board: Board, meta: dict[str, ModelMeta] | None = None) -> list[tuple[DatasetBoard, list[Standing]]]:
    return [(d, standings(d, meta or {})) for d in board.datasets]


def write_page(
    board: Board, path: Path, *, title: str = "classforge results", meta: dict[str, ModelMeta] | None = None
) -> Path:
    write_text(Path(path), render_page(board, title=title, meta=meta))
    return Path(path)


def write_leaderboard(
    results_dirs: list[Path], path: Path, *, title: str = "classforge results", meta: dict[str, ModelMeta] | None = None
) -> tuple[Path, Board]:
    """`classforge leaderboard`: the page comparing every run under `results_dirs`, and beside it
    the same tables as CSV, JSON and LaTeX (`classforge_bench.benchmark.exports`)."""
    board = load_board(results_dirs)
    write_exports(tables_of(board, meta), Path(path))
    return write_page(board, path, title=title, meta=meta), board
