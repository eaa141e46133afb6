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
`RealSourceTrack` hands these stages to the one driver (`build.py`), which walks them per class.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from classforge_bench.pipeline.config import FALLBACK_DOMAIN
from classforge_bench.pipeline.construct.build import BuildResult, BuildSettings, CandidateRecord, Stage, StageResult
from classforge_bench.pipeline.construct.common import Prompts, StageContext, StageOutcome
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
from classforge_bench.pipeline.construct.strengthen import Mutator, SandboxMutator
from classforge_bench.pipeline.construct.task import RecordError, code_columns
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Funnel, FunnelReport
from classforge_bench.pipeline.core.records import SCHEMA_VERSION, HarvestedClass, RepoSeed, content_id
from classforge_bench.pipeline.core.task import MutationReport, SourceRef, Task, Track
from classforge_bench.pipeline.llm.cache import canonical_json
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.prompts import load_prompt
from classforge_bench.pipeline.quality.plus.observe import OBSERVE_VERSION
from classforge_bench.pipeline.quality.plus.suite import PLUS_VERSION

REAL_STAGES_VERSION = 3  # 3: the repository's seeds feed the generator; 2: methods no test observes keep no example instead of dropping the class


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
        self,
        solution: str,
        class_name: str,
        *,
        item_id: str,
        skeleton: str = "",
        seeds: Sequence[RepoSeed] = (),
    ) -> GeneratedSuite | None: ...


class RealCandidateResult(CandidateRecord):
    class_id: str
    derived: DerivedSkeleton | None = None
    docstrings: DocstringsResult | None = None
    suite: GeneratedSuite | None = None
    gate: GateOutcome | None = None
    skeleton: str | None = Field(None, description="the skeleton as shipped, examples included")
    examples: dict[str, list[str]] = Field(default_factory=dict)
    mutation: MutationReport | None = None

    @model_validator(mode="after")
    def _task_columns(self) -> RealCandidateResult:
        # `Task.extras` is not serialised with the task, and a task stored before the track was a
        # field has none: both come back from the result when a finished candidate is loaded.
        if self.task is not None:
            self.task.extras = self.task_extras()
            self.task.track = Track.REAL_SOURCE
        return self

    def task_extras(self) -> dict:
        """Release columns only this track has (kept outside `Task` fields, re-attached on load)."""
        written = [w.method for w in self.docstrings.written] if self.docstrings else []
        methods = list(self.derived.docstrings) if self.derived else []
        typed = [m for m in (self.derived.from_annotations if self.derived else []) if m not in written]
        public = [m for m in methods if not m.startswith("_") and m != "__init__"]
        return {
            "docstrings_llm_written": written,
            "docstrings_from_annotations": typed,
            "methods_without_example": [m for m in public if m not in self.examples] if self.skeleton else [],
            "docstrings_original": [m for m in methods if m not in written and m not in typed],
            "methods_given": list(self.derived.implemented) if self.derived else [],
            "test_generator": self.suite.generator if self.suite else None,
        }


class ClassCandidate(BaseModel):
    """One harvested class as a candidate of the driver."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hc: HarvestedClass

    @property
    def candidate_id(self) -> str:
        return candidate_id_for(self.hc)

    @property
    def label(self) -> str:
        return self.hc.id

    @property
    def inputs_digest(self) -> str:
        """The whole harvested record: its id names the class, but its seeds (the repository's
        tests and call sites), imports and context feed the generator too and may change alone."""
        return content_id(canonical_json(self.hc.model_dump(mode="json")))


def candidate_id_for(hc: HarvestedClass) -> str:
    return "cand-real-" + content_id(hc.id)[:16]


@dataclass
class RealWork:
    """One class in progress: its record and what its stages share."""

    track: RealSourceTrack
    hc: HarvestedClass
    ctx: StageContext
    gate: Gate
    record: RealCandidateResult


class RealSourceTrack:
    """Every harvested class a candidate task, in class-id order (see the module docstring)."""

    kind = Track.REAL_SOURCE
    record_type: type[CandidateRecord] = RealCandidateResult

    def __init__(
        self,
        classes: list[HarvestedClass],
        settings: BuildSettings,
        out_dir: Path,
        generator: TestGenerator | None,
        *,
        mutator: Mutator | None = None,
    ):
        self.settings, self.generator = settings, generator
        self.classes = sorted(classes, key=lambda hc: hc.id)
        self.prompts = Prompts(settings.construction)
        if mutator is None and settings.construction.mutation.enabled:
            mutator = SandboxMutator(settings.sandbox, settings.construction.mutation, Path(out_dir) / "mutation-cache")
        self.mutator = mutator if settings.construction.mutation.enabled else None

    def candidates(self, funnel: Funnel) -> list[ClassCandidate]:
        return [ClassCandidate(hc=hc) for hc in self.classes]

    def stages(self) -> list[Stage[RealWork]]:
        return [
            Stage("license", _license_stage),
            Stage("skeleton", _skeleton),
            Stage("docstrings", _docstrings),
            Stage("tests", _tests),
            Stage("reference", _reference),
            Stage("examples", _examples),
            Stage("mutation", _mutation),
            Stage("task", _record),
        ]

    def start(self, candidate: ClassCandidate, client: LLMClient, gate: Gate, fingerprint: str) -> RealWork:
        cid = candidate.candidate_id
        ctx = StageContext(
            client=client,
            llm=self.settings.llm,
            construct=self.settings.construction,
            prompts=self.prompts,
            candidate_id=cid,
        )
        record = RealCandidateResult(candidate_id=cid, fingerprint=fingerprint, class_id=candidate.hc.id)
        return RealWork(track=self, hc=candidate.hc, ctx=ctx, gate=gate, record=record)

    def fingerprint_material(self) -> dict[str, Any]:
        return real_fingerprint_material(self.settings, self.generator)

    def llm_models(self) -> dict[str, str]:
        llm = self.settings.llm
        endpoint = writer_endpoint(llm, self.settings.construction.real_source.docstring_role)
        return {"docstring_writer": endpoint.model, "docstring_judge": llm.judges[0].model} if endpoint else {}

    def models(self) -> dict[str, str]:
        """Role -> model for the release card: the generator, and the docstring roles when configured."""
        return {"test_generator": self.generator.name if self.generator is not None else "none"} | self.llm_models()

    def check(self) -> None:
        """Nothing of this track's settings depends on another."""

    def finish(self, finished: list[Any], funnel: FunnelReport) -> tuple[FunnelReport, dict[str, Any]]:
        for suite in (r.suite for r in finished if r.suite is not None):
            funnel = funnel.merge(suite.funnel)
        return funnel, {}

    def summary(self, result: BuildResult) -> dict[str, Any]:
        return {
            "track": Track.REAL_SOURCE.value,
            "fingerprint": result.fingerprint,
            "tasks": len(result.tasks),
            "rejected": len(result.rejections),
            "incomplete": [i.model_dump(mode="json") for i in result.incomplete],
            "stopped": result.stopped,
            "resumed": result.resumed,
            "test_generator": self.generator.name if self.generator is not None else None,
            "docstring_role": self.settings.construction.real_source.docstring_role,
            "mode": self.settings.llm.mode,
        }


def real_fingerprint_material(config: BuildSettings, generator: TestGenerator | None) -> dict[str, Any]:
    """Everything that changes what a finished real-source candidate contains."""
    rs = config.construction.real_source
    endpoint = writer_endpoint(config.llm, rs.docstring_role)
    prompts = {
        n: f"{t.version}:{t.sha256}"
        for n in ("docstring_writer", "docstring_judge")
        for t in [load_prompt(n, config.construction.prompt_versions.get(n))]
    }
    return {
        "stages_version": REAL_STAGES_VERSION,
        "real_source": rs.model_dump(mode="json"),
        "generator": generator.name if generator is not None else None,
        # what the plus tier does with the generator's output (conversion, rules, state assertions)
        "plus_versions": [PLUS_VERSION, OBSERVE_VERSION],
        "generator_settings": config.plus.model_dump(
            mode="json", exclude={"python", "cache_dir", "enabled", "strengthen_first"}
        ),
        "docstring_models": [
            e.model_dump(include={"model", "temperature", "max_tokens"})
            for e in ([endpoint, config.llm.judges[0]] if endpoint else [])
        ],
        "prompts": prompts if endpoint else {},
        "min_methods": config.construction.min_methods,
        "mutation": config.construction.mutation.model_dump(mode="json", exclude={"workers"}),
        "gate": config.sandbox.model_dump(
            mode="json", include={"min_line_coverage", "wall_limit_s", "environment_checks"}
        ),
    }


def real_fingerprint(config: BuildSettings, generator: TestGenerator | None) -> str:
    """The real-source track's inputs hashed (what `build.build_fingerprint` gives a build of it)."""
    material = real_fingerprint_material(config, generator)
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()[:16]


# -- the stages, in order ---------------------------------------------------------------------------


def _license_stage(w: RealWork) -> StageResult:
    return licence_outcome(w.hc, w.track.settings.construction.real_source)


def _skeleton(w: RealWork) -> StageResult:
    try:
        w.record.derived = derive_skeleton(w.hc)
    except DerivationError as exc:
        return StageOutcome.drop(R.SKELETON, R.DERIVATION_FAILED, str(exc))
    return StageOutcome.kept(R.SKELETON)


def _docstrings(w: RealWork) -> StageResult:
    derived, construction = w.record.derived, w.track.settings.construction
    assert derived is not None
    w.record.docstrings = docs = write_docstrings(
        w.ctx, derived, construction.real_source.docstring_role, construction.prompt_versions
    )
    if docs.outcome.keep:
        for written in docs.written:
            derived.docstrings[written.method] = written.docstring
    return docs.outcome


def _tests(w: RealWork) -> StageResult:
    derived, generator = w.record.derived, w.track.generator
    assert derived is not None
    if generator is None:
        return StageOutcome.drop(R.TESTS, R.NO_TEST_GENERATOR, "no test generator is installed or configured")
    few = too_few_methods(derived, w.track.settings.construction.min_methods)
    if few is not None:  # before the search: the task check would drop the class after it anyway
        return StageOutcome.drop(R.TESTS, R.TOO_FEW_METHODS, few)
    suite = generator(
        derived.solution,
        derived.class_name,
        item_id=w.record.candidate_id,
        skeleton=contract_skeleton(derived),
        seeds=w.hc.seeds,
    )
    if suite is None or not suite.test_classes:
        reason = (suite.failure_reason if suite else None) or R.NO_GENERATED_TESTS
        detail = (suite.failure if suite else "") or f"{generator.name} found no test"
        return StageOutcome.drop(R.TESTS, reason, detail[:2000])
    w.record.suite = suite
    return StageOutcome.kept(R.TESTS)


def _reference(w: RealWork) -> StageResult:
    derived, suite = w.record.derived, w.record.suite
    assert derived is not None and suite is not None
    w.record.gate = verdict = w.gate(derived.solution, suite.tests, suite.test_classes, item_id=w.record.candidate_id)
    if not verdict.passed:
        return StageOutcome.drop(R.REFERENCE, verdict.reason or R.GATE_ERROR, verdict.detail[:2000])
    return StageOutcome.kept(R.REFERENCE)


def _examples(w: RealWork) -> StageResult:
    """Stage `examples`: observed examples into the docstrings, then the skeleton checks."""
    result, construction = w.record, w.track.settings.construction
    derived, suite = result.derived, result.suite
    assert derived is not None and suite is not None
    result.examples = found = observed_examples(
        suite.tests, derived.class_name, construction.real_source.max_examples_per_method
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
    report = check_real_skeleton(result.skeleton, derived.context, construction.min_methods, frozenset(unseen))
    verdict = report.verdict()
    return StageOutcome.of(R.EXAMPLES, verdict)


def _mutation(w: RealWork) -> StageResult:
    result, mutator = w.record, w.track.mutator
    if mutator is None:
        return None
    derived, suite, verdict = result.derived, result.suite, result.gate
    assert derived is not None and suite is not None and verdict is not None
    result.mutation = report = mutator(
        derived.solution, suite.tests, suite.test_classes, item_id=result.candidate_id, reference_wall_s=verdict.wall_s
    )
    need = w.track.settings.construction.mutation.min_score
    if report.score is not None and report.score < need:
        return StageOutcome.drop(R.MUTATION, R.WEAK_TESTS, f"{report.summary()} < {need:.0%}")
    return StageOutcome.kept(R.MUTATION)


def _record(w: RealWork) -> StageResult:
    result, hc = w.record, w.hc
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
            models=_models(w.track.settings, result),
            prompt_versions=versions,
            candidate_id=result.candidate_id,
            schema_version=SCHEMA_VERSION,
            track=Track.REAL_SOURCE,
            extras=result.task_extras(),
        )
    except (RecordError, ValidationError) as exc:
        return StageOutcome.drop(R.TASK, R.RECORD_INVALID, str(exc)[:2000])
    return None


def _models(config: BuildSettings, result: RealCandidateResult) -> dict[str, str]:
    """Who wrote what: the generator always; the docstring roles only when they wrote something."""
    models = {"test_generator": result.suite.generator if result.suite else ""}
    if result.docstrings and result.docstrings.written:
        endpoint = writer_endpoint(config.llm, config.construction.real_source.docstring_role)
        models["docstring_writer"] = endpoint.model if endpoint else ""
        models["docstring_judge"] = config.llm.judges[0].model
    return models
