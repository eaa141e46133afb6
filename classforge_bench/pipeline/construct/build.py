"""Stages 1-6 over a set of harvested classes: pairs in, verified tasks out.

    result = build_tasks(classes, BuildSettings.of(config), client, gate, out_dir)

Layout of `out_dir` (every file written atomically):
    candidates/<candidate_id>.json   one finished candidate: every stage's output and its verdicts
    tasks.jsonl                      the built tasks, in pairing order (byte-identical on replay)
    rejects.jsonl                    every drop with stage, reason code and detail
    funnel.json                      counts per stage and reason
    build.json                       summary: counts, stop reason, unfinished candidates, fingerprint
    usage/<run id>/<candidate>.jsonl  the LLM usage of each candidate, written when it finishes
    usage.json                       tokens and cost of every run so far, per role, task and model
    usage-last-run.json              the same for this run only

Resume: a candidate whose file exists with the same fingerprint (models, generation settings,
prompt files, stage settings) is loaded, not rebuilt; the response cache also serves every call
made before, so a re-run pays only for work that never finished. A candidate that did not finish
(budget reached, a replay cache miss, an unexpected error) is not written and is retried next run;
so is one that ended on an infrastructure fault (a model call that failed for good, the sandbox
unavailable, judges that could not be reached): those say nothing about the candidate.

One build at a time per folder: `build_tasks` (and the flow) hold the folder's lock, and a second
run stops at once with an error naming the holder, before it pays for anything.

Budget: when the ledger reaches `llm.budget_usd`, the candidate that hit it stops, no new
candidate starts, and the build writes everything finished so far with `stopped` set.
The funnel is rebuilt from the candidates' stored verdicts in pairing order, so it is the same for
a fresh, a resumed and a replayed build.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.config import Config, ConfigError, ConstructConfig, LLMConfig, PlusConfig, SandboxConfig
from classforge_bench.pipeline.construct.attempts import StageAttempts, attempt_counts
from classforge_bench.pipeline.construct.common import Prompts, StageContext, StageOutcome
from classforge_bench.pipeline.construct.compose import ComposeResult, compose
from classforge_bench.pipeline.construct.gate import Gate, GateOutcome, GateUnavailable
from classforge_bench.pipeline.construct.interface import ClassInterface, interface_from_source
from classforge_bench.pipeline.construct.judges import JudgesResult, judge
from classforge_bench.pipeline.construct.pairing import Pair, PairingResult, make_pairs
from classforge_bench.pipeline.construct.solve import SolveResult, solve
from classforge_bench.pipeline.construct.spec import SpecError, build_spec
from classforge_bench.pipeline.construct.strengthen import (
    MutationStageResult,
    Mutator,
    PlusMaker,
    SandboxMutator,
    SandboxPlusMaker,
    mutation_stage,
)
from classforge_bench.pipeline.construct.task import RecordError, build_record
from classforge_bench.pipeline.construct.tests_stage import TestsResult, write_tests
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.funnel import Funnel, FunnelReport, RejectionList
from classforge_bench.pipeline.core.pool import map_concurrently
from classforge_bench.pipeline.core.records import HarvestedClass, Rejection
from classforge_bench.pipeline.core.stop_hooks import at_stop
from classforge_bench.pipeline.core.store import atomic_open, write_json, write_jsonl
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.llm.cache import canonical_json
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.errors import BudgetExceeded, CacheMiss, UnpricedModel
from classforge_bench.pipeline.llm.ledger import UsageSummary
from classforge_bench.pipeline.llm.usage_history import new_run_id, recorded_usage, save_usage, write_usage_files
from classforge_bench.pipeline.quality.plus.combine import combined_suite

log = logging.getLogger(__name__)

# Bump when a change to the stage code changes what a finished candidate would contain.
STAGES_VERSION = 2  # 2: the mutation gate and test strengthening after the solution


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


class CandidateResult(BaseModel):
    """A finished candidate: built or rejected, with every stage's output."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    fingerprint: str
    pair: Pair
    status: Literal["built", "rejected"]
    outcomes: list[StageOutcome] = Field(description="one per stage reached, in order; only the last may be a drop")
    compose: ComposeResult | None = None
    tests: TestsResult | None = None
    judges: JudgesResult | None = None
    solution: SolveResult | None = None
    mutation: MutationStageResult | None = None
    task: Task | None = None

    def rejection(self) -> Rejection | None:
        last = self.outcomes[-1]
        if last.keep:
            return None
        return Rejection(item_id=self.candidate_id, stage=last.stage, reason=last.reason, detail=last.detail)


class Incomplete(BaseModel):
    """A candidate that did not finish in this run; the next run retries it."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    reason: str
    detail: str = ""


class BuildResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    out_dir: Path
    tasks: list[Task]
    rejections: list[Rejection]
    funnel: FunnelReport
    pairing: PairingResult
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
    usage: UsageSummary = Field(description="this run's LLM usage")
    usage_all_runs: UsageSummary = Field(description="every run's LLM usage in this build folder, this one included")

    @property
    def complete(self) -> bool:
        return not self.incomplete


def models_by_role(llm: LLMConfig) -> dict[str, str]:
    roles = {"composer": llm.composer.model, "test_writer": llm.test_writer.model}
    roles |= {f"judge-{i + 1}": j.model for i, j in enumerate(llm.judges)}
    roles["solver"] = llm.solver.model
    return roles


def build_fingerprint(config: BuildSettings, prompts: Prompts) -> str:
    """Everything that changes what a finished candidate contains, hashed."""
    llm = config.llm
    endpoints = [llm.composer, llm.test_writer, *llm.judges, llm.solver]
    material = {
        "stages_version": STAGES_VERSION,
        "endpoints": [
            e.model_dump(include={"model", "temperature", "max_tokens", "max_tokens_param"}) for e in endpoints
        ],
        "construct": config.construction.model_dump(
            mode="json",
            exclude={"pairing": True, "output_root": True, "mutation": {"workers"}, "track": True, "real_source": True},
        ),
        "prompts": prompts.fingerprint(),
        "gate": config.sandbox.model_dump(
            mode="json", include={"min_line_coverage", "wall_limit_s", "environment_checks"}
        ),
    }
    if config.plus.enabled:  # only then: a build without the plus tier keeps its fingerprint
        material["plus"] = config.plus.model_dump(mode="json", exclude={"python", "cache_dir", "enabled"})
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()[:16]


def check_build_config(config: BuildSettings) -> None:
    """Settings that only make sense together, checked before anything is paid for."""
    need, judges = config.construction.judge_min_full_marks, len(config.llm.judges)
    if need > judges:
        raise ConfigError(
            f"construction.judge_min_full_marks={need} but only {judges} judge(s) are configured in llm.judges"
        )
    if config.llm.budget_usd is not None:
        unpriced = sorted({m for m in models_by_role(config.llm).values() if m not in config.llm.costs})
        if unpriced:
            raise ConfigError(f"llm.budget_usd is set but llm.costs has no price for: {', '.join(unpriced)}")


def run_candidate(
    pair: Pair,
    classes: dict[str, HarvestedClass],
    ctx: StageContext,
    gate: Gate,
    fingerprint: str,
    config: BuildSettings,
    mutator: Mutator | None = None,
    plus_maker: PlusMaker | None = None,
) -> CandidateResult:
    """Stages 2-6 for one pair. Raises only what is not about the candidate (budget, replay miss).

    Safe to call from several threads (a flow's task runner): every AST conversion goes through
    `classforge_bench.pipeline.core.parsing`, which is what made concurrent candidates fail on CPython 3.11.7.
    """
    return _run_stages(pair, classes, ctx, gate, fingerprint, config, mutator, plus_maker)


def _run_stages(
    pair: Pair,
    classes: dict[str, HarvestedClass],
    ctx: StageContext,
    gate: Gate,
    fingerprint: str,
    config: BuildSettings,
    mutator: Mutator | None = None,
    plus_maker: PlusMaker | None = None,
) -> CandidateResult:
    result = CandidateResult(
        candidate_id=pair.candidate_id, fingerprint=fingerprint, pair=pair, status="rejected", outcomes=[]
    )

    def stop(outcome: StageOutcome) -> CandidateResult:
        result.outcomes.append(outcome)
        return result

    try:
        spec_a = build_spec(classes[pair.first.class_id], pair.first.domain)
        spec_b = build_spec(classes[pair.second.class_id], pair.second.domain)
    except SpecError as exc:
        return stop(StageOutcome.drop(R.COMPOSE, R.SPEC_ERROR, str(exc)))

    result.compose = composed = compose(ctx, pair, spec_a, spec_b)
    if not composed.outcome.keep:
        return stop(composed.outcome)
    result.outcomes.append(composed.outcome)
    assert composed.skeleton is not None and composed.class_name is not None
    iface = interface_from_source(composed.skeleton, composed.class_name)
    assert iface is not None  # the skeleton checks guarantee a parsing single class

    result.tests = tested = write_tests(ctx, composed.skeleton, iface)
    if not tested.outcome.keep:
        return stop(tested.outcome)
    result.outcomes.append(tested.outcome)
    assert tested.tests is not None

    result.judges = judged = judge(ctx, composed.skeleton, tested.tests, iface.class_name)
    if not judged.outcome.keep:
        return stop(judged.outcome)
    result.outcomes.append(judged.outcome)

    result.solution = solved = solve(ctx, composed.skeleton, iface, tested.tests, tested.test_classes, gate)
    if not solved.outcome.keep:
        return stop(solved.outcome)
    result.outcomes.append(solved.outcome)
    assert solved.solution is not None and solved.gate is not None
    passed = _Verified(
        skeleton=composed.skeleton,
        iface=iface,
        solution=solved.solution,
        gate=solved.gate,
        judged=judged,
        suite=_Suite(
            tests=tested.tests, test_classes=tested.test_classes, method_test_classes=tested.method_test_classes
        ),
        prompt_versions={"compose": composed.prompt_version, "tests_writer": tested.prompt_version},
        solve_version=solved.prompt_version,
    )
    return _test_strength_and_record(result, pair, ctx, passed, gate, config, mutator, plus_maker)


@dataclass(frozen=True)
class _Suite:
    """The tests a task ships: the judged suite, or the strengthened one that replaced it."""

    tests: str
    test_classes: list[str]
    method_test_classes: dict[str, str]


@dataclass(frozen=True)
class _Verified:
    """What stages 2-5 produced for a candidate with a verified solution, its optional fields
    narrowed once (each stage's keep guarantees them)."""

    skeleton: str
    iface: ClassInterface
    suite: _Suite
    solution: str
    gate: GateOutcome
    judged: JudgesResult
    prompt_versions: dict[str, str]
    solve_version: str


def _test_strength_and_record(
    result: CandidateResult,
    pair: Pair,
    ctx: StageContext,
    passed: _Verified,
    gate: Gate,
    config: BuildSettings,
    mutator: Mutator | None,
    plus_maker: PlusMaker | None = None,
) -> CandidateResult:
    """Stages 5b (mutation, strengthen) and 6 (the task record) after a verified solution."""

    def stop(outcome: StageOutcome) -> CandidateResult:
        result.outcomes.append(outcome)
        return result

    if mutator is not None:
        first = plus_maker if plus_maker is not None and config.plus.strengthen_first else None
        result.mutation = mutated = mutation_stage(
            ctx,
            passed.skeleton,
            passed.iface,
            passed.solution,
            passed.suite.tests,
            passed.suite.test_classes,
            gate,
            mutator,
            passed.gate.wall_s,
            plus_maker=first,
            method_test_classes=passed.suite.method_test_classes,
        )
        result.outcomes.extend(mutated.outcomes[:-1])
        if not mutated.keep:
            return stop(mutated.outcomes[-1])
        result.outcomes.append(mutated.outcomes[-1])
        passed = _strengthened(passed, mutated)
    try:
        result.task = _task_record(pair, ctx, passed, config, result.mutation)
    except (RecordError, ValidationError) as exc:
        return stop(StageOutcome.drop(R.TASK, R.RECORD_INVALID, str(exc)[:2000]))
    if plus_maker is not None:
        result.task = with_plus_tier(result.task, plus_maker, mutator, ctx.candidate_id, passed.gate.wall_s)
    result.status = "built"
    return stop(StageOutcome.kept(R.TASK))


def _strengthened(passed: _Verified, mutated: MutationStageResult) -> _Verified:
    """The candidate with the strengthened suite in place of the judged one (the judges saw the
    original), verified by the gate that ran it; unchanged when the suite was strong enough."""
    better = mutated.strengthened
    if better is None:
        return passed
    versions = (
        passed.prompt_versions
        if mutated.by_search
        else {**passed.prompt_versions, "tests_strengthen": mutated.prompt_version}
    )
    suite = _Suite(tests=better.tests, test_classes=better.test_classes, method_test_classes=better.method_test_classes)
    return replace(passed, suite=suite, gate=better.gate, prompt_versions=versions)


def _task_record(
    pair: Pair, ctx: StageContext, passed: _Verified, config: BuildSettings, mutation: MutationStageResult | None
) -> Task:
    """Stage 6: the task record of the suite that ships. Raises RecordError or ValidationError."""
    judged, verified = passed.judged, passed.gate
    judge_version = judged.prompt_version
    if any(v.attempts > 1 for v in judged.votes):
        judge_version += "+" + ctx.prompts["judge_retry"].version
    task = build_record(
        pair,
        skeleton=passed.skeleton,
        class_name=passed.iface.class_name,
        tests=passed.suite.tests,
        test_classes=passed.suite.test_classes,
        method_test_classes=passed.suite.method_test_classes,
        solution=passed.solution,
        coverage=verified.line_coverage or 0.0,
        branch_coverage=verified.branch_coverage,
        votes=judged.votes,
        models=models_by_role(config.llm),
        prompt_versions={**passed.prompt_versions, "judge": judge_version, "solve": passed.solve_version},
        mutation=mutation.report if mutation is not None else None,
    )
    # The checks of the suite that ships: a strengthened suite went through the gate (and its
    # environment checks) again.
    if verified.environment is not None:
        task = task.model_copy(update={"environment_checks": verified.environment})
    return task


def strengthening_counts(finished: list) -> dict[str, int]:
    """How weak suites were strengthened: by search-based tests (each an LLM call saved) or by the LLM."""
    weak = [r.mutation for r in finished if r.mutation is not None and r.mutation.first_report is not None]
    return {
        "weak_suites": len(weak),
        "by_search_llm_calls_saved": sum(1 for m in weak if m.by_search),
        "by_llm": sum(1 for m in weak if m.strengthened is not None and not m.by_search),
    }


def with_plus_tier(task, plus_maker: PlusMaker, mutator: Mutator | None, item_id: str, reference_wall_s: float | None):
    """The task with its hidden plus suite, and the mutation score base + plus tests reach together."""
    plus = plus_maker(task.solution_code, task.class_name, task.skeleton, item_id=item_id, base_tests=task.test)
    if plus.tests and mutator is not None:
        tests, classes, _ = combined_suite(task.test, task.test_classes, plus)
        report = mutator(task.solution_code, tests, classes, item_id=item_id, reference_wall_s=reference_wall_s)
        plus = plus.model_copy(update={"mutation_score": report.score})
    return task.model_copy(update={"plus": plus})


def _candidate_path(out_dir: Path, candidate_id: str) -> Path:
    return out_dir / "candidates" / f"{candidate_id}.json"


def infrastructure_fault(result: CandidateResult) -> str | None:
    """Why a candidate that looks finished really stopped on an infrastructure fault, if it did
    (a model call that failed for good, the sandbox unavailable, judges an outage took away when
    their votes could have changed the verdict: see `judges.judge`)."""
    last = result.outcomes[-1] if result.outcomes else None
    if last is None or not last.infrastructure:
        return None
    return f"{last.stage}: {last.reason}: {last.detail}"


def load_finished(out_dir: Path, pair: Pair, fingerprint: str) -> CandidateResult | None:
    """A finished candidate from an earlier run, if it was built with the same settings."""
    path = _candidate_path(out_dir, pair.candidate_id)
    if not path.exists():
        return None
    try:
        done = CandidateResult.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        log.warning(
            "candidate %s: unreadable result file %s (%s); rebuilding it", pair.label, path, exc.errors()[0]["msg"]
        )
        return None
    if done.fingerprint != fingerprint:
        log.info("candidate %s: settings changed since it was built; rebuilding it", pair.label)
        return None
    fault = infrastructure_fault(done)
    if fault is not None:
        # Written by an earlier version that stored infrastructure faults as verdicts.
        log.info("candidate %s: stopped on an infrastructure fault last time (%s); retrying it", pair.label, fault)
        return None
    return done


Progress = Callable[[str, str], None]  # (candidate id, "built" | "rejected" | "resumed" | "incomplete")


class BuildPlan:
    """What every candidate of one build shares: the pairs, prompts, fingerprint and stop signal.

    `build_tasks` runs a plan in-process; the Prefect flow maps `build_candidate` over
    `plan.pairing.pairs` as tasks of its own and finishes with `finish_build`. Both paths share
    this code, so they produce the same files.
    """

    def __init__(
        self,
        classes: Iterable[HarvestedClass],
        config: BuildSettings,
        out_dir: Path,
        prompt_dir: Path | None = None,
        run_id: str | None = None,
        mutator: Mutator | None = None,
        plus_maker: PlusMaker | None = None,
    ):
        check_build_config(config)
        # Names this run's usage folder; every process of one flow run shares it.
        self.run_id = run_id or new_run_id()
        self.config = config
        self.out_dir = Path(out_dir)
        classes = list(classes)
        self.by_id = {hc.id: hc for hc in classes}
        self.collect = RejectionList()
        self.funnel: Funnel = Funnel(sink=self.collect)
        self.pairing = make_pairs(classes, config.construction.pairing, self.funnel)
        self.prompts = Prompts(config.construction, prompt_dir)
        self.fingerprint = build_fingerprint(config, self.prompts)
        self.stop = threading.Event()
        self.stop_reason: list[str] = []
        if mutator is None and config.construction.mutation.enabled:
            # Mutant outcomes are cached by content in the build folder: a resumed build re-runs none.
            mutator = SandboxMutator(config.sandbox, config.construction.mutation, self.out_dir / "mutation-cache")
        self.mutator = mutator if config.construction.mutation.enabled else None
        if plus_maker is None and config.plus.enabled:
            # Generated suites are cached by content in the build folder, like the mutants.
            plus_maker = SandboxPlusMaker(config.sandbox, config.plus, self.out_dir / "plus-cache")
        self.plus_maker = plus_maker if config.plus.enabled else None


CandidateOutcome = tuple[str, "CandidateResult | Incomplete"]


def build_candidate(plan: BuildPlan, pair: Pair, client: LLMClient, gate: Gate) -> CandidateOutcome:
    """One candidate: loaded when finished earlier, else stages 2-6 and its result file."""
    done = load_finished(plan.out_dir, pair, plan.fingerprint)
    if done is not None:
        return "resumed", done
    if plan.stop.is_set():
        return "incomplete", Incomplete(
            candidate_id=pair.candidate_id,
            reason=R.INCOMPLETE_NOT_STARTED,
            detail=f"the build stopped ({plan.stop_reason[0]}) before it started",
        )
    ctx = StageContext(
        client=client,
        llm=plan.config.llm,
        construct=plan.config.construction,
        prompts=plan.prompts,
        candidate_id=pair.candidate_id,
    )
    save_usage_now = partial(save_candidate_usage, plan, client, pair.candidate_id)
    try:
        # A stop ends the process without running the `finally` below: the spend would be missing
        # from usage/ while its answers, cached, cost nothing next time.
        with at_stop(f"saving the usage of {pair.candidate_id}", save_usage_now):
            result = run_candidate(
                pair, plan.by_id, ctx, gate, plan.fingerprint, plan.config, plan.mutator, plan.plus_maker
            )
    except (BudgetExceeded, UnpricedModel) as exc:
        if not plan.stop_reason:
            plan.stop_reason.append(R.INCOMPLETE_BUDGET)
        plan.stop.set()  # no new candidate starts; those in flight stop at their next live call
        return "incomplete", Incomplete(candidate_id=pair.candidate_id, reason=R.INCOMPLETE_BUDGET, detail=str(exc))
    except CacheMiss as exc:
        return "incomplete", Incomplete(candidate_id=pair.candidate_id, reason=R.INCOMPLETE_CACHE_MISS, detail=str(exc))
    except GateUnavailable as exc:
        return "incomplete", Incomplete(
            candidate_id=pair.candidate_id, reason=R.INCOMPLETE_INFRASTRUCTURE, detail=str(exc)
        )
    finally:
        # Whatever happened, the calls this candidate paid for are on disk before anything else.
        save_usage_now()
    fault = infrastructure_fault(result)
    if fault is not None:
        return "incomplete", Incomplete(
            candidate_id=pair.candidate_id, reason=R.INCOMPLETE_INFRASTRUCTURE, detail=fault
        )
    write_json_model(_candidate_path(plan.out_dir, pair.candidate_id), result)
    return result.status, result


def save_candidate_usage(plan: BuildPlan, client: LLMClient, candidate_id: str) -> None:
    """The candidate's ledger entries of this run (all its attempts in this process)."""
    save_usage(plan.out_dir, plan.run_id, candidate_id, client.ledger.entries(candidate_id))


def fold_candidates(
    outcomes: Iterable[tuple[str, str, Any]], funnel: Funnel
) -> tuple[list[Task], list[Incomplete], list, int]:
    """(tasks, unfinished, finished results, resumed count) from (label, candidate id, outcome)
    triples in build order, every finished candidate's verdicts recorded in `funnel`. Either
    track's results fit: anything with `outcomes` and `task`."""
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


def finish_build(plan: BuildPlan, outcomes: Sequence[tuple[Pair, CandidateOutcome | BaseException]]) -> BuildResult:
    """Fold candidate outcomes, in pairing order, into the funnel and the build's files; the usage
    comes from what every candidate stored, so no process's ledger can be lost."""
    tasks, incomplete, finished, resumed = fold_candidates(
        ((pair.label, pair.candidate_id, outcome) for pair, outcome in outcomes), plan.funnel
    )
    this_run, all_runs = recorded_usage(plan.out_dir, plan.config.llm.costs, plan.run_id)
    result = BuildResult(
        out_dir=plan.out_dir,
        tasks=tasks,
        rejections=plan.collect.rejections,
        funnel=plan.funnel.report(),
        pairing=plan.pairing,
        incomplete=incomplete,
        stopped=plan.stop_reason[0] if plan.stop_reason else None,
        resumed=resumed,
        attempts=attempt_counts(finished),
        fingerprint=plan.fingerprint,
        strengthening=strengthening_counts(finished),
        usage=this_run,
        usage_all_runs=all_runs,
    )
    _write_outputs(result, plan.config.llm)
    return result


def build_tasks(
    classes: Iterable[HarvestedClass],
    config: BuildSettings,
    client: LLMClient,
    gate: Gate,
    out_dir: Path,
    *,
    prompt_dir: Path | None = None,
    progress: Progress | None = None,
    mutator: Mutator | None = None,
    plus_maker: PlusMaker | None = None,
) -> BuildResult:
    parsing.guard_interpreter()  # candidates run on threads; so may other code's parses
    with FolderLock(Path(out_dir), "classforge build"):
        plan = BuildPlan(classes, config, out_dir, prompt_dir, mutator=mutator, plus_maker=plus_maker)

        def tracked(pair: Pair) -> CandidateOutcome:
            status, value = build_candidate(plan, pair, client, gate)
            if progress is not None:
                progress(pair.candidate_id, status)
            return status, value

        outcomes = map_concurrently(tracked, plan.pairing.pairs, config.llm.concurrency)
        folded = [(o.item, o.error if o.error is not None else o.unwrap()) for o in outcomes]
        return finish_build(plan, folded)


def write_json_model(path: Path, model: BaseModel) -> None:
    with atomic_open(path) as fh:
        fh.write(model.model_dump_json(indent=1))
        fh.write("\n")


def write_build_files(result, summary: dict) -> None:
    """tasks.jsonl, rejects.jsonl, funnel.json, the usage files and build.json (`summary`) of
    either track's result (anything with those fields)."""
    out = result.out_dir
    write_jsonl(out / "tasks.jsonl", result.tasks)
    write_jsonl(out / "rejects.jsonl", result.rejections)
    write_json(out / "funnel.json", result.funnel.model_dump(mode="json"))
    write_usage_files(out, result.usage, result.usage_all_runs)
    write_json(out / "build.json", summary)


def _write_outputs(result: BuildResult, llm: LLMConfig) -> None:
    write_build_files(
        result,
        {
            "fingerprint": result.fingerprint,
            "tasks": len(result.tasks),
            "rejected": len([r for r in result.rejections if r.stage != R.PAIRING]),
            "incomplete": [i.model_dump(mode="json") for i in result.incomplete],
            "stopped": result.stopped,
            "resumed": result.resumed,
            "attempts": {stage: a.model_dump() for stage, a in result.attempts.items()},
            "strengthening": result.strengthening,
            "pairing": {
                "intra_target": result.pairing.intra_target,
                "intra_built": result.pairing.intra_built,
                "cross_target": result.pairing.cross_target,
                "cross_built": result.pairing.cross_built,
                "shortfall": result.pairing.shortfall,
            },
            "models": models_by_role(llm),
            "mode": llm.mode,
        },
    )
