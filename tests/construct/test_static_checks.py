"""The static checks of skeletons and test suites, the judge answer parser and the outlines."""

from __future__ import annotations

import construct_fixtures as fx
import pytest

from classforge_bench.pipeline.construct.interface import interface_from_source
from classforge_bench.pipeline.construct.judges import parse_answer
from classforge_bench.pipeline.construct.outlines import case_outlines
from classforge_bench.pipeline.construct.skeleton_checks import check_skeleton
from classforge_bench.pipeline.construct.suite_checks import check_tests
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.llm.extraction import extract_code

IFACE = interface_from_source(fx.SKELETON, "TallyStack")


def _reasons(report) -> set[str]:
    return {p.reason for p in report.problems}


# -- skeleton ------------------------------------------------------------------------------------


def test_good_skeleton_passes():
    report = check_skeleton(fx.SKELETON, 5)
    assert report.ok and report.verdict().keep
    assert report.class_name == "TallyStack"
    assert report.methods == ["push", "pop", "peek", "size", "count_of", "most_common"]


def _drop_method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    end = code.find("    def ", start + 1)
    return code[:start] + (code[end:] if end != -1 else "")


SKELETON_BREAKS = {
    R.SKELETON_SYNTAX: lambda s: s.replace("def pop(self) -> str:", "def pop(self) -> str"),
    R.NOT_ONE_CLASS: lambda s: s + '\n\nclass Other:\n    """x"""\n',
    R.EXTRA_TOP_LEVEL: lambda s: s.replace(
        "from collections import Counter\n", "from collections import Counter\nLIMIT = 3\n"
    ),
    R.NON_STDLIB_IMPORT: lambda s: "import numpy as np\n" + s,
    R.NO_CLASS_DOCSTRING: lambda s: s.replace(
        '    """\n    A bounded last-in first-out stack that also tallies how often each value was pushed.\n    """\n',
        "",
    ),
    R.NO_CONSTRUCTOR: lambda s: s.replace(
        "def __init__(self, capacity: int = 10):", "def setup(self, capacity: int = 10):"
    ),
    R.TOO_FEW_METHODS: lambda s: _drop_method(_drop_method(s, "most_common"), "count_of"),
    R.PRIVATE_METHOD: lambda s: s.replace("def size(self)", "def _size(self)"),
    R.UNDOCUMENTED_METHOD: lambda s: s.replace("        :param value: the value, str\n", ""),
    R.BODY_NOT_ELIDED: lambda s: s.replace(
        '        \'a\'\n        """\n', '        \'a\'\n        """\n        return self.items.pop()\n'
    ),
    R.CONSTRUCTOR_CALLS_METHOD: lambda s: s.replace(
        "        self.tally = Counter()\n", "        self.tally = Counter()\n        self.size()\n"
    ),
}


@pytest.mark.parametrize("reason", sorted(SKELETON_BREAKS))
def test_each_skeleton_defect_has_its_reason(reason):
    broken = SKELETON_BREAKS[reason](fx.SKELETON)
    assert broken != fx.SKELETON
    verdict = check_skeleton(broken, 5).verdict()
    assert not verdict.keep and verdict.reason == reason, verdict


def test_relative_import_and_missing_example_and_return():
    code = "from .helpers import x\n" + fx.SKELETON.replace("        >>> TallyStack().size()\n        0\n", "").replace(
        "        :return: the number of items, int\n", ""
    )
    report = check_skeleton(code, 5)
    assert _reasons(report) == {R.NON_STDLIB_IMPORT, R.UNDOCUMENTED_METHOD}
    detail = report.verdict().detail
    assert "relative" in detail and "size (:return:, >>> example)" in detail


def test_all_problems_listed_first_reason_wins():
    code = "import requests\n" + fx.SKELETON.replace("def size(self)", "def _size(self)")
    report = check_skeleton(code, 5)
    assert _reasons(report) == {R.NON_STDLIB_IMPORT, R.PRIVATE_METHOD}
    assert report.verdict().reason == R.NON_STDLIB_IMPORT


def test_pass_and_ellipsis_count_as_elided():
    code = fx.SKELETON.replace('        0\n        """\n', '        0\n        """\n        pass\n').replace(
        '        True\n        """\n', '        True\n        """\n        ...\n'
    )
    assert check_skeleton(code, 5).ok


# -- tests ---------------------------------------------------------------------------------------


def test_good_suite_passes_with_its_map():
    report = check_tests(fx.TESTS, IFACE)
    assert report.ok, report.problems
    assert report.method_test_classes["count_of"] == "TallyStackTestCountOf"
    assert report.class_level_test_classes == ["TallyStackTestMain"]
    assert report.test_classes[-1] == "TallyStackTestMain" and len(report.test_classes) == 7
    assert report.test_counts["TallyStackTestPush"] == 3


TEST_BREAKS = {
    R.TESTS_SYNTAX: lambda t: t.replace("def test_peek_empty(self):", "def test_peek_empty(self)"),
    R.NON_STDLIB_IMPORT: lambda t: "import pytest\n" + t,
    R.REDEFINES_CLASS: lambda t: t + "\n\nclass TallyStack:\n    pass\n",
    R.EMPTY_TEST_CLASS: lambda t: (
        t + "\n\nclass TallyStackTestExtra(unittest.TestCase):\n    def helper(self):\n        pass\n"
    ),
    R.UNKNOWN_MEMBER: lambda t: t.replace('stack.count_of("a"), 2)', 'stack.frequency("a"), 2)'),
    R.PRIVATE_MEMBER: lambda t: t.replace(
        'self.assertEqual(stack.items, ["a"])', 'self.assertEqual(stack._items, ["a"])'
    ),
    R.SIGNATURE_MISMATCH: lambda t: t.replace(
        'self.assertEqual(stack.pop(), "b")\n        self.assertEqual(stack.items',
        'self.assertEqual(stack.pop(0), "b")\n        self.assertEqual(stack.items',
    ),
    R.MISSING_METHOD_TEST_CLASS: lambda t: t.replace("class TallyStackTestPeek(", "class TallyStackPeekCases("),
    R.METHOD_TEST_NOT_CALLING: lambda t: t.replace(
        "    def test_size_empty(self):\n        self.assertEqual(self.stack.size(), 0)\n\n"
        '    def test_size_after_pushes(self):\n        self.stack.push("a")\n        self.stack.push("b")\n'
        "        self.assertEqual(self.stack.size(), 2)\n",
        "    def test_size_empty(self):\n        self.assertEqual(len(self.stack.items), 0)\n",
    ),
    R.NO_CLASS_LEVEL_TEST: lambda t: t[: t.index("class TallyStackTestMain")],
}


@pytest.mark.parametrize("reason", sorted(TEST_BREAKS))
def test_each_suite_defect_has_its_reason(reason):
    broken = TEST_BREAKS[reason](fx.TESTS)
    assert broken != fx.TESTS
    verdict = check_tests(broken, IFACE).verdict()
    assert not verdict.keep and verdict.reason == reason, verdict


def test_no_test_classes():
    verdict = check_tests("import unittest\n\n\ndef test_x():\n    assert TallyStack().size() == 0\n", IFACE).verdict()
    assert verdict.reason == R.NO_TEST_CLASSES


@pytest.mark.parametrize(
    "call, fragment",
    [
        ("TallyStack(1, 2)", "takes 1 positional argument(s), 2 given"),
        ("TallyStack(size=3)", "has no parameter 'size'"),
        ("TallyStack().push()", "missing required argument(s): value"),
        ("TallyStack().push('a', value='b')", "multiple values for 'value'"),
    ],
)
def test_signature_problems_named(call, fragment):
    suite = fx.TESTS + f"\n\nclass TallyStackTestExtra(unittest.TestCase):\n    def test_x(self):\n        {call}\n"
    report = check_tests(suite, IFACE)
    assert report.verdict().reason == R.SIGNATURE_MISMATCH
    assert fragment in report.verdict().detail
    assert "TallyStackTestExtra" in report.verdict().detail


def test_instances_from_setup_and_unpacked_calls():
    suite = fx.TESTS + (
        "\n\nclass TallyStackTestExtra(unittest.TestCase):\n"
        "    def setUp(self):\n        self.s = TallyStack()\n"
        "    def test_args(self):\n        args = ['a']\n        self.s.push(*args)\n        self.s.clear()\n"
    )
    report = check_tests(suite, IFACE)
    assert [p.reason for p in report.problems] == [R.UNKNOWN_MEMBER]  # clear() unknown; *args not judged
    assert "'clear'" in report.problems[0].detail


def test_fixture_base_class_without_tests_is_not_a_test_class():
    suite = fx.TESTS.replace(
        "class TallyStackTestMain(unittest.TestCase):",
        "class StackFixture(unittest.TestCase):\n    def setUp(self):\n        self.stack = TallyStack(2)\n\n\n"
        "class TallyStackTestMain(StackFixture):",
    )
    report = check_tests(suite, IFACE)
    assert report.ok, report.problems
    assert "StackFixture" not in report.test_classes


# -- extraction, judge answers, outlines -------------------------------------------------------


def test_extraction_keeps_blank_lines_and_handles_unclosed_fences():
    reply = "<think>plan</think>\nSure:\n```python\n" + fx.SOLUTION + "\n\n# end\n"  # never closed
    got = extract_code(reply, class_name="TallyStack")
    assert got.found and got.how == "unclosed_fence"
    assert fx.SOLUTION.strip("\n") in got.source_file and got.source_file.endswith("# end\n")
    assert not extract_code("I cannot help with that.").found


@pytest.mark.parametrize(
    "text, score",
    [
        ('{"score": 10, "reasons": "ok", "problems": []}', 10),
        ('```json\n{"score": 7, "reasons": "one issue", "problems": ["x"]}\n```', 7),
    ],
)
def test_judge_answers_parse(text, score):
    assert parse_answer(text).score == score


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("Score: 10/10", "not valid JSON"),
        ('{"score": 11, "reasons": "x", "problems": []}', "score"),
        ('{"score": 9, "problems": []}', "reasons"),
        ("[10]", "expected a JSON object"),
        ('{"score": 9, "reasons": "x", "problems": [], "extra": 1}', "extra"),
    ],
)
def test_judge_answers_rejected_with_cause(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_answer(text)


def test_case_outlines_cover_every_method_and_perspective():
    outline = case_outlines(fx.SKELETON, "TallyStack")
    for method in IFACE.target_methods:
        assert f"### {method}" in outline
    assert '`stack.push("a") -> 1`' in outline
    assert "OverflowError" in outline and "IndexError" in outline
    assert outline.count("- boundary:") == 6 and outline.count("- state:") == 6
    assert "TallyStackTestMain" in outline
