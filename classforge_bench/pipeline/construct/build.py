"""The one construction driver: a track's candidates through its stage list, verified tasks out.

    track = CompositionTrack(classes, BuildSettings.of(config), out_dir)   # or RealSourceTrack(...)
    result = build_tasks(track, client, gate, out_dir)

A track (`BuildTrack`: `construct/composition.py`, `construct/real_candidate.py`) supplies its
candidates, its stage list, its fingerprint inputs, the models it calls and its summary; this module
walks the stages of every candidate of every track the same way (`run_stages`), so stopping,
the budget, resume and the usage record work alike on both. A stage is an object in a list
(`Stage`): it keeps the candidate (returns None or kept outcomes) or drops it with a registered
reason; adding one edits neither the driver, nor the result type, nor the fingerprint (a stage
that declares `fingerprint` settings adds them to it).

Layout of `out_dir` (every file written atomically):
    candidates/<candidate_id>.json   one finished candidate: every stage's output and its verdicts
    tasks.jsonl                      the built tasks, in candidate order (byte-identical on replay)
    rejects.jsonl                    every drop with stage, reason code and detail
    funnel.json                      counts per stage and reason
    build.json                       summary: counts, stop reason, unfinished candidates, fingerprint
    usage/<run id>/<candidate>.jsonl  the LLM usage of each candidate, written when it finishes
    usage.json                       tokens and cost of every run so far, per role, task and model
    usage-last-run.json              the same for this run only

Resume: a candidate whose file exists with the same fingerprint (the track's inputs: models,
generation settings, prompt files, stage settings) is loaded, not rebuilt; the response cache also
serves every call made before, so a re-run pays only for work that never finished. A candidate
that did not finish (budget reached, a replay cache miss, an unexpected error) is not written and
is retried next run; so is one that ended on an infrastructure fault (a model call that failed for
good, the sandbox unavailable, judges that could not be reached): those say nothing about the candidate.

One build at a time per folder: `build_tasks` (and the flow) hold the folder's lock, and a second
run stops at once with an error naming the holder, before it pays for anything.

Budget: checked up front (every model the track calls needs a price when `llm.budget_usd` is
set); when the ledger reaches it, the candidate that hit it stops, no new candidate starts, and
the build writes everything finished so far with `stopped` set. A stop (Ctrl-C, SIGTERM) writes
the usage of every candidate in flight before the process ends.
The funnel is rebuilt from the candidates' stored verdicts in candidate order, so it is the same
for a fresh, a resumed and a replayed build.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.config import Config, ConfigError, ConstructConfig, LLMConfig, PlusConfig, SandboxConfig
from classforge_bench.pipeline.construct.attempts import StageAttempts
from classforge_bench.pipeline.construct.common import StageOutcome
from classforge_bench.pipeline.construct.gate import Gate, GateUnavailable
from classforge_bench.pipeline.construct.pairing import PairingResult
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.funnel import Funnel, FunnelReport, RejectionList
from classforge_bench.pipeline.core.pool import map_concurrently
from classforge_bench.pipeline.core.records import Rejection, content_id
from classforge_bench.pipeline.core.stop_hooks import at_stop
from classforge_bench.pipeline.core.store import atomic_open, write_json, write_jsonl
from classforge_bench.pipeline.core.task import Task, Track
from classforge_bench.pipeline.llm.cache import canonical_json
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.errors import BudgetExceeded, CacheMiss, UnpricedModel
from classforge_bench.pipeline.llm.ledger import UsageSummary
from classforge_bench.pipeline.llm.usage_history import new_run_id, recorded_usage, save_usage, write_usage_files

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildSettings:
    """The parts of the configuration a build reads: the models, the construction stages, the
    sandbox gate and the plus tier (not the harvest's, the release's or the evaluator's)."""

    llm: LLMConfig
    construction: ConstructConfig
    sandbox: SandboxConfig
    plus: PlusConfig

    @classmethod
    def of(cls, config: Config) -> BuildSettings:
        return cls(llm=config.llm, construction=config.construction, sandbox=config.sandbox, plus=config.plus)


class CandidateRecord(BaseModel):
    """What every track stores of a finished candidate: its verdicts and, when built, its task.
    A track's record adds each of its stages' outputs (`composition.CandidateResult`,
    `real_candidate.RealCandidateResult`)."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    fingerprint: str
    status: Literal["built", "rejected"] = "rejected"
    outcomes: list[StageOutcome] = Field(
        default_factory=list, description="one per stage reached, in order; only the last may be a drop"
    )
    task: Task | None = None

    def rejection(self) -> Rejection | None:
        last = self.outcomes[-1]
        if last.keep:
            return None
        return Rejection(item_id=self.candidate_id, stage=last.stage, reason=last.reason, detail=last.detail)


class Candidate(Protocol):
    """One unit of work a track hands the driver (a pair, a class): picklable, so a flow's
    task runner can send it to another process."""

    @property
    def candidate_id(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def inputs_digest(self) -> str:
        """A hash of what the candidate feeds its stages beyond the track's settings ('' when its
        id already says it all): a finished candidate is reused only while it is the same."""
        ...


def candidate_fingerprint(fingerprint: str, candidate: Candidate) -> str:
    """The build's fingerprint, joined with the candidate's own inputs when it has any."""
    digest = candidate.inputs_digest
    return content_id(f"{fingerprint}|{digest}") if digest else fingerprint


W = TypeVar("W")
StageResult = StageOutcome | Sequence[StageOutcome] | None


@dataclass(frozen=True)
class Stage(Generic[W]):
    """One step of a track: `run(work)` keeps the candidate (None, or kept outcomes to record) or
    drops it (a last outcome that is a drop, with a registered reason). `fingerprint`: settings
    of this stage that change what it produces, hashed into the build's fingerprint."""

    name: str
    run: Callable[[W], StageResult]
    fingerprint: Any = None


class Work(Protocol):
    """A candidate in progress: its stored record, plus whatever its track's stages pass along."""

    @property
    def record(self) -> CandidateRecord: ...


WorkT = TypeVar("WorkT", bound=Work)


class BuildTrack(Protocol[WorkT]):
    """A construction track: what it builds from, how, and what it reports (see the module docstring)."""

    kind: Track
    settings: BuildSettings
    record_type: type[CandidateRecord]

    def candidates(self, funnel: Funnel) -> list[Any]:
        """The candidates in build order, drops made before any candidate (pairing) recorded in `funnel`."""
        ...

    def stages(self) -> Sequence[Stage[WorkT]]: ...

    def start(self, candidate: Any, client: LLMClient, gate: Gate, fingerprint: str) -> WorkT:
        """A fresh candidate in progress, its record empty (its `StageContext` made with `client`)."""
        ...

    def fingerprint_material(self) -> dict[str, Any]: ...

    def llm_models(self) -> dict[str, str]:
        """Role -> model of every LLM the stages may call (priced up front when a budget is set)."""
        ...

    def models(self) -> dict[str, str]:
        """Role -> model or tool for the release card."""
        ...

    def check(self) -> None:
        """Settings of this track that only make sense together; raises ConfigError."""
        ...

    def finish(self, finished: list[Any], funnel: FunnelReport) -> tuple[FunnelReport, dict[str, Any]]:
        """The funnel with what the track adds (the generated tests' own), and the track's extra
        result fields (`BuildResult.attempts`, `strengthening`, `pairing`)."""
        ...

    def summary(self, result: BuildResult) -> dict[str, Any]:
        """build.json."""
        ...


class Incomplete(BaseModel):
    """A candidate that did not finish in this run; the next run retries it."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    reason: str
    detail: str = ""


class BuildResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    track: Track = Track.COMPOSITION
    out_dir: Path
    tasks: list[Task]
    rejections: list[Rejection]
    funnel: FunnelReport
    pairing: PairingResult | None = Field(None, description="the composition track's pairing")
    incomplete: list[Incomplete] = Field(default_factory=list)
    stopped: str | None = Field(None, description="why the build stopped early (budget-exceeded), if it did")
    resumed: int = Field(0, description="candidates loaded from an earlier run instead of rebuilt")
    attempts: dict[str, StageAttempts] = Field(
        default_factory=dict, description="per stage: good at once, after repair, failed"
    )
    fingerprint: str
    strengthening: dict[str, int] = Field(
        default_factory=dict,
        description="weak suites strengthened by search (no LLM call: the calls saved) and by the LLM",
    )
    models: dict[str, str] = Field(default_factory=dict, description="role -> model or tool, for the release")
    usage: UsageSummary = Field(description="this run's LLM usage")
    usage_all_runs: UsageSummary = Field(description="every run's LLM usage in this build folder, this one included")

    @property
    def complete(self) -> bool:
        return not self.incomplete


def build_fingerprint(track: BuildTrack) -> str:
    """Everything that changes what a finished candidate contains, hashed: the track's inputs and
    the settings each stage declares (none today, so earlier builds keep their fingerprint)."""
    material = dict(track.fingerprint_material())
    staged = {s.name: s.fingerprint for s in track.stages() if s.fingerprint is not None}
    if staged:
        material["stages"] = staged
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()[:16]


def check_budget(llm: LLMConfig, models: dict[str, str]) -> None:
    """With a budget set, every model a build may call needs a price: checked before anything is paid."""
    if llm.budget_usd is not None:
        unpriced = sorted({m for m in models.values() if m not in llm.costs})
        if unpriced:
            raise ConfigError(f"llm.budget_usd is set but llm.costs has no price for: {', '.join(unpriced)}")


def _candidate_path(out_dir: Path, candidate_id: str) -> Path:
    return out_dir / "candidates" / f"{candidate_id}.json"


def infrastructure_fault(result: CandidateRecord) -> str | None:
    """Why a candidate that looks finished really stopped on an infrastructure fault, if it did
    (a model call that failed for good, the sandbox unavailable, judges an outage took away when
    their votes could have changed the verdict: see `judges.judge`)."""
    last = result.outcomes[-1] if result.outcomes else None
    if last is None or not last.infrastructure:
        return None
    return f"{last.stage}: {last.reason}: {last.detail}"


def load_finished(
    out_dir: Path, candidate: Candidate, fingerprint: str, record_type: type[CandidateRecord]
) -> CandidateRecord | None:
    """A finished candidate from an earlier run, if it was built with the same settings."""
    path = _candidate_path(out_dir, candidate.candidate_id)
    if not path.exists():
        return None
    try:
        done = record_type.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        log.warning(
            "candidate %s: unreadable result file %s (%s); rebuilding it", candidate.label, path, exc.errors()[0]["msg"]
        )
        return None
    if done.fingerprint != fingerprint:
        log.info("candidate %s: settings changed since it was built; rebuilding it", candidate.label)
        return None
    fault = infrastructure_fault(done)
    if fault is not None:
        # Written by an earlier version that stored infrastructure faults as verdicts.
        log.info("candidate %s: stopped on an infrastructure fault last time (%s); retrying it", candidate.label, fault)
        return None
    return done


Progress = Callable[[str, str], None]  # (candidate id, "built" | "rejected" | "resumed" | "incomplete")
StageStarted = Callable[[str], None]  # (stage name), called as each stage of a candidate starts


def run_stages(stages: Sequence[Stage[WorkT]], work: WorkT, on_stage: StageStarted | None = None) -> CandidateRecord:
    """The one loop: each stage in order until one drops the candidate; a candidate every stage
    kept is built (the funnel's last stage, `task`). Raises only what is not about the
    candidate (the budget, a replay miss, the sandbox unavailable)."""
    record = work.record
    for stage in stages:
        if on_stage is not None:
            on_stage(stage.name)
        got = stage.run(work)
        outcomes = [] if got is None else [got] if isinstance(got, StageOutcome) else list(got)
        record.outcomes.extend(outcomes)
        if outcomes and not outcomes[-1].keep:
            return record
    if record.task is None:
        raise AssertionError(f"candidate {record.candidate_id}: every stage kept it but none made its task")
    record.status = "built"
    record.outcomes.append(StageOutcome.kept(R.TASK))
    return record


class BuildPlan:
    """What every candidate of one build shares: the track, its candidates, fingerprint and stop signal.

    `build_tasks` runs a plan in-process; the Prefect flow maps `build_candidate` over
    `plan.candidates` as tasks of its own and finishes with `finish_build`. Both paths share
    this code, so they produce the same files.
    """

    def __init__(self, track: BuildTrack, out_dir: Path, run_id: str | None = None):
        track.check()
        check_budget(track.settings.llm, track.llm_models())
        # Names this run's usage folder; every process of one flow run shares it.
        self.run_id = run_id or new_run_id()
        self.track = track
        self.config = track.settings
        self.out_dir = Path(out_dir)
        self.collect = RejectionList()
        self.funnel: Funnel = Funnel(sink=self.collect)
        self.candidates: list[Any] = track.candidates(self.funnel)
        self.stages = list(track.stages())
        self.fingerprint = build_fingerprint(track)
        self.stop = threading.Event()
        self.stop_reason: list[str] = []


CandidateOutcome = tuple[str, "CandidateRecord | Incomplete"]


def build_candidate(
    plan: BuildPlan, candidate: Candidate, client: LLMClient, gate: Gate, on_stage: StageStarted | None = None
) -> CandidateOutcome:
    """One candidate: loaded when finished earlier, else its track's stages and its result file."""
    cid = candidate.candidate_id
    fingerprint = candidate_fingerprint(plan.fingerprint, candidate)
    done = load_finished(plan.out_dir, candidate, fingerprint, plan.track.record_type)
    if done is not None:
        return "resumed", done
    if plan.stop.is_set():
        return "incomplete", Incomplete(
            candidate_id=cid,
            reason=R.INCOMPLETE_NOT_STARTED,
            detail=f"the build stopped ({plan.stop_reason[0]}) before it started",
        )
    save_usage_now = partial(save_candidate_usage, plan, client, cid)
    try:
        # A stop ends the process without running the `finally` below: the spend would be missing
        # from usage/ while its answers, cached, cost nothing next time.
        with at_stop(f"saving the usage of {cid}", save_usage_now):
            work = plan.track.start(candidate, client, gate, fingerprint)
            result = run_stages(plan.stages, work, on_stage)
    except (BudgetExceeded, UnpricedModel) as exc:
        if not plan.stop_reason:
            plan.stop_reason.append(R.INCOMPLETE_BUDGET)
        plan.stop.set()  # no new candidate starts; those in flight stop at their next live call
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_BUDGET, detail=str(exc))
    except CacheMiss as exc:
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_CACHE_MISS, detail=str(exc))
    except GateUnavailable as exc:
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_INFRASTRUCTURE, detail=str(exc))
    finally:
        # Whatever happened, the calls this candidate paid for are on disk before anything else.
        save_usage_now()
    fault = infrastructure_fault(result)
    if fault is not None:
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_INFRASTRUCTURE, detail=fault)
    write_json_model(_candidate_path(plan.out_dir, cid), result)
    return result.status, result


def save_candidate_usage(plan: BuildPlan, client: LLMClient, candidate_id: str) -> None:
    """The candidate's ledger entries of this run (all its attempts in this process)."""
    save_usage(plan.out_dir, plan.run_id, candidate_id, client.ledger.entries(candidate_id))


def fold_candidates(
    outcomes: Iterable[tuple[str, str, Any]], funnel: Funnel
) -> tuple[list[Task], list[Incomplete], list, int]:
    """(tasks, unfinished, finished records, resumed count) from (label, candidate id, outcome)
    triples in build order, every finished candidate's verdicts recorded in `funnel`."""
    tasks: list[Task] = []
    incomplete: list[Incomplete] = []
    finished: list = []
    resumed = 0
    for label, candidate_id, outcome in outcomes:
        if isinstance(outcome, BaseException):
            # A bug or an infrastructure failure (e.g. the sandbox could not start): reported, not
            # persisted, so the candidate is retried once it is fixed.
            log.error("candidate %s failed: %s: %s", label, type(outcome).__name__, outcome, exc_info=outcome)
            incomplete.append(
                Incomplete(
                    candidate_id=candidate_id, reason=R.INCOMPLETE_ERROR, detail=f"{type(outcome).__name__}: {outcome}"
                )
            )
            continue
        status, value = outcome
        if isinstance(value, Incomplete):
            incomplete.append(value)
            continue
        resumed += status == "resumed"
        finished.append(value)
        for stage_outcome in value.outcomes:
            funnel.record(stage_outcome.stage, value.candidate_id, stage_outcome.verdict())
        if value.task is not None:
            tasks.append(value.task)
    return tasks, incomplete, finished, resumed


def finish_build(plan: BuildPlan, outcomes: Sequence[tuple[Any, CandidateOutcome | BaseException]]) -> BuildResult:
    """Fold candidate outcomes, in candidate order, into the funnel and the build's files; the usage
    comes from what every candidate stored, so no process's ledger can be lost."""
    tasks, incomplete, finished, resumed = fold_candidates(
        ((c.label, c.candidate_id, outcome) for c, outcome in outcomes), plan.funnel
    )
    funnel, extra = plan.track.finish(finished, plan.funnel.report())
    this_run, all_runs = recorded_usage(plan.out_dir, plan.config.llm.costs, plan.run_id)
    result = BuildResult(
        track=plan.track.kind,
        out_dir=plan.out_dir,
        tasks=tasks,
        rejections=plan.collect.rejections,
        funnel=funnel,
        incomplete=incomplete,
        stopped=plan.stop_reason[0] if plan.stop_reason else None,
        resumed=resumed,
        fingerprint=plan.fingerprint,
        models=plan.track.models(),
        usage=this_run,
        usage_all_runs=all_runs,
        **extra,
    )
    write_build_files(result, plan.track.summary(result))
    return result


def build_tasks(
    track: BuildTrack,
    client: LLMClient,
    gate: Gate,
    out_dir: Path,
    *,
    progress: Progress | None = None,
) -> BuildResult:
    """Every candidate of `track` in-process, `llm.concurrency` at a time, in one folder."""
    parsing.guard_interpreter()  # candidates run on threads; so may other code's parses
    with FolderLock(Path(out_dir), f"classforge build ({track.kind})"):
        plan = BuildPlan(track, out_dir)

        def tracked(candidate: Any) -> CandidateOutcome:
            status, value = build_candidate(plan, candidate, client, gate)
            if progress is not None:
                progress(candidate.candidate_id, status)
            return status, value

        outcomes = map_concurrently(tracked, plan.candidates, track.settings.llm.concurrency)
        folded = [(o.item, o.error if o.error is not None else o.unwrap()) for o in outcomes]
        return finish_build(plan, folded)


def write_json_model(path: Path, model: BaseModel) -> None:
    with atomic_open(path) as fh:
        fh.write(model.model_dump_json(indent=1))
        fh.write("\n")


def write_build_files(result: BuildResult, summary: dict) -> None:
    """tasks.jsonl, rejects.jsonl, funnel.json, the usage files and build.json (`summary`)."""
    out = result.out_dir
    write_jsonl(out / "tasks.jsonl", result.tasks)
    write_jsonl(out / "rejects.jsonl", result.rejections)
    write_json(out / "funnel.json", result.funnel.model_dump(mode="json"))
    write_usage_files(out, result.usage, result.usage_all_runs)
    write_json(out / "build.json", summary)
