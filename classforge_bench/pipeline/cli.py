"""The `classforge` command line: one subcommand per stage. Configuration is read here, at the edge."""

from __future__ import annotations

from datetime import date
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer
from rich.console import Console, JustifyMethod
from rich.table import Table

from classforge_bench.pipeline.cli_support import (
    OneLineErrorGroup,
    dask_option,
    fail,
    parse_cutoff,
    print_error,
    validation_message,
)
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.errors import ClassforgeError, InfrastructureError
from classforge_bench.pipeline.core.strategy_names import EvalStrategy
from classforge_bench.pipeline.core.tracks import Track

if TYPE_CHECKING:
    from classforge_bench.flows.build_benchmark import BuildRunSummary
    from classforge_bench.pipeline.config import HarvestConfig
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


# Choices, so a mistyped value gets click's one-line "is not one of ..." instead of a pydantic dump.
# The three ignores below: mypy reads Enum()'s functional form only with literal members.
StrategyChoice = Enum("StrategyChoice", {s: s for s in get_args(EvalStrategy)}, type=str)  # type: ignore[misc]
LevelsChoice = Enum("LevelsChoice", {s: s for s in ("labels", "model")}, type=str)  # type: ignore[misc]

TrackOpt = Annotated[Track | None, typer.Option(help="override construction.track: composition or real-source")]
SourceOpt = Annotated[
    list[Path] | None,
    typer.Option(help="a git repository or a folder of them to harvest; repeatable; replaces the file's sources"),
]
OutOpt = Annotated[
    Path | None, typer.Option(help="write harvest, build and release under OUT/ (harvested, built, releases)")
]


def build_overrides(track: str | None, sources: list[Path] | None, out: Path | None) -> dict:
    """`classforge build`'s options as dotted configuration keys (absolute paths: the file's folder
    is not where the user typed them)."""
    overrides: dict = {}
    if track:
        overrides["construction.track"] = track
    if sources:
        missing = [str(p) for p in sources if not p.exists()]
        if missing:
            fail(f"--source: {', '.join(missing)} does not exist")
        from classforge_bench.pipeline.config import sources_replacing_the_files

        replaced = sources_replacing_the_files([str(p.absolute()) for p in sources])
        overrides |= {f"harvest.{key}": value for key, value in replaced.items()}
    if out is not None:
        root = out.absolute()
        overrides |= {
            "harvest.output_root": str(root / "harvested"),
            "construction.output_root": str(root / "built"),
            "release.output_root": str(root / "releases"),
        }
    return overrides


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


def _check_before_work(cfg) -> None:
    """Every configured source exists and every output location can be written, before the first
    paid call (a read-only release folder was found only after a whole paid build)."""
    from classforge_bench.pipeline.config import ConfigError, require_writable

    _require_sources(cfg.harvest)
    try:
        require_writable(cfg)
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


def _evaluate_with_probes(run_evaluation, request, cfg, env: dict, reports: list | None, progress):
    """Evaluate; after a pre-flight, with a client whose ledger already holds the probes' usage, so
    the results' usage is everything the endpoint was sent."""
    if reports is None:
        return run_evaluation(request, cfg, env=env, progress=progress)
    from classforge_bench.pipeline.llm.client import LLMClient
    from classforge_bench.pipeline.llm.preflight import probe_ledger_entries

    with LLMClient.from_config(cfg.llm, env) as client:
        client.ledger.absorb(probe_ledger_entries(reports))
        return run_evaluation(request, cfg, env=env, client=client, progress=progress)


def write_reports(path: Path, reports: list) -> None:
    from classforge_bench.pipeline.core.store import write_json

    write_json(path, [r.model_dump(mode="json") for r in reports])


@app.command("check-endpoint")
def check_endpoint_cmd(
    config: ConfigOpt = None,
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role", "-r", help="composer, test_writer, judge-N, solver or evaluate (repeatable; default: all)"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the reports as JSON")] = False,
) -> None:
    """Check the configured LLM endpoints: reachability, key, model, context window, structured
    output, usage, n > 1 and seed (by default the roles the configuration sets up: the build's, the
    evaluator's, or both). Exits 1 if any endpoint cannot be used; a busy server is named as such."""
    import json
    import os

    from classforge_bench.pipeline.llm.preflight import check_endpoints

    cfg = _load(config)
    reports = check_endpoints(_endpoints_for(cfg, role), os.environ, timeout_s=cfg.llm.preflight_timeout_s)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in reports], indent=1))
    else:
        _print_endpoint_reports(reports)
    if any(not r.ok for r in reports):
        raise typer.Exit(1)


def _endpoints_for(cfg, role: list[str] | None) -> dict:
    """The endpoints of the roles asked for, or of every role the configuration sets up."""
    from classforge_bench.pipeline.llm.preflight import endpoints_configured, endpoints_of_build, endpoints_of_evaluate

    if not role:
        return endpoints_configured(cfg)
    endpoints = endpoints_of_build(cfg) | endpoints_of_evaluate(cfg)
    unknown = [r for r in role if r not in endpoints]
    if unknown:
        fail(f"unknown role(s) {', '.join(unknown)}; roles: {', '.join(endpoints)}")
    return {r: endpoints[r] for r in role}


def _print_endpoint_reports(reports: list) -> None:
    """One table row per endpoint, then each endpoint's problems and notes."""
    from rich.markup import escape

    table = Table(title="LLM endpoints")
    cols = (
        "roles",
        "model",
        "reachable",
        "auth",
        "listed",
        "window",
        "response_format",
        "usage",
        "n>1",
        "seed",
        "latency s",
    )
    for col in cols:
        table.add_column(col)

    def show(v: object) -> str:
        return "-" if v is None else ("yes" if v is True else "no" if v is False else str(v))

    for r in reports:
        window = f"{r.context_window} ({r.context_window_source})" if r.context_window else None
        table.add_row(
            ", ".join(r.roles),
            r.model,
            show(r.reachable),
            show(r.authenticated),
            show(r.model_listed),
            show(window),
            show(r.response_format),
            show(r.usage),
            show(r.n_above_1),
            show(r.seed),
            show(r.latency_s),
        )
    console.print(table)
    for r in reports:
        for problem in r.problems:
            console.print(f"[red]problem:[/red] {escape(', '.join(r.roles))}: {escape(problem)}", soft_wrap=True)
        for note in r.notes:
            console.print(f"note: {escape(', '.join(r.roles))}: {escape(note)}", soft_wrap=True)


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


def _prefect_defaults() -> None:
    """Embedded-server settings that work on small, busy machines, unless the user set them.

    The server start-up limit is generous: on a 2-core machine at load 30 Prefect's embedded server
    took over 4.5 minutes to answer, and a limit that fails a build there helps nobody."""
    import os

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "600")
    # Likewise the client's requests to it: under load its SQLite answers slowly, and a 60 s read
    # timeout ended in a traceback from Prefect's background workers mid-build.
    os.environ.setdefault("PREFECT_API_REQUEST_TIMEOUT", "300")
    # The embedded server is a subprocess writing to this terminal: its SQLite "database is locked"
    # errors (Prefect retries them; the build is unaffected) printed whole tracebacks mid-build.
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
    os.environ.setdefault("PREFECT_HOME", str(Path(".cache/prefect").resolve()))
    # Prefect's embedded server cannot create its SQLite file in a folder that does not exist yet.
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)


def _refuse_busy_build_folder(cfg, ctx: typer.Context) -> None:
    """A build folder that another run holds, or that cannot be written: one line now, before the
    probes are paid and Prefect starts. The lock is then held until the command ends, so a second
    build started meanwhile stops here too, before its probes (the flow takes it again as a nested
    hold, in whichever thread of this process it runs)."""
    from classforge_bench.pipeline.construct.run import build_dir
    from classforge_bench.pipeline.core.folder_lock import FolderBusy, FolderLock
    from classforge_bench.pipeline.core.store import StoreWriteError

    try:
        lock = FolderLock(build_dir(cfg), "classforge build").acquire().lend()
    except (FolderBusy, StoreWriteError) as exc:
        fail(exc, 1)
    ctx.call_on_close(lock.release)


@app.command()
def build(
    ctx: typer.Context,
    config: ConfigOpt = Path("examples/classforge.toml"),
    cutoff: Annotated[
        date | None,
        typer.Option(parser=parse_cutoff, metavar="<YYYY-MM-DD>", help="override harvest.cutoff (not in the future)"),
    ] = None,
    snapshot: Annotated[str | None, typer.Option(help="override harvest.snapshot; 'auto' = refresh-<today>")] = None,
    release_version: Annotated[
        str | None, typer.Option(help="version to release (default: next by release.version_scheme)")
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            help="run the tasks on Dask: a scheduler address (tcp://host:8786) or 'local'", callback=dask_option
        ),
    ] = None,
    track: TrackOpt = None,
    source: SourceOpt = None,
    out: OutOpt = None,
) -> None:
    """Run the build-benchmark flow in-process: on the Prefect server PREFECT_API_URL names, else on a temporary one."""
    overrides = build_overrides(track.value if track else None, source, out)
    cutoff_day = cutoff.isoformat() if cutoff else None
    # Fail here, before Prefect starts, if the configuration, an override or an endpoint is wrong.
    cfg = _load(
        config,
        {**overrides, "harvest.cutoff": cutoff_day, "harvest.snapshot": None if snapshot == "auto" else snapshot},
    )
    _check_before_work(cfg)
    if snapshot != "auto":
        _refuse_busy_build_folder(cfg, ctx)
    from classforge_bench.pipeline.cli_stopping import stoppable_command
    from classforge_bench.pipeline.llm.preflight import endpoints_of_build

    stoppable = stoppable_command()  # SIGINT/SIGTERM: stop in seconds, keep what was paid; no server left
    reports = stoppable.run(lambda: _preflight(cfg, endpoints_of_build(cfg)))
    _prefect_defaults()
    from classforge_bench.pipeline.cli_server import ServerStartError, prefect_api

    try:
        # PREFECT_API_URL's server when set (`make run` sets one for both builds), else one of ours
        # with a health wait that survives a slow start; its failure is one line.
        with prefect_api():
            flow_fn = _build_flow(dask)
            # The flow applies the pre-flight's findings and records them next to the build; it does not probe again.
            _run_build_flow(
                cfg,
                stoppable,
                flow_fn,
                config_path=str(config) if config else None,
                cutoff=cutoff_day,
                snapshot=snapshot,
                release_version=release_version,
                overrides=overrides or None,
                endpoint_reports=[r.model_dump(mode="json") for r in reports] if reports is not None else None,
            )
    except ServerStartError as exc:
        fail(exc, 1)


def _run_build_flow(cfg, stoppable, flow_fn, **flow_args: object) -> None:
    """The flow with its log in the build folder, then its summary printed; fails when the flow failed."""
    from contextlib import nullcontext

    from classforge_bench.flows.build_benchmark import BuildRunSummary
    from classforge_bench.pipeline.cli_flowlog import disk_full_line, flow_failure, flow_log
    from classforge_bench.pipeline.cli_progress import task_progress
    from classforge_bench.pipeline.construct.run import build_dir

    # On a terminal: a live row per stage counting finished runs (one build-candidate run per pair).
    # In a pipe or a log: Prefect's one-line-per-event log lines. Tracebacks go to the log file only.
    with flow_log(build_dir(cfg)) as log_path, task_progress(console) if console.is_terminal else nullcontext():
        state = stoppable.run(lambda: flow_fn(return_state=True, **flow_args))
    result = state.result(raise_on_failure=False)
    full = disk_full_line(result, log_path)  # a full disk: said once, whatever else failed with it
    if not isinstance(result, BuildRunSummary):  # the flow raised before it had a summary
        fail(*((full, 1) if full else flow_failure(result, state.message, log_path)))
    _print_build_result(result)
    if full:
        fail(full, 1)
    if state.is_failed():
        fail(f"build {(state.name or 'failed').lower()}: {state.message}", 1)


def _build_flow(dask: str | None):
    """The build-benchmark flow, on a Dask task runner when `--dask` names a cluster."""
    from classforge_bench.pipeline.core.extras import require

    require("prefect", "classforge build")
    from classforge_bench.flows.build_benchmark import build_benchmark

    if not dask:
        return build_benchmark
    require("prefect_dask", "--dask")
    from prefect_dask import DaskTaskRunner

    runner = DaskTaskRunner() if dask == "local" else DaskTaskRunner(address=dask)
    return build_benchmark.with_options(task_runner=runner)  # type: ignore[arg-type]  # prefect types it narrower


def _print_build_result(result: BuildRunSummary) -> None:
    """The build's closing lines: funnel, harvest, decontamination, tasks, LLM usage, release."""
    console.print(funnel_table(result.funnel, "Build funnel"))
    console.print(f"harvest: {result.classes} classes from {result.repos} repositories ({result.snapshot}/)")
    _warn_clone_failures(result.snapshot)
    decontamination = result.snapshot / "decontamination.json"
    if decontamination.is_file():
        import json

        _print_decontamination(json.loads(decontamination.read_text(encoding="utf-8")))
    console.print(
        f"build: {result.tasks} verified tasks ({result.build_dir}/); "
        f"{result.incomplete} unfinished{' - stopped: ' + result.stopped if result.stopped else ''}"
    )
    usage = result.usage
    console.print(
        f"LLM: {usage.requests} requests, {usage.cached_hits} served from the cache, "
        f"{usage.prompt_tokens + usage.completion_tokens} tokens, ${usage.cost_usd}"
    )
    console.print(f"release: {result.note}")


# -- release: report, verify, export (classforge_bench/pipeline/release) -----------------------------------------


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


# -- strengthen: a plus tier (tests no LLM wrote) for any dataset (classforge_bench/pipeline/quality/plus) -------------


@app.command()
def strengthen(
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset",
            "-d",
            help="what `evaluate --dataset` takes: 'classeval', a JSON/JSONL/Parquet file or a release folder",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="folder the strengthened dataset is written to; for a "
            "release folder, the new version's folder (its name is the version)",
        ),
    ],
    task: Annotated[list[str] | None, typer.Option("--task", help="only this task id (repeatable)")] = None,
    config: ConfigOpt = None,
) -> None:
    """Write DATASET again with a generated, validated `plus` suite per task (Pynguin, in the sandbox)."""
    from classforge_bench.pipeline.formats.hub import resolve_dataset
    from classforge_bench.pipeline.quality.plus.dataset import strengthen_dataset

    cfg = _load(config)
    with _live_bar("strengthen") as bar:
        bar_id = bar.add_task("tasks", total=None)

        def progress(done_task, suite, reused: bool) -> None:
            bar.update(
                bar_id,
                advance=1,
                description=f"{done_task.task_id}: {suite.tests} plus tests" + (" (cached)" if reused else ""),
            )

        try:
            source = resolve_dataset(dataset)
            summary = strengthen_dataset(
                source,
                out,
                cfg.sandbox,
                cfg.plus,
                task_ids=task or None,
                on_task=progress,
                **_strengthen_writer(source, out, cfg.plus),
            )
        except ClassforgeError as exc:
            fail(exc)
        except KeyboardInterrupt:
            fail("interrupted; every finished task's plus suite is cached: run the same command to resume", 130)
    _print_strengthened(summary)


def _print_strengthened(summary) -> None:
    console.print(
        f"{summary.tasks} tasks ({summary.reused} from the cache): {summary.plus_tests} plus tests kept, "
        f"{summary.with_plus} tasks have at least one"
    )
    if summary.dropped:
        console.print("dropped: " + ", ".join(f"{r} {n}" for r, n in summary.dropped.items()))
    if summary.failed:
        console.print(
            f"[yellow]generation produced nothing for {len(summary.failed)}:[/yellow] {', '.join(summary.failed[:10])}"
        )
    console.print(f"written to {summary.output}")


def _strengthen_writer(source: Path, out: Path, plus) -> dict:
    """A release folder is written as a new version (its name checked before any work); others as read."""
    from classforge_bench.pipeline.release.plus_release import check_new_version, is_release_folder, write_plus_release

    if not is_release_folder(source):
        return {}
    check_new_version(source, out)
    return {"write": lambda dataset, dest, suites: write_plus_release(dataset, dest, suites, plus)}


# -- evaluate: score a model on a ClassEval-style dataset (classforge_bench/benchmark/) -------------------------------


def _evaluation_table(results) -> Table:
    from classforge_bench.benchmark.summary import compact_header, compact_rows

    # the tasks some sample was scored on: a samples file or --task may cover fewer than the dataset holds
    scored = len({s.request.task_id for s in results.samples if s.scored})
    table = Table(
        title=f"pass@k (%) on {scored} scored task(s) of {results.dataset.n_tasks_selected} selected "
        f"({len(results.broken_task_ids)} broken, excluded)"
    )
    for i, col in enumerate(compact_header(results)):
        table.add_column(col, justify="left" if i < 2 else "right")
    for row in compact_rows(results):
        table.add_row(*row)
    return table


# evaluate's options, one alias each so that the command's signature reads as a list of them
EvalDatasetOpt = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        "-d",
        help="'classeval' (from the Hugging Face Hub or its cache), "
        "hf:ORG/NAME[@REVISION], or a path: JSON, JSONL, Parquet or a release folder",
    ),
]
EvalModelOpt = Annotated[
    list[str] | None, typer.Option("--model", "-m", help="model name (repeatable); 'reference' and 'empty' are special")
]
EvalBaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (overrides evaluate.endpoint.base_url)")
]
EvalStrategyOpt = Annotated[
    list[StrategyChoice] | None, typer.Option("--strategy", "-s", help="generation strategy (repeatable)")
]
EvalSamplesOpt = Annotated[
    Path | None, typer.Option("--samples", help="score pre-generated completions (JSONL) instead of generating")
]
EvalLevelsOpt = Annotated[
    LevelsChoice | None,
    typer.Option("--levels", help="bottom_up/top_down levels: the dataset's labels or asked of the model"),
]
EvalDaskOpt = Annotated[
    str | None,
    typer.Option(
        "--dask",
        help="run the sandbox on a Dask cluster: tcp://HOST:PORT of its "
        "scheduler, or 'local' (each worker needs classforge and the sandbox)",
    ),
]
EvalOutOpt = Annotated[
    Path | None, typer.Option("--out", help="results root (default: evaluate.output_root, results/)")
]
EvalRegradeOpt = Annotated[
    Path | None, typer.Option("--regrade", help="recompute the scores of a results folder, offline")
]
EvalPlotsOpt = Annotated[
    bool, typer.Option("--plots", help="also draw passk.png and taxonomy.png (with --regrade too)")
]


@app.command()
def evaluate(
    dataset: EvalDatasetOpt = None,
    model: EvalModelOpt = None,
    base_url: EvalBaseUrlOpt = None,
    strategy: EvalStrategyOpt = None,
    n: Annotated[int | None, typer.Option("--n", min=1, help="samples per task (default 5)")] = None,
    samples: EvalSamplesOpt = None,
    levels: EvalLevelsOpt = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="only this task id (repeatable)")] = None,
    max_tasks: Annotated[int | None, typer.Option("--max-tasks", min=1, help="only the first N tasks")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="parallel sandbox runs")] = None,
    dask: EvalDaskOpt = None,
    out: EvalOutOpt = None,
    regrade: EvalRegradeOpt = None,
    plots: EvalPlotsOpt = False,
    config: ConfigOpt = None,
) -> None:
    """Score models on a ClassEval-style dataset; writes results/<run-id>/ and prints Table 4."""
    from classforge_bench.benchmark.runner import regrade as run_regrade

    def run(progress) -> object:
        if regrade is not None:
            return run_regrade(regrade, progress, plots=plots)
        if dataset is None:
            fail("--dataset is required (or --regrade RESULTS_DIR)")
        cfg = _evaluation_config(
            config,
            base_url=base_url,
            model=model,
            strategy=strategy,
            n=n,
            levels=levels,
            workers=workers,
            out=out,
            dask=dask,
        )
        cfg.evaluate.plots = cfg.evaluate.plots or plots
        _note_special_strategies(model, strategy, samples)
        return _run_evaluation(cfg, dataset, model, samples, task, max_tasks, progress)

    _print_evaluation(_evaluate_with_progress(run), regraded=regrade is not None)


def _evaluate_with_progress(run):
    """`run(progress)` under a live row per phase; its errors (and an interrupt) as one line each."""
    from pydantic import ValidationError
    from rich.progress import TaskID

    labels = {
        "reference": "reference pre-run",
        "generation": "generation",
        "execution": "execution",
        "scoring": "scoring",
    }
    # Off a terminal no live display at all (Rich would still end it with an empty line); on one, an
    # error is printed once the display is gone (it would print into a row, then be erased).
    with _live_bar("evaluate", disable=not console.is_terminal) as bar:
        phases: dict[str, TaskID] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in phases:
                phases[phase] = bar.add_task(labels.get(phase, phase), total=total)
            bar.update(phases[phase], completed=done, total=total)

        try:
            return run(progress)
        except ValidationError as exc:
            bar.stop()
            fail(validation_message(exc))
        except ClassforgeError as exc:
            bar.stop()
            # As for a build: 2 is bad input found before any work; a run that could not finish
            # (results folder busy, disk full, endpoint gone) is 1.
            fail(exc, 1 if isinstance(exc, InfrastructureError) else 2)
        except KeyboardInterrupt:
            bar.stop()
            fail(
                "interrupted; run the same command to resume (finished samples are kept in the LLM cache "
                "and the results folder)",
                130,
            )


def _note_special_strategies(model, strategy, samples) -> None:
    """`reference` and `empty` answer with a whole class, so a strategy cannot apply to them: say so
    rather than score the whole class under a strategy's name."""
    special = [m for m in model or [] if m in ("reference", "empty")]
    asked = [s.value for s in strategy or [] if s.value != "holistic"]
    if special and asked and samples is None:
        console.print(
            f"[yellow]note: model(s) {', '.join(special)} answer with the whole class, so --strategy "
            f"{', '.join(asked)} does not apply to them: they are scored once, as strategy 'direct'[/yellow]"
        )


def _evaluation_config(config: Path | None, *, base_url, model, strategy, n, levels, workers, out, dask=None):
    """The configuration with the command line's evaluate options applied and validated."""
    cfg = _load(config)
    ev = cfg.evaluate
    if base_url:
        ev.endpoint.base_url = base_url
    if model and model[0] not in ("reference", "empty"):
        ev.endpoint.model = model[0]
    updates = {
        "strategies": [s.value for s in strategy] if strategy else None,
        "n_samples": n,
        "levels_source": levels.value if levels else None,
        "workers": workers,
        "output_root": out,
        "dask": dask,
    }
    cfg.evaluate = type(ev).model_validate(ev.model_dump() | {k: v for k, v in updates.items() if v is not None})
    return cfg


def _run_evaluation(cfg, dataset: str, model, samples, task, max_tasks, progress):
    """Check the endpoint when models generate, evaluate, and file the run's usage and endpoint reports."""
    import os

    from classforge_bench.benchmark.runner import EvaluationRequest
    from classforge_bench.benchmark.runner import evaluate as run_evaluation
    from classforge_bench.pipeline.formats.hub import resolve_dataset

    request = EvaluationRequest(
        dataset=resolve_dataset(dataset),
        models=list(model or ([] if samples else [cfg.evaluate.endpoint.model])),
        samples_file=samples,
        task_ids=task or None,
        max_tasks=max_tasks,
    )
    # The API key is read here, at the edge, and only the variable the endpoint names.
    key_var = cfg.evaluate.endpoint.api_key_env
    env = {key_var: os.environ[key_var]} if key_var in os.environ else {}
    # where the user's reference cache lives (XDG base directories), and nothing else of the environment
    env |= {name: os.environ[name] for name in ("XDG_CACHE_HOME", "HOME") if os.environ.get(name)}
    reports = None
    if any(m not in ("reference", "empty") for m in request.models) and samples is None:
        from classforge_bench.pipeline.llm.preflight import endpoints_of_evaluate

        reports = _preflight(cfg, endpoints_of_evaluate(cfg))
    outcome = _evaluate_with_probes(run_evaluation, request, cfg, env, reports, progress)
    if reports is not None:
        write_reports(outcome.run_dir / "endpoints.json", reports)
    return outcome


def _print_evaluation(outcome, *, regraded: bool) -> None:
    from classforge_bench.benchmark.summary import plus_header, plus_rows, unscored_advice

    results = outcome.results
    console.print(_evaluation_table(results))
    left_out = results.dataset.samples_left_out
    if left_out:
        console.print(
            f"[yellow]samples of {len(left_out)} task(s) not selected by --task/--max-tasks are left out: "
            f"{', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}[/yellow]"
        )
    if results.plus_scores:
        table = Table(title="base vs plus pass@1 (%): plus = base tests + tests no LLM wrote")
        for column in plus_header():
            table.add_column(column)
        for row in plus_rows(results):
            table.add_row(*row)
        console.print(table)
        if any(r.broken for r in results.plus_reference):
            console.print(
                f"[yellow]the reference fails base + plus on "
                f"{', '.join(r.task_id for r in results.plus_reference if r.broken)}[/yellow]"
            )
    advice = unscored_advice(results)
    if advice:
        console.print(f"[yellow]{advice}[/yellow]", soft_wrap=True)
    if not regraded:
        resumed = (
            f" ({results.stats.samples_resumed} finished by an earlier run)" if results.stats.samples_resumed else ""
        )
        console.print(
            f"{len(results.samples)} samples{resumed}; {len(results.broken_task_ids)} broken task(s) excluded; "
            f"{results.stats.sandbox_runs} sandbox runs, {results.stats.executions_reused} reused."
        )
    else:
        console.print(f"regraded {len(results.samples)} stored samples offline.")
    drawn = ", passk.png, taxonomy.png" if (outcome.run_dir / "passk.png").is_file() else ""
    console.print(f"written to {outcome.run_dir}/ (results.json, samples/, summary.md, results.html{drawn})")


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


if __name__ == "__main__":
    app()
