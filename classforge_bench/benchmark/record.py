"""The one record of an evaluated sample, filled once by generation, once by execution, once by scoring.

    record = SampleRecord(model=..., strategy=..., task_id=..., sample_index=...)  # planned, or a samples line
    record.fill(Generation(...))   # generation: how the code was obtained, the program (or why there is none)
    record.fill(Execution(...))    # execution: the run the program had (or shared), its per-test-class outcome
    record.fill(Score(...))        # scoring: the bucket and why, the error category

Each part is filled exactly once (`fill` refuses a second time), in place: the record is never
rebuilt or copied on its way, as inspect_ai's `TaskState` goes from solver to scorer. A sample that
generation ends (no code, a failed model call) or whose task is broken gets no execution part. The
record is the whole content of the sample's file in `samples/` (schema 6); records of the schemas
before are read into this shape (`record_versions`).

Buckets: every sample lands in exactly one. The scored buckets are `SampleOutcome.status`'s values;
the unscored ones say why a sample could not be judged (`generation_error`: the model call failed
for good; `sandbox_error`: the sandbox itself failed; `task_broken`: a pre-generated sample of a task
whose reference solution fails). `cause` names why in one code (`UNSCORED_CAUSES`), and `repeats`
says whether running again would fail the same way.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from classforge_bench.benchmark.outcomes import ExceptionInfo, SampleOutcome, SampleStatus
from classforge_bench.benchmark.record_versions import current_shape
from classforge_bench.benchmark.taxonomy import Category
from classforge_bench.pipeline.core.errors import IntegrityError

UnscoredBucket = Literal["generation_error", "sandbox_error", "task_broken"]
Bucket = Literal[SampleStatus, UnscoredBucket]
SCORED_BUCKETS: tuple[str, ...] = get_args(SampleStatus)
BUCKETS: tuple[str, ...] = SCORED_BUCKETS + get_args(UnscoredBucket)
SampleSource = Literal["llm", "reference", "empty", "samples_file"]
Unrun = Literal["no_code", "compile_error", "generation_error"]
# why a sample is unscored, and whether running again repeats it
UNSCORED_CAUSES: dict[str, tuple[str, bool]] = {
    "prompt-too-long": ("the prompt does not fit the model's context window", True),
    "request-refused": ("the server refused the request itself (a 4xx, or the same 5xx twice)", True),
    "replay-miss": ("replay mode has no recorded answer for the request", True),
    "budget-reached": ("the run's LLM budget was spent", True),
    "llm-unavailable": ("the model could not be reached or kept failing (outage, timeout, rate limit, key)", False),
    "sandbox-failed": ("the sandbox itself failed", False),
    "task-broken": ("the task's reference solution fails", True),
}


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepRecord(Record):
    """One model call (or one pre-generated completion) and what was extracted from it."""

    index: int
    kind: Literal["class", "method", "completion"]
    targets: list[str] = Field(default_factory=list)
    level: int | None = None
    prompt_version: str | None = Field(None, description='e.g. "eval_holistic@v1"; None for pre-generated text')
    prompt_sha256: str | None = None
    raw: str
    extracted: str = Field(description="the code taken from `raw` (a method at class-body indentation, or a module)")
    extraction_how: str = Field(description="how the code was found: fenced, unclosed_fence, unfenced, empty")
    method_how: str | None = Field(
        None, description="method steps: how the method was cut out (ast, ast_dedented, lines, not_found)"
    )
    finish_reason: str | None = None
    truncated: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    attempts: int = 0
    cache_key: str | None = None


class LevelsRecord(Record):
    """Dependency levels used by bottom_up/top_down, and where they came from."""

    source: Literal["labels", "model", "labels_fallback"]
    levels: dict[str, int]
    note: str = ""
    prompt_version: str | None = None
    raw: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Generation(Record):
    """Filled by generation: how the code was obtained (source, levels, steps) and the program; when
    there is nothing to run, `unrun` says what generation ended the sample with, and why."""

    source: SampleSource
    levels: LevelsRecord | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    program: str | None = Field(None, description="the assembled program; None: nothing to run")
    unrun: Unrun | None = Field(None, description="no program to run: the sample's bucket, decided here")
    reason: str = Field("", description="unrun: why, in words")
    cause: str | None = Field(None, description="generation_error: why, as a code of UNSCORED_CAUSES")

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.steps) + (self.levels.prompt_tokens if self.levels else 0)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.steps) + (self.levels.completion_tokens if self.levels else 0)

    def outcome(self) -> SampleOutcome | None:
        """What a sample generation ended is scored as: nothing of the model's to run is `no_code`;
        text that is not Python source (a lone surrogate) a compile error. None: not scored."""
        if self.unrun == "no_code":
            return SampleOutcome(status="no_code")
        if self.unrun == "compile_error":
            return SampleOutcome(
                status="compile_error", error=ExceptionInfo(type="UnicodeEncodeError", message=self.reason)
            )
        return None


class Execution(Record):
    """Filled by execution: the run the program had (or shared: `reused`), as the content store
    keeps it under `key`, and its per-test-class outcome. A program that does not compile is not
    run: its outcome is the compile error, and the run's fields stay empty."""

    limit_s: float | None = Field(None, description="the run's time limit (scaled from the reference); None: not run")
    environment: str | None = Field(
        None, description="interpreter + harness of the run (classforge_bench.benchmark.execution.environment_tag)"
    )
    key: str | None = Field(None, description="content hash of the run: its stored execution in executions/")
    suite_status: str | None = Field(None, description="SuiteStatus of the whole-file run; None: not run")
    detail: str = ""
    wall_s: float | None = Field(None, description="wall time of the whole-file run")
    runs_wall_s: float | None = Field(None, description="wall time of every run of the sample together")
    cpu_s: float | None = Field(None, description="CPU time of the whole-file run, where the sandbox reports it")
    peak_memory_mb: float | None = Field(None, description="peak memory of the whole-file run, where reported")
    isolation: str = ""
    per_class: bool = Field(False, description="an abnormal end was accounted per test class")
    reruns: int = Field(0, description="later runs of the test classes an abnormal end did not reach, within the limit")
    reused: Literal["reference", "store"] | None = Field(
        None, description="not run for this sample: the reference pre-run's execution, or one found in executions/"
    )
    sandbox_failure: str | None = Field(None, description="the sandbox itself failed (then no outcome): its detail")
    outcome: SampleOutcome | None = Field(
        None, description="per-test-class outcomes; None only when the sandbox failed"
    )


class Score(Record):
    """Filled by scoring: the sample's bucket and why, and the error category of a scored sample."""

    bucket: Bucket
    reason: str = Field("", description="why the sample is not `completed`, in words")
    cause: str | None = Field(None, description="unscored samples: why, as a code of UNSCORED_CAUSES")
    repeats: bool | None = Field(None, description="unscored samples: running again fails the same way")
    error_category: Category | None = None
    error_reason: str | None = None


Part = Generation | Execution | Score
_PART_FIELDS: dict[type, str] = {Generation: "generation", Execution: "execution", Score: "score"}


class SampleRecord(Record):
    """One evaluated sample: named when the run plans it (or by its samples-file line), then filled
    once by each phase (module docstring). Files of older schemas are read into this shape."""

    model: str
    strategy: str
    task_id: str
    sample_index: int = Field(ge=0)
    dataset_sha256: str | None = Field(None, description="the dataset the task was read from (results.json: dataset)")
    generation: Generation | None = None
    execution: Execution | None = None
    score: Score | None = None

    @model_validator(mode="before")
    @classmethod
    def _older_shapes(cls, data: Any) -> Any:
        """Records of schemas 1-5 as this one; an old record whose copies disagree is refused
        (never resolved by picking one). The outcome's status is the bucket, written once."""
        return current_shape(data)

    @model_validator(mode="after")
    def _one_status(self) -> SampleRecord:
        outcome = self.execution.outcome if self.execution else None
        if outcome is not None and self.score is not None and outcome.status != self.score.bucket:
            raise ValueError(f"the outcome's status {outcome.status!r} is not the bucket {self.score.bucket!r}")
        return self

    def fill(self, part: Part) -> SampleRecord:
        """Fill one part, once: a phase that fills a part twice is a bug in the run, never resolved
        by keeping either."""
        name = _PART_FIELDS[type(part)]
        if getattr(self, name) is not None:
            raise IntegrityError(f"task {self.task_id}: sample {self.key}: its {name} is filled twice")
        setattr(self, name, part)
        return self

    def generated_again(self) -> SampleRecord:
        """The same sample as generated, not yet run: a record of its own for another execution of
        its program (against base + plus tests, or under another hash seed)."""
        return SampleRecord(
            model=self.model,
            strategy=self.strategy,
            task_id=self.task_id,
            sample_index=self.sample_index,
            dataset_sha256=self.dataset_sha256,
            generation=self.generation,
        )

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.model, self.strategy, self.task_id, self.sample_index

    @property
    def group(self) -> tuple[str, str]:
        return self.model, self.strategy

    @property
    def bucket(self) -> str | None:
        """The bucket scoring put the sample in; None before it is scored."""
        return self.score.bucket if self.score else None

    @property
    def scored(self) -> bool:
        return self.bucket in SCORED_BUCKETS

    @property
    def program(self) -> str | None:
        return self.generation.program if self.generation else None

    @property
    def outcome(self) -> SampleOutcome | None:
        """A scored sample's per-test-class outcomes (None for an unscored one)."""
        return self.found_outcome() if self.scored else None

    def found_outcome(self) -> SampleOutcome | None:
        """The per-test-class outcomes the phases found: the run's, or what generation ended the sample with."""
        if self.execution is not None:
            return self.execution.outcome
        return self.generation.outcome() if self.generation else None
