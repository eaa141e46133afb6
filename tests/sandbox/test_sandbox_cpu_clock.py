"""CPU-clock runs (`SuiteRequest.wall_ceiling_s`, as the evaluator runs every sample): the limit is
the CPU time of the runner's process tree, so a saturated machine gives the same verdicts as an
idle one; the wall clock is only a safety net far above it, and a stop there is reported apart.
No assertion here is on a duration: the runs are judged by their verdicts alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from classforge_bench.pipeline.sandbox import SuiteRequest, SuiteStatus, execute
from classforge_bench.pipeline.sandbox.batch import can_batch, execute_batch

TESTS = textwrap.dedent(
    """
    import unittest


    class WorkTest(unittest.TestCase):
        def test_total(self):
            self.assertEqual(work(), 42)
    """
)
# ~0.5-1 s of CPU: well below its 3 s CPU limit, yet beside the busy loops below it takes several
# times that on the wall clock, where a wall-clock limit of 3 s would have timed it out.
HONEST = "def work():\n    n = 0\n    for i in range(30_000_000):\n        n += i & 1\n    return 42 if n else 0\n"
WRONG = "def work():\n    return 41\n"
RUNAWAY = "def work():\n    while True:\n        pass\n"
SLEEPER = "import time\n\ndef work():\n    time.sleep(3600)\n"
# What each must get, idle or not, and whether the wall-clock safety net (not the CPU limit) stopped it.
EXPECTED = {
    "honest": (SuiteStatus.PASSED, False),
    "wrong": (SuiteStatus.FAILED, False),
    "runaway": (SuiteStatus.TIMEOUT, False),
}


def _requests(ceiling_s: float = 600.0) -> list[SuiteRequest]:
    programs = {"honest": HONEST, "wrong": WRONG, "runaway": RUNAWAY}
    return [
        SuiteRequest(
            item_id=name,
            solution=program,
            tests=TESTS,
            test_classes=["WorkTest"],
            limit_s=1.0
            if name == "runaway"
            else 3.0,  # beside the busy loops, the honest run takes more than 3 s of wall time: a wall limit would time it out (checked by hand)
            wall_ceiling_s=ceiling_s,
            coverage=False,
            warm_imports=["json"],
        )
        for name, program in programs.items()
    ]


def _verdicts(results) -> dict[str, tuple[SuiteStatus, bool] | None]:
    return {r.item_id: (r.status, r.wall_ceiling) if r is not None else None for r in results}


class _Busy:
    """Busy loops, four times as many as the cores, for as long as the block runs (ended by their pids)."""

    def __enter__(self) -> _Busy:
        n = 4 * (os.cpu_count() or 1)
        self.procs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(n)
        ]
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


@pytest.fixture(scope="module")
def backend(local_backend):
    if local_backend.isolation != "bwrap" or not can_batch(local_backend):
        pytest.skip(f"batches need bubblewrap and a process sweep; this machine has {local_backend.isolation}")
    return local_backend


def test_the_same_verdicts_on_a_saturated_machine(backend):
    from sandbox_support import make_config

    config = make_config()
    requests = _requests()
    quiet = _verdicts(r for r in execute_batch(requests, backend, config))
    with _Busy():
        busy = _verdicts(r for r in execute_batch(requests, backend, config))
        alone = _verdicts([execute(requests[0], backend, config)])
    assert quiet == EXPECTED
    assert busy == quiet
    assert alone == {"honest": EXPECTED["honest"]}


def test_a_waiting_answer_meets_the_wall_ceiling_reported_as_such(backend):
    from sandbox_support import make_config

    request = _requests(ceiling_s=1.5)[0].model_copy(update={"item_id": "sleeper", "solution": SLEEPER})
    for result in (
        execute(request, backend, make_config()),
        execute_batch([request, request], backend, make_config())[0],
    ):
        assert result is not None
        assert (result.status, result.wall_ceiling) == (SuiteStatus.TIMEOUT, True)
        assert "wall-clock safety net" in result.detail


def test_a_wall_clock_request_keeps_its_wall_limit(backend):
    from sandbox_support import make_config

    request = _requests()[2].model_copy(update={"wall_ceiling_s": None, "solution": SLEEPER})
    result = execute(request, backend, make_config())
    assert (result.status, result.wall_ceiling) == (SuiteStatus.TIMEOUT, False)
    assert "of CPU" not in result.detail


def test_a_host_kill_of_a_cpu_clock_run_is_the_safety_net_too():
    """The host kills a CPU-clock run only far past its wall ceiling (a starved runner's harness
    never reached it); that kill is recorded as the wall-clock safety net, not as the CPU limit."""
    from classforge_bench.pipeline.sandbox.base import ExecResult
    from classforge_bench.pipeline.sandbox.interpret import without_report
    from classforge_bench.pipeline.sandbox.results import HOST_CEILING_SLACK

    request = _requests(ceiling_s=10.0)[0]
    assert request.host_wall_s(3.0) == 10.0 * HOST_CEILING_SLACK > 10.0
    assert request.model_copy(update={"wall_ceiling_s": None}).host_wall_s(3.0) == 3.0
    killed = ExecResult(exit_code=None, signal=9, timed_out=True, wall_s=42.0, isolation="bwrap")
    result = without_report(request, killed, "missing", 3.0, 0)
    assert (result.status, result.wall_ceiling) == (SuiteStatus.TIMEOUT, True)
    assert "safety net" in result.detail
    plain = without_report(request.model_copy(update={"wall_ceiling_s": None}), killed, "missing", 3.0, 0)
    assert (plain.status, plain.wall_ceiling) == (SuiteStatus.TIMEOUT, False)
