"""The verification gate as the solution stage sees it.

The stage depends on a small protocol, not on the sandbox package: the build gets a `Gate` passed
in (the real one wraps `classforge_bench.pipeline.sandbox.verify`; tests pass scripted ones). A gate answers with a
`GateOutcome`: passed, or failed with the sandbox's own reason code, plus the measured figures.
Only deterministic figures (coverage) go into task records; timings stay in the artefacts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.core.reasons import ENVIRONMENT_DEPENDENT, GateReason

if TYPE_CHECKING:  # the sandbox package is imported only when a gate runs
    from classforge_bench.pipeline.sandbox import GateVerdict


class GateOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    reason: str = Field(
        "", description="the gate's reason code when not passed (test_failed, low_coverage, flaky, ...)"
    )
    detail: str = ""
    line_coverage: float | None = Field(None, description="percent of the solution's lines run by the tests")
    branch_coverage: float | None = None
    tests_run: int | None = None
    wall_s: float | None = None
    failures: list[str] = Field(default_factory=list, description="failing tests with a short cause, for a repair turn")
    environment: dict[str, Any] | None = Field(
        None, description="environment checks' summary (applied, skipped, changed), when they ran"
    )


class Gate(Protocol):
    def __call__(self, solution: str, tests: str, test_classes: list[str], *, item_id: str) -> GateOutcome: ...


class GateUnavailable(InfrastructureError):
    """The sandbox itself failed; says nothing about the candidate, which is retried next run."""


ENVIRONMENT_CACHE = "environment-checks"  # under the build folder: environment reports by content


class SandboxGate:
    """The real gate: `classforge_bench.pipeline.sandbox.verify` (classeval mode: the tests run in the solution's
    namespace) with the build's sandbox configuration, then, when it passed, the environment checks
    (`sandbox.environment_checks`): a verdict that changes under a perturbation drops the task."""

    def __init__(self, config: SandboxConfig, environment_cache: Path | None = None) -> None:
        self.config = config
        self.environment_cache = environment_cache

    def __call__(self, solution: str, tests: str, test_classes: list[str], *, item_id: str) -> GateOutcome:
        # Imported on use: building the stages (and their tests) does not need the sandbox.
        from classforge_bench.pipeline.sandbox import verify

        verdict = verify(solution, tests, test_classes, self.config, item_id=item_id)
        if verdict.reason is GateReason.SANDBOX_ERROR:
            raise GateUnavailable(f"candidate {item_id}: sandbox error: {verdict.detail}")
        outcome = gate_outcome(verdict)
        if not outcome.passed or not self.config.environment_checks.enabled:
            return outcome
        return self._environment(outcome, solution, tests, test_classes, item_id)

    def _environment(
        self, outcome: GateOutcome, solution: str, tests: str, test_classes: list[str], item_id: str
    ) -> GateOutcome:
        from classforge_bench.pipeline.quality.environment_checks import check_environment

        report = check_environment(
            solution, tests, test_classes, self.config, item_id=item_id, cache_dir=self.environment_cache
        )
        summary = report.summary()
        if report.baseline_status == "sandbox_error" or summary.errors:
            problems = "; ".join(f"{k}: {v}" for k, v in summary.errors.items()) or "baseline run failed in the sandbox"
            raise GateUnavailable(f"candidate {item_id}: environment checks: sandbox error: {problems}")
        update: dict[str, Any] = {"environment": summary.model_dump(mode="json")}
        if report.baseline_status != "passed":
            # The gate's two runs passed, this third one did not: not reproducible.
            update.update(
                passed=False,
                reason=GateReason.FLAKY.value,
                detail=f"environment checks' baseline run: {'; '.join(report.baseline_failures[:3])}",
            )
        elif report.environment_dependent:
            update.update(passed=False, reason=ENVIRONMENT_DEPENDENT, detail=report.drop_detail())
        return outcome.model_copy(update=update)


def gate_outcome(verdict: GateVerdict) -> GateOutcome:
    """The stage's view of a `GateVerdict`: reason code, figures, and failing tests for a repair turn."""
    failures: list[str] = []
    for run in verdict.runs[:1]:
        for cls in run.classes:
            if cls.error:
                failures.append(f"{cls.name}: {cls.error}")
            for m in cls.methods:
                if not m.outcome.ok:
                    cause = f"{m.exc_type}: {m.message}" if m.exc_type else (m.message or m.outcome.value)
                    failures.append(f"{cls.name}.{m.name}: {cause}"[:500])
    return GateOutcome(
        passed=verdict.passed,
        reason=verdict.reason.value if verdict.reason is not None else "",
        detail=verdict.detail,
        line_coverage=verdict.line_coverage,
        branch_coverage=verdict.branch_coverage,
        tests_run=verdict.tests_run,
        wall_s=verdict.wall_s,
        failures=failures,
    )
