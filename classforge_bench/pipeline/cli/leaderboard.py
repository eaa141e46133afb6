"""`classforge leaderboard`: the results page comparing runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from classforge_bench.pipeline.cli.support import (
    fail,
)
from classforge_bench.pipeline.core.errors import ClassforgeError

if TYPE_CHECKING:
    pass

from classforge_bench.pipeline.cli.app import app, console


@app.command()
def leaderboard(
    results_dirs: Annotated[
        list[Path], typer.Argument(help="run folders (results/<run-id>/), or folders holding them")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="the page to write; .csv, .json and .tex of the same name go beside it")
    ] = Path("leaderboard.html"),
    title: Annotated[str, typer.Option("--title", help="the page's title")] = "classforge results",
    models: Annotated[
        Path | None,
        typer.Option(
            "--models",
            help="model metadata, TOML or JSON: [models.<label>] name, size, cutoff, open, evaluated "
            "(docs/results-page.md)",
        ),
    ] = None,
    cutoff: Annotated[
        list[str] | None,
        typer.Option(
            "--cutoff", metavar="MODEL=DATE", help="a model's training cutoff (repeatable; overrides --models)"
        ),
    ] = None,
) -> None:
    """Write one static HTML page ranking the given evaluation runs, one table per dataset, with CSV,
    JSON and LaTeX copies of the tables beside it."""
    from classforge_bench.benchmark.model_meta import load_model_meta, parse_cutoffs, with_cutoffs
    from classforge_bench.benchmark.results_page import write_leaderboard

    try:
        meta = with_cutoffs(load_model_meta(models), parse_cutoffs(cutoff or []))
        path, board = write_leaderboard(results_dirs, out, title=title, meta=meta)
    except ClassforgeError as exc:
        fail(exc)
    runs = len({r.run_id for r in board.rows})
    exports = ", ".join(path.with_suffix(ext).name for ext in (".csv", ".json", ".tex"))
    console.print(
        f"{len(board.rows)} rows from {runs} run(s) over {len(board.datasets)} dataset(s) written to {path} "
        f"(tables also as {exports})"
    )
