"""Real-source track: one harvested class through the stages, from its licence to a task record.

    license     the source licence is on `construction.real_source.license_allow` (none: `no-license`)
    skeleton    the skeleton derived from the class (`real_skeleton`)
    docstrings  thin docstrings written by an LLM and checked for leaks, or the class dropped
    tests       a generated suite (`TestGenerator`: the plus tier's search-based generator)
    reference   the verification gate, unchanged: every test passes on the real class, coverage,
                the time limit, two runs agree, the environment checks
    examples    `>>>` examples observed in those runs written into the docstrings, then the
                skeleton checks on the skeleton as shipped
    mutation    the mutation gate, unchanged (no LLM strengthening on this track)
    task        the record (`classforge_bench.pipeline.construct.task.code_columns`, provenance from the harvest)
Nothing here writes a solution: the reference is the real class with its module context.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.config import FALLBACK_DOMAIN, Config
from classforge_bench.pipeline.construct.common import StageContext, StageOutcome
from classforge_bench.pipeline.construct.gate import Gate, GateOutcome
from classforge_bench.pipeline.construct.licence import licence_outcome
from classforge_bench.pipeline.construct.real_docs import DocstringsResult, write_docstrings, writer_endpoint
from classforge_bench.pipeline.construct.real_examples import observed_examples, with_examples
from classforge_bench.pipeline.construct.real_skeleton import (
    DerivationError,
    DerivedSkeleton,
    check_real_skeleton,
    contract_skeleton,
    derive_skeleton,
    too_few_methods,
    with_docstrings,
)
from classforge_bench.pipeline.construct.strengthen import Mutator
from classforge_bench.pipeline.construct.task import RecordError, code_columns
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.records import SCHEMA_VERSION, HarvestedClass, content_id
from classforge_bench.pipeline.core.task import MutationReport, SourceRef, Task

TRACK = "real-source"


class GeneratedSuite(BaseModel):
    """Tests a generator wrote for a reference, in ClassEval's form."""

    model_config = ConfigDict(extra="forbid")

    tests: str
    test_classes: list[str]
    method_test_classes: dict[str, str] = Field(default_factory=dict)
    generator: str = Field(description="name and version of the generator, for the record")
    funnel: FunnelReport = Field(
        default_factory=FunnelReport,
        description="the generated tests' own funnel "
        "(stages `generated-tests`, `state-checks`), merged into the build's",
    )
    failure_reason: str | None = Field(None, description="registered reason when it found no test")
    failure: str = Field("", description="what went wrong, when it found no test")


class TestGenerator(Protocol):
    """Writes a test suite for a reference solution without an LLM; None when it found none."""

    name: str

    def __call__(
        self, solution: str, class_name: str, *, item_id: str, skeleton: str = ""
    ) -> GeneratedSuite | None: ...


class RealCandidateResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    fingerprint: str
    class_id: str
    status: Literal["built", "rejected"] = "rejected"
    outcomes: list[StageOutcome] = Field(default_factory=list)
    derived: DerivedSkeleton | None = None
    docstrings: DocstringsResult | None = None
    suite: GeneratedSuite | None = None
    gate: GateOutcome | None = None
    skeleton: str | None = Field(None, description="the skeleton as shipped, examples included")
    examples: dict[str, list[str]] = Field(default_factory=dict)
    mutation: MutationReport | None = None
    task: Task | None = None

    def stop(self, outcome: StageOutcome) -> RealCandidateResult:
        self.outcomes.append(outcome)
        return self

    def task_extras(self) -> dict:
        """Release columns only this track has (kept outside `Task` fields, re-attached on load)."""
        written = [w.method for w in self.docstrings.written] if self.docstrings else []
        methods = list(self.derived.docstrings) if self.derived else []
        typed = [m for m in (self.derived.from_annotations if self.derived else []) if m not in written]
        public = [m for m in methods if not m.startswith("_") and m != "__init__"]
        return {
            "track": TRACK,
            "docstrings_llm_written": written,
            "docstrings_from_annotations": typed,
            "methods_without_example": [m for m in public if m not in self.examples] if self.skeleton else [],
            "docstrings_original": [m for m in methods if m not in written and m not in typed],
            "methods_given": list(self.derived.implemented) if self.derived else [],
            "test_generator": self.suite.generator if self.suite else None,
        }


def candidate_id_for(hc: HarvestedClass) -> str:
    return "cand-real-" + content_id(hc.id)[:16]


def run_real_candidate(
    hc: HarvestedClass,
    ctx: StageContext,
    gate: Gate,
    generator: TestGenerator | None,
    fingerprint: str,
    config: Config,
    mutator: Mutator | None = None,
) -> RealCandidateResult:
    """Every stage for one class. Raises only what is not about the class (budget, replay miss, sandbox)."""
    result = RealCandidateResult(candidate_id=ctx.candidate_id, fingerprint=fingerprint, class_id=hc.id)
    rs = config.construction.real_source
    licence = licence_outcome(hc, rs)
    if not licence.keep:
        return result.stop(licence)
    result.outcomes.append(licence)
    try:
        result.derived = derived = derive_skeleton(hc)
    except DerivationError as exc:
        return result.stop(StageOutcome.drop(R.SKELETON, R.DERIVATION_FAILED, str(exc)))
    result.outcomes.append(StageOutcome.kept(R.SKELETON))
    result.docstrings = docs = write_docstrings(ctx, derived, rs.docstring_role, config.construction.prompt_versions)
    if not docs.outcome.keep:
        return result.stop(docs.outcome)
    result.outcomes.append(docs.outcome)
    for written in docs.written:
        derived.docstrings[written.method] = written.docstring
    return _tests_and_gate(result, hc, gate, generator, config, mutator)


def _tests_and_gate(
    result: RealCandidateResult,
    hc: HarvestedClass,
    gate: Gate,
    generator: TestGenerator | None,
    config: Config,
    mutator: Mutator | None,
) -> RealCandidateResult:
    derived = result.derived
    assert derived is not None
    if generator is None:
        return result.stop(
            StageOutcome.drop(R.TESTS, R.NO_TEST_GENERATOR, "no test generator is installed or configured")
        )
    few = too_few_methods(derived, config.construction.min_methods)
    if few is not None:  # before the search: the task check would drop the class after it anyway
        return result.stop(StageOutcome.drop(R.TESTS, R.TOO_FEW_METHODS, few))
    suite = generator(
        derived.solution, derived.class_name, item_id=result.candidate_id, skeleton=contract_skeleton(derived)
    )
    if suite is None or not suite.test_classes:
        reason = (suite.failure_reason if suite else None) or R.NO_GENERATED_TESTS
        detail = (suite.failure if suite else "") or f"{generator.name} found no test"
        return result.stop(StageOutcome.drop(R.TESTS, reason, detail[:2000]))
    result.suite = suite
    result.outcomes.append(StageOutcome.kept(R.TESTS))
    result.gate = verdict = gate(derived.solution, suite.tests, suite.test_classes, item_id=result.candidate_id)
    if not verdict.passed:
        return result.stop(StageOutcome.drop(R.REFERENCE, verdict.reason or R.GATE_ERROR, verdict.detail[:2000]))
    result.outcomes.append(StageOutcome.kept(R.REFERENCE))
    outcome = _examples(result, config)
    if not outcome.keep:
        return result.stop(outcome)
    result.outcomes.append(outcome)
    if mutator is not None:
        outcome = _mutation(result, mutator, config)
        if not outcome.keep:
            return result.stop(outcome)
        result.outcomes.append(outcome)
    return _record(result, hc, config)


def _examples(result: RealCandidateResult, config: Config) -> StageOutcome:
    """Stage `examples`: observed examples into the docstrings, then the skeleton checks."""
    derived, suite = result.derived, result.suite
    assert derived is not None and suite is not None
    result.examples = found = observed_examples(
        suite.tests, derived.class_name, config.construction.real_source.max_examples_per_method
    )
    docs = {
        name: with_examples(text, found.get(name, []))
        for name, text in derived.docstrings.items()
        if name != "__init__"
    }
    result.skeleton = with_docstrings(derived.skeleton, derived.class_name, docs)
    public = [m for m in docs if not m.startswith("_")]
    unseen = [m for m in public if m not in found]
    if public and len(unseen) == len(public):
        return StageOutcome.drop(
            R.EXAMPLES, R.NO_OBSERVED_EXAMPLE, "no observed example for any of: " + ", ".join(unseen)
        )
    report = check_real_skeleton(result.skeleton, derived.context, config.construction.min_methods, frozenset(unseen))
    verdict = report.verdict()
    return StageOutcome.of(R.EXAMPLES, verdict)


def _mutation(result: RealCandidateResult, mutator: Mutator, config: Config) -> StageOutcome:
    derived, suite, verdict = result.derived, result.suite, result.gate
    assert derived is not None and suite is not None and verdict is not None
    result.mutation = report = mutator(
        derived.solution, suite.tests, suite.test_classes, item_id=result.candidate_id, reference_wall_s=verdict.wall_s
    )
    need = config.construction.mutation.min_score
    if report.score is not None and report.score < need:
        return StageOutcome.drop(R.MUTATION, R.WEAK_TESTS, f"{report.summary()} < {need:.0%}")
    return StageOutcome.kept(R.MUTATION)


def _record(result: RealCandidateResult, hc: HarvestedClass, config: Config) -> RealCandidateResult:
    derived, suite, verdict = result.derived, result.suite, result.gate
    assert derived is not None and suite is not None and verdict is not None and result.skeleton is not None
    domain = hc.domains[0] if hc.domains else FALLBACK_DOMAIN
    versions = dict(result.docstrings.versions) if result.docstrings else {}
    try:
        columns = code_columns(
            result.candidate_id,
            skeleton=result.skeleton,
            class_name=derived.class_name,
            tests=suite.tests,
            test_classes=suite.test_classes,
            method_test_classes=suite.method_test_classes,
            solution=derived.solution,
        )
        mutation = result.mutation
        result.task = Task(
            **columns,
            domain1=domain,
            coverage=round(verdict.line_coverage or 0.0, 2),
            branch_coverage=round(verdict.branch_coverage, 2) if verdict.branch_coverage is not None else None,
            mutation_score=round(mutation.score, 4) if mutation is not None and mutation.score is not None else None,
            mutation=mutation,
            environment_checks=verdict.environment,
            source_class_ids=[hc.id],
            sources=[SourceRef.of(hc, domain)],
            models=_models(config, result),
            prompt_versions=versions,
            candidate_id=result.candidate_id,
            schema_version=SCHEMA_VERSION,
            extras=result.task_extras(),
        )
    except (RecordError, ValidationError) as exc:
        return result.stop(StageOutcome.drop(R.TASK, R.RECORD_INVALID, str(exc)[:2000]))
    result.status = "built"
    return result.stop(StageOutcome.kept(R.TASK))


def _models(config: Config, result: RealCandidateResult) -> dict[str, str]:
    """Who wrote what: the generator always; the docstring roles only when they wrote something."""
    models = {"test_generator": result.suite.generator if result.suite else ""}
    if result.docstrings and result.docstrings.written:
        endpoint = writer_endpoint(config.llm, config.construction.real_source.docstring_role)
        models["docstring_writer"] = endpoint.model if endpoint else ""
        models["docstring_judge"] = config.llm.judges[0].model
    return models
