"""The composition track: two harvested classes fused by LLMs into one task, as a stage list.

    compose     the fused skeleton (`compose.py`), after both classes' specs
    tests       the unit tests (`tests_stage.py`)
    judges      skeleton/test alignment (`judges.py`)
    solution    a solution the gate verifies (`solve.py`)
    mutation    the mutation gate and test strengthening (`strengthen.py`), when enabled
    task        the task record (`task.py`)
    plus        the hidden plus suite, when the plus tier is on

`build.py`'s driver walks them for every pair `pairing.make_pairs` keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from classforge_bench.pipeline.config import ConfigError, LLMConfig
from classforge_bench.pipeline.construct.attempts import attempt_counts
from classforge_bench.pipeline.construct.build import BuildResult, BuildSettings, CandidateRecord, Stage, StageResult
from classforge_bench.pipeline.construct.common import Prompts, StageContext, StageOutcome
from classforge_bench.pipeline.construct.compose import ComposeResult, compose
from classforge_bench.pipeline.construct.gate import Gate, GateOutcome
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
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Funnel, FunnelReport
from classforge_bench.pipeline.core.records import HarvestedClass
from classforge_bench.pipeline.core.task import Task, Track
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.quality.plus.combine import combined_suite

# Bump when a change to the stage code changes what a finished candidate would contain.
STAGES_VERSION = 2  # 2: the mutation gate and test strengthening after the solution


class CandidateResult(CandidateRecord):
    """A finished composition candidate: built or rejected, with every stage's output."""

    pair: Pair
    compose: ComposeResult | None = None
    tests: TestsResult | None = None
    judges: JudgesResult | None = None
    solution: SolveResult | None = None
    mutation: MutationStageResult | None = None


def models_by_role(llm: LLMConfig) -> dict[str, str]:
    roles = {"composer": llm.composer.model, "test_writer": llm.test_writer.model}
    roles |= {f"judge-{i + 1}": j.model for i, j in enumerate(llm.judges)}
    roles["solver"] = llm.solver.model
    return roles


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


@dataclass
class CompositionWork:
    """One pair in progress: its record and what a stage hands the next."""

    track: CompositionTrack
    pair: Pair
    ctx: StageContext
    gate: Gate
    record: CandidateResult
    iface: ClassInterface | None = None
    passed: _Verified | None = None


class CompositionTrack:
    """Pairs of harvested classes fused into tasks (see the module docstring)."""

    kind = Track.COMPOSITION
    record_type: type[CandidateRecord] = CandidateResult

    def __init__(
        self,
        classes: list[HarvestedClass],
        settings: BuildSettings,
        out_dir: Path,
        *,
        prompt_dir: Path | None = None,
        mutator: Mutator | None = None,
        plus_maker: PlusMaker | None = None,
    ):
        self.settings = settings
        self.classes = list(classes)
        self.by_id = {hc.id: hc for hc in self.classes}
        self.prompts = Prompts(settings.construction, prompt_dir)
        self.pairing: PairingResult | None = None
        if mutator is None and settings.construction.mutation.enabled:
            # Mutant outcomes are cached by content in the build folder: a resumed build re-runs none.
            mutator = SandboxMutator(settings.sandbox, settings.construction.mutation, Path(out_dir) / "mutation-cache")
        self.mutator = mutator if settings.construction.mutation.enabled else None
        if plus_maker is None and settings.plus.enabled:
            # Generated suites are cached by content in the build folder, like the mutants.
            plus_maker = SandboxPlusMaker(settings.sandbox, settings.plus, Path(out_dir) / "plus-cache")
        self.plus_maker = plus_maker if settings.plus.enabled else None

    def candidates(self, funnel: Funnel) -> list[Pair]:
        self.pairing = make_pairs(self.classes, self.settings.construction.pairing, funnel)
        return list(self.pairing.pairs)

    def stages(self) -> list[Stage[CompositionWork]]:
        return [
            Stage("compose", _compose),
            Stage("tests", _tests),
            Stage("judges", _judges),
            Stage("solution", _solution),
            Stage("mutation", _mutation),
            Stage("task", _task),
            Stage("plus", _plus),
        ]

    def start(self, candidate: Pair, client: LLMClient, gate: Gate, fingerprint: str) -> CompositionWork:
        ctx = StageContext(
            client=client,
            llm=self.settings.llm,
            construct=self.settings.construction,
            prompts=self.prompts,
            candidate_id=candidate.candidate_id,
        )
        record = CandidateResult(candidate_id=candidate.candidate_id, fingerprint=fingerprint, pair=candidate)
        return CompositionWork(track=self, pair=candidate, ctx=ctx, gate=gate, record=record)

    def fingerprint_material(self) -> dict[str, Any]:
        return composition_fingerprint_material(self.settings, self.prompts)

    def llm_models(self) -> dict[str, str]:
        return models_by_role(self.settings.llm)

    def models(self) -> dict[str, str]:
        return models_by_role(self.settings.llm)

    def check(self) -> None:
        need, judges = self.settings.construction.judge_min_full_marks, len(self.settings.llm.judges)
        if need > judges:
            raise ConfigError(
                f"construction.judge_min_full_marks={need} but only {judges} judge(s) are configured in llm.judges"
            )

    def finish(self, finished: list[Any], funnel: FunnelReport) -> tuple[FunnelReport, dict[str, Any]]:
        extra = {
            "pairing": self.pairing,
            "attempts": attempt_counts(finished),
            "strengthening": strengthening_counts(finished),
        }
        return funnel, extra

    def summary(self, result: BuildResult) -> dict[str, Any]:
        pairing = result.pairing
        assert pairing is not None
        return {
            "fingerprint": result.fingerprint,
            "tasks": len(result.tasks),
            "rejected": len([r for r in result.rejections if r.stage != R.PAIRING]),
            "incomplete": [i.model_dump(mode="json") for i in result.incomplete],
            "stopped": result.stopped,
            "resumed": result.resumed,
            "attempts": {stage: a.model_dump() for stage, a in result.attempts.items()},
            "strengthening": result.strengthening,
            "pairing": {
                "intra_target": pairing.intra_target,
                "intra_built": pairing.intra_built,
                "cross_target": pairing.cross_target,
                "cross_built": pairing.cross_built,
                "shortfall": pairing.shortfall,
            },
            "models": models_by_role(self.settings.llm),
            "mode": self.settings.llm.mode,
        }


def composition_fingerprint_material(config: BuildSettings, prompts: Prompts) -> dict[str, Any]:
    """Everything that changes what a finished composition candidate contains."""
    llm = config.llm
    endpoints = [llm.composer, llm.test_writer, *llm.judges, llm.solver]
    material: dict[str, Any] = {
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
    return material


# -- the stages, in order ---------------------------------------------------------------------------


def _compose(w: CompositionWork) -> StageResult:
    pair, classes = w.pair, w.track.by_id
    try:
        spec_a = build_spec(classes[pair.first.class_id], pair.first.domain)
        spec_b = build_spec(classes[pair.second.class_id], pair.second.domain)
    except SpecError as exc:
        return StageOutcome.drop(R.COMPOSE, R.SPEC_ERROR, str(exc))
    w.record.compose = composed = compose(w.ctx, pair, spec_a, spec_b)
    if composed.outcome.keep:
        assert composed.skeleton is not None and composed.class_name is not None
        w.iface = interface_from_source(composed.skeleton, composed.class_name)
        assert w.iface is not None  # the skeleton checks guarantee a parsing single class
    return composed.outcome


def _tests(w: CompositionWork) -> StageResult:
    composed = w.record.compose
    assert composed is not None and composed.skeleton is not None and w.iface is not None
    w.record.tests = tested = write_tests(w.ctx, composed.skeleton, w.iface)
    return tested.outcome


def _judges(w: CompositionWork) -> StageResult:
    composed, tested = w.record.compose, w.record.tests
    assert composed is not None and composed.skeleton is not None and tested is not None and tested.tests is not None
    assert w.iface is not None
    w.record.judges = judged = judge(w.ctx, composed.skeleton, tested.tests, w.iface.class_name)
    return judged.outcome


def _solution(w: CompositionWork) -> StageResult:
    composed, tested, judged = w.record.compose, w.record.tests, w.record.judges
    assert composed is not None and composed.skeleton is not None and judged is not None and w.iface is not None
    assert tested is not None and tested.tests is not None
    w.record.solution = solved = solve(w.ctx, composed.skeleton, w.iface, tested.tests, tested.test_classes, w.gate)
    if solved.outcome.keep:
        assert solved.solution is not None and solved.gate is not None
        w.passed = _Verified(
            skeleton=composed.skeleton,
            iface=w.iface,
            solution=solved.solution,
            gate=solved.gate,
            judged=judged,
            suite=_Suite(
                tests=tested.tests, test_classes=tested.test_classes, method_test_classes=tested.method_test_classes
            ),
            prompt_versions={"compose": composed.prompt_version, "tests_writer": tested.prompt_version},
            solve_version=solved.prompt_version,
        )
    return solved.outcome


def _mutation(w: CompositionWork) -> StageResult:
    """Stage 5b: the mutation gate, and the strengthened suite in place of a weak one."""
    mutator, passed = w.track.mutator, w.passed
    if mutator is None:
        return None
    assert passed is not None
    plus_maker = w.track.plus_maker
    first = plus_maker if plus_maker is not None and w.track.settings.plus.strengthen_first else None
    w.record.mutation = mutated = mutation_stage(
        w.ctx,
        passed.skeleton,
        passed.iface,
        passed.solution,
        passed.suite.tests,
        passed.suite.test_classes,
        w.gate,
        mutator,
        passed.gate.wall_s,
        plus_maker=first,
        method_test_classes=passed.suite.method_test_classes,
    )
    if mutated.keep:
        w.passed = _strengthened(passed, mutated)
    return mutated.outcomes


def _task(w: CompositionWork) -> StageResult:
    """Stage 6: the task record of the suite that ships."""
    assert w.passed is not None
    try:
        w.record.task = _task_record(w.pair, w.ctx, w.passed, w.track.settings, w.record.mutation)
    except (RecordError, ValidationError) as exc:
        return StageOutcome.drop(R.TASK, R.RECORD_INVALID, str(exc)[:2000])
    return None


def _plus(w: CompositionWork) -> StageResult:
    """The hidden plus suite (a step that drops nothing)."""
    plus_maker, task = w.track.plus_maker, w.record.task
    if plus_maker is not None and task is not None and w.passed is not None:
        w.record.task = with_plus_tier(task, plus_maker, w.track.mutator, w.ctx.candidate_id, w.passed.gate.wall_s)
    return None


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
    """The task record of the suite that ships. Raises RecordError or ValidationError."""
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
