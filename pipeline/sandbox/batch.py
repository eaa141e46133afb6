"""Several solutions against one test suite in one sandbox run: `execute_batch`.

One sandbox start (bubblewrap, rlimits, no network) and one interpreter start serve the whole
batch: the harness's `supervise_batch` forks one runner per solution from a warm process, each
with its own deadline, work folder and report signed with the run's key under its own run id.
Each report is then read exactly as `execute` reads a lone run's.

A solution gets a result only from its own authenticated report. Anything else (the batch run
failed or was killed, a report is missing, forged or unreadable: possibly another solution's
doing) gives None for it, never a verdict: the caller runs those alone.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence

from pydantic import ValidationError

from pipeline.config import SandboxConfig
from pipeline.sandbox.base import ExecResult, RunLimits, SandboxBackend, SandboxError
from pipeline.sandbox.expectations import static_expectations
from pipeline.sandbox.interpret import interpret
from pipeline.sandbox.report import ReportError, authenticate, parse
from pipeline.sandbox.results import SuiteRequest, SuiteResult
from pipeline.sandbox.suite import SPEC_FILE, _files, _spec

log = logging.getLogger(__name__)

_LAUNCH_BATCH = "import sys, cf_harness; sys.exit(cf_harness.supervise_batch(sys.argv[1]))"
# Host-side allowance per solution on top of its limit: the fork, the sweep and the clean-up.
_PER_RUN_SLACK_S = 2.0
_SHARED_FIELDS = ("tests", "test_classes", "mode", "module_name", "limit_s", "coverage", "branch", "hash_seed", "class_floors")


def can_batch(backend: SandboxBackend) -> bool:
    """Only where the harness can sweep every leftover process between two runners (a PID
    namespace or a uid of the run's own): otherwise one solution's escaped process could reach
    the next runner and change its verdict. Not in a container: a lone run gets a fresh one, and
    the harness clears only the work folder and bubblewrap's private /tmp between runners."""
    return bool(getattr(backend, "isolates_processes", False)) and backend.name != "docker"


def _check_shared(requests: Sequence[SuiteRequest]) -> None:
    first = requests[0]
    for request in requests[1:]:
        differs = [f for f in _SHARED_FIELDS if getattr(request, f) != getattr(first, f)]
        if differs:
            raise SandboxError(f"a batch shares everything but the solution; {', '.join(differs)} differ", request.item_id)


def _batch_files(requests: Sequence[SuiteRequest], spec: dict, key: bytes) -> dict[str, str | bytes]:
    files = _files(requests[0], spec, key)
    del files[spec["solution_file"]]  # the harness writes each runner's own before it starts
    for entry, request in zip(spec["batch"], requests):
        files[entry["solution_file"]] = request.solution
    return files


def _runner_view(run: ExecResult, wall_s: float) -> ExecResult:
    """The batch process's end as one runner's: it ended normally unless the whole run did not."""
    return ExecResult(exit_code=0, wall_s=wall_s, isolation=run.isolation)


def execute_batch(requests: Sequence[SuiteRequest], backend: SandboxBackend, config: SandboxConfig) -> list[SuiteResult | None]:
    """Results in the order of `requests`; None where the batch gave no trustworthy one."""
    if not requests:
        return []
    _check_shared(requests)
    first = requests[0]
    limit_s = first.limit_s or config.wall_limit_s
    seed = config.hash_seed if first.hash_seed is None else first.hash_seed
    key = secrets.token_bytes(32)
    spec = _spec(first, secrets.token_hex(8), limit_s, config, can_batch(backend), seed)
    spec["private_tmp"] = backend.isolation == "bwrap"
    spec["batch"] = [{"run_id": secrets.token_hex(8), "solution_file": f"cf_batch_{i}.py", "report_file": f"cf_report_{i}.json"}
                     for i in range(len(requests))]
    limits = RunLimits.from_config(config, wall_s=len(requests) * (limit_s + _PER_RUN_SLACK_S) + config.grace_s)
    try:
        run = backend.run(_batch_files(requests, spec, key), [backend.python, "-s", "-B", "-c", _LAUNCH_BATCH, SPEC_FILE],
                          limits, outputs=[e["report_file"] for e in spec["batch"]], env={"PYTHONHASHSEED": str(seed)})
    except SandboxError as exc:
        log.warning("batch of %d solutions failed as a whole: %s", len(requests), exc)
        return [None] * len(requests)
    expected = static_expectations(first.tests, first.test_classes)
    return [_read_one(request, entry, run, key, limit_s, seed, expected) for request, entry in zip(requests, spec["batch"])]


def _read_one(request: SuiteRequest, entry: dict, run: ExecResult, key: bytes, limit_s: float, seed: int,
              expected) -> SuiteResult | None:
    try:
        report = parse(authenticate(run.outputs.get(entry["report_file"]), key, entry["run_id"]))
    except (ReportError, ValidationError, ValueError) as exc:
        log.info("no trustworthy batch report for %s (%s); it runs alone", request.item_id or "<unnamed>", exc)
        return None
    return interpret(request, _runner_view(run, report.runner.wall_s), report, limit_s, seed, expected)

