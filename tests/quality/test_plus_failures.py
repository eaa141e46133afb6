"""The generator's failures, each its own funnel reason with its detail, and the blocking calls
left out of the search and the walks (no generator run needed: the run's result is given)."""

from __future__ import annotations

import textwrap

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.task import PlusSuite
from classforge_bench.pipeline.quality.plus.blocking import blocking_methods, without_methods
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.generate import GeneratedTests
from classforge_bench.pipeline.quality.plus.suite import _generator_failure, _screened_suite
from classforge_bench.pipeline.quality.plus.task_contract import derive_contract
from classforge_bench.pipeline.quality.plus.walks import walks

WORKER = textwrap.dedent("""
    import queue
    import socket
    import time


    class Worker:
        def __init__(self, size: int = 2):
            self.jobs = queue.Queue()
            self.cache = {}
            self.size = size

        def take(self):
            return self.jobs.get()

        def take_soon(self):
            return self.jobs.get(timeout=0.1)

        def lookup(self, key: str):
            return self.cache.get(key)

        def ask(self):
            return input("name? ")

        def nap(self):
            time.sleep(30)

        def blink(self):
            time.sleep(0.01)

        def dial(self):
            return socket.create_connection(("example.org", 80))

        def put(self, job: str):
            self.jobs.put(job)
            return self.jobs.qsize()
""")


def test_blocking_and_interactive_calls_are_found_and_the_rest_is_not():
    found = blocking_methods(WORKER, "Worker")
    assert set(found) == {"take", "ask", "nap", "dial"}
    assert found["take"] == "self.jobs.get()"
    searched = without_methods(WORKER, "Worker", set(found))
    assert "def take(" not in searched and "def put(" in searched and "def take_soon(" in searched


def test_walks_never_call_a_blocking_method():
    tests = [
        PlusTest(origin="t0", methods=["put", "take"], body="w = Worker(size=2)\nw.put(job='a')\nw.take()\n"),
        PlusTest(origin="t1", methods=["blink"], body="w = Worker(size=3)\nw.blink()\n"),
    ]
    contract = derive_contract(WORKER, "Worker")
    free = walks(tests, WORKER, "Worker", 8, 0, contract=contract, exclude=set(blocking_methods(WORKER, "Worker")))
    assert free and not any("take()" in t.body or "nap()" in t.body for t in free)
    unguarded = walks(tests, WORKER, "Worker", 8, 0, contract=contract)
    assert any("take()" in t.body for t in unguarded)  # the exclusion is what keeps them out


def _run(**kw) -> GeneratedTests:
    return GeneratedTests(**{"ok": True, "module": "def test_0():\n    pass\n", **kw})


def test_each_generator_failure_has_its_own_reason():
    plus = PlusConfig(max_iterations=300, budget_s=90)
    killed = _run(ok=False, module="", detail="killed at the wall limit", failure_reason=reasons.PLUS_GENERATOR_KILLED)
    assert _generator_failure(killed, {}, plus)[0] == reasons.PLUS_GENERATOR_KILLED
    reason, detail = _generator_failure(killed, {"take": "self.jobs.get()"}, plus)
    assert reason == reasons.PLUS_GENERATOR_BLOCKED and "take: self.jobs.get()" in detail
    exited = _run(ok=False, module="", detail="exit status 2", failure_reason=reasons.PLUS_GENERATOR_EXIT)
    assert _generator_failure(exited, {}, plus) == (reasons.PLUS_GENERATOR_EXIT, "exit status 2")
    # the time cap is a safety net: it fails the class, it never silently decides which tests exist
    capped = _run(hit_time_cap=True, iterations=120, coverage=0.7)
    reason, detail = _generator_failure(capped, {}, plus)
    assert reason == reasons.PLUS_GENERATOR_TIME_CAP and "120 of 300" in detail
    assert _generator_failure(_run(iterations=300, coverage=0.9), {}, plus) is None
    assert all(reasons.is_registered(r) for r in (reasons.PLUS_GENERATOR_KILLED, reasons.PLUS_GENERATOR_BLOCKED))


def test_tests_written_and_all_dropped_say_so_with_counts_per_rule():
    module = textwrap.dedent("""
        import pytest
        import under_test as under_test_

        @pytest.mark.xfail(strict=True)
        def test_case_0():
            worker_0 = under_test_.Worker(size=-5)
            worker_0.put(job=None)

        def test_case_1():
            worker_0 = under_test_.Worker(size=2)
            var_0 = worker_0.jobs
            assert var_0 is not None
    """)
    contract = derive_contract(WORKER, "Worker", documented_fields_only=True)
    suite = _screened_suite(
        PlusSuite(),
        _run(module=module),
        contract,
        {},
        WORKER,
        [],
        ("", []),
        SandboxConfig(),
        PlusConfig(),
        "worker",
    )
    assert suite.tests == 0 and suite.failure_reason == reasons.PLUS_ALL_DROPPED
    assert suite.failure == (
        # test_case_1's one check reads `jobs`, a field no docstring documents: the check goes, and
        # the test, left asserting nothing, with it
        f"2 generated, all dropped: {reasons.PLUS_EXPECTS_CRASH} x1, {reasons.PLUS_NO_ASSERTION} x1"
    )
