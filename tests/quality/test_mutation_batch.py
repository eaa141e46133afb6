"""Batched mutants (`classforge_bench.pipeline.sandbox.batch`, `MutationConfig.batch_size`) through the real sandbox:
the same verdicts as one sandbox run per mutant, a mutant that loops, crashes, litters or tampers
cannot change another's verdict, a batch that gives no trustworthy report falls back to runs of
their own (and says so), and the content cache is the same one."""

from __future__ import annotations

import textwrap

import pytest
from mutation_kit import CLASSES, SOLUTION, TESTS, CountingBackend

from classforge_bench.pipeline.config import MutationConfig, SandboxConfig
from classforge_bench.pipeline.quality.mutation import measure_mutation
from classforge_bench.pipeline.sandbox import SandboxError, SuiteRequest, SuiteStatus, execute, get_backend
from classforge_bench.pipeline.sandbox.batch import can_batch, execute_batch


@pytest.fixture(scope="module")
def sandbox() -> SandboxConfig:
    return SandboxConfig(wall_limit_s=20.0, grace_s=1.0, workers=2)


@pytest.fixture(scope="module")
def backend(sandbox):
    found = get_backend(sandbox)
    if not can_batch(found):
        pytest.skip(f"the {found.isolation} sandbox cannot sweep leftover processes: batches are not used there")
    return found


def _config(batch_size: int) -> MutationConfig:
    return MutationConfig(max_mutants_per_method=50, timeout_floor_s=1.5, timeout_factor=2.0, batch_size=batch_size)


@pytest.fixture(scope="module")
def alone(tmp_path_factory, sandbox, backend):
    counting = CountingBackend(backend)
    run = measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=_config(0),
        sandbox=sandbox,
        item_id="counter",
        reference_wall_s=0.1,
        cache_root=tmp_path_factory.mktemp("alone"),
        backend=counting,
    )
    return run, counting


@pytest.fixture(scope="module")
def batched(tmp_path_factory, sandbox, backend):
    counting, cache = CountingBackend(backend), tmp_path_factory.mktemp("batched")
    run = measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=_config(8),
        sandbox=sandbox,
        item_id="counter",
        reference_wall_s=0.1,
        cache_root=cache,
        backend=counting,
    )
    return run, counting, cache


def test_batched_verdicts_equal_one_run_per_mutant(alone, batched):
    one_each, alone_backend = alone
    run, backend, _ = batched
    assert run.report == one_each.report  # every count, every surviving mutant, per operator
    assert run.report.timed_out >= 1  # drain() never ends: a timeout inside its batch ...
    assert run.fell_back == 0 and run.batched == one_each.sandbox_runs  # ... that sank nothing
    assert alone_backend.runs == one_each.sandbox_runs == run.report.mutants - run.report.equivalent
    # ceil(mutants / 8) batches, at least one per worker
    assert backend.runs == run.sandbox_runs == max(2, -(-one_each.sandbox_runs // 8)) < one_each.sandbox_runs


def test_a_second_batched_run_makes_no_sandbox_run(batched, sandbox, backend):
    run, _, cache = batched
    counting = CountingBackend(backend)
    again = measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=_config(8),
        sandbox=sandbox,
        item_id="counter",
        cache_root=cache,
        backend=counting,
    )
    assert counting.runs == 0 and again.sandbox_runs == 0 and again.batched == 0
    assert again.cached == run.batched and again.report == run.report
    # The cache does not depend on how the outcomes were run: one run per mutant reads it too.
    alone_again = measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=_config(0),
        sandbox=sandbox,
        item_id="counter",
        cache_root=cache,
        backend=counting,
    )
    assert counting.runs == 0 and alone_again.report == run.report


class DropsReport(CountingBackend):
    """Loses one runner's report of every batch, as a later runner deleting it would."""

    def run(self, files, command, limits, outputs=(), **kwargs):
        result = super().run(files, command, limits, outputs, **kwargs)
        if "supervise_batch" in " ".join(command):
            result.outputs.pop("cf_report_0.json", None)
        return result


class BatchFails(CountingBackend):
    def run(self, files, command, limits, outputs=(), **kwargs):
        if "supervise_batch" in " ".join(command):
            self.runs += 1
            raise SandboxError("the batch run could not start")
        return super().run(files, command, limits, outputs, **kwargs)


@pytest.mark.parametrize("wrapper", [DropsReport, BatchFails])
def test_without_a_trustworthy_report_a_mutant_runs_alone(alone, sandbox, backend, tmp_path, wrapper):
    one_each, _ = alone
    counting = wrapper(backend)
    run = measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=_config(8),
        sandbox=sandbox,
        item_id="counter",
        reference_wall_s=0.1,
        cache_root=tmp_path,
        backend=counting,
    )
    mutants = one_each.sandbox_runs
    batches = max(2, -(-mutants // 8))
    expected = batches if wrapper is DropsReport else mutants  # one report lost per batch, or every mutant
    assert run.fell_back == expected and run.batched == mutants - expected
    assert run.report == one_each.report  # never a verdict from a missing report
    assert counting.runs == run.sandbox_runs == batches + expected


TESTS_A = textwrap.dedent(
    """
    import os
    import tempfile
    import unittest


    class ATest(unittest.TestCase):
        def test_value(self):
            for folder in (os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir()):
                self.assertFalse(os.path.exists(os.path.join(folder, "cf_left_behind")), folder)
            self.assertEqual(A().value(), 1)
    """
)


def _solution(body: str, module_level: str = "") -> str:
    return f"{module_level}\nclass A:\n    def value(self):\n{textwrap.indent(textwrap.dedent(body), '        ')}\n"


# Out of its runner's process group, it kills every process but itself, the supervisor and its
# own runner, again and again: every later runner, unless it is swept first.
KILLER = textwrap.dedent("""
    import os, signal, sys, time
    spare = {1, os.getpid(), int(sys.argv[1]), int(sys.argv[2])}
    while True:
        for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
            if pid not in spare:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.01)
""")
GOOD = _solution("return 1")
WRONG = _solution("return 2")
BAD = {
    "loops": _solution("while True:\n    pass"),
    "os._exit": _solution("import os\nos._exit(0)"),
    "segfault": _solution("import ctypes\nreturn ctypes.string_at(0)"),
    "sys.exit at import": _solution("return 1", "import sys\nsys.exit(0)"),
    "litters": _solution(
        "return 1",
        textwrap.dedent("""
        import os, tempfile
        for folder in (os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir(), ".."):
            open(os.path.join(folder, "cf_left_behind"), "w").close()
        """),
    ),
    "patches unittest": _solution(
        "return 1",
        textwrap.dedent("""
        import unittest
        unittest.TestCase.assertEqual = lambda self, *a, **k: None
        unittest.TestCase.assertFalse = lambda self, *a, **k: None
        unittest.TestResult.addFailure = lambda self, test, err: self.addSuccess(test)
        """),
    ),
    "leaves a killer behind": _solution(
        "return 1",
        textwrap.dedent("""
        import os, subprocess, sys
        subprocess.Popen([sys.executable, "-c", KILLER, str(os.getppid()), str(os.getpid())], start_new_session=True)
        """),
    ).replace("KILLER", repr(KILLER)),
}


def test_a_mutant_cannot_change_the_next_ones_verdict(sandbox, backend):
    solutions = []
    for bad in BAD.values():
        solutions += [bad, GOOD, WRONG]  # a correct one and a wrong one after every bad one
    requests = [
        SuiteRequest(item_id=f"s{i}", solution=s, tests=TESTS_A, test_classes=["ATest"], coverage=False, limit_s=3.0)
        for i, s in enumerate(solutions)
    ]
    results = execute_batch(requests, backend, sandbox)
    assert all(r is not None for r in results), [i for i, r in enumerate(results) if r is None]
    statuses = [r.status for r in results]
    assert statuses[1::3] == [SuiteStatus.PASSED] * len(BAD)
    assert statuses[2::3] == [SuiteStatus.FAILED] * len(BAD)  # patched unittest did not carry over
    alone = {name: execute(requests[3 * i], backend, sandbox).status for i, name in enumerate(BAD)}
    assert dict(zip(BAD, statuses[0::3])) == alone  # each bad one judged as it is alone
    assert alone["loops"] is SuiteStatus.TIMEOUT and alone["segfault"] is SuiteStatus.CRASHED
    assert not any(s is SuiteStatus.PASSED for s in alone.values() if s is not alone["leaves a killer behind"])


class NoSweep(CountingBackend):
    """Claims no process containment, so the harness may not sweep between runners."""

    isolates_processes = False


def test_a_batch_that_cannot_sweep_gives_no_verdict(sandbox, backend):
    requests = [
        SuiteRequest(item_id=f"s{i}", solution=s, tests=TESTS_A, test_classes=["ATest"], coverage=False, limit_s=3.0)
        for i, s in enumerate([GOOD, WRONG])
    ]
    counting = NoSweep(backend)
    assert not can_batch(counting)
    assert execute_batch(requests, counting, sandbox) == [None, None] and counting.runs == 1


class HostTmp(CountingBackend):
    """Sweeps, but with the host's /tmp (as under unshare): a file one runner leaves there would
    reach the next, so no batch; and a harness asked anyway writes no report."""

    isolation = "unshare"


def test_a_batch_without_a_private_tmp_gives_no_verdict(sandbox, backend):
    requests = [
        SuiteRequest(item_id=f"s{i}", solution=s, tests=TESTS_A, test_classes=["ATest"], coverage=False, limit_s=3.0)
        for i, s in enumerate([GOOD, WRONG])
    ]
    counting = HostTmp(backend)
    assert counting.isolates_processes and not can_batch(counting)
    assert execute_batch(requests, counting, sandbox) == [None, None] and counting.runs == 1
