"""From what the sandbox and the harness report say to one SuiteResult with one status.

Order of precedence: evidence of tampering beats everything (a forged pass must never hide behind
another outcome); then timeouts, resource limits, crashes, import errors; then the test outcomes.
"""

from __future__ import annotations

import errno
import re
import signal as signals
from collections import Counter
from dataclasses import dataclass, field

from classforge_bench.pipeline.sandbox.base import ExecResult
from classforge_bench.pipeline.sandbox.expectations import Expectation
from classforge_bench.pipeline.sandbox.report import (
    AbortedEvent,
    CollectEvent,
    CoverageEvent,
    DoneEvent,
    FixtureErrorEvent,
    HarnessReport,
    ImportEvent,
    TamperEvent,
    TestEvent,
)
from classforge_bench.pipeline.sandbox.results import (
    ClassResult,
    ClassStatus,
    CoverageResult,
    MethodResult,
    SuiteRequest,
    SuiteResult,
    SuiteStatus,
    TestOutcome,
)

_TAIL = 4000
_FIXTURE = re.compile(r"^(\w+) \((.*)\)$")
_SANDBOX_FAILURE = re.compile(r"^(bwrap|setpriv|prlimit|unshare|kill): ", re.MULTILINE)


@dataclass
class _Findings:
    """What the events say, sorted out once."""

    tests: dict[tuple[str, str], TestEvent] = field(default_factory=dict)
    collect: CollectEvent | None = None
    imports: dict[str, ImportEvent] = field(default_factory=dict)
    fixtures: list[FixtureErrorEvent] = field(default_factory=list)
    tamper: list[TamperEvent] = field(default_factory=list)
    coverage: CoverageEvent | None = None
    aborted: AbortedEvent | None = None
    done: bool = False
    evidence: list[str] = field(default_factory=list)


def _tail(text: str) -> str:
    return text[-_TAIL:]


def _base(request: SuiteRequest, run: ExecResult, limit_s: float, seed: int) -> dict:
    return {
        "item_id": request.item_id,
        "limit_s": limit_s,
        "wall_s": run.wall_s,
        "cpu_s": run.cpu_s,
        "peak_memory_mb": run.peak_memory_mb,
        "exit_code": run.exit_code,
        "signal": run.signal,
        "isolation": run.isolation,
        "hash_seed": seed,
        "stdout": _tail(run.stdout),
        "stderr": _tail(run.stderr),
    }


def without_report(request: SuiteRequest, run: ExecResult, problem: str, limit_s: float, seed: int) -> SuiteResult:
    """No trustworthy report: decide from the process's end alone."""
    base = _base(request, run, limit_s, seed)
    if run.timed_out and request.wall_ceiling_s is not None:
        detail = f"killed by the host after {run.wall_s:.1f}s of wall time, past the wall-clock safety net; no report"
        return SuiteResult(
            status=SuiteStatus.TIMEOUT, detail=detail, classes=_unrun(request), wall_ceiling=True, **base
        )
    if run.timed_out:
        status, detail = SuiteStatus.TIMEOUT, f"killed by the host {limit_s:.1f}s limit (plus grace); no report"
    elif problem != "missing":
        status, detail = SuiteStatus.TAMPERED, f"results report rejected ({problem})"
    elif _SANDBOX_FAILURE.search(run.stderr) or run.exit_code in (125, 126, 127):
        status, detail = SuiteStatus.SANDBOX_ERROR, "the sandbox failed to start: " + run.stderr.strip()[-500:]
    elif run.exit_code == 0:
        status, detail = SuiteStatus.TAMPERED, "the harness exited cleanly but its report is gone"
    elif run.signal is not None:
        status, detail = SuiteStatus.CRASHED, f"the harness was killed by {_signame(run.signal)}"
    else:
        status, detail = (
            SuiteStatus.SANDBOX_ERROR,
            f"the harness failed (exit {run.exit_code}): {run.stderr.strip()[-500:]}",
        )
    return SuiteResult(status=status, detail=detail, classes=_unrun(request), **base)


def _unrun(request: SuiteRequest) -> list[ClassResult]:
    return [ClassResult(name=n, status=ClassStatus.ZERO_TESTS, error="not run") for n in request.test_classes]


def _signame(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _sort_events(report: HarnessReport, expected: dict[str, Expectation]) -> _Findings:
    found = _Findings()
    canary_names = _canary_names(report)
    seen_done = False
    for event in report.events:
        if seen_done:
            found.evidence.append("events after the runner reported it was done")
            break
        if isinstance(event, TestEvent):
            key = (event.cls, event.name)
            if key in found.tests:
                found.evidence.append(f"duplicate outcome for {event.cls}.{event.name}")
            found.tests[key] = event
        elif isinstance(event, CollectEvent):
            if found.collect is not None:
                found.evidence.append("collection reported twice")
            found.collect = event
        elif isinstance(event, ImportEvent):
            found.imports[event.phase] = event
        elif isinstance(event, FixtureErrorEvent):
            found.fixtures.append(event)
        elif isinstance(event, TamperEvent):
            found.tamper.append(event)
        elif isinstance(event, CoverageEvent):
            found.coverage = event
        elif isinstance(event, AbortedEvent):
            found.aborted = event
        elif isinstance(event, DoneEvent):
            found.done = seen_done = True
    for event in found.tamper:
        found.evidence.append(f"test machinery changed ({event.where}): {', '.join(event.changed[:8])}")
    if found.collect is not None:
        _check_collection(report, found, found.collect, canary_names, expected)
    return found


def _canary_names(report: HarnessReport) -> set[str]:
    c = report.canaries
    return {c.pass_, c.fail, c.func_pass, c.func_fail}


def _check_collection(
    report: HarnessReport,
    found: _Findings,
    collect: CollectEvent,
    canary_names: set[str],
    expected: dict[str, Expectation],
) -> None:
    collected = {c.name: c for c in collect.classes}
    for name, expectation in expected.items():
        got = collected.get(name)
        missing = set(expectation.methods) - set(got.tests if got else [])
        if missing:
            found.evidence.append(f"{name}: tests in the source were not collected: {', '.join(sorted(missing)[:5])}")
    known = {(c.name, t) for c in collect.classes for t in c.tests}
    known |= {(report.canaries.pass_, "test_canary"), (report.canaries.fail, "test_canary")}
    known |= {
        (report.canaries.func_pass, report.canaries.func_pass),
        (report.canaries.func_fail, report.canaries.func_fail),
    }
    for key in found.tests:
        if key not in known:
            found.evidence.append(f"outcome reported for a test that was never collected: {key[0]}.{key[1]}")
    if set(collect.canaries) != canary_names:
        found.evidence.append("the runner did not schedule the canaries it was given")


def _check_canaries(report: HarnessReport, found: _Findings, completed: bool) -> None:
    c = report.canaries
    nonce_text = f"{c.nonce} != {c.nonce + 1}"
    rules = [
        ((c.pass_, "test_canary"), TestOutcome.PASSED, None),
        ((c.fail, "test_canary"), TestOutcome.FAILED, nonce_text),
        ((c.func_pass, c.func_pass), TestOutcome.PASSED, None),
        ((c.func_fail, c.func_fail), TestOutcome.FAILED, nonce_text),
    ]
    for key, outcome, must_say in rules:
        event = found.tests.get(key)
        if event is None:
            if completed:
                found.evidence.append(f"canary {key[0]} has no outcome")
            continue
        honest = event.o is outcome and (
            must_say is None or (event.exc == "AssertionError" and must_say in (event.msg or ""))
        )
        if not honest:
            found.evidence.append(f"canary {key[0]} reported {event.o.value} (must be {outcome.value})")


def _check_completion(report: HarnessReport, found: _Findings, completed: bool) -> None:
    runner = report.runner
    if found.done and not runner.timed_out and (runner.exit_code != 0 or runner.signal is not None):
        found.evidence.append(
            f"the runner reported completion but exited with {runner.exit_code if runner.signal is None else _signame(runner.signal)}"
        )
    if completed and found.collect is not None:
        targets = {_fixture_target(f.desc) for f in found.fixtures}
        for cls in found.collect.classes:
            if None in targets or cls.name.strip() in targets:
                continue  # a failed class or module fixture legitimately skips its tests
            for test in cls.tests:
                if (cls.name, test) not in found.tests:
                    found.evidence.append(f"collected test {cls.name}.{test} has no outcome")
                    return


def _supervisor_evidence(report: HarnessReport) -> list[str]:
    evidence = []
    if report.noise:
        evidence.append(f"{report.noise} unparseable line(s) on the results channel, e.g. {report.noise_samples[:1]}")
    if report.malformed:
        evidence.append(f"{report.malformed} malformed event(s) on the results channel")
    if report.overflow:
        evidence.append("the results channel overflowed")
    if report.escaped:
        evidence.append(f"{report.escaped} process(es) escaped the test runner's process group and outlived it")
    for role, intact in report.integrity.items():
        if not intact:
            evidence.append(f"the {role} file was changed or deleted during the run")
    return evidence


def _resource_problem(found: _Findings, report: HarnessReport, run: ExecResult, limit_s: float) -> str | None:
    sig = report.runner.signal
    cpu = run.cpu_s if run.cpu_s is not None else report.runner.cpu_s or 0.0
    if sig == signals.SIGXCPU or (sig == signals.SIGKILL and cpu >= limit_s):
        return "CPU time limit exceeded"
    if sig == signals.SIGXFSZ:
        return "file size limit exceeded"
    events = list(found.tests.values()) + list(found.imports.values()) + found.fixtures
    for event in events:
        if event.memory:
            return f"memory limit exceeded ({event.exc} in {getattr(event, 'cls', 'import')})"
        if event.errno == errno.EFBIG:
            return f"file size limit exceeded ({getattr(event, 'cls', 'import')})"
        if event.errno == errno.EAGAIN and event.exc == "BlockingIOError":
            return f"process limit reached ({getattr(event, 'cls', 'import')}: {event.msg})"
    return None


def _fixture_target(desc: str) -> str | None:
    """'setUpClass (module.Class)' -> 'Class'; module-level fixtures -> None (all classes)."""
    match = _FIXTURE.match(desc.strip())
    if not match:
        return None
    kind, target = match.groups()
    if kind.endswith("Module"):
        return None
    return target.rsplit(".", 1)[-1].strip()


def _method(event: TestEvent) -> MethodResult:
    return MethodResult(
        name=event.name,
        outcome=event.o,
        exc_type=event.exc,
        message=event.msg,
        traceback=event.tb,
        errno=event.errno,
        duration_s=event.t,
    )


def _classes(request: SuiteRequest, found: _Findings) -> list[ClassResult]:
    if found.collect is None:
        return _unrun(request)
    results = []
    for cls in found.collect.classes:
        note = f"listed as {cls.name!r}; matched after stripping whitespace" if cls.name != cls.name.strip() else None
        if cls.kind == "missing":
            results.append(
                ClassResult(
                    name=cls.name,
                    status=ClassStatus.MISSING,
                    error=f"no test class or function named {cls.name.strip()!r}",
                )
            )
            continue
        methods = [_method(found.tests[(cls.name, t)]) for t in cls.tests if (cls.name, t) in found.tests]
        errors = [f for f in found.fixtures if _fixture_target(f.desc) in (cls.name.strip(), None)]
        error = "; ".join(f"{f.desc}: {f.exc}: {f.msg}" for f in errors) or None
        ran = sum(1 for m in methods if m.outcome.ran)
        if errors and ran == 0:
            status = ClassStatus.FIXTURE_ERROR
        elif errors or any(not m.outcome.ok for m in methods):
            status = ClassStatus.FAILED
        elif ran == 0:
            status = ClassStatus.ZERO_TESTS
            error = "no test ran" + (" (none defined)" if not cls.tests else "")
        else:
            status = ClassStatus.PASSED
        results.append(ClassResult(name=cls.name, status=status, methods=methods, error=error, note=note))
    return results


def _failure_detail(classes: list[ClassResult]) -> str:
    counts: Counter[str] = Counter()
    first = None
    for cls in classes:
        for m in cls.methods:
            if not m.outcome.ok:
                counts[m.outcome.value] += 1
                first = first or f"{cls.name.strip()}.{m.name}: {m.exc_type}: {(m.message or '')[:200]}"
        if cls.status in (ClassStatus.MISSING, ClassStatus.ZERO_TESTS, ClassStatus.FIXTURE_ERROR):
            counts[cls.status.value] += 1
            first = first or f"{cls.name.strip()}: {cls.error}"
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + (f"; first: {first}" if first else "")


def interpret(
    request: SuiteRequest,
    run: ExecResult,
    report: HarnessReport,
    limit_s: float,
    seed: int,
    expected: dict[str, Expectation] | None = None,
) -> SuiteResult:
    """`expected`: the host's own static reading of the tests (see expectations.py)."""
    base = _base(request, run, limit_s, seed)
    found = _sort_events(report, expected or {})
    runner = report.runner
    completed = found.done and found.aborted is None and not runner.timed_out
    found.evidence = _supervisor_evidence(report) + found.evidence
    _check_canaries(report, found, completed and "tests" in found.imports and found.imports["tests"].ok)
    _check_completion(report, found, completed)
    classes = _classes(request, found)
    coverage = None
    if found.coverage is not None and request.coverage:
        cov = found.coverage
        coverage = CoverageResult(
            statements=cov.statements,
            missing=cov.missing,
            branches=cov.branches,
            missing_branches=cov.missing_branches,
            missing_lines=cov.missing_lines,
        )
    result = dict(base, classes=classes, coverage=coverage, tamper=found.evidence)
    # The harness measured its own process tree; bubblewrap's reaper hides it from the host.
    if runner.cpu_s is not None and result["cpu_s"] is None:
        result["cpu_s"] = runner.cpu_s
    if runner.max_rss_kb is not None and result["peak_memory_mb"] is None:
        result["peak_memory_mb"] = runner.max_rss_kb / 1024
    status, detail = _decide(found, report, run, classes, limit_s)
    return SuiteResult(status=status, detail=detail, wall_ceiling=runner.stopped_by == "wall_ceiling", **result)


def _decide(found: _Findings, report: HarnessReport, run: ExecResult, classes: list[ClassResult], limit_s: float):
    runner = report.runner
    if found.evidence:
        return SuiteStatus.TAMPERED, "; ".join(found.evidence[:5])
    if runner.timed_out:
        done = sum(1 for key in found.tests)
        if runner.stopped_by == "wall_ceiling":
            return SuiteStatus.TIMEOUT, (
                f"stopped by the wall-clock safety net after {runner.wall_s:.1f}s and {runner.cpu_s or 0.0:.2f}s "
                f"of CPU (its limit: {limit_s:.1f}s of CPU) after {done} test outcome(s)"
            )
        unit = "s of CPU" if runner.stopped_by == "cpu" else "s"
        if runner.timed_out_class:
            return SuiteStatus.TIMEOUT, (
                f"{runner.timed_out_class.strip()} ran past its share of the {limit_s:.1f}{unit} limit "
                f"after {done} test outcome(s)"
            )
        return SuiteStatus.TIMEOUT, f"exceeded the {limit_s:.1f}{unit} limit after {done} test outcome(s)"
    resource = _resource_problem(found, report, run, limit_s)
    if resource:
        return SuiteStatus.RESOURCE_EXCEEDED, resource
    if not found.done:
        how = f"exit status {runner.exit_code}" if runner.signal is None else _signame(runner.signal)
        return (
            SuiteStatus.CRASHED,
            f"the test runner ended ({how}) before finishing (os._exit, a signal, or a fatal error)",
        )
    for phase, what in (("solution", "the solution failed to import"), ("tests", "the tests failed to load")):
        event = found.imports.get(phase)
        if event is not None and not event.ok:
            return SuiteStatus.ERROR, f"{what}: {event.exc}: {event.msg}"
    if found.aborted is not None:
        return SuiteStatus.ERROR, f"the run was aborted by {found.aborted.exc}: {found.aborted.msg}"
    if sum(c.tests_run for c in classes) == 0:
        return SuiteStatus.ZERO_TESTS, "no test ran" + (
            f" ({_failure_detail(classes)})" if classes else " (no test classes listed)"
        )
    if any(not c.passed for c in classes):
        return SuiteStatus.FAILED, _failure_detail(classes)
    return SuiteStatus.PASSED, ""
