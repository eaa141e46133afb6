"""The `classforge` application: the typer app, its console, `--version`, and what several commands share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console, JustifyMethod
from rich.table import Table

from classforge_bench.pipeline.cli.support import (
    OneLineErrorGroup,
    fail,
    print_error,
)
from classforge_bench.pipeline.core import parsing

if TYPE_CHECKING:
    from classforge_bench.pipeline.core.funnel import FunnelReport


app = typer.Typer(
    help="Build fresh, post-cutoff class-level code-generation benchmarks and score models on them.",
    cls=OneLineErrorGroup,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_show_locals=False,
)


# soft_wrap: status lines are never broken at 80 columns when stdout is a pipe (tables still fit the width).
console = Console(soft_wrap=True)


PIPE_WIDTH = 200


def _show_version(value: bool) -> None:
    if value:
        from classforge_bench import __version__

        typer.echo(
            f"classforge {__version__}" if __version__ != "unknown" else "classforge (not installed as a package)"
        )
        raise typer.Exit(0)


@app.callback()
def main(
    _version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """classforge: harvest post-cutoff classes, build verified tasks, evaluate models."""
    parsing.guard_interpreter()
    if not console.is_terminal:
        # A pipe or a log: rows are never squeezed or cut to COLUMNS (or Rich's default 80).
        console.width = PIPE_WIDTH


ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="TOML configuration file", exists=False)]


def _load(config: Path | None, overrides: dict | None = None):
    # imported here: the configuration models are most of what `--help` would otherwise load
    from classforge_bench.pipeline.config import ConfigError, load_config

    try:
        return load_config(config, overrides=overrides)
    except ConfigError as exc:
        fail(exc)


def _require_sources(harvest) -> None:
    from classforge_bench.pipeline.config import ConfigError, require_sources

    try:
        require_sources(harvest)
    except ConfigError as exc:
        fail(exc)


def _live_bar(command: str, *, disable: bool = False):
    """A command's live progress display: one row per phase, counting done of total."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(f"[bold]{command}[/bold] {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=disable,
    )


def funnel_table(report: FunnelReport, title: str = "Funnel") -> Table:
    from classforge_bench.pipeline.release.tables import funnel_rows

    table = Table(title=title)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("stage", "left"),
        ("unit", "left"),
        ("seen", "right"),
        ("kept", "right"),
        ("dropped: reason x count", "left"),
    )
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for stage, unit, seen, kept, _rate, reasons in funnel_rows(report):
        table.add_row(stage, unit, str(seen), str(kept), reasons)
    return table


def _preflight(cfg, endpoints: dict, out_file: Path | None = None) -> list | None:
    """Live mode: check each endpoint once before the first paid call; stop with one line per
    unusable endpoint (exit 2), else adapt the endpoint configs to what was found."""
    import os

    from classforge_bench.pipeline.llm.preflight import (
        ProbeBudgetTooSmall,
        apply_reports,
        check_endpoints,
        require_probe_budget,
    )

    if cfg.llm.mode != "live" or not cfg.llm.preflight:
        return None
    try:
        require_probe_budget(endpoints, cfg.llm)
    except ProbeBudgetTooSmall as exc:
        fail(exc)
    reports = check_endpoints(endpoints, os.environ, timeout_s=cfg.llm.preflight_timeout_s)
    bad = [r for r in reports if not r.ok]
    for r in bad:
        print_error(f"endpoint check failed: {r.line()}")
    if bad:
        raise typer.Exit(2)
    apply_reports(endpoints, reports)
    if out_file is not None:
        write_reports(out_file, reports)
    return reports


def write_reports(path: Path, reports: list) -> None:
    from classforge_bench.pipeline.core.store import write_json

    write_json(path, [r.model_dump(mode="json") for r in reports])


SHOWN_CLONE_FAILURES = 10


def _warn_clone_failures(snapshot_dir: Path) -> list:
    """A repository that cannot be cloned is a rejection, not a crash, but the user must hear of it:
    one warning line per failure on stderr, with git's own message."""
    from classforge_bench.pipeline.harvest.run import clone_failures

    failures = clone_failures(Path(snapshot_dir))
    for rej in failures[:SHOWN_CLONE_FAILURES]:
        detail = next((line.strip() for line in rej.detail.splitlines() if line.strip()), "")
        line = f"warning: could not clone {rej.item_id} ({rej.reason}){': ' + detail if detail else ''}"
        typer.echo(line, err=True)
    if len(failures) > SHOWN_CLONE_FAILURES:
        typer.echo(
            f"warning: {len(failures) - SHOWN_CLONE_FAILURES} more clone failures in {snapshot_dir}/rejects.jsonl",
            err=True,
        )
    return failures


def _print_decontamination(corpora: dict[str, list[str]] | None) -> None:
    if corpora is None:
        return
    console.print(
        f"decontamination checked: {'; '.join(corpora['checked']) or 'nothing (no reference corpus, no earlier snapshot)'}"
    )
    if corpora["not_checked"]:
        console.print(f"[yellow]not checked:[/yellow] {'; '.join(corpora['not_checked'])}")
