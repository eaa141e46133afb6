"""`classforge build`: the build-benchmark flow on Prefect (embedded or named server), its result."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from classforge_bench.pipeline.cli.support import (
    dask_option,
    fail,
    parse_cutoff,
)
from classforge_bench.pipeline.core.tracks import Track

if TYPE_CHECKING:
    from classforge_bench.flows.build_benchmark import BuildRunSummary

from classforge_bench.pipeline.cli.app import (
    ConfigOpt,
    _load,
    _preflight,
    _print_decontamination,
    _require_sources,
    _warn_clone_failures,
    app,
    console,
    funnel_table,
)

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


def _check_before_work(cfg) -> None:
    """Every configured source exists and every output location can be written, before the first
    paid call (a read-only release folder was found only after a whole paid build)."""
    from classforge_bench.pipeline.config import ConfigError, require_writable

    _require_sources(cfg.harvest)
    try:
        require_writable(cfg)
    except ConfigError as exc:
        fail(exc)


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
    from classforge_bench.pipeline.cli.stopping import stoppable_command
    from classforge_bench.pipeline.llm.preflight import endpoints_of_build

    stoppable = stoppable_command()  # SIGINT/SIGTERM: stop in seconds, keep what was paid; no server left
    reports = stoppable.run(lambda: _preflight(cfg, endpoints_of_build(cfg)))
    _prefect_defaults()
    from classforge_bench.pipeline.cli.server import ServerStartError, prefect_api

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
    from classforge_bench.pipeline.cli.flowlog import disk_full_line, flow_failure, flow_log
    from classforge_bench.pipeline.cli.progress import task_progress
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
    from classforge_bench.pipeline.release.writer import shown_path

    console.print(funnel_table(result.funnel, "Build funnel"))
    console.print(
        f"harvest: {result.classes} classes from {result.repos} repositories ({shown_path(result.snapshot)}/)"
    )
    _warn_clone_failures(result.snapshot)
    decontamination = result.snapshot / "decontamination.json"
    if decontamination.is_file():
        import json

        _print_decontamination(json.loads(decontamination.read_text(encoding="utf-8")))
    console.print(
        f"build: {result.tasks} verified tasks ({shown_path(result.build_dir)}/); "
        f"{result.incomplete} unfinished{' - stopped: ' + result.stopped if result.stopped else ''}"
    )
    usage = result.usage
    console.print(
        f"LLM: {usage.requests} requests, {usage.cached_hits} served from the cache, "
        f"{usage.prompt_tokens + usage.completion_tokens} tokens, ${usage.cost_usd}"
    )
    console.print(f"release: {result.note}")
