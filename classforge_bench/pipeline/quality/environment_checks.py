"""Environment independence: does a task's verdict survive another environment?

The reference solution and its tests run once as usual (the baseline) and once per perturbation:
another PYTHONHASHSEED (and random seed), another working directory, other time zones, the clock
moved (libfaketime), another host name and user, and no network. A test whose verdict differs
from the baseline's makes the task environment-dependent. Each perturbation says how it was
applied; one that could not be applied is reported as skipped with the reason, never passed.

Reports are cached by content (the code, the tests, the check settings and the isolation), so a
re-run costs no sandbox run.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.config import EnvironmentChecksConfig, SandboxConfig
from classforge_bench.pipeline.core.store import write_text
from classforge_bench.pipeline.sandbox.base import Perturbation, SandboxBackend
from classforge_bench.pipeline.sandbox.gate import outcome_differences
from classforge_bench.pipeline.sandbox.registry import get_backend
from classforge_bench.pipeline.sandbox.results import SuiteMode, SuiteRequest, SuiteResult, SuiteStatus
from classforge_bench.pipeline.sandbox.suite import execute

log = logging.getLogger(__name__)

CHECKS_VERSION = 1  # bump when what a check does changes, so cached reports are not reused
# Isolations whose every run already has no network: the baseline is then the no-network run.
_OFFLINE_ISOLATIONS = frozenset({"bwrap", "unshare", "docker"})
# The aspect that must have been applied for a perturbation to count as run.
_ESSENTIAL = {
    "host-user": "hostname",
    "clock": "clock",
    "cwd": "cwd",
    "network": "network",
    "hash-seed": "env:PYTHONHASHSEED",
    "timezone": "env:TZ",
}


class PerturbationResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="e.g. 'clock+365d', 'tz:<+14>-14', 'host-user'")
    kind: str = Field(description="the configured perturbation it belongs to")
    applied: dict[str, str] = Field(default_factory=dict, description="aspect -> how it was applied")
    not_applied: dict[str, str] = Field(default_factory=dict, description="aspect -> why it was not")
    skipped: str | None = Field(None, description="why this perturbation did not run at all")
    error: str | None = Field(None, description="the perturbed run failed in the sandbox itself")
    changed: list[str] = Field(default_factory=list, description="tests whose verdict differs from the baseline's")

    @property
    def flagged(self) -> bool:
        return bool(self.changed)


class EnvironmentSummary(BaseModel):
    """What a task stores: which checks ran, which were skipped and why, and what changed."""

    model_config = ConfigDict(extra="forbid")
    applied: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict)
    changed: dict[str, list[str]] = Field(default_factory=dict)
    isolation: str = ""


class EnvironmentReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str = ""
    key: str = Field(description="content hash the report is cached under")
    isolation: str = ""
    baseline_status: str
    baseline_failures: list[str] = Field(default_factory=list, description="tests not passing even in the baseline")
    perturbations: list[PerturbationResult] = Field(default_factory=list)

    @property
    def flagged(self) -> list[PerturbationResult]:
        return [p for p in self.perturbations if p.flagged]

    @property
    def environment_dependent(self) -> bool:
        return bool(self.flagged)

    def summary(self) -> EnvironmentSummary:
        return EnvironmentSummary(
            applied=[p.name for p in self.perturbations if p.skipped is None and p.error is None],
            skipped={p.name: p.skipped for p in self.perturbations if p.skipped is not None},
            errors={p.name: p.error for p in self.perturbations if p.error is not None},
            changed={p.name: p.changed for p in self.flagged},
            isolation=self.isolation,
        )

    def drop_detail(self, limit: int = 3) -> str:
        """One line: each flagging perturbation with the first tests it changed."""
        parts = []
        for p in self.flagged:
            tests = ", ".join(c.split(":")[0] for c in p.changed[:limit])
            more = f" (+{len(p.changed) - limit} more)" if len(p.changed) > limit else ""
            parts.append(f"{p.name}: {tests}{more}")
        return "; ".join(parts)


@dataclass(frozen=True)
class _Planned:
    name: str
    kind: str
    perturbation: Perturbation


def planned_perturbations(checks: EnvironmentChecksConfig) -> list[_Planned]:
    """The runs the configuration asks for, in the configured order."""
    out: list[_Planned] = []
    for kind in checks.perturbations:
        if kind == "hash-seed":
            # PYTHONHASHSEED only: the random module keeps the baseline's seed, so a changed
            # verdict points at hash order (set iteration, hash()), not at random draws.
            out.append(_Planned("hash-seed", kind, Perturbation(env={"PYTHONHASHSEED": str(checks.hash_seed)})))
        elif kind == "cwd":
            out.append(_Planned("cwd", kind, Perturbation(cwd=checks.cwd)))
        elif kind == "timezone":
            out += [_Planned(f"tz:{tz}", kind, Perturbation(env={"TZ": tz})) for tz in checks.timezones]
        elif kind == "clock":
            out += [
                _Planned(
                    f"clock{d:+d}d", kind, Perturbation(clock_shift_days=d, faketime_library=checks.faketime_library)
                )
                for d in checks.clock_shifts_days
            ]
        elif kind == "host-user":
            out.append(
                _Planned("host-user", kind, Perturbation(hostname=checks.hostname, user=checks.user, uid=checks.uid))
            )
        elif kind == "network":
            out.append(_Planned("network", kind, Perturbation(no_network=True)))
    return out


def report_key(request: SuiteRequest, config: SandboxConfig, isolation: str) -> str:
    material = {
        "version": CHECKS_VERSION,
        "request": request.model_dump(mode="json", exclude={"item_id"}),
        "checks": config.environment_checks.model_dump(mode="json"),
        "hash_seed": config.hash_seed,
        "isolation": isolation,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


def _not_passing(result: SuiteResult) -> list[str]:
    bad = [k for k, v in result.outcomes().items() if v not in ("passed", "skipped", "expected_failure")]
    return bad or ([] if result.passed else [f"status {result.status.value}: {result.detail[:200]}"])


def _run_one(
    planned: _Planned, request: SuiteRequest, baseline: SuiteResult, run: Callable[..., SuiteResult]
) -> PerturbationResult:
    result = PerturbationResult(name=planned.name, kind=planned.kind)
    if planned.kind == "network" and baseline.isolation in _OFFLINE_ISOLATIONS:
        result.applied["network"] = f"none in every run: the baseline ran without network too ({baseline.isolation})"
        return result
    perturbed = run(request, planned.perturbation)
    result.applied.update(perturbed.perturbation_applied)
    result.not_applied.update(perturbed.perturbation_skipped)
    essential = _ESSENTIAL.get(planned.kind)
    if essential is not None and essential not in result.applied:
        result.skipped = result.not_applied.get(essential, f"the sandbox backend did not apply {essential}")
        return result
    if perturbed.status is SuiteStatus.SANDBOX_ERROR:
        result.error = perturbed.detail or "the sandbox failed"
        return result
    diffs = outcome_differences(baseline, perturbed)
    # Per-test lines name what changed; the status line only when no test line says it.
    result.changed = [d for d in diffs if not d.startswith("status ")] or diffs
    return result


def run_checks(
    request: SuiteRequest,
    config: SandboxConfig,
    backend: SandboxBackend | None = None,
    cache_dir: Path | None = None,
) -> EnvironmentReport:
    """Baseline plus every configured perturbation of `request`; cached under `cache_dir` by content."""
    backend = backend or get_backend(config)
    request = request.model_copy(
        update={
            "coverage": False,
            "hash_seed": request.hash_seed if request.hash_seed is not None else config.hash_seed,
        }
    )
    key = report_key(request, config, str(getattr(backend, "isolation", backend.name)))
    cached = _load(cache_dir, key)
    if cached is not None:
        return cached.model_copy(update={"item_id": request.item_id})

    def run(req: SuiteRequest, perturbation: Perturbation | None) -> SuiteResult:
        return execute(req, backend, config, perturbation)

    baseline = run(request, None)
    report = EnvironmentReport(
        item_id=request.item_id,
        key=key,
        isolation=baseline.isolation,
        baseline_status=baseline.status.value,
        baseline_failures=_not_passing(baseline),
    )
    if baseline.status is not SuiteStatus.SANDBOX_ERROR:
        report.perturbations = [
            _run_one(p, request, baseline, run) for p in planned_perturbations(config.environment_checks)
        ]
        # A sandbox failure says nothing about the task: such a report is not kept for re-use.
        if not any(p.error for p in report.perturbations):
            _store(cache_dir, report)
    return report


def check_environment(
    solution: str,
    tests: str,
    test_classes: Sequence[str],
    config: SandboxConfig,
    *,
    mode: SuiteMode = "classeval",
    item_id: str = "",
    limit_s: float | None = None,
    backend: SandboxBackend | None = None,
    cache_dir: Path | None = None,
) -> EnvironmentReport:
    request = SuiteRequest(
        item_id=item_id, solution=solution, tests=tests, test_classes=list(test_classes), mode=mode, limit_s=limit_s
    )
    return run_checks(request, config, backend, cache_dir)


def _path(cache_dir: Path, key: str) -> Path:
    return cache_dir / key[:2] / f"{key}.json"


def _load(cache_dir: Path | None, key: str) -> EnvironmentReport | None:
    if cache_dir is None or not _path(cache_dir, key).is_file():
        return None
    try:
        return EnvironmentReport.model_validate_json(_path(cache_dir, key).read_text(encoding="utf-8"))
    except (ValidationError, ValueError, OSError) as exc:
        log.warning("environment checks: ignoring unreadable cached report %s: %s", key, exc)
        return None


def _store(cache_dir: Path | None, report: EnvironmentReport) -> None:
    if cache_dir is not None:
        write_text(_path(cache_dir, report.key), report.model_dump_json(indent=1))
