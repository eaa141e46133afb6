"""Stage 5b, test strength: the mutation gate, with one round of test strengthening before a drop.

After the solution passed the verification gate, its tests are run against mutants of it
(`classforge_bench.pipeline.quality`). A suite that kills at least `construction.mutation.min_score` of the
non-equivalent mutants passes (stage `mutation`). Below it, with `strengthen` on, the test writer
gets the surviving mutants once (`tests_strengthen` prompt, one budgeted, cached, replayable call)
and the stage `strengthen` decides:
  kept                                 the new suite passes its static checks and the verification
                                       gate, and reaches the threshold: it replaces the old one
  strengthened-tests-invalid           the answer is cut, holds no code or fails the static checks
  strengthened-tests-fail-reference    the reference fails the new suite (the gate's reason in the detail)
  weak-tests                           still below the threshold (or `strengthen` is off: then at `mutation`)
A task whose tests kill everything there is to kill (no scored mutant) passes.

Like the verification gate, the stage depends on a small protocol (`Mutator`); the real one wraps
`classforge_bench.pipeline.quality.measure_mutation` and caches every mutant's outcome by content under the build
folder, so an interrupted build re-runs no mutant. Timings stay out of the stored results.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import MutationConfig, PlusConfig, SandboxConfig
from classforge_bench.pipeline.construct.common import StageContext, StageOutcome, ask, cut_detail
from classforge_bench.pipeline.construct.gate import Gate, GateOutcome, GateUnavailable
from classforge_bench.pipeline.construct.interface import ClassInterface
from classforge_bench.pipeline.construct.suite_checks import check_tests
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.task import MutationReport, PlusSuite
from classforge_bench.pipeline.llm.client import Completion
from classforge_bench.pipeline.llm.extraction import extract_code
from classforge_bench.pipeline.quality.plus.combine import combined_suite

ROLE = "test_writer"


class Mutator(Protocol):
    def __call__(
        self, solution: str, tests: str, test_classes: list[str], *, item_id: str, reference_wall_s: float | None
    ) -> MutationReport: ...


class SandboxMutator:
    """The real mutator: `measure_mutation` in the build's sandbox, outcomes cached under `cache_root`."""

    def __init__(self, sandbox: SandboxConfig, config: MutationConfig, cache_root: Path | None) -> None:
        self.sandbox, self.config, self.cache_root = sandbox, config, cache_root

    def __call__(
        self, solution: str, tests: str, test_classes: list[str], *, item_id: str, reference_wall_s: float | None
    ) -> MutationReport:
        from classforge_bench.pipeline.quality.mutation import MutationUnavailable, measure_mutation

        try:
            run = measure_mutation(
                solution,
                tests,
                test_classes,
                config=self.config,
                sandbox=self.sandbox,
                item_id=item_id,
                reference_wall_s=reference_wall_s,
                cache_root=self.cache_root,
            )
        except MutationUnavailable as exc:
            raise GateUnavailable(f"candidate {item_id}: mutation testing: {exc}") from exc
        return run.report


class PlusMaker(Protocol):
    def __call__(
        self, solution: str, class_name: str, skeleton: str, *, item_id: str, base_tests: str = ""
    ) -> PlusSuite: ...


class SandboxPlusMaker:
    """The real plus maker: search-based tests (classforge_bench.pipeline.quality.plus) cached under `cache_root`."""

    def __init__(self, sandbox: SandboxConfig, plus: PlusConfig, cache_root: Path | None) -> None:
        self.sandbox, self.plus = sandbox, plus.model_copy(update={"cache_dir": cache_root})

    def __call__(
        self, solution: str, class_name: str, skeleton: str, *, item_id: str, base_tests: str = ""
    ) -> PlusSuite:
        """The plus suite of `solution`, inside the contract of `skeleton` and the task's `base_tests`."""
        from classforge_bench.pipeline.quality.plus import GeneratorUnavailable, make_plus_suite

        imports = [ast.unparse(n) for n in parsing.parse(solution).body if isinstance(n, (ast.Import, ast.ImportFrom))]
        try:
            return make_plus_suite(
                solution,
                class_name,
                import_statement=imports,
                sandbox=self.sandbox,
                plus=self.plus,
                item_id=item_id,
                described=skeleton,
                base_tests=base_tests,
            )
        except GeneratorUnavailable as exc:
            raise GateUnavailable(f"candidate {item_id}: plus tests: {exc}") from exc


class StrengthenedTests(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tests: str
    test_classes: list[str]
    method_test_classes: dict[str, str]
    gate: GateOutcome


class MutationStageResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcomes: list[StageOutcome] = Field(
        description="`mutation`, then `strengthen` when it ran; only the last may be a drop"
    )
    report: MutationReport = Field(description="of the tests the task keeps (the strengthened ones, when kept)")
    first_report: MutationReport | None = Field(None, description="before strengthening, when it ran")
    strengthened: StrengthenedTests | None = None
    reply: str = ""
    cache_key: str = ""
    prompt_version: str = ""
    by_search: bool = Field(False, description="strengthened by search-based tests: no LLM call was made")

    @property
    def keep(self) -> bool:
        return self.outcomes[-1].keep


def passes(report: MutationReport, config: MutationConfig) -> bool:
    return report.score is None or report.score >= config.min_score


def _shown(report: MutationReport) -> str:
    return "n/a" if report.score is None else f"{100 * report.score:.1f}%"


def _mutants_text(report: MutationReport, limit: int) -> str:
    shown = report.surviving[:limit]
    parts = [
        f"### {m.mutant_id}: {m.method}, line {m.line} ({m.operator})\n\n```diff\n{m.diff.rstrip()}\n```" for m in shown
    ]
    if len(report.surviving) > limit:
        parts.append(f"({len(report.surviving) - limit} more not shown)")
    return "\n\n".join(parts)


def strengthen_messages(
    ctx: StageContext, skeleton: str, class_name: str, tests: str, report: MutationReport
) -> list[dict]:
    scored = report.mutants - report.equivalent
    return ctx.prompts["tests_strengthen"].messages(
        class_name=class_name,
        skeleton=skeleton.rstrip("\n"),
        tests=tests.rstrip("\n"),
        survived=report.survived,
        scored=scored,
        score=_shown(report),
        mutants=_mutants_text(report, ctx.construct.mutation.max_surviving_in_prompt),
    )


def mutation_stage(
    ctx: StageContext,
    skeleton: str,
    iface: ClassInterface,
    solution: str,
    tests: str,
    test_classes: list[str],
    gate: Gate,
    mutator: Mutator,
    reference_wall_s: float | None,
    plus_maker: PlusMaker | None = None,
    method_test_classes: dict[str, str] | None = None,
) -> MutationStageResult:
    config = ctx.construct.mutation
    report = mutator(solution, tests, test_classes, item_id=ctx.candidate_id, reference_wall_s=reference_wall_s)
    if passes(report, config):
        return MutationStageResult(outcomes=[StageOutcome.kept(R.MUTATION)], report=report)
    weak = f"{report.summary()} < {100 * config.min_score:.1f}%"
    if plus_maker is not None:
        searched = search_strengthen(
            ctx,
            skeleton,
            iface,
            solution,
            (tests, test_classes, method_test_classes or {}),
            gate,
            mutator,
            plus_maker,
            report,
        )
        if searched is not None:
            return searched
    if not config.strengthen:
        return MutationStageResult(outcomes=[StageOutcome.drop(R.MUTATION, R.WEAK_TESTS, weak)], report=report)
    return _strengthen(ctx, skeleton, iface, solution, tests, gate, mutator, report)


def search_strengthen(
    ctx: StageContext,
    skeleton: str,
    iface: ClassInterface,
    solution: str,
    suite: tuple[str, list[str], dict[str, str]],
    gate: Gate,
    mutator: Mutator,
    plus_maker: PlusMaker,
    first: MutationReport,
) -> MutationStageResult | None:
    """Before any LLM re-ask: the base tests plus search-generated ones (validated on this solution).
    The result when that reaches the threshold; None (on to the LLM) when it does not."""
    tests, test_classes, method_classes = suite
    plus = plus_maker(solution, iface.class_name, skeleton, item_id=ctx.candidate_id, base_tests=tests)
    if not plus.tests:
        return None
    combined, classes, replaced = combined_suite(tests, test_classes, plus)
    verdict = gate(solution, combined, classes, item_id=ctx.candidate_id)
    if not verdict.passed:
        return None
    second = mutator(solution, combined, classes, item_id=ctx.candidate_id, reference_wall_s=verdict.wall_s)
    if not passes(second, ctx.construct.mutation):
        return None
    kept = StrengthenedTests(
        tests=combined,
        test_classes=classes,
        gate=verdict,
        method_test_classes={m: replaced.get(c, c) for m, c in method_classes.items()},
    )
    return MutationStageResult(
        outcomes=[StageOutcome.kept(R.MUTATION), StageOutcome.kept(R.STRENGTHEN)],
        first_report=first,
        report=second,
        strengthened=kept,
        by_search=True,
    )


def _strengthen(
    ctx: StageContext,
    skeleton: str,
    iface: ClassInterface,
    solution: str,
    tests: str,
    gate: Gate,
    mutator: Mutator,
    first: MutationReport,
) -> MutationStageResult:
    config = ctx.construct.mutation
    version = ctx.prompts["tests_strengthen"].version
    base = {"first_report": first, "report": first, "prompt_version": version}
    passed_mutation = StageOutcome.kept(R.MUTATION)  # it goes on to strengthening; the verdict is there

    def drop(reason: str, detail: str, **more) -> MutationStageResult:
        return MutationStageResult(
            outcomes=[passed_mutation, StageOutcome.drop(R.STRENGTHEN, reason, detail)], **{**base, **more}
        )

    reply = ask(
        ctx, ROLE, ctx.llm.test_writer, strengthen_messages(ctx, skeleton, iface.class_name, tests, first), version
    )
    if not isinstance(reply, Completion):
        return MutationStageResult(outcomes=[passed_mutation, StageOutcome.of(R.STRENGTHEN, reply)], **base)
    answer = {"reply": reply.text, "cache_key": reply.cache_key}
    if reply.truncated:
        return drop(R.STRENGTHENED_TESTS_INVALID, cut_detail("test writer", reply), **answer)
    extraction = extract_code(reply.text)
    checks = check_tests(extraction.code, iface) if extraction.found else None
    if checks is None or not checks.ok:
        detail = "the reply holds no Python code" if checks is None else checks.verdict().detail
        return drop(R.STRENGTHENED_TESTS_INVALID, detail, **answer)
    new_tests = extraction.code
    verdict = gate(solution, new_tests, checks.test_classes, item_id=ctx.candidate_id)
    if not verdict.passed:
        return drop(R.STRENGTHENED_TESTS_FAIL_REFERENCE, f"[{verdict.reason}] {verdict.detail}"[:2000], **answer)
    second = mutator(
        solution, new_tests, checks.test_classes, item_id=ctx.candidate_id, reference_wall_s=verdict.wall_s
    )
    if not passes(second, config):
        detail = f"after strengthening: {second.summary()} < {100 * config.min_score:.1f}% (before: {_shown(first)})"
        return drop(R.WEAK_TESTS, detail, **{**answer, "report": second})
    kept = StrengthenedTests(
        tests=new_tests, test_classes=checks.test_classes, method_test_classes=checks.method_test_classes, gate=verdict
    )
    return MutationStageResult(
        outcomes=[passed_mutation, StageOutcome.kept(R.STRENGTHEN)],
        **{**base, **answer, "report": second, "strengthened": kept},
    )
