"""`classforge harvest`: the harvest alone, with its funnel."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from classforge_bench.pipeline.cli.support import (
    fail,
    parse_cutoff,
)
from classforge_bench.pipeline.core.errors import ClassforgeError

if TYPE_CHECKING:
    from classforge_bench.pipeline.config import HarvestConfig

from classforge_bench.pipeline.cli.app import (
    ConfigOpt,
    _live_bar,
    _load,
    _print_decontamination,
    _require_sources,
    _warn_clone_failures,
    app,
    console,
    funnel_table,
)


def _github_search(hcfg: HarvestConfig):
    """The GitHub search the harvest calls, after its pre-flight; None when GitHub is off."""
    if not hcfg.github.enabled:
        return None
    from functools import partial

    from classforge_bench.pipeline.harvest.github_source import GitHubUnavailable, preflight, search_github

    try:
        preflight(hcfg.github)
    except GitHubUnavailable as exc:
        fail(exc)
    return partial(search_github, hcfg.github, hcfg.cutoff)


@app.command()
def harvest(
    config: ConfigOpt = None,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            help="a git repository, a folder of them, or a file:// URL; repeatable; replaces the file's sources",
        ),
    ] = None,
    cutoff: Annotated[
        date | None,
        typer.Option(
            parser=parse_cutoff, metavar="<YYYY-MM-DD>", help="keep classes first committed on or after this day"
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="output root: the snapshot is written to OUT/<snapshot>/")
    ] = None,
    snapshot: Annotated[str | None, typer.Option(help="snapshot folder name (overrides the config)")] = None,
    github: Annotated[
        bool | None, typer.Option("--github/--no-github", help="search GitHub too (needs network and GITHUB_TOKEN)")
    ] = None,
) -> None:
    """Harvest self-contained, post-cutoff classes into <output root>/<snapshot>/ and print the funnel."""
    from classforge_bench.pipeline.config import ConfigError, harvest_overrides

    cfg = _load(config)
    try:
        hcfg = harvest_overrides(
            cfg.harvest,
            sources=source,
            cutoff=cutoff.isoformat() if cutoff else None,
            output_root=out,
            snapshot=snapshot,
            github=github,
        )
    except ConfigError as exc:
        fail(exc)
    if not hcfg.names_a_source:
        fail(
            "nothing to harvest: give --source PATH, set harvest.local_sources, harvest.spec_corpora "
            "or harvest.bundle_sources in --config, or use --github"
        )
    _require_sources(hcfg)
    summary = _harvest_with_progress(hcfg, _github_search(hcfg), cfg.release.output_root)
    _print_harvest(summary, hcfg.snapshot)


def _harvest_with_progress(hcfg: HarvestConfig, search, release_root: Path):
    """The harvest, with a live row naming the repository at hand (on a terminal)."""
    from classforge_bench.pipeline.harvest.run import run_harvest
    from classforge_bench.pipeline.release.history import release_solutions

    with _live_bar("harvest", disable=not console.is_terminal) as bar:
        task = bar.add_task("repositories", total=None)

        def progress(repo: str, total: int | None) -> None:
            bar.update(task, advance=1, total=total, description=repo)

        try:
            return run_harvest(
                hcfg,
                github_search=search,
                progress=progress,
                releases={str(release_root): release_solutions(release_root)},
            )
        except ClassforgeError as exc:
            fail(exc)


def _print_harvest(summary, snapshot: str) -> None:
    """The funnel and the closing lines; fails when there was nothing to harvest or nothing could be cloned."""
    console.print(funnel_table(summary.funnel, f"Harvest funnel ({snapshot})"))
    console.print(
        f"{summary.classes} classes kept from {summary.repos} repositories "
        f"({summary.reused_shards} reused from an earlier run); {summary.rejects} rejections recorded."
    )
    _print_decontamination(summary.corpora)
    console.print(f"written to {summary.snapshot_dir}/")
    if summary.repos == 0:
        fail("nothing to harvest: the sources held no repository", 1)
    failures = _warn_clone_failures(summary.snapshot_dir)
    if failures and len(failures) == summary.repos:
        fail(
            f"no repository could be cloned ({len(failures)} tried); git's messages are above and in "
            f"{summary.snapshot_dir}/rejects.jsonl",
            1,
        )
