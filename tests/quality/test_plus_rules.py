"""Each static rule of the plus tier: a test body it must drop, and a near miss it must keep.

Without a rule, its `bad` case would come back None and the test would fail; without the
near-miss, a rule that dropped everything would pass."""

from __future__ import annotations

import pytest

from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.quality.plus.contract import declared_types
from classforge_bench.pipeline.quality.plus.convert import PlusTest, unasserted
from classforge_bench.pipeline.quality.plus.rules import violation
from classforge_bench.pipeline.quality.plus.suite import screen

CASES = [
    (
        reasons.PLUS_OBJECT_IDENTITY,
        "stack = Stack()\nself.assertEqual(id(stack.top()), 140)",
        "stack = Stack()\nself.assertEqual(stack.top(), 140)",
    ),
    (
        reasons.PLUS_OBJECT_IDENTITY,
        "stack = Stack()\nself.assertIs(stack.top(), stack)",
        "stack = Stack()\nself.assertIs(stack.empty(), True)",
    ),
    (
        reasons.PLUS_OBJECT_IDENTITY,
        "stack = Stack()\nself.assertEqual(repr(stack), '<Stack object at 0x7f3a2c1d>')",
        "stack = Stack()\nself.assertEqual(stack.name(), 'Stack object')",
    ),
    (
        reasons.PLUS_PRIVATE_ATTRIBUTE,
        "stack = Stack()\nself.assertEqual(stack._items, [])",
        "stack = Stack()\nself.assertEqual(stack.items, [])",
    ),
    (
        reasons.PLUS_EXCEPTION_MESSAGE,
        "stack = Stack()\nwith self.assertRaisesRegex(IndexError, 'empty'):\n    stack.pop()",
        "stack = Stack()\nwith self.assertRaises(IndexError):\n    stack.pop()",
    ),
    (
        reasons.PLUS_EXCEPTION_MESSAGE,
        "stack = Stack()\nwith self.assertRaises(IndexError) as caught:\n    stack.pop()\nself.assertEqual(str(caught.exception), 'empty')",
        "stack = Stack()\nwith self.assertRaises(IndexError) as caught:\n    stack.pop()\nself.assertIsNotNone(caught)",
    ),
    (
        reasons.PLUS_UNORDERED,
        "tags = Tags()\nself.assertEqual(tags.show(), \"{'red', 'blue'}\")",
        "tags = Tags()\nself.assertEqual(tags.show(), \"{'red'}\")",
    ),
    (
        reasons.PLUS_UNORDERED,
        "tags = Tags()\nself.assertEqual(list(set(tags.all())), ['a', 'b'])",
        "tags = Tags()\nself.assertEqual(sorted(set(tags.all())), ['a', 'b'])",
    ),
    (
        reasons.PLUS_TIME,
        "log = Log()\nself.assertEqual(log.stamp(), datetime.datetime.now().year)",
        "log = Log()\nself.assertEqual(log.stamp(), datetime.datetime(2020, 1, 1).year)",
    ),
    (
        reasons.PLUS_TIME,
        "log = Log()\nself.assertLess(log.age(), time.time())",
        "log = Log()\nself.assertLess(log.age(), 10)",
    ),
    (
        reasons.PLUS_OUTSIDE_TEMP_DIR,
        "store = Store()\nself.assertTrue(store.save(path='/home/user/data.json'))",
        "store = Store()\nself.assertTrue(store.save(path='data.json'))",
    ),
    (
        reasons.PLUS_OUTSIDE_TEMP_DIR,
        "store = Store()\nself.assertTrue(os.path.exists('/etc/passwd'))",
        "router = Router()\nself.assertTrue(router.route(uri='/api/login'))",
    ),
]


@pytest.mark.parametrize(("reason", "bad", "near_miss"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_drops_the_bad_case_and_keeps_the_near_miss(reason, bad, near_miss):
    found = violation(bad)
    assert found is not None and found[0] == reason, found
    assert reasons.is_registered(found[0])
    assert violation(near_miss) is None


def test_screen_drops_duplicates_and_what_is_over_the_cap():
    tests = [
        PlusTest(origin=f"test_{i}", methods=["top"], body=body)
        for i, body in enumerate(
            ["s = S()\nself.assertEqual(s.top(), 1)\n"] * 2
            + [f"s = S()\nself.assertEqual(s.top({i}), 1)\n" for i in range(3)]
        )
    ]
    kept, drops = screen(tests, max_tests=2)
    assert [t.origin for t in kept] == ["test_0", "test_2"]
    assert [(d.origin, d.reason) for d in drops] == [
        ("test_1", reasons.PLUS_DUPLICATE),
        ("test_3", reasons.PLUS_OVER_LIMIT),
        ("test_4", reasons.PLUS_OVER_LIMIT),
    ]


def test_screen_drops_reads_of_fields_the_description_does_not_declare():
    described = (
        "class Stack:\n    def __init__(self):\n        self.items = []\n        self.name, self.size = 'a', 0\n\n"
        "    def top(self):\n        pass\n"
    )
    tests = [
        PlusTest(origin="test_0", methods=["top"], body="stack = Stack()\nself.assertEqual(stack.items, [])\n"),
        PlusTest(origin="test_1", methods=["top"], body="stack = Stack()\nself.assertEqual(stack.cache, {})\n"),
        PlusTest(origin="test_2", methods=["top"], body="stack = Stack()\nself.assertEqual(stack.size, 0)\n"),
    ]
    kept, drops = screen(tests, 10, "Stack", {}, described)
    # `self.name, self.size = ...` declares both; the check of the undeclared `cache` goes, and the
    # test, left asserting nothing, goes after the state observation (plus-no-assertion)
    assert [t.origin for t in kept] == ["test_0", "test_1", "test_2"] and drops == []
    assert kept[1].body == "stack = Stack()\n"
    asserting, silent = unasserted(kept)
    assert [t.origin for t in asserting] == ["test_0", "test_2"]
    assert [(d.origin, d.reason) for d in silent] == [("test_1", reasons.PLUS_NO_ASSERTION)]
    # read anywhere else (an argument), the undeclared field drops the test
    passed_on = PlusTest(
        origin="test_3",
        methods=["top"],
        body="stack = Stack()\nself.assertTrue(len(stack.cache) == 0 or stack.top())\nx = stack.cache\n",
    )
    _, drops = screen([passed_on], 10, "Stack", {}, described)
    assert [(d.origin, d.reason) for d in drops] == [("test_3", reasons.PLUS_PRIVATE_ATTRIBUTE)]
    assert "cache" in drops[0].detail


# What the description shows where no `:param` line types a parameter: its examples and defaults
# (FitnessTracker's constructor, TicTacToe's N, as in ClassEval_40 and 86), and the sign of the
# numbers it shows (NumberConverter.decimal_to_octal, ClassEval_64).
SHOWN = '''
class Tracker:
    def __init__(self, height, sex, size=3):
        """Store the user's data.
        >>> t = Tracker(1.8, "male")
        """
        self.height, self.sex, self.size = height, sex, size

    @staticmethod
    def to_octal(number):
        """Convert a number to octal.
        :param number: int, decimal number
        >>> Tracker.to_octal(42423)
        '122667'
        """

    @staticmethod
    def shift(offset):
        """Move by offset, negative moves back.
        >>> Tracker.shift(3)
        """
'''


@pytest.mark.parametrize(
    ("reason", "bad", "near_miss"),
    [
        (
            reasons.PLUS_OFF_CONTRACT,  # a type the constructor's example does not show
            "t = Tracker(height=1.8, sex=(-1297, True))\nself.assertEqual(t.sex, (-1297, True))",
            "t = Tracker(height=70, sex='female')\nself.assertEqual(t.sex, 'female')",
        ),
        (
            reasons.PLUS_OFF_CONTRACT,  # a bool where the default shows a number
            "t = Tracker(height=1.8, sex='male', size=False)\nself.assertEqual(t.size, False)",
            "t = Tracker(height=1.8, sex='male', size=4)\nself.assertEqual(t.size, 4)",
        ),
        (
            reasons.PLUS_OFF_DOMAIN,  # negative where every number shown is >= 0 and the text never says negative
            "self.assertEqual(Tracker.to_octal(number=-916), 'o1624')",
            "self.assertEqual(Tracker.to_octal(number=916), '1624')",
        ),
        (
            reasons.PLUS_OFF_CONTRACT,  # a result the test asserts is a bool, fed back where a number is shown
            "t = Tracker(height=1.8, sex='male')\nresult = t.to_octal(number=8)\nself.assertFalse(result)\n"
            "t2 = Tracker(height=1.8, sex='male', size=result)\nself.assertEqual(t2.size, False)",
            "t = Tracker(height=1.8, sex='male')\nresult = t.to_octal(number=8)\nself.assertEqual(result, 3)\n"
            "t2 = Tracker(height=1.8, sex='male', size=result)\nself.assertEqual(t2.size, 3)",
        ),
    ],
    ids=["example-type", "default-type", "negative", "asserted-variable"],
)
def test_screen_drops_arguments_the_description_does_not_show(reason, bad, near_miss):
    tests = [
        PlusTest(origin="bad", methods=["m"], body=bad),
        PlusTest(origin="near_miss", methods=["m"], body=near_miss),
    ]
    kept, drops = screen(tests, 10, "Tracker", declared_types(SHOWN, "Tracker"), SHOWN)
    assert [(d.origin, d.reason) for d in drops] == [("bad", reason)] and reasons.is_registered(reason)
    assert [t.origin for t in kept] == ["near_miss"]


def test_a_negative_number_stays_where_the_description_says_negative():
    tests = [PlusTest(origin="back", methods=["shift"], body="self.assertIsNone(Tracker.shift(offset=-2))")]
    kept, drops = screen(tests, 10, "Tracker", declared_types(SHOWN, "Tracker"), SHOWN)
    assert [t.origin for t in kept] == ["back"] and drops == []


def test_examples_of_a_class_without_its_own_constructor_are_read():
    described = 'class Box:\n    def put(self, n):\n        """>>> b = Box()\n        >>> b.put(3)\n        """\n'
    tests = [PlusTest(origin="neg", methods=["put"], body="box = Box()\nself.assertIsNone(box.put(n=-3))")]
    kept, drops = screen(tests, 10, "Box", {}, described)
    assert kept == [] and [d.reason for d in drops] == [reasons.PLUS_OFF_DOMAIN]


BRACKETS = '''
class Brackets:
    def __init__(self, expr):
        self.expr = expr

    def clear_expr(self):
        """Clears the expression of all characters that are not brackets.
        >>> b = Brackets("a(b)c")
        >>> b.clear_expr()
        >>> b.expr
        '()'
        """

    def check(self):
        """Checks if the expression has balanced brackets.
        :return: True if the expression has balanced brackets, False otherwise.
        """
'''


def test_screen_drops_a_field_change_the_method_description_never_names():
    # As in ClassEval_7: the reference's check() clears `expr` first; nothing in its description says
    # so, and a correct solution that leaves `expr` alone failed this test.
    before = "b = Brackets(expr='a[b]')\nself.assertEqual(b.expr, 'a[b]')\n"
    tests = [
        PlusTest(
            origin="bad",
            methods=["check"],
            body=before + "self.assertTrue(b.check())\nself.assertEqual(b.expr, '[]')\n",
        ),
        PlusTest(
            origin="near_miss", methods=["clear_expr"], body=before + "b.clear_expr()\nself.assertEqual(b.expr, '[]')\n"
        ),
        PlusTest(
            origin="unchanged",
            methods=["check"],
            body=before + "self.assertTrue(b.check())\nself.assertEqual(b.expr, 'a[b]')\n",
        ),
    ]
    kept, drops = screen(tests, 10, "Brackets", declared_types(BRACKETS, "Brackets"), BRACKETS)
    assert [(d.origin, d.reason) for d in drops] == [("bad", reasons.PLUS_UNDESCRIBED_EFFECT)]
    assert reasons.is_registered(reasons.PLUS_UNDESCRIBED_EFFECT) and "check()" in drops[0].detail
    assert [t.origin for t in kept] == ["near_miss", "unchanged"]
