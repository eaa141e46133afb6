"""`classforge report`, `verify-release` and `export`: a release folder, checked, summarised, uploaded."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import JustifyMethod
from rich.table import Table

from classforge_bench.pipeline.cli.support import (
    fail,
)

if TYPE_CHECKING:
    pass

from classforge_bench.pipeline.cli.app import app, console


@app.command()
def report(
    release: Annotated[Path, typer.Argument(help="release folder, e.g. benchmark/releases/2025.06.01")],
    out: Annotated[Path | None, typer.Option("--out", help="output folder (default: reports/<version>)")] = None,
) -> None:
    """Render a release's statistics and funnel as Markdown (report.md) and PNG plots."""
    from rich.markdown import Markdown

    from classforge_bench.pipeline.release.errors import ReleaseError
    from classforge_bench.pipeline.release.report import write_report

    try:
        result = write_report(release, out)
    except ReleaseError as exc:
        fail(exc)
    if console.is_terminal:
        console.print(Markdown(result.markdown))
    else:  # a pipe or a file gets the Markdown itself: never cut at a width, never padded with spaces
        typer.echo(result.markdown.rstrip("\n"))
    console.print(f"report written to {result.report_path} with {len(result.plots)} plots")


@app.command("verify-release")
def verify_release_cmd(
    release: Annotated[Path, typer.Argument(help="release folder")],
    load: Annotated[bool, typer.Option("--load/--no-load", help="also load it with datasets.load_dataset")] = True,
) -> None:
    """Check a release folder: card, schema, row counts, file hashes, datasets loading."""
    from classforge_bench.pipeline.release.verify import release_track, verify_release

    if not release.is_dir():  # a missing path is bad input (exit 2), as for every other command
        fail(f"release folder {release} {'is not a folder' if release.exists() else 'does not exist'}", 2)
    problems = verify_release(release, load_with_datasets=load)
    for problem in problems:
        typer.echo(f"problem: {problem}", err=True)
    if problems:
        raise typer.Exit(1)
    loaded = ", loads as its own rows" if load else ""
    console.print(f"release {release.name} ({release_track(release)} track): OK{loaded}")


@app.command()
def export(
    release: Annotated[Path, typer.Argument(help="release folder")],
    repo: Annotated[str, typer.Option("--repo", help="Hugging Face dataset repository, ORG/NAME")],
    dry_run: Annotated[
        bool | None,
        typer.Option(
            "--dry-run/--no-dry-run",
            help="only verify and list what would be uploaded "
            "(default: dry run unless a token is set: HF_TOKEN or hf auth login)",
        ),
    ] = None,
    private: Annotated[bool, typer.Option("--private", help="create the repository as private")] = False,
    plan_out: Annotated[Path | None, typer.Option("--plan-out", help="also write the upload plan as JSON here")] = None,
) -> None:
    """Upload a release to the Hugging Face Hub and tag the commit with its version."""
    from huggingface_hub import get_token

    from classforge_bench.pipeline.core.store import write_json
    from classforge_bench.pipeline.release.errors import ExportError
    from classforge_bench.pipeline.release.export import export_release

    # huggingface_hub's own lookup: HF_TOKEN, else the token `hf auth login` saved. Read at the edge
    # only; passed down, never printed.
    token = get_token()
    if dry_run is None:
        dry_run = token is None
    try:
        result = export_release(release, repo, token=token, private=private, dry_run=dry_run)
    except ExportError as exc:
        fail(exc, 1)
    plan = result.plan
    table = Table(
        title=f"{'Would upload' if result.dry_run else 'Uploaded'} release {plan.version} "
        f"to {plan.repo_id} (dataset{', private' if plan.private else ''})"
    )
    columns: tuple[tuple[str, JustifyMethod], ...] = (("file", "left"), ("bytes", "right"), ("sha256", "left"))
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for f in plan.files:
        table.add_row(f.path, str(f.bytes), f.sha256)
    console.print(table)
    console.print(
        f"{len(plan.files)} files, {plan.total_bytes} bytes; commit message {plan.commit_message!r}; tag {plan.tag!r}"
    )
    if plan_out is not None:
        write_json(plan_out, result.model_dump(mode="json"))
    if result.dry_run:
        reason = "no Hugging Face token: set HF_TOKEN or run hf auth login" if token is None else "--dry-run"
        console.print(f"[yellow]dry run ({reason}): nothing was uploaded.[/yellow]")
    else:
        console.print(
            f"[green]published[/green] commit {result.commit_oid} tagged {plan.tag!r}"
            + (f": {result.commit_url}" if result.commit_url else "")
        )
