"""The `build-benchmark` flow: harvest -> filters -> dedup -> pairing -> composition -> tests ->
judges -> solution -> verification -> release.

Every task calls plain library code. Resume comes from the library's on-disk stage outputs
(per-repository shards, per-candidate result files, the content-addressed LLM response cache), so
a crashed or cancelled run started again with the same parameters redoes nothing that finished
and pays for no LLM call twice. Either track's stages run per candidate (`build-candidate`, mapped
over the pairs of the composition track or the classes of the real-source track, through the one
driver in `construct/build.py`) because each candidate's stages form one chain: the task runner
(threads, or Dask), `construction.candidate_retries`, the budget and stop handling apply to both.
Each stage a candidate starts is logged (`CANDIDATE_STAGE`), so a live view shows where it is;
the stage-by-stage verdicts of each candidate are in its result file and in the funnel.

How a run ends, so that `prefect deployment run --watch` and the CLI's exit code say it:
- Completed: a new version was released; or Completed named `AlreadyReleased`: every task is in
  an earlier version (a resumed or repeated run); or, on the real-source track, Completed named
  `NothingReleased`: every class was finished and dropped with a reason;
- Failed, with the reason as its message: candidates left unfinished (an infrastructure fault that
  outlasted the candidate task's retries, the budget, a replay miss), or no task was built at all.
A second run on the same build folder while one is running fails at once, naming the holder.
"""

from __future__ import annotations

import os
import threading
import uuid
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from prefect import flow, get_run_logger, task, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import TaskRunContext
from prefect.states import Completed, Failed, State
from prefect.task_runners import ThreadPoolTaskRunner
from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import Config, HarvestConfig, load_config, require_sources, require_writable
from classforge_bench.pipeline.construct import build as construct_lib
from classforge_bench.pipeline.construct.run import Construction, build_dir, open_construction
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.records import RepoRef
from classforge_bench.pipeline.core.store import write_json, write_jsonl
from classforge_bench.pipeline.core.task import Track
from classforge_bench.pipeline.harvest import run as harvest_lib
from classforge_bench.pipeline.harvest.github_source import GitHubSearchResult, preflight, search_github
from classforge_bench.pipeline.llm.ledger import Usage
from classforge_bench.pipeline.llm.preflight import (
    PROBE_ROLE,
    EndpointReport,
    apply_reports,
    check_endpoints,
    endpoints_of_build,
    probe_ledger_entries,
    require_probe_budget,
    require_usable,
)
from classforge_bench.pipeline.llm.usage_history import save_usage
from classforge_bench.pipeline.release.history import release_solutions
from classforge_bench.pipeline.release.publish import PublishResult, publish
from classforge_bench.pipeline.release.writer import config_record

if TYPE_CHECKING:
    from prefect.futures import PrefectFuture
    from prefect.task_runners import TaskRunner


@task(name="search-github", tags=["github-search"], retries=2, retry_delay_seconds=30)
def search_github_task(cfg: HarvestConfig) -> GitHubSearchResult | None:
    if not cfg.github.enabled:
        return None
    return harvest_lib.github_search_cached(cfg, lambda: search_github(cfg.github, cfg.cutoff), date.today())


@task(name="gather-repositories")
def gather_repositories(cfg: HarvestConfig, github: GitHubSearchResult | None) -> list[RepoRef]:
    return harvest_lib.gather_repos(cfg, github)


@task(
    name="harvest-repository", tags=["git"], retries=1, retry_delay_seconds=10, task_run_name="harvest {ref.full_name}"
)
def harvest_repository(ref: RepoRef, cfg: HarvestConfig) -> dict:
    """Clone, extract and filter one repository (content, compile, imports, structure, references, provenance)."""
    shard, reused = harvest_lib.harvest_repo(ref, cfg, harvest_lib.snapshot_dir(cfg))
    return {"repo": ref.full_name, "kept": len(shard.classes), "reused": reused}


@task(name="dedup-and-assemble")
def dedup_and_assemble(
    cfg: HarvestConfig, refs: list[RepoRef], github: GitHubSearchResult | None, release_root: Path | None = None
) -> harvest_lib.HarvestSummary:
    releases = {str(release_root): release_solutions(release_root)} if release_root is not None else None
    index = harvest_lib.build_dedup_index(cfg, releases)
    return harvest_lib.assemble_snapshot(cfg, refs, index, harvest_lib.snapshot_dir(cfg), github)


_constructions: dict[tuple[str, str], Construction] = {}
_probe_usage: dict[str, list] = {}  # run key -> the endpoint probes' ledger entries
_constructions_guard = threading.Lock()


def _construction(config_json: str, run_key: str) -> Construction:
    """This process's plan, LLM client, gate and response cache for one flow run.

    Built where a task runs: in-process with the thread runner (one shared set, so the budget stop
    reaches every candidate at once), once per worker process with Dask. Nothing unpicklable
    travels between processes; the response cache (SQLite, WAL) is shared through its path, so
    with several machines `llm.cache_path` must be on shared storage.
    """
    with _constructions_guard:
        found = _constructions.get((config_json, run_key))
        if found is None:
            cfg = Config.model_validate_json(config_json)
            # The secret is read here, at the edge; the library gets it in a mapping.
            found = _constructions[(config_json, run_key)] = open_construction(cfg, dict(os.environ), run_id=run_key)
            # The probes were paid in this run: the budget counts them (with Dask, in this process only).
            found.client.ledger.absorb(_probe_usage.get(run_key, []))
        return found


def _close_construction(config_json: str, run_key: str) -> None:
    """Close this process's client and cache: a cache that could not store paid answers (a full
    disk) spills them to an importable file here and raises a one-line CacheWriteError."""
    with _constructions_guard:
        found = _constructions.pop((config_json, run_key), None)
        _probe_usage.pop(run_key, None)
    if found is not None:
        found.close()


@lru_cache(maxsize=2)
def _llm_slots(run_key: str, concurrency: int) -> threading.BoundedSemaphore:
    """At most `llm.concurrency` candidates of this process talk to the models at once, whatever
    the task runner's thread count: a one-slot local server must not see queued requests time out."""
    return threading.BoundedSemaphore(concurrency)


def _config_json(cfg: Config) -> str:
    # Secrets are not serialised by pydantic; they are re-read from the environment where needed.
    return cfg.model_dump_json()


@task(name="plan-candidates", cache_policy=NO_CACHE)
def plan_build(cfg: Config, run_key: str) -> list:
    """The track's candidates in build order: the composition track's pairs, the real-source track's classes."""
    return list(_construction(_config_json(cfg), run_key).plan.candidates)


class InfrastructureFault(InfrastructureError):
    """Raised only to have Prefect retry a candidate whose model calls or sandbox failed."""


def _retries_left() -> bool:
    ctx = TaskRunContext.get()
    return ctx is not None and ctx.task_run.run_count <= ctx.task.retries


CANDIDATE_STAGE = "candidate_stage"  # a log record's extra: (candidate label, stage), read by the CLI's live rows


def stage_reporter(logger, label: str) -> construct_lib.StageStarted:
    """Logs each stage of candidate `label` as it starts, so a live view can say where it is."""

    def started(stage: str) -> None:
        # the run's name already says which candidate: "Task run 'candidate <label>' - stage judges"
        logger.info("stage %s", stage, extra={CANDIDATE_STAGE: (label, stage)})

    return started


@task(
    name="build-candidate", tags=["llm", "sandbox"], cache_policy=NO_CACHE, task_run_name="candidate {candidate.label}"
)
def build_candidate(candidate: Any, cfg: Config, run_key: str) -> construct_lib.CandidateOutcome:
    """Every stage of the track for one candidate (a pair, or a class on the real-source track).

    An infrastructure fault is retried by Prefect (`construction.candidate_retries`); on the last
    attempt it is returned as unfinished, so the next run retries it. The calls every attempt paid
    for are on disk already (`built/<snapshot>/usage/`), whatever happens here.
    """
    built = _construction(_config_json(cfg), run_key)
    plan, client, gate = built.plan, built.client, built.gate
    logger = get_run_logger()
    try:
        with _llm_slots(run_key, cfg.llm.concurrency):
            status, value = construct_lib.build_candidate(
                plan, candidate, client, gate, stage_reporter(logger, candidate.label)
            )
    except Exception as exc:  # noqa: BLE001 - a bug in one candidate is reported with it, never fatal to the others
        logger.exception("candidate %s failed", candidate.label)
        return "incomplete", construct_lib.Incomplete(
            candidate_id=candidate.candidate_id, reason=R.INCOMPLETE_ERROR, detail=f"{type(exc).__name__}: {exc}"
        )
    if isinstance(value, construct_lib.Incomplete) and value.reason == R.INCOMPLETE_INFRASTRUCTURE and _retries_left():
        raise InfrastructureFault(f"candidate {candidate.candidate_id}: {value.detail}")
    return status, value


@task(name="finish-build", cache_policy=NO_CACHE)
def finish_build(cfg: Config, run_key: str, candidates: list, outcomes: list) -> construct_lib.BuildResult:
    return construct_lib.finish_build(_construction(_config_json(cfg), run_key).plan, list(zip(candidates, outcomes)))


class BuildRunSummary(BaseModel):
    """What a build-benchmark run produced: the data of its final state, read by `classforge build`."""

    model_config = ConfigDict(extra="forbid")

    snapshot: Path = Field(description="the harvest snapshot folder")
    classes: int = Field(description="harvested classes kept")
    repos: int = Field(description="repositories harvested")
    tasks: int = Field(description="verified tasks built")
    incomplete: int = Field(description="candidates left unfinished (a later run resumes them)")
    stopped: str | None = Field(description="why the build stopped early (e.g. the budget), if it did")
    build_dir: Path
    release: Path | None = Field(description="the new release folder; None when nothing was released")
    version: str | None
    note: str = Field(description="what the release stage did, in one sentence")
    funnel: FunnelReport
    usage: Usage = Field(description="this run's LLM usage, all roles together")


@task(name="release", cache_policy=NO_CACHE)
def release(
    cfg: Config,
    result: construct_lib.BuildResult,
    harvest: harvest_lib.HarvestSummary,
    version: str | None,
) -> PublishResult:
    if result.incomplete:
        # A partial build is resumable; publishing it would freeze an arbitrary subset as a version.
        return PublishResult(
            None,
            None,
            0,
            0,
            harvest.funnel.merge(result.funnel),
            f"not released: {len(result.incomplete)} candidate(s) unfinished ({result.stopped or 'see build.json'}); run again to resume",
        )
    published = publish(
        result.tasks,
        cfg.release,
        harvest.funnel.merge(result.funnel),
        result.models,
        config_record=config_record(cfg),
        decontamination=harvest.corpora,
        version=version,
        references=_shipped_references(cfg),
    )
    # Like the harvest's and the build's drops, the release stage's are written down with their reasons.
    write_jsonl(build_dir(cfg) / "release-rejects.jsonl", published.rejections)
    return published


def _shipped_references(cfg: Config):
    """The released tasks' references run as the evaluator runs them, for the release to ship
    (`release.ship_references`); the user's reference cache is found as `classforge evaluate` finds it."""
    if not cfg.release.ship_references:
        return None
    from classforge_bench.benchmark.release_references import verified_references

    return verified_references(cfg, {k: os.environ[k] for k in ("XDG_CACHE_HOME", "HOME") if os.environ.get(k)})


def configure(
    config_path: str | None, cutoff: str | None, snapshot: str | None, overrides: dict | None = None
) -> Config:
    """The configuration with the run's parameters applied and validated like the file
    (`overrides`: more dotted keys, e.g. the command line's track, sources and output folders)."""
    if snapshot == "auto":
        # A scheduled refresh harvests into a snapshot of its own, so it dedups against all earlier ones.
        snapshot = f"refresh-{date.today().isoformat()}"
    cfg = load_config(
        Path(config_path) if config_path else None,
        overrides={**(overrides or {}), "harvest.cutoff": cutoff, "harvest.snapshot": snapshot},
    )
    require_sources(cfg.harvest)  # a deployment run: before the lock, the probes and the harvest
    return cfg


def _outcome(future):
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - reported per candidate by finish_build, never swallowed
        return exc


def check_models(cfg: Config, checked: list[dict] | None, run_key: str) -> None:
    """Live mode: every endpoint answers as the stages need before anything is harvested or paid.
    `classforge build` checks before Prefect starts and passes its reports in `checked`; a
    deployment run checks here. What was found adapts the stages (context window, response
    format) and is written next to the build; the probes' tokens go into run `run_key`'s usage."""
    if cfg.llm.mode != "live" or not cfg.llm.preflight:
        return
    endpoints = endpoints_of_build(cfg)
    if checked is not None:
        reports = [EndpointReport.model_validate(r) for r in checked]
    else:
        require_probe_budget(endpoints, cfg.llm)
        reports = check_endpoints(endpoints, os.environ, timeout_s=cfg.llm.preflight_timeout_s)
    require_usable(reports)
    apply_reports(endpoints, reports)
    write_json(build_dir(cfg) / "endpoints.json", [r.model_dump(mode="json") for r in reports])
    save_usage(build_dir(cfg), run_key, PROBE_ROLE, probe_ledger_entries(reports))
    _probe_usage[run_key] = probe_ledger_entries(reports)


def final_state(
    summary: BuildRunSummary,
    result: construct_lib.BuildResult,
    published: PublishResult,
    track: Track = Track.COMPOSITION,
) -> State:
    """How the run ends (see the module docstring); the summary (a `BuildRunSummary`) travels as the state's data.
    A finished real-source build that dropped every class ends Completed (`NothingReleased`): each
    drop is a verdict about real code with its reason in the funnel, not a fault of the run."""
    if result.incomplete:
        reasons = sorted({i.reason for i in result.incomplete})
        return Failed(
            message=f"{len(result.incomplete)} candidate(s) unfinished ({', '.join(reasons)}): "
            f"{result.incomplete[0].detail[:300]}; nothing released; run again to resume",
            data=summary,
        )
    if published.path is None and not result.tasks and track == Track.REAL_SOURCE:
        return Completed(
            name="NothingReleased",
            message=f"released nothing: {published.note}; every class was dropped with a reason (see the funnel)",
            data=summary,
        )
    if published.path is None and not result.tasks:
        return Failed(
            message=f"released nothing: {published.note}; the funnel says where candidates were dropped", data=summary
        )
    if published.path is None:
        return Completed(name="AlreadyReleased", message=published.note, data=summary)
    return Completed(message=published.note, data=summary)


def publish_artifacts(summary: BuildRunSummary, state: State) -> None:
    """What the run produced, where the Prefect UI shows it: the funnel as a table, a summary."""
    funnel = summary.funnel
    rows = [
        {
            "stage": stage,
            "seen": c.seen,
            "kept": c.kept,
            "dropped": ", ".join(f"{r} x{n}" for r, n in sorted(c.dropped.items(), key=lambda kv: -kv[1])) or "-",
        }
        for stage, c in funnel.stages.items()
    ]
    create_table_artifact(rows, key="build-funnel", description="Funnel of this run, in pipeline order")
    usage = summary.usage
    release = f"`{summary.release}` (version {summary.version})" if summary.release else "none"
    create_markdown_artifact(
        key="build-summary",
        description="What this build-benchmark run produced",
        markdown="\n".join(
            [
                f"## build-benchmark: {state.name}",
                "",
                f"{state.message}",
                "",
                "| what | value |",
                "| --- | --- |",
                f"| harvest | {summary.classes} classes kept from {summary.repos} repositories (`{summary.snapshot}`) |",
                f"| build | {summary.tasks} verified tasks, {summary.incomplete} candidates unfinished (`{summary.build_dir}`) |",
                f"| release | {release} |",
                f"| LLM | {usage.requests} requests, {usage.cached_hits} from the cache, "
                f"{usage.prompt_tokens + usage.completion_tokens} tokens, ${usage.cost_usd} |",
            ]
        ),
    )


# cast: Prefect types `task_runner` as TaskRunner[PrefectFuture[Any]], an invariant generic that no
# concrete runner matches (ThreadPoolTaskRunner is a TaskRunner[PrefectConcurrentFuture]); this is
# the documented use, and the runner is what Prefect asks for at run time.
@flow(
    name="build-benchmark",
    task_runner=cast("TaskRunner[PrefectFuture[Any]]", ThreadPoolTaskRunner(max_workers=8)),
    log_prints=True,
)
def build_benchmark(
    config_path: str | None = "examples/classforge.toml",
    cutoff: str | None = None,
    snapshot: str | None = None,
    release_version: str | None = None,
    endpoint_reports: list[dict] | None = None,
    overrides: dict | None = None,
) -> State:
    """Harvest post-cutoff classes, build verified tasks from them, and release a new version.

    `endpoint_reports`: the endpoint check `classforge build` already made (not probed again).
    `overrides`: dotted configuration keys applied over the file (the command line's options)."""
    parsing.guard_interpreter()  # a worker process running a deployment starts here, not in the CLI
    cfg = configure(config_path, cutoff, snapshot, overrides)
    with FolderLock(build_dir(cfg), "build-benchmark flow run"):
        return _run(cfg, release_version, endpoint_reports)


STAGE_TOTAL = "stage_total"  # a log record's extra: (task name, runs), read by the CLI's live rows


def announce_stage(logger, stage: str, runs: int) -> None:
    """Say how many runs a mapped stage will have, so a live view can show "k of n" from the start."""
    logger.info("%s: %d runs", stage, runs, extra={STAGE_TOTAL: (stage, runs)})


def _run(cfg: Config, release_version: str | None, endpoint_reports: list[dict] | None) -> State:
    logger = get_run_logger()
    if cfg.harvest.github.enabled:
        preflight(cfg.harvest.github)  # a missing token or no network fails here, in seconds
    # One key for the whole run: the endpoint probes' usage is filed under it with the candidates'.
    run_key = f"{date.today():%Y%m%d}-{uuid.uuid4().hex[:12]}"
    require_writable(cfg)  # a deployment run: before the probes (the CLI checked already)
    check_models(cfg, endpoint_reports, run_key)
    github = search_github_task(cfg.harvest)
    refs = gather_repositories(cfg.harvest, github)
    announce_stage(logger, "harvest-repository", len(refs))
    harvested = harvest_repository.map(refs, cfg=unmapped(cfg.harvest)).result()
    summary = dedup_and_assemble(cfg.harvest, refs, github, cfg.release.output_root)
    logger.info(
        "harvest: %d classes kept from %d repositories (%d reused)",
        summary.classes,
        summary.repos,
        sum(h["reused"] for h in harvested),
    )

    try:
        candidates = plan_build(cfg, run_key)
        candidate_task = build_candidate.with_options(
            retries=cfg.construction.candidate_retries, retry_delay_seconds=cfg.construction.candidate_retry_delay_s
        )
        announce_stage(logger, "build-candidate", len(candidates))
        futures = candidate_task.map(candidates, cfg=unmapped(cfg), run_key=unmapped(run_key))
        outcomes = [_outcome(f) for f in futures]
        result = finish_build(cfg, run_key, candidates, outcomes)
    finally:
        _close_construction(_config_json(cfg), run_key)
    return _release_and_report(cfg, result, summary, release_version, len(candidates))


def _release_and_report(
    cfg: Config, result: construct_lib.BuildResult, summary, release_version: str | None, candidates: int
) -> State:
    """Release what the build made (either track) and end the run with its summary."""
    logger = get_run_logger()
    logger.info(
        "build (%s): %d tasks from %d candidates (%d resumed, %d unfinished)",
        result.track,
        len(result.tasks),
        candidates,
        result.resumed,
        len(result.incomplete),
    )
    published = release(cfg, result, summary, release_version)
    logger.info("%s", published.note)
    run_summary = BuildRunSummary(
        snapshot=summary.snapshot_dir,
        classes=summary.classes,
        repos=summary.repos,
        tasks=len(result.tasks),
        incomplete=len(result.incomplete),
        stopped=result.stopped,
        build_dir=result.out_dir,
        release=published.path,
        version=published.version,
        note=published.note,
        funnel=published.funnel,
        usage=result.usage.total,
    )
    state = final_state(run_summary, result, published, result.track)
    publish_artifacts(run_summary, state)
    return state
