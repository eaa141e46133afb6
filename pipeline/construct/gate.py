"""The verification gate as the solution stage sees it.

The stage depends on a small protocol, not on the sandbox package: the build gets a `Gate` passed
in (the real one wraps `pipeline.sandbox.verify`; tests pass scripted ones). A gate answers with a
`GateOutcome`: passed, or failed with the sandbox's own reason code, plus the measured figures.
Only deterministic figures (coverage) go into task records; timings stay in the artefacts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field

from pipeline.config import SandboxConfig
from pipeline.core.errors import InfrastructureError

if TYPE_CHECKING:  # the sandbox package is imported only when a gate runs
    from pipeline.sandbox import GateVerdict


class GateOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    reason: str = Field("", description="the gate's reason code when not passed (test_failed, low_coverage, flaky, ...)")
    detail: str = ""
    line_coverage: float | None = Field(None, description="percent of the solution's lines run by the tests")
    branch_coverage: float | None = None
    tests_run: int | None = None
    wall_s: float | None = None
    failures: list[str] = Field(default_factory=list, description="failing tests with a short cause, for a repair turn")


class Gate(Protocol):
    def __call__(self, solution: str, tests: str, test_classes: list[str], *, item_id: str) -> GateOutcome: ...


class GateUnavailable(InfrastructureError):
    """The sandbox itself failed; says nothing about the candidate, which is retried next run."""


class SandboxGate:
    """The real gate: `pipeline.sandbox.verify` (classeval mode: the tests run in the solution's
    namespace) with the build's sandbox configuration."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config

    def __call__(self, solution: str, tests: str, test_classes: list[str], *, item_id: str) -> GateOutcome:
        # Imported on use: building the stages (and their tests) does not need the sandbox.
        from pipeline.sandbox import GateReason, verify

        verdict = verify(solution, tests, test_classes, self.config, item_id=item_id)
        if verdict.reason is GateReason.SANDBOX_ERROR:
            raise GateUnavailable(f"candidate {item_id}: sandbox error: {verdict.detail}")
        return gate_outcome(verdict)


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
