"""run_suite end to end on the default local backend: outcomes per class and method, coverage,
modes, limits, and the pool."""

from __future__ import annotations

import textwrap

import pytest
from sandbox_support import make_config

from classforge_bench.pipeline.sandbox import (
    ClassStatus,
    SuiteRequest,
    SuiteStatus,
    TestOutcome,
    run_suite,
    run_suites,
)

SOLUTION = textwrap.dedent(
    """
    import math


    class Shapes:
        def __init__(self, scale=1):
            self.scale = scale

        def area(self, r):
            if r < 0:
                raise ValueError("negative radius")
            return math.pi * r * r * self.scale

        def kind(self, sides):
            if sides == 3:
                return "triangle"
            elif sides == 4:
                return "square"
            return "other"
    """
)

TESTS = textwrap.dedent(
    """
    import unittest


    class ShapesTestArea(unittest.TestCase):
        def test_area(self):
            self.assertAlmostEqual(Shapes().area(1), math.pi)

        def test_negative(self):
            with self.assertRaises(ValueError):
                Shapes().area(-1)


    class ShapesTestKind(unittest.TestCase):
        def test_kinds(self):
            self.assertEqual([Shapes().kind(n) for n in (3, 4, 5)], ["triangle", "square", "other"])
    """
)

CLASSES = ["ShapesTestArea", "ShapesTestKind"]


@pytest.fixture(scope="module")
def config():
    return make_config(wall_limit_s=15)


def run(solution, tests, classes, config, **kw):
    return run_suite(solution, tests, classes, config=config, **kw)


def outcomes(result):
    return {f"{c.name}.{m.name}": m.outcome for c in result.classes for m in c.methods}


def test_passing_suite_reports_every_method_and_full_coverage(config):
    result = run(SOLUTION, TESTS, CLASSES, config, item_id="shapes-1")
    assert result.status is SuiteStatus.PASSED, result.detail
    assert result.item_id == "shapes-1"
    assert outcomes(result) == {
        "ShapesTestArea.test_area": TestOutcome.PASSED,
        "ShapesTestArea.test_negative": TestOutcome.PASSED,
        "ShapesTestKind.test_kinds": TestOutcome.PASSED,
    }
    assert [c.status for c in result.classes] == [ClassStatus.PASSED, ClassStatus.PASSED]
    assert result.tests_run == 3
    assert result.line_coverage == 100.0 and result.branch_coverage == 100.0
    assert result.tamper == [] and result.isolation
    assert result.cpu_s is not None and result.peak_memory_mb is not None
    assert 0 < result.wall_s < result.limit_s


def test_partial_coverage_names_missing_lines(config):
    tests = TESTS.replace("(3, 4, 5)", "(3,)").replace('["triangle", "square", "other"]', '["triangle"]')
    result = run(SOLUTION, tests, ["ShapesTestKind"], config)
    assert result.status is SuiteStatus.PASSED
    lines = SOLUTION.splitlines()
    missing = {lines[n - 1].strip() for n in result.coverage.missing_lines}
    assert 'return "square"' in missing and 'raise ValueError("negative radius")' in missing
    assert result.line_coverage < 80 and result.branch_coverage < 100


def test_failures_and_errors_are_told_apart(config):
    tests = TESTS + textwrap.dedent(
        """
        class ShapesTestBroken(unittest.TestCase):
            def test_wrong(self):
                self.assertEqual(Shapes().kind(3), "square")

            def test_crash(self):
                Shapes().area(-5)

            @unittest.skip("not today")
            def test_skipped(self):
                pass

            @unittest.expectedFailure
            def test_expected(self):
                self.assertEqual(1, 2)
        """
    )
    result = run(SOLUTION, tests, CLASSES + ["ShapesTestBroken"], config)
    assert result.status is SuiteStatus.FAILED
    broken = {m.name: m for m in result.classes[2].methods}
    assert broken["test_wrong"].outcome is TestOutcome.FAILED
    assert (
        broken["test_wrong"].exc_type == "AssertionError" and "'triangle' != 'square'" in broken["test_wrong"].message
    )
    assert broken["test_crash"].outcome is TestOutcome.ERRORED and broken["test_crash"].exc_type == "ValueError"
    assert "negative radius" in broken["test_crash"].traceback
    assert broken["test_skipped"].outcome is TestOutcome.SKIPPED
    assert broken["test_expected"].outcome is TestOutcome.EXPECTED_FAILURE
    assert result.classes[0].status is ClassStatus.PASSED and result.classes[2].status is ClassStatus.FAILED
    assert "1 errored, 1 failed" in result.detail


def test_tracebacks_are_capped(config):
    tests = "import unittest\nclass T(unittest.TestCase):\n    def test_long(self):\n        self.assertEqual('a' * 50000, 'b')\n"
    result = run(SOLUTION, tests, ["T"], config)
    method = result.classes[0].methods[0]
    assert method.outcome is TestOutcome.FAILED
    assert len(method.traceback) <= config.traceback_cap_chars + 10
    assert len(method.message) <= 510


def test_zero_tests_is_its_own_outcome(config):
    tests = "import unittest\nclass Empty(unittest.TestCase):\n    def helper(self):\n        pass\n"
    result = run(SOLUTION, tests, ["Empty"], config)
    assert result.status is SuiteStatus.ZERO_TESTS
    assert result.classes[0].status is ClassStatus.ZERO_TESTS
    no_classes = run(SOLUTION, TESTS, [], config)
    assert no_classes.status is SuiteStatus.ZERO_TESTS and "no test classes listed" in no_classes.detail


def test_all_skipped_runs_no_test(config):
    tests = "import unittest\n@unittest.skip('x')\nclass S(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    result = run(SOLUTION, tests, ["S"], config)
    assert result.status is SuiteStatus.ZERO_TESTS
    assert result.classes[0].methods[0].outcome is TestOutcome.SKIPPED


def test_missing_class_fails_the_suite_but_keeps_the_rest(config):
    result = run(SOLUTION, TESTS, CLASSES + ["NoSuchTest"], config)
    assert result.status is SuiteStatus.FAILED
    assert result.classes[2].status is ClassStatus.MISSING and "NoSuchTest" in result.classes[2].error
    assert result.classes[0].passed and result.classes[1].passed


def test_listed_name_with_stray_whitespace_is_matched_and_noted(config):
    result = run(SOLUTION, TESTS, ["ShapesTestArea", " ShapesTestKind"], config)
    assert result.status is SuiteStatus.PASSED
    assert result.classes[1].name == " ShapesTestKind" and "stripping whitespace" in result.classes[1].note


def test_class_fixture_error_is_reported_without_false_alarm(config):
    tests = TESTS + textwrap.dedent(
        """
        class Fixture(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                raise RuntimeError("no database")

            def test_a(self):
                pass
        """
    )
    result = run(SOLUTION, tests, CLASSES + ["Fixture"], config)
    assert result.status is SuiteStatus.FAILED and result.tamper == []
    fixture = result.classes[2]
    assert fixture.status is ClassStatus.FIXTURE_ERROR and "no database" in fixture.error


@pytest.mark.parametrize(
    "solution, tests, phase",
    [
        ("class Shapes:\n    def area(self:\n", TESTS, "the solution failed to import: SyntaxError"),
        ("import not_a_module_xyz\n", TESTS, "the solution failed to import: ModuleNotFoundError"),
        ("raise SystemExit(0)\n", TESTS, "the solution failed to import: SystemExit"),
        (
            SOLUTION,
            "import unittest\nclass T(unittest.TestCase):\n    x = undefined_name\n",
            "the tests failed to load: NameError",
        ),
    ],
)
def test_import_problems_are_errors(config, solution, tests, phase):
    result = run(solution, tests, ["T"], config)
    assert result.status is SuiteStatus.ERROR
    assert result.detail.startswith(phase)


def test_classeval_mode_sees_the_solutions_imports(config):
    solution = "import json\nimport collections as co\n\nclass Box:\n    def dump(self):\n        return json.dumps(co.OrderedDict(a=1))\n"
    tests = "import unittest\nclass BoxTest(unittest.TestCase):\n    def test_dump(self):\n        self.assertEqual(json.loads(Box().dump()), co.OrderedDict(a=1))\n"
    assert run(solution, tests, ["BoxTest"], config).status is SuiteStatus.PASSED


def test_import_mode(config):
    tests = "import unittest\nfrom geometry import Shapes\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(Shapes().kind(4), 'square')\n"
    result = run(SOLUTION, tests, ["T"], config, mode="import", module_name="geometry")
    assert result.status is SuiteStatus.PASSED and result.line_coverage is not None
    in_scope_only = run(
        SOLUTION,
        tests.replace("from geometry import Shapes\n", ""),
        ["T"],
        config,
        mode="import",
        module_name="geometry",
    )
    assert in_scope_only.status is SuiteStatus.FAILED  # import mode does not put the solution in scope


def test_pytest_style_functions_and_classes(config):
    tests = textwrap.dedent(
        """
        import pytest
        from geometry import Shapes

        def test_area():
            assert Shapes().area(0) == 0

        def test_negative():
            with pytest.raises(ValueError):
                Shapes().area(-1)

        def test_wrong():
            assert Shapes().kind(3) == "square"

        class TestKinds:
            def setup_method(self, method):
                self.shapes = Shapes()

            def test_square(self):
                assert self.shapes.kind(4) == "square"

            def test_skip(self):
                pytest.skip("later")
        """
    )
    names = ["test_area", "test_negative", "test_wrong", "TestKinds"]
    result = run(SOLUTION, tests, names, config, mode="import", module_name="geometry")
    assert result.status is SuiteStatus.FAILED and result.tamper == []
    assert outcomes(result) == {
        "test_area.test_area": TestOutcome.PASSED,
        "test_negative.test_negative": TestOutcome.PASSED,
        "test_wrong.test_wrong": TestOutcome.FAILED,
        "TestKinds.test_skip": TestOutcome.SKIPPED,
        "TestKinds.test_square": TestOutcome.PASSED,
    }


def test_timeout_keeps_the_outcomes_reached(config):
    tests = (
        TESTS + "\nclass Slow(unittest.TestCase):\n    def test_forever(self):\n        while True:\n            pass\n"
    )
    result = run(SOLUTION, tests, CLASSES + ["Slow"], config, limit_s=1.5)
    assert result.status is SuiteStatus.TIMEOUT
    assert "1.5s" in result.detail
    assert result.classes[0].passed and result.classes[1].passed
    assert result.wall_s >= 1.5  # a lower bound holds at any speed; how soon it stops is benchmarks/' claim


def test_seed_pins_hashing_and_random_per_run(config):
    tests = "import random, unittest\nclass H(unittest.TestCase):\n    def test_h(self):\n        print('SEEDED', hash('classforge'), random.random())\n"
    seen = [run(SOLUTION, tests, ["H"], config, hash_seed=seed, coverage=False).stdout for seed in (3, 3, 4)]
    assert seen[0] == seen[1] != seen[2]


def test_run_suites_runs_in_parallel_and_keeps_order(config):
    broken = TESTS.replace('"other"]', '"circle"]')
    requests = [
        SuiteRequest(item_id=f"task-{i}", solution=SOLUTION, tests=tests, test_classes=CLASSES, coverage=False)
        for i, tests in enumerate([TESTS, broken, TESTS, broken])
    ]
    done = []
    results = run_suites(requests, config, workers=2, on_done=lambda i, r: done.append(i))
    assert [r.item_id for r in results] == ["task-0", "task-1", "task-2", "task-3"]
    assert [r.status for r in results] == [SuiteStatus.PASSED, SuiteStatus.FAILED] * 2
    assert sorted(done) == [0, 1, 2, 3]
    assert all(r.coverage is None for r in results)


SHARED_TESTS = textwrap.dedent(
    """
    import time, unittest

    class First(unittest.TestCase):
        def test_a(self):
            self.assertEqual(Shapes().kind(3), "triangle")

    class Loops(unittest.TestCase):
        def test_forever(self):
            while True:
                pass

    class Slow(unittest.TestCase):
        def test_slow(self):
            time.sleep(3.0)

    class Last(unittest.TestCase):
        def test_b(self):
            self.assertEqual(Shapes().kind(4), "square")
    """
)


def _shared(config, classes, limit_s, floors):
    from classforge_bench.pipeline.sandbox import get_backend
    from classforge_bench.pipeline.sandbox.suite import execute

    request = SuiteRequest(
        solution=SOLUTION,
        tests=SHARED_TESTS,
        test_classes=classes,
        limit_s=limit_s,
        coverage=False,
        class_floors=floors,
    )
    return execute(request, get_backend(config), config)


def test_a_shared_limit_stops_a_runaway_class_at_its_share(config):
    # 4 s for 3 classes: First takes no time, so Loops may use 4/2 = 2 s of what is left
    result = _shared(config, ["First", "Loops", "Last"], 4.0, {})
    assert result.status is SuiteStatus.TIMEOUT
    assert result.detail.startswith("Loops ran past its share of the 4.0s limit")
    assert result.classes[0].passed and not result.classes[2].methods  # Last is left for the caller to run again
    assert result.wall_s > 1.9, result.wall_s  # its share at least (the stop's promptness is a timing claim)
    # without sharing, the same run uses the whole limit
    whole = _shared(config, ["First", "Loops", "Last"], 3.0, None)
    assert whole.status is SuiteStatus.TIMEOUT and "exceeded the 3.0s limit" in whole.detail and whole.wall_s >= 3.0


def test_a_class_floor_keeps_a_slow_class_from_being_stopped(config):
    # Slow needs 3 s; its share of 7.2 s among 3 classes would be 2.4 s, its floor is 6.5 s (3.5 s of
    # room for a busy machine)
    result = _shared(config, ["Slow", "First", "Last"], 7.2, {"Slow": 6.5})
    assert result.status is SuiteStatus.PASSED, result.detail
    stopped = _shared(config, ["Slow", "First", "Last"], 7.2, {})
    assert stopped.status is SuiteStatus.TIMEOUT and stopped.detail.startswith("Slow ran past its share")


def test_shares_ignore_malformed_events_from_the_runner():
    from classforge_bench.pipeline.sandbox import harness_script

    shares = harness_script._Shares({"share": True, "class_floors": {}}, deadline=10.0)
    events = [
        {
            "e": "collect",
            "classes": [
                {"kind": "unittest", "name": ["x"], "tests": []},
                "junk",
                {"kind": "unittest", "name": "A", "tests": ["t1", "t2"]},
                {"kind": "unittest", "name": "B", "tests": ["t"]},
            ],
        },
        {"e": "test", "cls": {"not": "hashable"}},
        {"e": "test", "cls": "Nope"},
        {"e": "test", "cls": "A"},
    ]
    shares.update(events, now=2.0)
    assert shares.order == ["A", "B"] and shares.limit() == (2.0 + 8.0 / 2, "A")
    shares.update(events + [{"e": "test", "cls": "B"}], now=3.0)  # B ran: A is over; B was the last class
    assert shares.limit() == (10.0, None)
