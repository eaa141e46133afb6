"""Typed records of a test-suite run: what was asked, and what happened, per class and per method."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SuiteMode = Literal["classeval", "import"]


class SuiteStatus(str, Enum):
    """One outcome bucket per run. Only PASSED is a pass."""

    PASSED = "passed"
    FAILED = "failed"  # tests ran; at least one failed or errored, or a listed class ran none
    ERROR = "error"  # the solution or the tests could not be imported, or the run was aborted
    TIMEOUT = "timeout"
    ZERO_TESTS = "zero_tests"  # nothing ran at all
    TAMPERED = "tampered"  # the run's own evidence contradicts an honest run
    CRASHED = "crashed"  # the runner died before finishing (os._exit, a signal, a killed harness)
    RESOURCE_EXCEEDED = "resource_exceeded"  # memory, file size or CPU limit hit
    SANDBOX_ERROR = "sandbox_error"  # the sandbox or harness failed; says nothing about the code


class TestOutcome(str, Enum):
    __test__ = False  # not a pytest test class, despite the name

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    SKIPPED = "skipped"
    EXPECTED_FAILURE = "expected_failure"
    UNEXPECTED_SUCCESS = "unexpected_success"

    @property
    def ok(self) -> bool:
        return self in (TestOutcome.PASSED, TestOutcome.SKIPPED, TestOutcome.EXPECTED_FAILURE)

    @property
    def ran(self) -> bool:
        return self is not TestOutcome.SKIPPED


class ClassStatus(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    ZERO_TESTS = "zero_tests"  # found, but no test in it ran (none defined, all skipped, or not reached)
    MISSING = "missing"  # no such test class or function in the tests
    FIXTURE_ERROR = "fixture_error"  # setUpClass / constructor failed, so its tests did not run


class MethodResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    outcome: TestOutcome
    exc_type: str | None = None
    message: str | None = None
    traceback: str | None = None
    errno: int | None = None
    duration_s: float | None = None


class ClassResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="as listed by the caller")
    status: ClassStatus
    methods: list[MethodResult] = Field(default_factory=list)
    error: str | None = Field(None, description="fixture or lookup problem, in words")
    note: str | None = Field(None, description="e.g. that the listed name was matched after stripping whitespace")

    @property
    def tests_run(self) -> int:
        return sum(1 for m in self.methods if m.outcome.ran)

    @property
    def passed(self) -> bool:
        return self.status is ClassStatus.PASSED


class CoverageResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    statements: int
    missing: int
    branches: int | None = None
    missing_branches: int | None = None
    missing_lines: list[int] = Field(default_factory=list)

    @property
    def line_percent(self) -> float:
        return 100.0 if self.statements == 0 else 100.0 * (self.statements - self.missing) / self.statements

    @property
    def branch_percent(self) -> float | None:
        if self.branches is None or self.missing_branches is None:
            return None
        return 100.0 if self.branches == 0 else 100.0 * (self.branches - self.missing_branches) / self.branches


HOST_CEILING_SLACK = 4.0  # the host's kill of a CPU-clock run, in multiples of its wall ceiling


class SuiteRequest(BaseModel):
    """One (solution, tests) pair to run. `item_id` names it in results and errors."""

    model_config = ConfigDict(extra="forbid")
    item_id: str = ""
    solution: str
    tests: str
    test_classes: list[str]
    mode: SuiteMode = "classeval"
    module_name: str = "solution"
    limit_s: float | None = Field(None, gt=0, description="wall limit; default: SandboxConfig.wall_limit_s")
    coverage: bool = True
    branch: bool = True
    hash_seed: int | None = Field(
        None,
        ge=0,
        le=4294967295,
        description="PYTHONHASHSEED and the random module's seed; default: SandboxConfig.hash_seed",
    )
    class_floors: dict[str, float] | None = Field(
        None,
        description="share the limit among the test classes (a class past its share of the time left is stopped "
        "as a timeout), each getting at least its floor here; None: one limit for the whole run",
    )
    wall_ceiling_s: float | None = Field(
        None,
        gt=0,
        description="set: `limit_s` is the CPU time of the test runner's process tree (load does not stretch it) "
        "and this the wall-clock safety net above it, a stop there reported as such; None: `limit_s` is wall time",
    )
    warm_imports: list[str] = Field(
        default_factory=list,
        description="installed libraries the task imports (its own import lines), imported by the supervisor "
        "before it forks the runner(s), once per batch: the runners' CPU time is the tests' own",
    )

    def host_wall_s(self, limit_s: float) -> float:
        """How long the host lets the run go on the wall clock (before its grace) before it kills it:
        the limit; for a CPU-clock run, a multiple of the ceiling, since the harness counts its
        ceiling on the time the runner was not waiting for a CPU and a busy machine makes the wall
        clock run faster than that (the host kill is then recorded as the safety net too)."""
        return limit_s if self.wall_ceiling_s is None else self.wall_ceiling_s * HOST_CEILING_SLACK

    @field_validator("module_name")
    @classmethod
    def _identifier(cls, v: str) -> str:
        if not v.isidentifier() or v.startswith("cf_"):
            raise ValueError(f"module_name must be a Python identifier not starting with 'cf_': {v!r}")
        return v


class SuiteResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str = ""
    status: SuiteStatus
    detail: str = Field("", description="why, in words, for anything but a pass")
    classes: list[ClassResult] = Field(default_factory=list)
    coverage: CoverageResult | None = None
    tamper: list[str] = Field(default_factory=list, description="evidence of tampering, if any")
    limit_s: float
    wall_s: float
    cpu_s: float | None = None
    wall_ceiling: bool = Field(
        False, description="stopped by the wall-clock safety net, not by its CPU limit (cpu-clock runs only)"
    )
    peak_memory_mb: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    isolation: str = ""
    hash_seed: int = 0
    stdout: str = ""
    stderr: str = ""
    perturbation_applied: dict[str, str] = Field(default_factory=dict, description="environment checks: aspect -> how")
    perturbation_skipped: dict[str, str] = Field(
        default_factory=dict, description="environment checks: aspect -> why not"
    )

    @property
    def passed(self) -> bool:
        return self.status is SuiteStatus.PASSED

    @property
    def tests_run(self) -> int:
        return sum(c.tests_run for c in self.classes)

    @property
    def line_coverage(self) -> float | None:
        return None if self.coverage is None else self.coverage.line_percent

    @property
    def branch_coverage(self) -> float | None:
        return None if self.coverage is None else self.coverage.branch_percent

    def outcomes(self) -> dict[str, str]:
        """class.method -> outcome; what a repeat run must reproduce."""
        found = {f"{c.name}.{m.name}": m.outcome.value for c in self.classes for m in c.methods}
        found.update({f"{c.name}": c.status.value for c in self.classes if not c.methods})
        return found
