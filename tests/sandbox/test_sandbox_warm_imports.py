"""The tasks' libraries imported by the supervisor before it forks the runner(s) (`SuiteRequest.warm_imports`,
issue 31 item 4): each runner finds them loaded, batched or alone, yet what one runner does to a
library never reaches the next, and nothing in the work folder can stand in for a library.
`colorsys` plays the library: the harness itself never imports it."""

from __future__ import annotations

import textwrap

import pytest
from sandbox_support import make_config

from classforge_bench.pipeline.sandbox import SuiteRequest, SuiteStatus, execute
from classforge_bench.pipeline.sandbox.batch import can_batch, execute_batch

# Module level runs once per runner: whether the library was loaded before the program's own
# import, and what an earlier runner left in it; then this runner changes it as a sample may.
SOLUTION = textwrap.dedent(
    """
    import sys
    WARM = "colorsys" in sys.modules
    import colorsys
    LEFT_BEHIND = (getattr(colorsys, "cf_left", None), colorsys.rgb_to_hsv(0.0, 0.0, 0.0))
    colorsys.cf_left = "an earlier runner"
    colorsys.rgb_to_hsv = lambda *args: "patched by an earlier runner"
    """
)
TESTS = textwrap.dedent(
    """
    import unittest


    class WarmTest(unittest.TestCase):
        def test_loaded_before_the_program(self):
            self.assertTrue(WARM)

        def test_nothing_left_by_another_runner(self):
            self.assertEqual(LEFT_BEHIND, (None, (0.0, 0.0, 0.0)))
    """
)


def _request(i: int, warm: list[str], solution: str = SOLUTION) -> SuiteRequest:
    return SuiteRequest(
        item_id=f"run{i}",
        solution=f"# run {i}\n{solution}",
        tests=TESTS,
        test_classes=["WarmTest"],
        limit_s=10.0,
        wall_ceiling_s=60.0,
        coverage=False,
        warm_imports=warm,
    )


@pytest.fixture(scope="module")
def backend(local_backend):
    if local_backend.isolation != "bwrap" or not can_batch(local_backend):
        pytest.skip(f"batches need bubblewrap and a process sweep; this machine has {local_backend.isolation}")
    return local_backend


def _failures(result) -> list[str]:
    assert result is not None, "the batch gave no trustworthy report"
    return [f"{m.name}: {m.message}" for c in result.classes for m in c.methods if m.outcome.value != "passed"]


def test_every_runner_of_a_batch_finds_the_library_loaded_and_untouched(backend):
    results = execute_batch([_request(i, ["colorsys"]) for i in range(3)], backend, make_config())
    for result in results:
        assert _failures(result) == []
        assert result is not None and result.status is SuiteStatus.PASSED


def test_without_warm_imports_the_runner_imports_it_itself(backend):
    """The check above can fail: the same batch without warm imports fails the first test (only)."""
    results = execute_batch([_request(i, []) for i in range(2)], backend, make_config())
    for result in results:
        assert [f.split(":")[0] for f in _failures(result)] == ["test_loaded_before_the_program"]


def test_a_lone_run_imports_them_before_its_runner_too(backend):
    result = execute(_request(0, ["colorsys"]), backend, make_config())
    assert _failures(result) == []
    assert result.status is SuiteStatus.PASSED


def test_nothing_in_the_work_folder_stands_in_for_a_library(backend):
    """A warm name that is the solution's own module (or the tests') is not taken from the work
    folder: the supervisor never runs a sample's code, so the program runs once, in its runner."""
    counting = (
        "import os\nwith open('imports.txt', 'a') as fh:\n    fh.write('x')\nCOUNT = open('imports.txt').read()\n"
    )
    tests = TESTS.replace(
        "def test_loaded_before_the_program(self):\n        self.assertTrue(WARM)",
        "def test_loaded_before_the_program(self):\n        self.assertEqual(COUNT, 'x')",
    ).replace("self.assertEqual(LEFT_BEHIND, (None, (0.0, 0.0, 0.0)))", "pass")
    request = _request(0, []).model_copy(update={"solution": counting, "tests": tests})
    names = [request.module_name, "cf_harness", "test_" + request.module_name]
    for result in (
        execute(request.model_copy(update={"warm_imports": names}), backend, make_config()),
        execute_batch([request.model_copy(update={"warm_imports": names})] * 2, backend, make_config())[1],
    ):
        assert _failures(result) == []
