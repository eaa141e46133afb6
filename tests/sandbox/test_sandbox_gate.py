"""The verification gate: every rejection reason, the measured figures, and the funnel verdict."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from sandbox_support import make_config

from classforge_bench.pipeline.sandbox import GateReason, SuiteStatus, verify

SOLUTION = textwrap.dedent(
    """
    class Counter:
        def __init__(self):
            self.n = 0

        def add(self, k=1):
            if k < 0:
                raise ValueError("negative")
            self.n += k
            return self.n

        def reset(self):
            self.n = 0
    """
)
TESTS = textwrap.dedent(
    """
    import unittest


    class CounterTestAdd(unittest.TestCase):
        def test_add(self):
            self.assertEqual(Counter().add(2), 2)

        def test_negative(self):
            with self.assertRaises(ValueError):
                Counter().add(-1)


    class CounterTestReset(unittest.TestCase):
        def test_reset(self):
            c = Counter()
            c.add(5)
            c.reset()
            self.assertEqual(c.n, 0)
    """
)
CLASSES = ["CounterTestAdd", "CounterTestReset"]


@pytest.fixture(scope="module")
def config():
    return make_config(wall_limit_s=15, min_line_coverage=90.0)


def test_good_pair_passes_with_figures(config):
    verdict = verify(SOLUTION, TESTS, CLASSES, config, item_id="counter")
    assert verdict.passed and verdict.reason is None, verdict.detail
    assert verdict.item_id == "counter"
    assert verdict.line_coverage == 100.0 and verdict.branch_coverage == 100.0
    assert verdict.tests_run == 3 and verdict.test_classes == 2
    assert verdict.limit_s == 15 and 0 < verdict.wall_s < 15 and verdict.repeat_wall_s is not None
    assert [r.hash_seed for r in verdict.runs] == [config.hash_seed, config.hash_seed + 1]
    assert verdict.runs[1].coverage is None  # the repeat runs untraced
    assert verdict.to_verdict().keep


@pytest.mark.parametrize(
    "solution, tests, reason",
    [
        ("class Counter(:\n", TESTS, GateReason.COMPILE_ERROR),
        (SOLUTION, "import unittest\nclass CounterTestAdd(unittest.TestCase)\n", GateReason.TESTS_COMPILE_ERROR),
    ],
)
def test_what_does_not_compile_never_runs(config, solution, tests, reason):
    verdict = verify(solution, tests, CLASSES, config)
    assert verdict.reason is reason and verdict.runs == []
    assert "SyntaxError" in verdict.detail


def test_failing_test(config):
    verdict = verify(SOLUTION.replace("self.n += k", "self.n += 2 * k"), TESTS, CLASSES, config)
    assert verdict.reason is GateReason.TEST_FAILED
    assert "CounterTestAdd.test_add" in verdict.detail
    dropped = verdict.to_verdict()
    assert not dropped.keep and dropped.reason == "test-failed"


def test_import_error(config):
    verdict = verify("import no_such_module_xyz\n" + SOLUTION, TESTS, CLASSES, config)
    assert verdict.reason is GateReason.IMPORT_ERROR and "ModuleNotFoundError" in verdict.detail


def test_every_listed_class_must_run_a_test(config):
    verdict = verify(SOLUTION, TESTS, CLASSES + ["CounterTestMissing"], config)
    assert verdict.reason is GateReason.CLASS_WITHOUT_TESTS and "CounterTestMissing" in verdict.detail
    empty = TESTS + "\nclass CounterTestEmpty(unittest.TestCase):\n    pass\n"
    assert verify(SOLUTION, empty, CLASSES + ["CounterTestEmpty"], config).reason is GateReason.CLASS_WITHOUT_TESTS


def test_zero_tests(config):
    verdict = verify(SOLUTION, "import unittest\nclass E(unittest.TestCase):\n    pass\n", ["E"], config)
    assert verdict.reason is GateReason.ZERO_TESTS and verdict.tests_run == 0


def test_low_coverage_and_its_threshold(config):
    tests = TESTS.replace("Counter().add(-1)", "raise ValueError('the solution is never asked')")
    low = verify(SOLUTION, tests, ["CounterTestAdd"], config)
    assert low.reason is GateReason.LOW_COVERAGE
    assert low.line_coverage == 80.0 and low.branch_coverage == 50.0
    assert "missing lines [8, 13]" in low.detail  # the `raise` and the body of reset()
    relaxed = verify(SOLUTION, tests, ["CounterTestAdd"], make_config(wall_limit_s=15, min_line_coverage=80.0))
    assert relaxed.passed and relaxed.line_coverage == 80.0


def _set_order(seed: int) -> str:
    code = "print(''.join({'a', 'b', 'c', 'd', 'e', 'f'}))"
    return subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONHASHSEED": str(seed)}, capture_output=True, text=True
    ).stdout.strip()


def test_flaky_pair_is_rejected(config):
    first, second = _set_order(config.hash_seed), _set_order(config.hash_seed + 1)
    assert first != second  # the two runs of the gate see different set orders
    tests = TESTS + textwrap.dedent(
        f"""
        class CounterTestOrder(unittest.TestCase):
            def test_order(self):
                self.assertEqual(''.join({{'a', 'b', 'c', 'd', 'e', 'f'}}), {first!r})
        """
    )
    verdict = verify(SOLUTION, tests, CLASSES + ["CounterTestOrder"], config)
    assert verdict.reason is GateReason.FLAKY, verdict.detail
    assert "CounterTestOrder.test_order: passed then failed" in verdict.detail
    assert len(verdict.runs) == 2 and verdict.runs[0].status is SuiteStatus.PASSED


def test_timeout(config):
    slow = SOLUTION.replace("self.n += k", "while True:\n            pass")
    verdict = verify(slow, TESTS, CLASSES, config, limit_s=1.0)
    assert verdict.reason is GateReason.TIMEOUT and verdict.limit_s == 1.0


def test_tampering(config):
    cheat = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + SOLUTION
    verdict = verify(cheat, TESTS, CLASSES, config)
    assert verdict.reason is GateReason.TAMPERED and not verdict.to_verdict().keep


def test_chance_dependent_tests_are_flaky(config):
    import random

    random.seed(config.hash_seed)
    first = random.random()
    random.seed(config.hash_seed + 1)
    assert (first > 0.5) != (random.random() > 0.5)  # the two runs draw on opposite sides
    tests = TESTS + textwrap.dedent(
        f"""
        import random

        class CounterTestLuck(unittest.TestCase):
            def test_luck(self):
                self.assertEqual(random.random() > 0.5, {first > 0.5})
        """
    )
    verdict = verify(SOLUTION, tests, CLASSES + ["CounterTestLuck"], config)
    assert verdict.reason is GateReason.FLAKY and "CounterTestLuck.test_luck" in verdict.detail
