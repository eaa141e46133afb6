"""Several solutions in one sandbox run: `execute_batch` (and `run_batches`, many batches in parallel).

One sandbox start (bubblewrap, rlimits, no network) and one interpreter start serve the whole
batch: the harness's `supervise_batch` forks one runner per solution from a warm process, each
with its own deadline, CPU rlimit, work folder and report signed with the run's key under its own
run id. Each report is then read exactly as `execute` reads a lone run's. The solutions may be of
different tasks (the evaluator's samples): each brings its own tests, test classes, limit and
class shares; what the sandbox itself is set up with (mode, module name, coverage, seed) is shared.

A solution gets a result only from its own authenticated report. Anything else (the batch run
failed or was killed, a report is missing, forged or unreadable: possibly another solution's
doing) gives None for it, never a verdict: the caller runs those alone.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Sequence

from pydantic import ValidationError

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.pool import map_concurrently
from classforge_bench.pipeline.sandbox.base import ExecResult, RunLimits, SandboxBackend, SandboxError
from classforge_bench.pipeline.sandbox.expectations import machinery_imports, static_expectations
from classforge_bench.pipeline.sandbox.interpret import interpret
from classforge_bench.pipeline.sandbox.report import ReportError, authenticate, parse
from classforge_bench.pipeline.sandbox.results import SuiteRequest, SuiteResult
from classforge_bench.pipeline.sandbox.suite import SPEC_FILE, _files, _spec, clock_fields

log = logging.getLogger(__name__)

_LAUNCH_BATCH = "import sys, cf_harness; sys.exit(cf_harness.supervise_batch(sys.argv[1]))"
# Host-side allowance per solution on top of its limit: the fork, the sweep and the clean-up.
_PER_RUN_SLACK_S = 2.0
_ANY_MARK = re.compile("\x1ecf:[0-9a-f]{32}\x1e")
_MARKS_FILE = ".cf_marks"
_SHARED_FIELDS = ("mode", "module_name", "coverage", "branch", "hash_seed")


def can_batch(backend: SandboxBackend) -> bool:
    """Only where the harness can sweep every leftover process between two runners (a PID
    namespace or a uid of the run's own): otherwise one solution's escaped process could reach
    the next runner and change its verdict. And only in bubblewrap: the harness gives each runner
    a fresh work folder and clears what it left in bubblewrap's private /tmp and /dev/shm, but the
    host's /tmp (under unshare, with a uid of its own) it cannot clear; nor a container, which a
    lone run gets fresh."""
    return bool(getattr(backend, "isolates_processes", False)) and backend.isolation == "bwrap"


def _check_shared(requests: Sequence[SuiteRequest]) -> None:
    first = requests[0]
    for request in requests[1:]:
        differs = [f for f in _SHARED_FIELDS if getattr(request, f) != getattr(first, f)]
        if differs:
            raise SandboxError(
                f"a batch shares everything but the solution; {', '.join(differs)} differ", request.item_id
            )


def _batch_files(requests: Sequence[SuiteRequest], spec: dict, key: bytes, marks: list[str]) -> dict[str, str | bytes]:
    files = _files(requests[0], spec, key)
    del files[spec["solution_file"]]  # the harness writes each runner's own before it starts
    files[_MARKS_FILE] = "\n".join(marks)
    for entry, request in zip(spec["batch"], requests):
        files[entry["solution_file"]] = request.solution
        if entry.get("tests_source"):
            files[entry["tests_source"]] = request.tests
    return files


def _entry(i: int, request: SuiteRequest, first: SuiteRequest, config: SandboxConfig) -> dict:
    """One runner's part of the spec: its run id and files, and what its task sets apart from the first's."""
    limit_s = request.limit_s or config.wall_limit_s
    entry = {
        "run_id": secrets.token_hex(8),
        "solution_file": f"cf_batch_{i}.py",
        "report_file": f"cf_report_{i}.json",
        "cpu_limit_s": RunLimits.from_config(config, wall_s=limit_s + config.grace_s).cpu_limit_s,
    }
    clock = clock_fields(request, limit_s)
    if clock:
        entry["cpu_limit_s"] = clock.pop("cpu_limit_s")
    if request.tests != first.tests:
        entry["tests_source"] = f"cf_tests_{i}.py"
    entry["own"] = {
        "test_classes": list(request.test_classes),
        "timeout_s": limit_s,
        "share": request.class_floors is not None,
        "class_floors": request.class_floors or {},
        "preimport": machinery_imports(request.tests),
    } | (clock or {"cpu_clock": False})  # its own clock, whatever the first entry's
    entry["host_wall_s"] = request.host_wall_s(limit_s)
    return entry


def _own_part(text: str, mark: str) -> str:
    """A runner's part of the batch's stream: from its mark to the next mark (the marks are random,
    read and deleted by the supervisor before any runner starts, so a runner knows none of the others'
    to forge); empty when the mark was cut off with the stream's cap."""
    start = text.find(mark)
    if start < 0:
        return ""
    rest = text[start + len(mark) :]
    return rest[: m.start()] if (m := _ANY_MARK.search(rest)) else rest


def _runner_view(run: ExecResult, wall_s: float, mark: str) -> ExecResult:
    """The batch process's end as one runner's: it ended normally unless the whole run did not;
    its stdout and stderr are the runner's own, as a lone run captures them."""
    return ExecResult(
        exit_code=0,
        wall_s=wall_s,
        isolation=run.isolation,
        stdout=_own_part(run.stdout, mark),
        stderr=_own_part(run.stderr, mark),
    )


def execute_batch(
    requests: Sequence[SuiteRequest], backend: SandboxBackend, config: SandboxConfig
) -> list[SuiteResult | None]:
    """Results in the order of `requests`; None where the batch gave no trustworthy one."""
    if not requests:
        return []
    _check_shared(requests)
    first = requests[0]
    seed = config.hash_seed if first.hash_seed is None else first.hash_seed
    key = secrets.token_bytes(32)
    spec = _spec(
        first,
        secrets.token_hex(8),
        first.limit_s or config.wall_limit_s,
        config,
        bool(getattr(backend, "isolates_processes", False)),
        seed,
    )  # may sweep, as a lone run
    spec["private_tmp"] = backend.isolation == "bwrap"
    spec["batch"] = [_entry(i, request, first, config) for i, request in enumerate(requests)]
    spec["marks_file"] = _MARKS_FILE
    spec["warm_imports"] = sorted({name for request in requests for name in request.warm_imports})
    marks = [secrets.token_hex(16) for _ in requests]  # in their own file: runners can read the spec
    limits = RunLimits.from_config(
        config, wall_s=sum(e["host_wall_s"] + _PER_RUN_SLACK_S for e in spec["batch"]) + config.grace_s
    )
    try:
        run = backend.run(
            _batch_files(requests, spec, key, marks),
            [backend.python, "-s", "-B", "-c", _LAUNCH_BATCH, SPEC_FILE],
            limits,
            outputs=[e["report_file"] for e in spec["batch"]],
            env={"PYTHONHASHSEED": str(seed)},
        )
    except SandboxError as exc:
        log.warning("batch of %d solutions failed as a whole: %s", len(requests), exc)
        return [None] * len(requests)
    return [
        _read_one(request, entry, run, key, seed, static_expectations(request.tests, request.test_classes), mark)
        for request, entry, mark in zip(requests, spec["batch"], marks)
    ]


def _read_one(
    request: SuiteRequest, entry: dict, run: ExecResult, key: bytes, seed: int, expected, mark: str
) -> SuiteResult | None:
    try:
        report = parse(authenticate(run.outputs.get(entry["report_file"]), key, entry["run_id"]))
    except (ReportError, ValidationError, ValueError) as exc:
        log.info("no trustworthy batch report for %s (%s); it runs alone", request.item_id or "<unnamed>", exc)
        return None
    view = _runner_view(run, report.runner.wall_s, f"\x1ecf:{mark}\x1e")
    return interpret(request, view, report, entry["own"]["timeout_s"], seed, expected)


def batches_of(count: int, size: int, at_least: int) -> list[list[int]]:
    """Indexes 0..count-1 dealt round-robin into batches of at most `size`, and at least
    `at_least` batches (the workers) while there are items: every worker gets a share."""
    n = max(min(at_least, count), -(-count // size))
    return [list(range(i, count, n)) for i in range(n)]


def batches_by_cost(costs: Sequence[float], size: int, workers: int) -> list[list[int]]:
    """Costliest first, packed: a batch takes the next costliest items until it holds `size` or its
    predicted cost would pass an eighth of the total per worker, so one slow run does not hold many
    others behind it in its batch, and the workers, taking batches in turn, end close together."""
    share = sum(costs) / max(1, 8 * workers)
    groups: list[list[int]] = []
    cost = 0.0
    for i in sorted(range(len(costs)), key=lambda i: -costs[i]):
        if not groups or len(groups[-1]) >= size or (cost + costs[i] > share and groups[-1]):
            groups.append([])
            cost = 0.0
        groups[-1].append(i)
        cost += costs[i]
    return groups


def run_batches(
    requests: Sequence[SuiteRequest],
    backend: SandboxBackend,
    config: SandboxConfig,
    *,
    workers: int,
    size: int,
    on_done: Callable[[int, SuiteResult], None] | None = None,
    costs: Sequence[float] | None = None,
) -> tuple[list[SuiteResult | None], int]:
    """Every request in a batch, `workers` batches at a time: (results in the order of `requests`,
    None where a batch gave no trustworthy result, for the caller to run alone; the batches run).
    `costs`: each request's predicted run time, to pack the batches by (else dealt round-robin).
    `on_done(i, result)` sees each trustworthy result as its batch ends."""
    groups = batches_by_cost(costs, size, workers) if costs is not None else batches_of(len(requests), size, workers)

    def ended(g: int, outcome) -> None:
        # outside the batch's own call, so what `on_done` raises (an interrupt) stops the run
        for i, result in zip(groups[g], outcome.value if outcome.error is None else []):
            if result is not None and on_done is not None:
                on_done(i, result)

    outcomes = map_concurrently(
        lambda group: execute_batch([requests[i] for i in group], backend, config),
        groups,
        workers,
        on_done=ended,
        thread_name="batches",
    )
    found: list[SuiteResult | None] = [None] * len(requests)
    for group, outcome in zip(groups, outcomes):
        values = outcome.value if outcome.error is None and outcome.value is not None else [None] * len(group)
        for i, result in zip(group, values):
            found[i] = result
    return found, len(groups)
