"""The verification gate: does a (solution, tests) pair qualify as a benchmark task?

It passes when the solution compiles, every test passes, at least one test ran in every listed
test class, line coverage of the solution reaches the configured minimum (branch coverage is
recorded), the run finishes within the limit, and a second run (another seed for hashing and the
random module, no tracing) reproduces every outcome. Reason codes are stable strings; the funnel counts them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.funnel import Verdict
from classforge_bench.pipeline.core.parsing import compile_code
from classforge_bench.pipeline.core.reasons import GateReason  # registered with every other reason code
from classforge_bench.pipeline.sandbox.base import SandboxBackend
from classforge_bench.pipeline.sandbox.registry import get_backend
from classforge_bench.pipeline.sandbox.results import ClassStatus, SuiteMode, SuiteRequest, SuiteResult, SuiteStatus
from classforge_bench.pipeline.sandbox.suite import execute

_BY_STATUS = {
    SuiteStatus.ERROR: GateReason.IMPORT_ERROR,
    SuiteStatus.ZERO_TESTS: GateReason.ZERO_TESTS,
    SuiteStatus.TIMEOUT: GateReason.TIMEOUT,
    SuiteStatus.RESOURCE_EXCEEDED: GateReason.RESOURCE_EXCEEDED,
    SuiteStatus.TAMPERED: GateReason.TAMPERED,
    SuiteStatus.CRASHED: GateReason.CRASHED,
    SuiteStatus.SANDBOX_ERROR: GateReason.SANDBOX_ERROR,
}


class GateVerdict(BaseModel):
    """The gate's answer with the figures it was based on."""

    model_config = ConfigDict(extra="forbid")
    item_id: str = ""
    passed: bool
    reason: GateReason | None = None
    detail: str = ""
    line_coverage: float | None = None
    branch_coverage: float | None = None
    min_line_coverage: float
    tests_run: int = 0
    test_classes: int = 0
    limit_s: float
    wall_s: float | None = Field(None, description="first run")
    repeat_wall_s: float | None = None
    runs: list[SuiteResult] = Field(default_factory=list, description="the runs made, first one first")

    def to_verdict(self) -> Verdict:
        if self.passed:
            return Verdict.kept()
        assert self.reason is not None, "every failed gate verdict is made with its reason"
        return Verdict.drop(self.reason.value, self.detail)


def _compile_problem(source: str, filename: str) -> str | None:
    try:
        compile_code(source, filename)
    except (SyntaxError, ValueError) as exc:
        return f"{exc.__class__.__name__}: {exc}"
    return None


def _suite_reason(result: SuiteResult) -> GateReason | None:
    if result.status is SuiteStatus.PASSED:
        return None
    if result.status is SuiteStatus.FAILED:
        failed = any(not m.outcome.ok for c in result.classes for m in c.methods)
        fixture = any(c.status is ClassStatus.FIXTURE_ERROR for c in result.classes)
        return GateReason.TEST_FAILED if failed or fixture else GateReason.CLASS_WITHOUT_TESTS
    return _BY_STATUS[result.status]


def outcome_differences(first: SuiteResult, second: SuiteResult) -> list[str]:
    a, b = first.outcomes(), second.outcomes()
    diffs = [
        f"{k}: {a.get(k, 'absent')} then {b.get(k, 'absent')}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
    ]
    if first.status is not second.status:
        diffs.insert(0, f"status {first.status.value} then {second.status.value} ({second.detail})")
    return diffs


def verify(
    solution: str,
    tests: str,
    test_classes: Sequence[str],
    config: SandboxConfig | None = None,
    *,
    mode: SuiteMode = "classeval",
    module_name: str = "solution",
    item_id: str = "",
    limit_s: float | None = None,
    backend: SandboxBackend | None = None,
) -> GateVerdict:
    config = config or SandboxConfig()
    limit = limit_s or config.wall_limit_s
    common = {
        "item_id": item_id,
        "min_line_coverage": config.min_line_coverage,
        "test_classes": len(test_classes),
        "limit_s": limit,
    }
    uncompiled = _compile_failure(solution, tests, module_name)
    if uncompiled is not None:
        reason, problem = uncompiled
        return GateVerdict(passed=False, reason=reason, detail=problem, **common)
    backend = backend or get_backend(config)
    request = SuiteRequest(
        item_id=item_id,
        solution=solution,
        tests=tests,
        test_classes=list(test_classes),
        mode=mode,
        module_name=module_name,
        limit_s=limit,
        coverage=True,
        hash_seed=config.hash_seed,
    )
    return _run_twice(request, backend, config, common)


def _compile_failure(solution: str, tests: str, module_name: str) -> tuple[GateReason, str] | None:
    """The first of the two sources that does not compile, with its reason and the problem."""
    for source, name, reason in (
        (solution, f"{module_name}.py", GateReason.COMPILE_ERROR),
        (tests, "tests", GateReason.TESTS_COMPILE_ERROR),
    ):
        problem = _compile_problem(source, name)
        if problem:
            return reason, problem
    return None


def _run_twice(
    request: SuiteRequest, backend: SandboxBackend, config: SandboxConfig, common: dict[str, object]
) -> GateVerdict:
    """The suite run with coverage, then (when it passed with enough coverage) repeated to catch flakiness."""
    first = execute(request, backend, config)
    figures = {
        **common,
        "line_coverage": first.line_coverage,
        "branch_coverage": first.branch_coverage,
        "tests_run": first.tests_run,
        "wall_s": first.wall_s,
    }
    reason = _suite_reason(first)
    if reason is not None:
        return GateVerdict(passed=False, reason=reason, detail=first.detail, runs=[first], **figures)
    if first.line_coverage is None or first.line_coverage < config.min_line_coverage:
        measured = "not measured" if first.line_coverage is None else f"{first.line_coverage:.1f}%"
        missing = first.coverage.missing_lines[:20] if first.coverage else []
        detail = f"line coverage {measured} < {config.min_line_coverage:.1f}%; missing lines {missing}"
        return GateVerdict(passed=False, reason=GateReason.LOW_COVERAGE, detail=detail, runs=[first], **figures)
    # The repeat uses another seed (set order, the random module) and no tracer (timing).
    repeat = execute(
        request.model_copy(update={"coverage": False, "hash_seed": (config.hash_seed + 1) % 2**32}), backend, config
    )
    figures["repeat_wall_s"] = repeat.wall_s
    diffs = outcome_differences(first, repeat)
    if diffs:
        return GateVerdict(
            passed=False, reason=GateReason.FLAKY, detail="; ".join(diffs[:5]), runs=[first, repeat], **figures
        )
    return GateVerdict(passed=True, runs=[first, repeat], **figures)
