"""The leaderboard as files for a paper or a spreadsheet: CSV, JSON and a LaTeX table, written
beside the page from the same `Standing` values the page shows (classforge_bench.benchmark.standings).

Percentages carry one decimal, as on the page. The CSV has one line per row of every dataset; the
JSON groups rows by dataset; the LaTeX file holds one booktabs `table` per dataset (needs
`\\usepackage{booktabs}`), a dagger marking a score on all tasks that is possibly contaminated.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from classforge_bench.benchmark.leaderboard import DatasetBoard
from classforge_bench.benchmark.standings import CONTAMINATED, Score, Standing, dated_range
from classforge_bench.pipeline.core.store import write_json, write_text

SCORES = ("class_base", "class_plus", "method_base", "method_plus", "window")
Tables = list[tuple[DatasetBoard, list[Standing]]]


def _num(score: Score | None) -> float | None:
    return None if score is None else score.value


def flat_row(board: DatasetBoard, s: Standing) -> dict[str, Any]:
    """One row as plain values: scores in percent (one decimal), dates as ISO text."""
    row: dict[str, Any] = {
        "dataset": board.label,
        "dataset_sha256": board.sha256,
        "rank": s.rank,
        "model": s.model,
        "name": s.name,
        "strategy": s.strategy,
        "run_id": s.run_id,
        "size": s.size,
        "open": s.open,
        "cutoff": s.cutoff.isoformat() if s.cutoff else None,
        "evaluated": s.evaluated.isoformat() if s.evaluated else None,
        "tasks": s.tasks,
    }
    for name in SCORES:
        score = getattr(s, name)
        row |= {f"{name}_pass1": _num(score), f"{name}_low": score and score.low, f"{name}_high": score and score.high}
    return row | {
        "window_tasks": s.window_tasks,
        "older_tasks": s.older_tasks,
        "undated_tasks": s.undated_tasks,
        "flag": s.flag,
    }


def csv_text(tables: Tables) -> str:
    rows = [flat_row(board, s) for board, ranked in tables for s in ranked]
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in rows)
    return out.getvalue()


def json_data(tables: Tables) -> dict[str, Any]:
    datasets = []
    for board, ranked in tables:
        span = dated_range(board)
        datasets.append(
            {
                "dataset": board.label,
                "sha256": board.sha256,
                "tasks": len(board.task_ids),
                "first_seen": None if span is None else [span[0].isoformat(), span[1].isoformat()],
                "rows": [flat_row(board, s) for s in ranked],
            }
        )
    return {"unit": "percent, one decimal; intervals are 95% bootstrap over tasks", "datasets": datasets}


_LATEX_SPECIAL = {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _cell(score: Score | None, mark: bool = False) -> str:
    return "--" if score is None else score.text + (r"$^\dagger$" if mark else "")


def _latex_table(board: DatasetBoard, ranked: list[Standing]) -> str:
    lines = [
        r"\begin{table}[t]",
        r"\centering\small",
        rf"\caption{{{latex_escape(board.label)} (sha256 {board.sha256[:12]}, {len(board.task_ids)} tasks): "
        r"full pass@1 (\%). After cutoff: class level on the tasks first seen after the model's cutoff "
        r"(tasks in brackets). $^\dagger$: the score on all tasks includes tasks first seen on or before the "
        r"model's cutoff (possibly contaminated).}",
        r"\begin{tabular}{rllllrrrrr}",
        r"\toprule",
        r"\# & Model & Size & Cutoff & Strategy & Class & Class+ & Method & Method+ & After cutoff \\",
        r"\midrule",
    ]
    for s in ranked:
        window = "--" if s.window is None else f"{s.window.text} ({s.window_tasks})"
        lines.append(
            " & ".join(
                [
                    str(s.rank),
                    latex_escape(s.name),
                    latex_escape(s.size or "--"),
                    s.cutoff.isoformat() if s.cutoff else "--",
                    latex_escape(s.strategy),
                    _cell(s.class_base, s.flag == CONTAMINATED),
                    _cell(s.class_plus),
                    _cell(s.method_base),
                    _cell(s.method_plus),
                    window,
                ]
            )
            + r" \\"
        )
    return "\n".join([*lines, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


def latex_text(tables: Tables) -> str:
    return "% classforge leaderboard; needs \\usepackage{booktabs}\n" + "\n".join(
        _latex_table(board, ranked) for board, ranked in tables
    )


def write_exports(tables: Tables, page: Path) -> list[Path]:
    """`<page stem>.csv`, `.json` and `.tex` beside the page."""
    page = Path(page)
    paths = [page.with_suffix(ext) for ext in (".csv", ".json", ".tex")]
    write_text(paths[0], csv_text(tables))
    write_json(paths[1], json_data(tables))
    write_text(paths[2], latex_text(tables))
    return paths
