"""`classforge evaluate`: wire loading, the reference pre-run, generation, execution and scoring.

    outcome = evaluate(EvaluationRequest(dataset=path, models=["gpt-4o-mini"]), config, env=os.environ)
    outcome = regrade(run_dir)            # offline: scores again from the stored outcomes

Phases (each resumable; see `results/<run-id>/`):
1. Load the dataset (quirk fixes reported) and select tasks.
1b. A samples file selects its own tasks (with --task/--max-tasks, those of them selected): only
   they are loaded, pre-run and scored.
2. Reference pre-run: every selected task's canonical solution runs once, batched like the samples
   (one sandbox start per batch), or comes from the user's reference cache (`reference_cache`: XDG,
   or `evaluate.reference_cache`; by content: task, interpreter, harness, limits). A task whose
   reference does not pass is broken: reported with its cause, never generated for, excluded from
   every score. The reference's CPU time (its own runner's) scales the task's evaluation limit, in
   CPU time (`classforge_bench.pipeline.sandbox.evaluation_limit`).
   When a task's reference runs: exactly when the task has a sample to score (selected by --task,
   --max-tasks, or a samples file's tasks). Every such sample's score needs it: a broken task is
   excluded from every score, so even a sample that fails to compile counts only if the reference
   passes; and each sample that runs gets its limit from it. A task with no sample to score is
   never pre-run; a reference already in the cache or in the results folder's store never runs again.
3. Generation, per (model, strategy, sample index, task), through the one LLM client and its
   cache (special models and pre-generated samples need none).
4. Execution: syntax errors are found without running; everything else runs in the sandbox,
   stored by content in `executions/`. Each sample's record goes to its own file under
   `samples/` as soon as it is final.
5. Scoring (pass@k, taxonomy, DEP with bootstrap intervals) and the outputs: `results.json`,
   `summary.md`, `results.html` (the results page, `classforge_bench.benchmark.results_page`), and where asked
   (`evaluate.plots`, `--plots`) `passk.png`, `taxonomy.png`.

The run folder's name comes from the dataset's hash, the models and every setting that changes
the samples, so running the same command again resumes in the same folder: a sample with a
readable file is not done again (a killed run resumes from its finished samples; an unreadable
file is named in a warning and its sample redone, as are samples that failed for want of the
model or the sandbox), and what an unfinished sample had already paid for comes back from the LLM
cache and the execution store.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench import __version__
from classforge_bench.benchmark.environment import (
    EnvironmentBuildError,
    EnvironmentInfo,
    declared_requirements,
    ensure_environment,
    image_environment,
)
from classforge_bench.benchmark.execution import (
    ExecutionJob,
    ExecutionStore,
    Executor,
    StoredExecution,
    environment_tag,
    job_for,
)
from classforge_bench.benchmark.execution_phase import execute_samples, execution_phase
from classforge_bench.benchmark.generation_phase import GenerationPhase, generation_phase, pregenerated_phase
from classforge_bench.benchmark.hash_seeds import hash_seed_checks
from classforge_bench.benchmark.leaderboard import board_of
from classforge_bench.benchmark.plots import write_plots
from classforge_bench.benchmark.plus import plus_scores
from classforge_bench.benchmark.progress import EvaluationError, PhaseCounter, Progress
from classforge_bench.benchmark.record import SampleRecord
from classforge_bench.benchmark.results import (
    SPECIAL_MODELS,
    DatasetInfo,
    GroupScores,
    HashSeedCheck,
    ReferenceRecord,
    RunResults,
    RunSettings,
    RunStats,
    SampleFiles,
    dataset_label,
    file_sha256,
    load_results,
    run_id_for,
    save_results,
)
from classforge_bench.benchmark.results_page import PAGE_FILE, write_page
from classforge_bench.benchmark.samples_file import Answer, read_samples_file, samples_task_ids
from classforge_bench.benchmark.scoring import recategorise, score_run
from classforge_bench.benchmark.shipped import Trust, release_trust
from classforge_bench.benchmark.strategies import STRATEGIES, reference_program
from classforge_bench.benchmark.summary import render_summary
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.loader import LoadedDataset, load_dataset

if TYPE_CHECKING:  # the client (and the OpenAI SDK under it) is loaded only when a model is asked
    from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.config import Config, EvaluateConfig, LLMConfig, SandboxConfig
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.store import remove_partial_writes, write_text
from classforge_bench.pipeline.llm.ledger import UsageSummary
from classforge_bench.pipeline.llm.usage_history import (
    USAGE_DIR,
    new_run_id,
    recorded_usage,
    save_usage,
    write_usage_files,
)
from classforge_bench.pipeline.sandbox import SandboxBackend, SandboxError, SuiteResult, SuiteStatus, evaluation_limit
from classforge_bench.pipeline.sandbox.cluster import DaskCluster

log = logging.getLogger(__name__)

SUMMARY_FILE = "summary.md"
EXECUTIONS_DIR = "executions"


class EvaluationRequest(BaseModel):
    """What to evaluate; everything else comes from `Config.evaluate`."""

    model_config = ConfigDict(extra="forbid")

    dataset: Path
    models: list[str] = Field(default_factory=list, description="model names; 'reference' and 'empty' are special")
    samples_file: Path | None = Field(
        None, description="pre-generated completions (JSONL) to score instead of generating"
    )
    task_ids: list[str] | None = Field(None, description="only these tasks (dataset order kept)")
    max_tasks: int | None = Field(None, ge=1, description="only the first N (selected) tasks")


class EvaluatorConfig(BaseModel):
    """The parts of the configuration the evaluator reads; nothing else of the root `Config` reaches it."""

    model_config = ConfigDict(extra="forbid")

    evaluate: EvaluateConfig = Field(default_factory=EvaluateConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)

    @classmethod
    def of(cls, config: Config | EvaluatorConfig) -> EvaluatorConfig:
        if isinstance(config, EvaluatorConfig):
            return config
        return cls(evaluate=config.evaluate, sandbox=config.sandbox, llm=config.llm)


class RunOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    run_dir: Path
    results: RunResults
    summary: str


# -- small steps -------------------------------------------------------------------------------------


def select_tasks(dataset: LoadedDataset, task_ids: list[str] | None, max_tasks: int | None) -> list[Task]:
    tasks = dataset.tasks
    if task_ids:
        known = dataset.by_id()
        unknown = [t for t in task_ids if t not in known]
        if unknown:
            raise EvaluationError(f"{dataset.path}: no task(s) {', '.join(unknown)}")
        wanted = set(task_ids)
        tasks = [t for t in tasks if t.task_id in wanted]
    return tasks[:max_tasks] if max_tasks else tasks


def _identity(
    dataset_sha: str,
    request: EvaluationRequest,
    cfg: EvaluateConfig,
    sb: SandboxConfig,
    tasks: list[Task],
    samples_sha: str | None,
    models: list[str],
) -> dict:
    """Everything that changes which samples exist or how they are run (not ks or the bootstrap,
    which only change the scoring, so a different k re-scores the same run)."""
    llm_models = [m for m in request.models if m not in SPECIAL_MODELS] and samples_sha is None
    return {
        "dataset": dataset_sha,
        "models": models,
        "samples": samples_sha,
        "tasks": [t.task_id for t in tasks] if (request.task_ids or request.max_tasks) else "all",
        "n": cfg.n_samples if samples_sha is None else None,
        "strategies": cfg.strategies if llm_models else None,
        "levels": cfg.levels_source if llm_models else None,
        "endpoint": {
            "base_url": cfg.endpoint.base_url,
            "temperature": cfg.endpoint.temperature,
            "max_tokens": cfg.endpoint.max_tokens,
        }
        if llm_models
        else None,
        "limits": {"floor": sb.scale_floor_s, "factor": sb.scale_factor, "cap": sb.scale_cap_s, "basis": "cpu"},
    } | ({"environment": cfg.environment} if cfg.environment != "host" else {})


def _settings(
    request: EvaluationRequest,
    config: EvaluatorConfig,
    models: list[str],
    strategies: list[str],
    samples_sha: str | None,
    tasks: list[Task],
) -> RunSettings:
    cfg = config.evaluate
    return RunSettings(
        models=models,
        strategies=strategies,
        n_samples=cfg.n_samples if samples_sha is None else None,
        ks=cfg.ks,
        levels_source=cfg.levels_source,
        temperature=cfg.endpoint.temperature,
        max_tokens=cfg.endpoint.max_tokens,
        base_url=cfg.endpoint.base_url
        if any(m not in SPECIAL_MODELS for m in models) and samples_sha is None
        else None,
        bootstrap_resamples=cfg.bootstrap_resamples,
        bootstrap_seed=cfg.bootstrap_seed,
        scale_floor_s=config.sandbox.scale_floor_s,
        scale_factor=config.sandbox.scale_factor,
        scale_cap_s=config.sandbox.scale_cap_s,
        grace_s=config.sandbox.grace_s,
        hash_seed=config.sandbox.hash_seed,
        reference_limit_s=config.sandbox.wall_limit_s,
        samples_file=str(request.samples_file) if request.samples_file else None,
        samples_file_sha256=samples_sha,
        task_ids=[t.task_id for t in tasks] if (request.task_ids or request.max_tasks) else None,
    )


# The reference is the dataset's own solution, timed once to set its task's limits: a wall limit a
# busy machine stretches it past would mark a correct task broken (ClassEval_35 at load ~22), so
# it gets several times a sample's. Its CPU limit scales with it and still ends a runaway reference.
REFERENCE_LIMIT_FACTOR = 5


def reference_jobs(tasks: list[Task], sandbox: SandboxConfig) -> dict[str, ExecutionJob]:
    """task id -> the job of its reference's pre-run (what a release's shipped results are matched against)."""
    limit = sandbox.wall_limit_s * REFERENCE_LIMIT_FACTOR
    return {t.task_id: job_for(t, reference_program(t), limit) for t in tasks}


def reference_prerun(
    tasks: list[Task],
    executor: Executor,
    sandbox: SandboxConfig,
    progress: Progress | None = None,
    cache: ExecutionStore | None = None,
    trusted: Mapping[str, StoredExecution] | None = None,
) -> list[ReferenceRecord]:
    """Run every task's reference once; broken = anything but a pass (see the module docstring).

    `cache`: reference runs kept by content across results folders (`reference_cache`); a run found
    there is copied into this run's store instead of running again. `trusted`: runs by key a
    release ships and this environment trusts (`classforge_bench.benchmark.shipped`), used likewise.
    The limit scales from the reference's CPU time, which load does not inflate (`evaluation_limit`),
    so one timing suffices."""
    jobs = reference_jobs(tasks, sandbox)
    counter = PhaseCounter("reference", len(jobs), progress)
    done = _run_cached(executor, jobs, cache, counter.tick, trusted or {})
    return [
        _reference_record(t.task_id, done[t.task_id].whole, jobs[t.task_id].key(executor.config), sandbox)
        for t in tasks
    ]


def _run_cached(
    executor: Executor,
    jobs: dict[str, ExecutionJob],
    cache: ExecutionStore | None,
    tick: Callable[[], None],
    trusted: Mapping[str, StoredExecution],
) -> dict[str, StoredExecution]:
    """task id -> its job's execution: from this run's store, else the release's trusted results,
    else the shared cache, else run (and then kept in the cache too; a sandbox failure never is)."""
    keys = {tid: job.key(executor.config) for tid, job in jobs.items()}
    for key in keys.values():
        if executor.store.get(key) is not None:
            continue
        hit = trusted.get(key) or (cache.get(key) if cache is not None else None)
        if hit is not None:
            executor.store.put(hit)
    # Batched like the samples (one sandbox start per batch, not per reference): each reference's
    # CPU time is what its own forked runner used, without an interpreter start, and load does
    # not move it.
    done = executor.run(list(jobs.values()), on_done=lambda _stored: tick())
    if cache is not None:
        for key in keys.values():
            if not done[key].infrastructure_failure and cache.get(key) is None:
                cache.put(done[key])
    return {tid: done[key] for tid, key in keys.items()}


def _reference_record(task_id: str, w: SuiteResult, key: str, sb: SandboxConfig) -> ReferenceRecord:
    passed = w.status is SuiteStatus.PASSED
    infra = w.status is SuiteStatus.SANDBOX_ERROR
    cause = "" if passed else f"{w.status.value}: {w.detail}"
    if infra:
        cause = f"not judged, the sandbox failed (a new run retries it): {w.detail}"
    return ReferenceRecord(
        task_id=task_id,
        broken=not passed,
        cause=cause,
        suite_status=w.status.value,
        wall_s=w.wall_s,
        cpu_s=w.cpu_s,
        limit_s=evaluation_limit(w.wall_s, w.cpu_s, sb),
        execution_key=key,
        infrastructure=infra,
    )


def reference_cache(
    cfg: EvaluateConfig, sandbox: SandboxConfig, env: Mapping[str, str] | None = None
) -> ExecutionStore:
    """The shared store of reference runs, one per user: `evaluate.reference_cache` when set, else
    `$XDG_CACHE_HOME/classforge/references` (`~/.cache/...` by `HOME`), so every results folder of
    the user shares it whatever its parent; only when the environment names neither (an embedding
    caller passing `env={}`) the old `.cache/references` beside the results root. One folder per
    interpreter and harness (`environment_tag`), since an execution's key names the interpreter
    only when it is not the host's own."""
    root = cfg.reference_cache or user_cache_dir(env or {})
    if root is None:
        root = Path(cfg.output_root).parent / ".cache" / "references"
    return ExecutionStore(Path(root) / environment_tag(sandbox))


def user_cache_dir(env: Mapping[str, str]) -> Path | None:
    """The user's reference cache by the XDG base-directory rule, None when `env` tells neither."""
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "classforge" / "references"
    if env.get("HOME"):
        return Path(env["HOME"]) / ".cache" / "classforge" / "references"
    return None


# -- the run ----------------------------------------------------------------------------------------


def _environment(
    dataset_format: str, tasks: list[Task], cfg: EvaluateConfig, sandbox: SandboxConfig
) -> EnvironmentInfo:
    """The declared environment: a virtual environment for the local backend (built once, reused),
    the sandbox image for the docker backend; either way from the same requirements list."""
    requirements, declared_in = declared_requirements(dataset_format, tasks)
    requirements += cfg.environment_extra
    try:
        if sandbox.backend == "docker":
            return image_environment(requirements, sandbox.docker_image)
        return ensure_environment(requirements, cfg.environment_root, declared_in=declared_in)
    except EnvironmentBuildError as e:
        raise EvaluationError(str(e)) from e


def _read_samples(
    request: EvaluationRequest, dataset: LoadedDataset, tasks: list[Task], covered: list[str], dataset_sha: str
) -> tuple[list[Answer] | None, str | None]:
    """The pre-generated samples of the selected tasks and the file's hash, when a samples file is
    given; samples of tasks the dataset holds but --task/--max-tasks did not select are left out, saying so."""
    if request.samples_file is None:
        return None, None
    path = request.samples_file
    selected = [t.task_id for t in tasks]
    samples = read_samples_file(
        path,
        default_model=request.models[0] if request.models else None,
        known_tasks=set(dataset.all_task_ids) or set(selected),
        task_methods={t.task_id: t.method_names for t in tasks},
        selected=set(selected),
        dataset_sha256=dataset_sha,
    )
    left_out = [t for t in covered if t not in set(selected)]
    if not samples:
        raise EvaluationError(
            f"{path}: no sample of the selected task(s) {', '.join(selected[:5])}"
            f"{' ...' if len(selected) > 5 else ''}; its samples are of task(s) {', '.join(left_out[:5])}"
            f"{' ...' if len(left_out) > 5 else ''} (in the dataset, not selected by --task/--max-tasks)"
        )
    return samples, file_sha256(path)


def evaluate(
    request: EvaluationRequest,
    config: Config | EvaluatorConfig,
    *,
    env: Mapping[str, str] | None = None,
    client: LLMClient | None = None,
    backend: SandboxBackend | None = None,
    progress: Progress | None = None,
) -> RunOutcome:
    """Run (or resume) one evaluation and write its folder; see the module docstring. With
    `evaluate.dask`, the sandbox runs go to that Dask cluster (`classforge_bench.pipeline.sandbox.cluster`), whose
    workers are checked first; everything else, the stores included, stays here. Of `config` only
    the evaluator's parts are read (`EvaluatorConfig`)."""
    config = EvaluatorConfig.of(config)
    if config.evaluate.dask is None:
        return _evaluate(request, config, env, client, backend, progress, None)
    try:
        with DaskCluster(config.evaluate.dask, local_workers=config.evaluate.workers) as cluster:
            return _evaluate(request, config, env, client, backend, progress, cluster)
    except SandboxError as exc:
        raise EvaluationError(str(exc)) from exc


def _evaluate(
    request: EvaluationRequest,
    config: EvaluatorConfig,
    env: Mapping[str, str] | None,
    client: LLMClient | None,
    backend: SandboxBackend | None,
    progress: Progress | None,
    cluster: DaskCluster | None,
) -> RunOutcome:
    cfg = config.evaluate
    _check_request(request, cfg.strategies)
    clock: dict[str, float] = {}
    t0 = time.perf_counter()
    loaded = _load_run(request, config)
    clock["load"] = time.perf_counter() - t0
    # One run per results folder, as one build per build folder: a second run of the same
    # evaluation would do (and pay for) everything again; it is refused naming the holder.
    with FolderLock(loaded.run_dir, "classforge evaluate"):
        remove_partial_writes(loaded.run_dir)  # what a run killed mid-write left
        return _evaluate_loaded(request, config, env, client, backend, progress, cluster, loaded, clock)


def _evaluate_loaded(
    request: EvaluationRequest,
    config: EvaluatorConfig,
    env: Mapping[str, str] | None,
    client: LLMClient | None,
    backend: SandboxBackend | None,
    progress: Progress | None,
    cluster: DaskCluster | None,
    loaded: _LoadedRun,
    clock: dict[str, float],
) -> RunOutcome:
    cfg = config.evaluate
    dataset, tasks, run_dir = loaded.dataset, loaded.tasks, loaded.run_dir
    by_id = {t.task_id: t for t in tasks}

    environment = _environment(dataset.format, tasks, cfg, config.sandbox) if cfg.environment == "dataset" else None
    if environment is not None:
        config = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"python": environment.python})})
    executor = evaluation_executor(config, run_dir, backend, cluster)
    t0 = time.perf_counter()
    references, shipped_note = _reference_phase(dataset, tasks, executor, config, env, progress)
    refs = {r.task_id: r for r in references}
    broken = {r.task_id for r in references if r.broken}
    clock["reference"] = time.perf_counter() - t0

    files = SampleFiles(run_dir)
    finished = files.finished()  # a killed run's finished samples: not done again
    t0 = time.perf_counter()
    usage_run = new_run_id()
    phase = _generation(request, config, loaded, broken, client, env, progress, finished, usage_run)
    clock["generation"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    records, resumed = execution_phase(
        phase.records, phase.broken_records, phase.order, by_id, refs, executor, files, finished, progress
    )
    clock["execution"] = time.perf_counter() - t0

    settings = _settings(request, config, phase.models, phase.strategies, loaded.samples_sha, tasks)
    settings.environment = environment
    plus = _plus_phase(tasks, records, executor, config.sandbox, settings, progress, clock)
    checks = _hash_seed_phase(records, by_id, refs, executor, cfg.hash_seeds)
    if (run_dir / USAGE_DIR).is_dir():
        write_usage_files(run_dir, *recorded_usage(run_dir, config.llm.costs, usage_run))
    results = _run_results(request, loaded, settings, references, records, phase.usage, plus, executor, resumed)
    results.dataset.shipped_references = shipped_note
    results.hash_seed_checks = checks
    return _score_and_write(run_dir, results, progress, clock, samples_written=True, plots=cfg.plots)


def _generation(
    request: EvaluationRequest,
    config: EvaluatorConfig,
    loaded: _LoadedRun,
    broken: set[str],
    client: LLMClient | None,
    env: Mapping[str, str] | None,
    progress: Progress | None,
    finished: Collection[tuple[str, str, str, int]],
    usage_run: str,
) -> GenerationPhase:
    """A samples file's answers read into their records, else every planned sample generated (what
    the client pays for kept in the run's usage files as it goes)."""
    if loaded.samples is not None:
        return pregenerated_phase(loaded.samples, loaded.tasks, broken, finished)
    return generation_phase(
        request.models,
        config.evaluate,
        config.llm,
        loaded.tasks,
        broken,
        client,
        env,
        progress,
        done=finished,
        keep_usage=lambda entries: save_usage(loaded.run_dir, usage_run, "generation", entries),
        dataset_sha256=loaded.dataset_sha,
    )


def _reference_phase(
    dataset: LoadedDataset,
    tasks: list[Task],
    executor: Executor,
    config: EvaluatorConfig,
    env: Mapping[str, str] | None,
    progress: Progress | None,
) -> tuple[list[ReferenceRecord], str | None]:
    """The reference pre-run, each reference from a release's trusted shipped results, the user's
    cache or a run; and the line saying what became of the release's shipped results, if it has any."""
    cfg = config.evaluate
    shipped = (
        release_trust(Path(dataset.path), tasks, reference_jobs(tasks, config.sandbox), executor)
        if dataset.format == "classforge-release" and cfg.shipped_references
        else Trust()
    )
    cache = reference_cache(cfg, config.sandbox, env)
    references = reference_prerun(tasks, executor, config.sandbox, progress, cache=cache, trusted=shipped.executions)
    return references, shipped.note


def _run_results(
    request: EvaluationRequest,
    loaded: _LoadedRun,
    settings: RunSettings,
    references: list[ReferenceRecord],
    records: list[SampleRecord],
    usage: UsageSummary | None,
    plus: tuple[list[GroupScores], list[ReferenceRecord]],
    executor: Executor,
    resumed: int,
) -> RunResults:
    """The run's results before scoring: what was run, on what, with which settings, at what cost."""
    return RunResults(
        run_id=loaded.run_id,
        classforge_version=__version__,
        dataset=_dataset_info(request, loaded.dataset, loaded.dataset_sha, loaded.tasks),
        settings=settings,
        tasks=loaded.tasks,
        reference=references,
        samples=records,
        usage=usage,
        plus_scores=plus[0],
        plus_reference=plus[1],
        stats=RunStats(
            sandbox_runs=executor.sandbox_runs,
            executions_reused=executor.reused,
            samples_resumed=resumed,
            llm_requests=(usage.total.requests + usage.total.failed_requests) if usage else 0,
        ),
    )


@dataclass(frozen=True)
class _LoadedRun:
    """A run's inputs as read: the dataset and the tasks selected, the samples file's answers (when
    one is scored), and the run's id and folder, which follow from them."""

    dataset: LoadedDataset
    tasks: list[Task]
    dataset_sha: str
    samples: list[Answer] | None
    samples_sha: str | None
    run_id: str
    run_dir: Path


def _load_run(request: EvaluationRequest, config: EvaluatorConfig) -> _LoadedRun:
    cfg = config.evaluate
    # A samples file decides which tasks are scored: only those are loaded and pre-run.
    covered = samples_task_ids(request.samples_file) if request.samples_file is not None else None
    dataset = load_dataset(request.dataset, task_ids=request.task_ids or covered or None)
    tasks = select_tasks(dataset, request.task_ids, request.max_tasks)
    if not tasks:
        raise EvaluationError(f"{request.dataset}: no task selected")
    dataset_sha = file_sha256(request.dataset)
    samples, samples_sha = _read_samples(request, dataset, tasks, covered or [], dataset_sha)
    models = list(dict.fromkeys(record.model for record, _ in samples)) if samples is not None else request.models
    run_id = run_id_for(
        dataset_label(Path(request.dataset)),
        _identity(dataset_sha, request, cfg, config.sandbox, tasks, samples_sha, models),
    )
    return _LoadedRun(
        dataset=dataset,
        tasks=tasks,
        dataset_sha=dataset_sha,
        samples=samples,
        samples_sha=samples_sha,
        run_id=run_id,
        run_dir=Path(cfg.output_root) / run_id,
    )


def evaluation_executor(
    config: EvaluatorConfig, run_dir: Path, backend: SandboxBackend | None, cluster: DaskCluster | None
) -> Executor:
    """The run's executor over its own store; a Dask cluster's workers are checked first."""
    cfg = config.evaluate
    if cluster is not None:
        cluster.check(config.sandbox)
    return Executor(
        config.sandbox,
        ExecutionStore(run_dir / EXECUTIONS_DIR),
        workers=cfg.workers,
        retries=cfg.sandbox_retries,
        rerun_classes=cfg.rerun_classes,
        backend=backend,
        cluster=cluster,
        batch_size=cfg.batch_size,
    )


def _plus_phase(
    tasks: list[Task],
    records: list[SampleRecord],
    executor: Executor,
    sandbox: SandboxConfig,
    settings: RunSettings,
    progress: Progress | None,
    clock: dict[str, float],
) -> tuple[list[GroupScores], list[ReferenceRecord]]:
    """Base + plus scores of the same samples, when the dataset has plus suites (classforge_bench.benchmark.plus)."""

    def renamed(phase: str, done: int, total: int) -> None:
        if progress:
            progress(f"plus {phase}", done, total)

    t0 = time.perf_counter()
    scored = plus_scores(
        tasks,
        records,
        run_samples=lambda generated, by_id, refs: execute_samples(generated, by_id, refs, executor, renamed),
        reference=lambda combined: reference_prerun(combined, executor, sandbox, renamed),
        score=lambda combined, broken, recs: score_run(combined, broken, recs, settings),
    )
    if scored[1]:
        clock["plus"] = time.perf_counter() - t0
    return scored


def _hash_seed_phase(
    records: list[SampleRecord], by_id: dict[str, Task], refs: dict, executor: Executor, n: int
) -> list[HashSeedCheck]:
    """evaluate.hash_seeds: the class-level passes run again under other seeds (classforge_bench.benchmark.hash_seeds)."""
    return hash_seed_checks(records, by_id, executor, n, lambda made, other: execute_samples(made, by_id, refs, other))


def _check_request(request: EvaluationRequest, strategies: Sequence[str]) -> None:
    if not request.models and request.samples_file is None:
        raise EvaluationError("nothing to evaluate: give at least one model, or a samples file")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise EvaluationError(f"unknown strategies {unknown}; expected some of {', '.join(STRATEGIES)}")


def _dataset_info(request: EvaluationRequest, dataset, dataset_sha: str, tasks: list[Task]) -> DatasetInfo:
    selected = {t.task_id for t in tasks}
    covered = samples_task_ids(request.samples_file) if request.samples_file is not None else []
    return DatasetInfo(
        path=str(request.dataset),
        format=dataset.format,
        sha256=dataset_sha,
        samples_left_out=[t for t in covered if t not in selected],
        n_tasks_loaded=len(dataset.all_task_ids) or len(dataset.tasks),
        n_tasks_selected=len(tasks),
        fixes_applied=[f for f in dataset.fixes_applied if f.task_id in selected],
        notices=[n for n in dataset.notices if n.task_id in selected],
    )


def _score_and_write(
    run_dir: Path,
    results: RunResults,
    progress: Progress | None,
    clock: dict[str, float] | None = None,
    samples_written: bool = False,
    plots: bool = False,
) -> RunOutcome:
    """Score, then write results.json, summary.md, results.html and (asked for) the plots, each once, at the end."""
    t0 = time.perf_counter()
    if progress:
        progress("scoring", 0, 1)
    results.scores = score_run(results.tasks, set(results.broken_task_ids), results.samples, results.settings)
    timing = dict(clock or results.stats.seconds) | {"scoring": time.perf_counter() - t0}
    results.stats.seconds = {k: round(v, 3) for k, v in timing.items()}
    save_results(run_dir, results, write_samples=not samples_written)
    summary = render_summary(results)
    write_text(run_dir / SUMMARY_FILE, summary)
    write_page(board_of([results]), run_dir / PAGE_FILE, title=f"classforge evaluation {results.run_id}")
    if plots:
        write_plots(results, run_dir)
    if progress:
        progress("scoring", 1, 1)
    return RunOutcome(run_dir=run_dir, results=results, summary=summary)


def regrade(run_dir: Path, progress: Progress | None = None, plots: bool = False) -> RunOutcome:
    """Recompute categories and every score from the stored outcomes, offline, and rewrite the
    folder's results.json, summary.md and plots. Nothing is generated or run."""
    results = load_results(run_dir)
    run_dir = Path(run_dir) if Path(run_dir).is_dir() else Path(run_dir).parent
    by_id = {t.task_id: t for t in results.tasks}
    missing = sorted({r.task_id for r in results.samples} - set(by_id))
    if missing:
        raise EvaluationError(f"{run_dir}: samples of tasks the results do not hold: {', '.join(missing)}")
    for record in results.samples:
        recategorise(by_id[record.task_id], record)
    return _score_and_write(run_dir, results, progress, plots=plots)
