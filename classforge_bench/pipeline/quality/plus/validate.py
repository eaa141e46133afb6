"""Running the converted tests on the reference: a test counts only if it passes every run.

`plus.validation_runs` runs, each with another PYTHONHASHSEED, then the environment checks the
gate applies to every task (another cwd, time zones, the clock moved a year both ways, another
host and user, no network) on what is left. A test failing any run, or whose verdict moves under
a perturbation, is dropped with its reason; the rest of the suite stays.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.task import PlusDrop
from classforge_bench.pipeline.quality.environment_checks import run_checks
from classforge_bench.pipeline.quality.plus.generate import GeneratorUnavailable
from classforge_bench.pipeline.quality.plus.render import NamedTest, render
from classforge_bench.pipeline.sandbox.pool import run_suites
from classforge_bench.pipeline.sandbox.results import SuiteRequest, SuiteStatus


class Validated(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kept: list[NamedTest] = Field(default_factory=list)
    drops: list[PlusDrop] = Field(default_factory=list)


def _request(
    named: list[NamedTest], solution: str, import_statement: list[str], item_id: str, seed: int | None
) -> SuiteRequest:
    code, classes = render(named, import_statement, own_folders=True)
    return SuiteRequest(
        item_id=item_id,
        solution=solution,
        tests=code,
        test_classes=classes,
        mode="classeval",
        coverage=False,
        hash_seed=seed,
    )


def failing_on_reference(
    named: list[NamedTest],
    solution: str,
    import_statement: list[str],
    sandbox: SandboxConfig,
    runs: int,
    item_id: str = "",
) -> dict[str, str]:
    """test id -> what went wrong, over `runs` runs (in parallel) with hash seeds hash_seed, hash_seed + 1, ..."""
    seeds = [(sandbox.hash_seed + run) % 4294967296 for run in range(runs)]
    requests = [_request(named, solution, import_statement, item_id, seed) for seed in seeds]
    bad: dict[str, str] = {}
    for run, (seed, result) in enumerate(zip(seeds, run_suites(requests, sandbox))):
        if result.status is SuiteStatus.SANDBOX_ERROR:
            raise GeneratorUnavailable(f"the sandbox failed while validating plus tests: {result.detail}", item_id)
        outcomes = result.outcomes()
        for test in named:
            outcome = outcomes.get(test.test_id, f"not run ({result.status.value})")
            if outcome != "passed" and test.test_id not in bad:
                bad[test.test_id] = f"run {run + 1} (hash seed {seed}): {outcome}"
    return bad


def environment_dependent(
    named: list[NamedTest], solution: str, import_statement: list[str], sandbox: SandboxConfig, item_id: str = ""
) -> dict[str, str]:
    """test id -> the perturbation under which its verdict changed."""
    if not named or not sandbox.environment_checks.enabled:
        return {}
    report = run_checks(_request(named, solution, import_statement, item_id, None), sandbox)
    moved: dict[str, str] = {}
    for perturbation in report.flagged:
        for line in perturbation.changed:
            test_id = line.split(": ", 1)[0]
            moved.setdefault(test_id, f"{perturbation.name}: {line.split(': ', 1)[-1]}")
    return moved


def validate(
    named: list[NamedTest],
    solution: str,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str = "",
) -> Validated:
    if not named:
        return Validated()
    out = Validated()
    failing = failing_on_reference(named, solution, import_statement, sandbox, plus.validation_runs, item_id)
    passing = [t for t in named if t.test_id not in failing]
    out.drops += [
        PlusDrop(origin=t.test.origin, reason=reasons.PLUS_FAILS_REFERENCE, detail=failing[t.test_id])
        for t in named
        if t.test_id in failing
    ]
    moved = environment_dependent(passing, solution, import_statement, sandbox, item_id)
    out.drops += [
        PlusDrop(origin=t.test.origin, reason=reasons.PLUS_ENVIRONMENT, detail=moved[t.test_id])
        for t in passing
        if t.test_id in moved
    ]
    out.kept = [t for t in passing if t.test_id not in moved]
    return out
