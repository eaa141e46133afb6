"""Unit tests of the sandbox's pure parts: environment, paths, limits, registry, report
authentication and interpretation, the pool, and the harness's static expectations."""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.pool import map_concurrently
from classforge_bench.pipeline.sandbox import (
    ClassStatus,
    GateReason,
    GateVerdict,
    SandboxError,
    SuiteRequest,
    SuiteStatus,
    backend_names,
    get_backend,
    harness_script,
    pool_size,
    register_backend,
    run_suites,
    scaled_limit,
)
from classforge_bench.pipeline.sandbox.base import ExecResult, RunLimits, check_relative_path
from classforge_bench.pipeline.sandbox.env import build_env
from classforge_bench.pipeline.sandbox.expectations import Expectation, machinery_imports, static_expectations
from classforge_bench.pipeline.sandbox.interpret import interpret, without_report
from classforge_bench.pipeline.sandbox.report import ReportError, authenticate, parse, sign
from classforge_bench.pipeline.sandbox.rlimits import UidPool, nproc_allowance, rlimit_prefix

# ---------------------------------------------------------------- environment, paths, limits


def test_env_is_built_from_defaults_and_allowed_names():
    env = build_env("/work", "/venv/bin", configured={"EXTRA_SETTING": "1"}, per_run={"PYTHONHASHSEED": "3"})
    assert env["HOME"] == "/work" and env["PATH"].startswith("/venv/bin:")
    assert env["EXTRA_SETTING"] == "1" and env["PYTHONHASHSEED"] == "3" and env["OMP_NUM_THREADS"] == "1"


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD"])
def test_credential_like_names_are_refused_even_from_config(name):
    with pytest.raises(SandboxError, match="credential"):
        build_env("/w", configured={name: "x"})


def test_unknown_per_run_names_are_refused():
    with pytest.raises(SandboxError, match="allow-list"):
        build_env("/w", per_run={"LD_PRELOAD": "/evil.so"})


@pytest.mark.parametrize("name", ["a.py", "dir/b.txt", "__pycache__/x.cpython-311.pyc"])
def test_relative_paths_inside_are_fine(name):
    assert str(check_relative_path(name)) == name


@pytest.mark.parametrize("name", ["", "/abs", "../up", "a/../../b", "a//b", "./a"])
def test_paths_leaving_the_work_dir_are_refused(name):
    with pytest.raises(SandboxError):
        check_relative_path(name)


def test_scaled_limit():
    config = SandboxConfig(scale_floor_s=10, scale_factor=5, scale_cap_s=60)
    assert scaled_limit(0.07, config) == 10
    assert scaled_limit(6.0, config) == 30
    assert scaled_limit(40.0, config) == 60  # the cap: a runaway answer of the slowest task stops there
    assert scaled_limit(6.3, SandboxConfig()) == 15  # the default cap (CPU s): ClassEval_35's reference x 2.4
    assert scaled_limit(40.0, SandboxConfig(scale_floor_s=10, scale_factor=5, scale_cap_s=5)) == 10
    with pytest.raises(ValueError):
        scaled_limit(-1, config)


def test_rlimit_prefix_sets_every_limit():
    limits = RunLimits(wall_s=9.5, memory_mb=256, max_processes=10, max_file_mb=8)
    prefix = " ".join(rlimit_prefix(limits, nproc=14))
    for part in ("10", "11", str(256 * 1024 * 1024), str(8 * 1024 * 1024), "14"):
        assert part in prefix
    assert nproc_allowance(limits, dedicated_uid=True) == 14
    assert nproc_allowance(limits, dedicated_uid=False) > 14  # the user's own processes count too


def test_uid_pool_hands_out_distinct_uids():
    pool = UidPool(base=2_000_000, span=50)
    uids = [pool.acquire() for _ in range(50)]
    assert len(set(uids)) == 50 and all(2_000_000 <= u < 2_000_050 for u in uids)
    pool.release(uids[0])
    assert pool.acquire() == uids[0]


# ---------------------------------------------------------------- registry and pool


class _NullBackend:
    name = "null"
    python = "python"
    isolation = "none"

    def __init__(self, config):
        self.config = config

    def run(self, files, command, limits, outputs=(), env=None):
        return ExecResult(exit_code=0, wall_s=0.0, isolation="none")


def test_registry_builds_once_per_config_and_rejects_unknown_names():
    register_backend("null", _NullBackend)
    config = SandboxConfig(backend="local")
    first = get_backend(config, name="null")
    assert get_backend(config, name="null") is first
    assert get_backend(SandboxConfig(wall_limit_s=5), name="null") is not first
    assert {"local", "docker", "null"} <= set(backend_names())
    with pytest.raises(SandboxError, match="unknown sandbox backend"):
        get_backend(config, name="nope")


def test_worker_pool_runs_in_parallel_and_keeps_order():
    active, peak, lock = [0], [0], threading.Lock()
    first_three = threading.Barrier(3)  # all three workers must be in at once: an order, not a race

    def work(x):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        if x < 3:
            first_three.wait(timeout=600)
        time.sleep(0.01 * (3 - x % 3))  # later items finish out of order
        with lock:
            active[0] -= 1
        return x * x

    seen = []
    outcomes = map_concurrently(work, range(6), 3, on_done=lambda i, o: seen.append(i))
    assert [o.unwrap() for o in outcomes] == [0, 1, 4, 9, 16, 25]
    assert peak[0] == 3 and sorted(seen) == list(range(6))
    assert pool_size(SandboxConfig(workers=5)) == 5 and pool_size(SandboxConfig(), workers=2) == 2


class _BrokenForOneBackend(_NullBackend):
    """A backend with a bug that shows on one request only (not a SandboxError: a crash below `execute`)."""

    def run(self, files, command, limits, outputs=(), env=None):
        if "boom" in files.get("solution.py", "") or any("boom" in str(v) for v in files.values()):
            raise RuntimeError("backend bug")
        return super().run(files, command, limits, outputs, env)


def test_one_failing_run_does_not_sink_the_batch():
    """Both pools once behaved differently: the sandbox's failed a whole batch on one error."""
    requests = [
        SuiteRequest(
            item_id=f"r{i}",
            solution=f"x = {i}  # {'boom' if i == 1 else ''}\n",
            tests="import unittest\n",
            test_classes=["T"],
        )
        for i in range(3)
    ]
    done = []
    results = run_suites(
        requests,
        SandboxConfig(),
        backend=_BrokenForOneBackend(SandboxConfig()),
        workers=2,
        on_done=lambda i, r: done.append((i, r.status)),
    )
    assert [r.item_id for r in results] == ["r0", "r1", "r2"]
    assert results[1].status is SuiteStatus.SANDBOX_ERROR and "RuntimeError: backend bug" in results[1].detail
    assert results[0].status is not SuiteStatus.SANDBOX_ERROR and results[2].status is not SuiteStatus.SANDBOX_ERROR
    assert sorted(i for i, _ in done) == [0, 1, 2]


# ---------------------------------------------------------------- report authentication

KEY = b"k" * 32


def _signed(body: dict, key: bytes = KEY) -> bytes:
    text = json.dumps(body)
    return json.dumps({"body": text, "mac": sign(key, text)}).encode()


def test_harness_hmac_matches_the_standard_library():
    for key in (b"k" * 32, b"x" * 100, b""):
        assert harness_script._hmac_sha256(key, b"body text") == sign(key, "body text")


def test_authentic_report_is_accepted():
    assert authenticate(_signed({"protocol": 1, "run_id": "r1", "x": 1}), KEY, "r1")["x"] == 1


@pytest.mark.parametrize(
    "raw, reason",
    [
        (None, "missing"),
        (b"not json", "malformed"),
        (b'{"body": "{}"}', "malformed"),
        (_signed({"protocol": 1, "run_id": "r1"}, key=b"x" * 32), "forged"),
        (json.dumps({"body": '{"protocol": 1, "run_id": "r1", "ok": true}', "mac": "0" * 64}).encode(), "forged"),
        (_signed({"protocol": 1, "run_id": "other"}), "foreign"),
        (_signed({"protocol": 2, "run_id": "r1"}), "foreign"),
    ],
)
def test_unauthentic_reports_are_rejected(raw, reason):
    with pytest.raises(ReportError) as info:
        authenticate(raw, KEY, "r1")
    assert info.value.reason == reason


# ---------------------------------------------------------------- interpretation

CANARIES = {"pass": "CP", "fail": "CF", "func_pass": "test_fp", "func_fail": "test_ff", "nonce": 5}
REQUEST = SuiteRequest(solution="", tests="", test_classes=["A", "B"])
RUN = ExecResult(exit_code=0, wall_s=0.5, cpu_s=0.4, peak_memory_mb=30, isolation="bwrap")


def _canary_events():
    return [
        {"e": "test", "cls": "CP", "name": "test_canary", "o": "passed"},
        {"e": "test", "cls": "CF", "name": "test_canary", "o": "failed", "exc": "AssertionError", "msg": "5 != 6"},
        {"e": "test", "cls": "test_fp", "name": "test_fp", "o": "passed"},
        {"e": "test", "cls": "test_ff", "name": "test_ff", "o": "failed", "exc": "AssertionError", "msg": "5 != 6"},
    ]


def _events(outcomes=("passed", "passed"), extra=(), done=True):
    events = [
        {"e": "start"},
        {"e": "import", "ok": True, "phase": "solution"},
        {"e": "import", "ok": True, "phase": "tests"},
        {
            "e": "collect",
            "classes": [
                {"name": "A", "kind": "unittest", "tests": ["test_a"]},
                {"name": "B", "kind": "unittest", "tests": ["test_b"]},
            ],
            "canaries": ["CP", "CF", "test_fp", "test_ff"],
        },
        {"e": "test", "cls": "A", "name": "test_a", "o": outcomes[0]},
        {"e": "test", "cls": "B", "name": "test_b", "o": outcomes[1]},
        *_canary_events(),
        *extra,
        {"e": "coverage", "statements": 10, "missing": 1, "branches": 4, "missing_branches": 1, "missing_lines": [7]},
    ]
    return events + ([{"e": "done"}] if done else [])


def _report(events=None, **facts):
    body = {
        "protocol": 1,
        "run_id": "r",
        "events": _events() if events is None else events,
        "noise": 0,
        "noise_samples": [],
        "overflow": False,
        "runner": {
            "timed_out": False,
            "wall_s": 0.4,
            "exit_code": 0,
            "signal": None,
            "cpu_s": 0.3,
            "max_rss_kb": 20000,
        },
        "canaries": CANARIES,
        "integrity": {"solution": True, "tests": True},
        "undumpable": True,
        "escaped": 0,
    }
    body.update(facts)
    return parse(body)


EXPECTED = {"A": Expectation(kind="class", methods=["test_a"], open=False)}


def _interpret(report, run=RUN, expected=EXPECTED):
    return interpret(REQUEST, run, report, limit_s=10, seed=0, expected=expected)


def test_honest_pass():
    result = _interpret(_report())
    assert result.status is SuiteStatus.PASSED and result.tamper == []
    assert result.line_coverage == 90.0 and result.branch_coverage == 75.0 and result.tests_run == 2


def test_honest_failure_names_the_test():
    result = _interpret(_report(_events(outcomes=("passed", "failed"))))
    assert result.status is SuiteStatus.FAILED and "1 failed" in result.detail
    assert [c.status for c in result.classes] == [ClassStatus.PASSED, ClassStatus.FAILED]


@pytest.mark.parametrize(
    "events, facts, evidence",
    [
        (_events(extra=[{"e": "test", "cls": "A", "name": "test_a", "o": "passed"}]), {}, "duplicate outcome"),
        (_events(extra=[{"e": "test", "cls": "A", "name": "test_new", "o": "passed"}]), {}, "never collected"),
        ([e if e.get("cls") != "CF" else {**e, "o": "passed"} for e in _events()], {}, "canary CF"),
        ([e for e in _events() if e.get("cls") != "CF"], {}, "canary CF has no outcome"),
        ([e for e in _events() if e.get("name") != "test_b"], {}, "has no outcome"),
        (
            _events() + [{"e": "test", "cls": "B", "name": "test_b", "o": "passed"}],
            {},
            "after the runner reported it was done",
        ),
        (
            [{**e, "classes": e["classes"][1:]} if e["e"] == "collect" else e for e in _events()],
            {},
            "were not collected",
        ),
        (
            _events(extra=[{"e": "tamper", "where": "after_import", "changed": ["unittest.case.TestCase.run"]}]),
            {},
            "TestCase.run",
        ),
        (_events(), {"noise": 2, "noise_samples": ["OK"]}, "unparseable"),
        (_events(extra=[{"e": "test", "cls": 3}]), {}, "malformed"),
        (_events(), {"integrity": {"solution": True, "tests": False}}, "tests file was changed"),
        (_events(), {"escaped": 1}, "escaped"),
        (_events(), {"runner": {"timed_out": False, "wall_s": 1, "exit_code": 3, "signal": None}}, "exited with 3"),
    ],
)
def test_evidence_of_tampering_beats_everything(events, facts, evidence):
    result = _interpret(_report(events, **facts))
    assert result.status is SuiteStatus.TAMPERED
    assert evidence in result.detail


def test_timeout_keeps_partial_outcomes_without_false_alarm():
    events = _events(done=False)[:5]  # stopped inside class B
    report = _report(events, runner={"timed_out": True, "wall_s": 10, "exit_code": None, "signal": 9})
    result = _interpret(report)
    assert result.status is SuiteStatus.TIMEOUT and result.tamper == []
    assert result.classes[0].status is ClassStatus.PASSED and result.classes[1].status is ClassStatus.ZERO_TESTS


@pytest.mark.parametrize(
    "change, status, words",
    [
        ({"o": "errored", "exc": "MemoryError", "memory": True}, SuiteStatus.RESOURCE_EXCEEDED, "memory"),
        ({"o": "errored", "exc": "OSError", "errno": 27}, SuiteStatus.RESOURCE_EXCEEDED, "file size"),
        ({"o": "errored", "exc": "BlockingIOError", "errno": 11}, SuiteStatus.RESOURCE_EXCEEDED, "process limit"),
        ({"o": "errored", "exc": "ValueError"}, SuiteStatus.FAILED, "1 errored"),
    ],
)
def test_resource_limits_are_named(change, status, words):
    events = [{**e, **change} if e.get("name") == "test_b" else e for e in _events()]
    result = _interpret(_report(events))
    assert result.status is status and words in result.detail


def test_crash_and_import_errors():
    crashed = _interpret(
        _report(_events(done=False), runner={"timed_out": False, "wall_s": 1, "exit_code": 0, "signal": None})
    )
    assert crashed.status is SuiteStatus.CRASHED and "before finishing" in crashed.detail
    xcpu = _interpret(
        _report(_events(done=False), runner={"timed_out": False, "wall_s": 1, "exit_code": None, "signal": 24})
    )
    assert xcpu.status is SuiteStatus.RESOURCE_EXCEEDED
    events = [
        {"e": "start"},
        {"e": "import", "ok": False, "phase": "solution", "exc": "SyntaxError", "msg": "bad"},
        {"e": "done"},
    ]
    error = _interpret(_report(events))
    assert error.status is SuiteStatus.ERROR and "SyntaxError: bad" in error.detail
    assert [c.status for c in error.classes] == [ClassStatus.ZERO_TESTS, ClassStatus.ZERO_TESTS]


def test_fixture_errors_excuse_unrun_tests():
    events = [e for e in _events() if e.get("name") != "test_b"]
    events.insert(5, {"e": "fixture_error", "desc": "setUpClass (solution.B)", "exc": "RuntimeError", "msg": "db"})
    result = _interpret(_report(events))
    assert result.status is SuiteStatus.FAILED and result.tamper == []
    assert result.classes[1].status is ClassStatus.FIXTURE_ERROR and "db" in result.classes[1].error


def test_zero_tests_and_missing_classes():
    events = [
        {
            **e,
            "classes": [{"name": "A", "kind": "unittest", "tests": []}, {"name": "B", "kind": "missing", "tests": []}],
        }
        if e["e"] == "collect"
        else e
        for e in _events()
        if e.get("cls") not in ("A", "B")
    ]
    result = _interpret(_report(events), expected={})
    assert result.status is SuiteStatus.ZERO_TESTS
    assert [c.status for c in result.classes] == [ClassStatus.ZERO_TESTS, ClassStatus.MISSING]


@pytest.mark.parametrize(
    "run, problem, status",
    [
        (
            ExecResult(exit_code=None, signal=9, timed_out=True, wall_s=12, isolation="bwrap"),
            "missing",
            SuiteStatus.TIMEOUT,
        ),
        (ExecResult(exit_code=0, wall_s=1, isolation="bwrap"), "forged", SuiteStatus.TAMPERED),
        (ExecResult(exit_code=0, wall_s=1, isolation="bwrap"), "missing", SuiteStatus.TAMPERED),
        (ExecResult(exit_code=None, signal=9, wall_s=1, isolation="bwrap"), "missing", SuiteStatus.CRASHED),
        (
            ExecResult(exit_code=1, wall_s=0, stderr="bwrap: Can't mount proc", isolation="bwrap"),
            "missing",
            SuiteStatus.SANDBOX_ERROR,
        ),
    ],
)
def test_no_trustworthy_report(run, problem, status):
    result = without_report(REQUEST, run, problem, limit_s=10, seed=0)
    assert result.status is status and not result.passed


def test_gate_verdict_converts_to_a_funnel_verdict():
    kept = GateVerdict(passed=True, min_line_coverage=90, limit_s=60).to_verdict()
    dropped = GateVerdict(
        passed=False, reason=GateReason.FLAKY, detail="x", min_line_coverage=90, limit_s=60
    ).to_verdict()
    assert kept.keep and not dropped.keep and dropped.reason == "flaky" and dropped.detail == "x"


# ---------------------------------------------------------------- harness internals (pure parts)


def test_static_expectations_follow_local_bases():
    source = """
import unittest
class Base(unittest.TestCase):
    def test_shared(self): pass
class Child(Base):
    def test_own(self): pass
    def helper(self): pass
class Mixed(SomeImportedBase):
    def test_x(self): pass
def test_function(): pass
"""
    expected = static_expectations(source, ["Child", " Mixed", "test_function", "Absent"])
    assert expected["Child"] == Expectation(kind="class", methods=["test_own", "test_shared"], open=False)
    assert expected[" Mixed"].open is True
    assert expected["test_function"].kind == "function"
    assert "Absent" not in expected
    assert static_expectations("def broken(:", ["A"]) == {}


def test_machinery_imports_are_found():
    source = "import unittest\nfrom unittest.mock import patch\nimport pytest\nimport json\n"
    assert machinery_imports(source) == ["pytest", "unittest.mock"]


def test_channel_counts_noise_and_keeps_events():
    channel = harness_script._Channel()
    channel.feed(b'{"e": "start"}\nOK\n{"e": "do')
    channel.feed(b'ne"}\n[1, 2]\n')
    channel.close()
    assert channel.events == [{"e": "start"}, {"e": "done"}]
    assert channel.noise == 2 and channel.noise_samples == ["OK", "[1, 2]"]


def test_escapee_sweep_never_signals_everything_as_root(monkeypatch):
    # As root outside a PID namespace, kill(-1) would reach every process on the machine.
    calls = []
    monkeypatch.setattr(harness_script.os, "kill", lambda pid, sig: calls.append((pid, sig)))
    monkeypatch.setattr(harness_script.os, "getuid", lambda: 0)
    harness_script._sweep_escapees(runner_pgid=-12345)
    assert calls == []
    monkeypatch.setattr(harness_script.os, "getuid", lambda: 1_600_000_123)
    harness_script._sweep_escapees(runner_pgid=-12345)
    assert calls and calls[0][0] == -1  # the mocked kill, as a non-root sandbox uid would send it


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_installed_bubblewrap_is_the_isolation_used():
    """Where bubblewrap is installed (CI installs it), the sandbox must use it, not a weaker fallback;
    otherwise the adversarial suite would skip itself and hide the problem."""
    from classforge_bench.pipeline.config import SandboxConfig
    from classforge_bench.pipeline.sandbox import get_backend

    backend = get_backend(SandboxConfig(), name="local")
    assert backend.isolation == "bwrap"


def test_a_batch_runner_counts_what_every_sweep_found_escaped(tmp_path, monkeypatch):
    """The two extra sweeps (after a fork in flight) add to `escaped`; the runner itself is stubbed."""
    import os
    import resource

    harness = harness_script
    found, bodies = iter([2, 1, 3]), []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(harness, "_fork_runner", lambda key, context: (os.getpid(), os.open(os.devnull, os.O_RDONLY)))
    monkeypatch.setattr(
        harness,
        "_await_runner",
        lambda pid, rfd, spec, deadline: (
            harness._Channel(),
            None,
            True,
            (0, resource.getrusage(resource.RUSAGE_SELF)),
        ),
    )
    monkeypatch.setattr(harness, "_sweep_escapees", lambda pgid: next(found))
    monkeypatch.setattr(harness, "_body", lambda *args: bodies.append(args[-1]))
    spec = {"solution_file": "m.py", "tests_file": "test_m.py", "timeout_s": 5}
    harness._batch_one(spec, {"run_id": "r0"}, b"", b"", bytearray(32), False)
    assert bodies == [6]
