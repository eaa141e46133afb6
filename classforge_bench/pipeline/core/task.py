"""The one model of a task, from construction through the release to the evaluator.

Field names and order are ClassEval's (`methods_info`, `Standalone`), then ClassEval-Pro's
(`composition_type`, `domain1`, `domain2`), then what classforge records about how a task was built
(coverage, judges, sources, models, metrics, ...; None for tasks from other datasets). A release row
is `Task.to_row()` and reads back with `Task.from_row()`; columns the model does not know travel in
`extras` so nothing a dataset publishes is lost. Converters from ClassEval and ClassEval-Pro files
live in `classforge_bench.pipeline.formats`.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from classforge_bench.pipeline.core.records import SCHEMA_VERSION, ClassMetrics, HarvestedClass
from classforge_bench.pipeline.core.tracks import Track
from classforge_bench.pipeline.core.urls import public_clone_url

CompositionType = Literal["intra-domain", "cross-domain"]


VoteStatus = Literal["scored", "malformed", "call-failed"]

# ClassEval-Pro writes "intra"/"cross"; classforge has always published the long form.
_COMPOSITION_SPELLINGS: dict[str, CompositionType] = {
    "intra": "intra-domain",
    "cross": "cross-domain",
    "intra-domain": "intra-domain",
    "cross-domain": "cross-domain",
}


def composition_type(value: str) -> CompositionType:
    """The one spelling of a composition type, from either published one."""
    try:
        return _COMPOSITION_SPELLINGS[value]
    except KeyError:
        raise ValueError(f"unknown composition_type {value!r} (expected intra-domain or cross-domain)") from None


class Dependencies(BaseModel):
    """ClassEval's per-method dependency labels, with its key spelling (`Standalone`).

    `field_dependencies` keep ClassEval's spelling (`self.x`); `field_names` gives the bare names.
    """

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    standalone: bool = Field(alias="Standalone")
    lib_dependencies: list[str] = Field(default_factory=list)
    field_dependencies: list[str] = Field(default_factory=list, description="as `self.x`, like ClassEval")
    method_dependencies: list[str] = Field(default_factory=list)

    @property
    def field_names(self) -> list[str]:
        return [f.removeprefix("self.") for f in self.field_dependencies]


class Method(BaseModel):
    """One method to generate: its contract, its own test class and its reference body."""

    model_config = ConfigDict(extra="forbid")

    method_name: str
    method_description: str = Field(description="decorators, signature and docstring, as ClassEval stores them")
    test_class: str | None = Field(description="the method-level test class; None when the suite has none for it")
    test_code: str = ""
    solution_code: str
    dependencies: Dependencies


class SourceRef(BaseModel):
    """A harvested class a task was built from, with the provenance a release must keep."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    class_id: str
    class_name: str
    domain: str
    repo: str
    clone_url: str | None = Field(None, description="a public URL; None for a local source (its path is not published)")
    path: str
    commit: str
    first_seen_commit: str | None = None
    first_seen_date: datetime | None = None
    license_spdx: str | None = None

    @field_validator("clone_url", mode="before")
    @classmethod
    def _publishable(cls, v: str | None) -> str | None:
        return public_clone_url(v)

    @classmethod
    def of(cls, hc: HarvestedClass, domain: str) -> SourceRef:
        return cls(
            class_id=hc.id,
            class_name=hc.class_name,
            domain=domain,
            repo=hc.repo,
            clone_url=hc.clone_url,
            path=hc.path,
            commit=hc.commit,
            first_seen_commit=hc.first_seen_commit,
            first_seen_date=hc.first_seen_date,
            license_spdx=hc.license_spdx,
        )


class JudgeVote(BaseModel):
    """One judge's verdict on a candidate's skeleton and tests."""

    model_config = ConfigDict(extra="forbid")

    judge: int = Field(description="1-based position in config.llm.judges")
    role: str
    model: str
    status: VoteStatus
    score: int | None = None
    reasons: str = ""
    problems: list[str] = Field(default_factory=list)
    attempts: int = 0
    errors: list[str] = Field(default_factory=list, description="why earlier answers were rejected")
    infrastructure: bool = Field(False, description="the call failed for an endpoint fault, not the answer")

    @property
    def valid(self) -> bool:
        return self.status == "scored"


class SurvivingMutant(BaseModel):
    """A mutant of the reference solution that every test let through (classforge_bench.pipeline.quality)."""

    model_config = ConfigDict(extra="forbid")

    mutant_id: str
    method: str
    operator: str
    line: int
    description: str
    diff: str


class MutationReport(BaseModel):
    """How strong a task's tests are: its reference's mutants run against them (classforge_bench.pipeline.quality).
    Deterministic figures only (no timings), so it can live in task records."""

    model_config = ConfigDict(extra="forbid")

    mutants: int = Field(description="mutants made, the equivalent ones included")
    killed: int
    survived: int
    timed_out: int
    equivalent: int = Field(description="same bytecode as the reference; excluded from the score")
    invalid: int = Field(0, description="mutants that did not compile; not counted in `mutants`")
    score: float | None = Field(
        description="detected / (mutants - equivalent), in [0, 1]; None when nothing was scored"
    )
    timeouts_count_as: str = "killed"
    max_mutants_per_method: int
    seed: int
    by_operator: dict[str, list[int]] = Field(default_factory=dict, description="operator -> [detected, scored]")
    surviving: list[SurvivingMutant] = Field(default_factory=list)

    def summary(self) -> str:
        shown = "n/a" if self.score is None else f"{100 * self.score:.1f}%"
        return (
            f"mutation score {shown}: {self.killed} killed, {self.timed_out} timed out, {self.survived} survived "
            f"of {self.mutants - self.equivalent} ({self.equivalent} equivalent excluded)"
        )


class PlusDrop(BaseModel):
    """A generated test that did not make it into the plus suite, and why (a registered reason)."""

    model_config = ConfigDict(extra="forbid")
    origin: str = Field(description="the generated test it came from, e.g. test_3")
    reason: str
    detail: str = ""


class PlusSuite(BaseModel):
    """A task's hidden plus tier: unit tests no LLM wrote (search-based, classforge_bench/pipeline/quality/plus),
    each validated on the reference. Scored next to the base tests, never mixed into them."""

    model_config = ConfigDict(extra="forbid")
    test: str = Field("", description="unittest source in ClassEval form; empty when no test survived")
    test_classes: list[str] = Field(default_factory=list)
    tests: int = Field(0, description="test methods kept")
    generated: int = Field(0, description="test functions the generator wrote, and the walks made from them")
    dropped: dict[str, int] = Field(
        default_factory=dict, description="reason -> generated tests (and walks, plus.observe_walks) dropped for it"
    )
    drops: list[PlusDrop] = Field(default_factory=list)
    observed: int = Field(0, description="generated tests the state observation (plus.observe_state) ran on")
    unchecked: dict[str, int] = Field(
        default_factory=dict, description="reason -> of those, tests it left without state checks"
    )
    seeded: int = Field(0, description="scenarios made from the task's base tests (plus.seeds), counted in generated")
    repaired: int = Field(0, description="tests kept after an off-contract argument was replaced by an in-contract one")
    selection: dict[str, int] = Field(
        default_factory=dict,
        description="mutation-guided selection (plus.select_by_mutants): mutants, killed_by_base, killed_by_plus, "
        "unattributed",
    )
    generator: str = ""
    seed: int = 0
    generation_s: float = Field(0.0, description="wall time of the generation run (0 when read from the cache)")
    hit_time_cap: bool = Field(False, description="the search stopped at its time cap: a rerun may differ")
    failure: str | None = Field(None, description="why generation produced nothing, when it did not")
    failure_reason: str | None = Field(
        None, description="the registered reason of that failure (plus-generator-*, plus-converted-all-dropped)"
    )
    mutation_score: float | None = Field(
        None, description="build: mutation score of base + plus tests together, in [0, 1]"
    )
    key: str = Field("", description="content hash it is cached under")


def task_license(sources: list[SourceRef]) -> str:
    """The task's licence as an SPDX expression over its source repositories ("MIT", "Apache-2.0 AND MIT").

    A composed class carries code from every source, so every source's licence applies at once (AND).
    A source without a recorded licence makes the whole NOASSERTION: nobody may assume it is free to use.
    """
    found = [s.license_spdx for s in sources]
    if not found or any(not lic or lic == "NOASSERTION" for lic in found):
        return "NOASSERTION"
    unique = sorted({lic for lic in found if lic})  # all of them: an empty one returned above
    return unique[0] if len(unique) == 1 else " AND ".join(f"({x})" if " " in x else x for x in unique)


class Task(BaseModel):
    """A class-level generation task: skeleton in, class out, judged by its unittest suite."""

    model_config = ConfigDict(extra="forbid")

    # ClassEval's columns
    task_id: str = Field(min_length=1)
    class_name: str = Field(min_length=1)
    skeleton: str = Field(min_length=1)
    test: str = Field(min_length=1, description="unittest source; like ClassEval it may expect the class prepended")
    test_classes: list[str] = Field(min_length=1, description="every test class to run, method- and class-level")
    solution_code: str = Field(min_length=1)
    import_statement: list[str] = Field(default_factory=list)
    class_description: str = ""
    class_constructor: str = ""
    fields: list[str] = Field(default_factory=list)
    methods_info: list[Method] = Field(min_length=1, description="the methods to write, in declaration order")
    # ClassEval-Pro's columns
    composition_type: CompositionType | None = None
    domain1: str | None = None
    domain2: str | None = None
    # How classforge built it (None for tasks of other datasets)
    coverage: float | None = Field(None, description="line coverage of the solution by the tests, percent")
    branch_coverage: float | None = None
    mutation_score: float | None = Field(
        None, description="share of the solution's non-equivalent mutants the tests kill, in [0, 1]"
    )
    mutation: MutationReport | None = Field(None, description="mutation counts and the surviving mutants' diffs")
    environment_checks: dict[str, Any] | None = Field(
        None, description="environment checks the solution passed: applied, skipped (with why), isolation"
    )
    judge_scores: list[int | None] | None = Field(None, description="one per judge, None for a failed vote")
    judge_votes: list[JudgeVote] | None = None
    source_class_ids: list[str] | None = None
    sources: list[SourceRef] | None = None
    license: str | None = Field(None, description="SPDX expression over the sources' licences")
    models: dict[str, str] | None = Field(None, description="role -> model")
    prompt_versions: dict[str, str] | None = Field(None, description="stage -> prompt version(s) used")
    metrics: ClassMetrics | None = None
    candidate_id: str | None = None
    schema_version: int | None = None
    plus: PlusSuite | None = Field(None, description="hidden plus tier: generated, validated tests (scored apart)")
    # Last of the fields, so a real-source row keeps its column order from when the track was an
    # extra column. None on a composition task: its rows carry no track column (they never did).
    track: Track | None = Field(None, description="the construction track of a real-source task; None otherwise")
    # Not columns: where the task was read from, and the columns this model does not know.
    source: str | None = Field(None, exclude=True, description="which dataset the task came from")
    extras: dict[str, Any] = Field(
        default_factory=dict, exclude=True, description="columns the model does not know, kept so nothing is lost"
    )

    @field_validator("task_id")
    @classmethod
    def _plain_id(cls, v: str) -> str:
        if v != v.strip() or "\n" in v:
            raise ValueError(f"task_id {v!r} has surrounding whitespace or a newline")
        return v

    @field_validator("plus", mode="before")
    @classmethod
    def _plus_from_text(cls, v: Any) -> Any:
        # Parquet files keep the plus suite as one JSON text column (its shape varies per task).
        return json.loads(v) if isinstance(v, str) and v.strip() else (None if v == "" else v)

    @field_validator("composition_type", mode="before")
    @classmethod
    def _one_spelling(cls, v: Any) -> Any:
        return composition_type(v) if isinstance(v, str) else v

    @classmethod
    def from_row(cls, row: dict[str, Any], *, source: str | None = None) -> Task:
        """A task from a release/dataset row: known columns become fields, the others `extras`."""
        known = {k: v for k, v in row.items() if k in _ROW_FIELDS}
        extras = {k: v for k, v in row.items() if k not in _ROW_FIELDS}
        return cls.model_validate({**known, "source": source, "extras": extras})

    def to_row(self) -> dict[str, Any]:
        """The task as a flat release row (JSON-able): core columns, what is set of the rest, extras."""
        row = self.model_dump(mode="json", by_alias=True, include=set(CORE_COLUMNS))
        # A field nobody set (a ClassEval task has no judges) is no column; a None someone set is one.
        rest = self.model_dump(mode="json", by_alias=True, exclude={*CORE_COLUMNS, "track"})
        row.update({k: v for k, v in rest.items() if v is not None or k in self.model_fields_set})
        if self.sources is not None and self.license is None:
            row["license"] = task_license(list(self.sources))
        # After the licence: a real-source row keeps the column order it had when the track was its
        # first extra column (byte-identical releases); a composed task has no track column.
        if self.track is not None:
            row["track"] = self.track.value
        for key, value in self.extras.items():
            row.setdefault(key, value)
        return row

    @property
    def method_names(self) -> list[str]:
        return [m.method_name for m in self.methods_info]

    def method(self, name: str) -> Method:
        for m in self.methods_info:
            if m.method_name == name:
                return m
        raise KeyError(f"task {self.task_id}: no method {name!r}")

    @property
    def method_test_classes(self) -> dict[str, str]:
        """Method name -> its own test class, for the methods that have one."""
        return {m.method_name: m.test_class for m in self.methods_info if m.test_class}

    @property
    def class_level_test_classes(self) -> list[str]:
        """Test classes tied to no method: they exercise several methods together."""
        tied = set(self.method_test_classes.values())
        return [tc for tc in self.test_classes if tc not in tied]

    @property
    def first_seen(self) -> date | None:
        """The day the task's material was first public: its *earliest* source's first-seen date,
        since a task is only as fresh as its oldest part (release/validity.py counts a task
        post-cutoff on the same rule). None when a source is undated or the task lists no sources:
        ClassEval's and ClassEval-Pro's tasks carry no dates."""
        if not self.sources:
            return None
        dates = [s.first_seen_date for s in self.sources]
        return None if any(d is None for d in dates) else min(d.date() for d in dates if d is not None)


_ROW_FIELDS = frozenset(name for name, f in Task.model_fields.items() if not f.exclude)
# The columns every release has with one fixed Arrow type: ClassEval's eleven and ClassEval-Pro's three.
CORE_COLUMNS: tuple[str, ...] = tuple(list(Task.model_fields)[:14])
CLASSEVAL_COLUMNS: tuple[str, ...] = CORE_COLUMNS[:11]
PRO_COLUMNS: tuple[str, ...] = CORE_COLUMNS[11:]


def column_origin(name: str) -> str:
    return "ClassEval" if name in CLASSEVAL_COLUMNS else "ClassEval-Pro" if name in PRO_COLUMNS else "classforge"


COLUMN_MEANINGS: dict[str, str] = {
    "task_id": "unique id of the task",
    "class_name": "name of the class to write",
    "skeleton": "the prompt: imports, class and method signatures with docstrings and examples, no bodies",
    "test": "unittest source; it expects the class in the same module (prepend the class to run it)",
    "test_classes": "every test class to run: one per method plus class-level ones",
    "solution_code": "the canonical solution, which passes every test class",
    "import_statement": "the import lines the class needs",
    "class_description": "the class docstring as written in the skeleton",
    "class_constructor": "the constructor (`__init__`) with its body, given to the model",
    "fields": "instance fields the constructor sets",
    "methods_info": "per method: name, description (signature and docstring), its test class, test code, "
    "solution and dependencies (standard library, fields and methods it uses)",
    "composition_type": "intra (both source classes from one domain) or cross (two domains); "
    "null for a real-source task (a harvested class as it is)",
    "domain1": "primary domain of the task",
    "domain2": "second domain of the composition (for an intra-domain task, the domain of both source classes); "
    "null for a real-source task",
    "coverage": "line coverage of the solution by the tests, percent",
    "branch_coverage": "branch coverage of the solution by the tests, percent",
    "mutation_score": "share of the solution's non-equivalent mutants the tests kill (0-1)",
    "mutation": "mutation counts per operator and the surviving mutants' diffs",
    "environment_checks": "perturbed environments the solution and tests were re-run under: applied, skipped (why)",
    "judge_scores": "the judges' scores of skeleton/test alignment (0-10), one per judge",
    "judge_votes": "each judge's model, score and reasons",
    "source_class_ids": "ids of the harvested classes composed into this task",
    "sources": "per source class: repository, URL when public, path, commit, first-seen commit and date, licence",
    "license": "SPDX expression over the source repositories' licences",
    "models": "the model of each construction role",
    "prompt_versions": "the prompt template versions each stage used",
    "metrics": "LOC, method count and dependency depth of the solution (ClassEval-Pro's Table 3)",
    "candidate_id": "the build's id of the candidate pair the task came from",
    "schema_version": "version of this row layout",
    "track": "the construction track: real-source (a harvested class as it is); absent on composed tasks",
}
"""What each release column holds, for the dataset card (a test keeps it complete)."""


def column_meaning(name: str) -> str:
    return COLUMN_MEANINGS.get(name, "")


__all__ = [
    "CLASSEVAL_COLUMNS",
    "COLUMN_MEANINGS",
    "CORE_COLUMNS",
    "PRO_COLUMNS",
    "SCHEMA_VERSION",
    "CompositionType",
    "Dependencies",
    "JudgeVote",
    "Method",
    "MutationReport",
    "PlusDrop",
    "PlusSuite",
    "SourceRef",
    "SurvivingMutant",
    "Task",
    "Track",
    "VoteStatus",
    "column_meaning",
    "column_origin",
    "composition_type",
    "task_license",
]
