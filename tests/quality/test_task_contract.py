"""The task contract (`quality/plus/task_contract.py`): each input and observation rule, with a case
it refuses and the case that shows the rule is what refuses it (the same test passes without it)."""

from __future__ import annotations

import textwrap

from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.suite import screen
from classforge_bench.pipeline.quality.plus.task_contract import (
    ANY_EXCEPTION,
    derive_contract,
    documented_exceptions,
)

BUFFER = textwrap.dedent('''
    class Buffer:
        """A text buffer of fixed capacity."""

        LIMIT = 100

        def __init__(self, capacity: int):
            """Make an empty buffer.

            :param capacity: int, how many characters it holds
            >>> b = Buffer(10)
            """
            self.capacity = capacity
            self._cells = []

        def insert(self, pos, char):
            """Insert one character.

            :param pos: int, where
            :param char: the character to insert
            :return: None
            >>> b.insert(0, "a")
            """

        def shift(self, steps: int):
            """Move the cursor.

            :param steps: how far
            :return: the new position
            """

        def delete(self, pos: int):
            """Delete the character at pos.

            :param pos: int, where
            :raises IndexError: when pos is past the end
            :return: None
            """

        def load(self, text: str):
            """Load a text; fails if the text is invalid.

            :param text: str, the text
            :return: None
            """

        def clear(self):
            """Empty the buffer.

            :return: None
            """
''')
CONTRACT = derive_contract(BUFFER, "Buffer")


def _why(body: str) -> tuple[str, str] | None:
    return CONTRACT.argument_problem(body)


# -- inputs -------------------------------------------------------------------------------------------
def test_zero_only_where_a_value_shown_or_the_text_admits_it():
    # `Buffer(10)` is all the description shows of capacity, and it never admits 0
    assert _why("b = Buffer(capacity=0)\n")[0] == reasons.PLUS_OFF_DOMAIN
    assert _why("b = Buffer(capacity=5)\n") is None
    # `insert(0, "a")` shows pos=0: 0 is in range there
    assert _why("b = Buffer(capacity=5)\nb.insert(pos=0, char='a')\n") is None
    # documented: "0 or more" admits it
    admitted = derive_contract(BUFFER.replace("how many characters it holds", "0 or more characters"), "Buffer")
    assert admitted.argument_problem("b = Buffer(capacity=0)\n") is None
    # a 0 elsewhere in the text (a field's initial value, an example's output) admits nothing
    initially = BUFFER.replace("self.capacity = capacity", "self.capacity = capacity\n        self.size = 0")
    initially = initially.replace(">>> b = Buffer(10)", "self.size (int): initially 0\n        >>> b = Buffer(10)")
    assert "initially 0" in initially
    assert derive_contract(initially, "Buffer").argument_problem("b = Buffer(capacity=0)\n") is not None


def test_negative_only_where_shown_or_said():
    assert _why("b = Buffer(capacity=5)\nb.insert(pos=-3, char='a')\n")[0] == reasons.PLUS_OFF_DOMAIN
    said = derive_contract(
        BUFFER.replace(":param pos: int, where", ":param pos: int, negative counts from the end", 1), "Buffer"
    )
    assert said.argument_problem("b = Buffer(capacity=5)\nb.insert(pos=-3, char='a')\n") is None


def test_a_char_is_one_character():
    problem = _why("b = Buffer(capacity=5)\nb.insert(pos=0, char='ab')\n")
    assert problem is not None and problem[0] == reasons.PLUS_OFF_DOMAIN and "one character" in problem[1]
    assert _why("b = Buffer(capacity=5)\nb.insert(pos=0, char='z')\n") is None
    # positional arguments are read by the signature's order too
    assert _why("b = Buffer(5)\nb.insert(0, 'xyz')\n") is not None
    # a parameter neither named nor described as a character keeps any length
    assert (
        derive_contract(BUFFER.replace("char", "text_in"), "Buffer").argument_problem(
            "b = Buffer(capacity=5)\nb.insert(pos=0, text_in='ab')\n"
        )
        is None
    )


def test_no_float_for_an_int_annotation():
    # `shift(self, steps: int)`: its docstring gives no type; the annotation does
    problem = _why("b = Buffer(capacity=5)\nb.shift(steps=1.5)\n")
    assert problem is not None and problem[0] == reasons.PLUS_OFF_CONTRACT
    assert _why("b = Buffer(capacity=5)\nb.shift(steps=2)\n") is None
    unannotated = derive_contract(BUFFER.replace("steps: int", "steps"), "Buffer")
    assert unannotated.argument_problem("b = Buffer(capacity=5)\nb.shift(steps=1.5)\n") is None


def test_the_base_tests_values_are_in_the_domain():
    # the skeleton shows capacity 10 only; the task's own tests build a buffer of capacity 0
    base = "class T(unittest.TestCase):\n    def test(self):\n        b = Buffer(0)\n"
    assert derive_contract(BUFFER, "Buffer", base).argument_problem("b = Buffer(capacity=0)\n") is None
    assert derive_contract(BUFFER, "Buffer").argument_problem("b = Buffer(capacity=0)\n") is not None


def test_walk_values_go_through_the_same_rules():
    assert CONTRACT.admits("__init__", "capacity", "7") and not CONTRACT.admits("__init__", "capacity", "0")
    assert CONTRACT.admits("insert", "char", "'q'") and not CONTRACT.admits("insert", "char", "'qq'")
    assert not CONTRACT.admits("shift", "steps", "0.5")


# -- observations -------------------------------------------------------------------------------------
def test_fields_and_constants_the_skeleton_declares_and_nothing_else():
    assert CONTRACT.attribute_problem("b = Buffer(capacity=5)\nself.assertEqual(b.capacity, 5)\n") is None
    assert CONTRACT.attribute_problem("self.assertEqual(Buffer.LIMIT, 100)\n") is None
    # a class constant of the reference that the skeleton never mentions (CheckoutInvoice.CENT)
    assert "CENT" in CONTRACT.attribute_problem("x = Buffer.CENT\n")
    # an undeclared field of an instance
    assert "size" in CONTRACT.attribute_problem("b = Buffer(capacity=5)\nself.assertEqual(b.size, 0)\n")


def test_a_check_of_an_undeclared_constant_goes_and_the_tests_other_checks_stand():
    # what Pynguin writes after every constructor: each class attribute checked
    body = (
        "b = Buffer(capacity=5)\nself.assertEqual(b.capacity, 5)\n"
        "self.assertEqual(Buffer.CENT, Decimal('0.01'))\nself.assertEqual(\n    b.hidden,\n    1,\n)\n"
    )
    pruned, removed = CONTRACT.without_undeclared_checks(body)
    assert removed == 2 and pruned == "b = Buffer(capacity=5)\nself.assertEqual(b.capacity, 5)\n"
    assert CONTRACT.attribute_problem(pruned) is None
    # used as an argument, the undeclared constant is still the test's problem: it goes
    argument = "b = Buffer(capacity=Buffer.CENT)\nself.assertEqual(b.capacity, 5)\n"
    assert CONTRACT.without_undeclared_checks(argument) == (argument, 0)
    kept, drops = screen([PlusTest(origin="t", methods=[], body=body)], 5, "Buffer", task_contract=CONTRACT)
    assert [t.body for t in kept] == [pruned] and drops == []


def test_documented_exceptions():
    assert documented_exceptions(":raises IndexError: when past the end") == frozenset({"IndexError"})
    assert documented_exceptions("Raises ValueError if the amount is negative.") == frozenset({"ValueError"})
    assert documented_exceptions("Fails if the text is invalid.") == frozenset({ANY_EXCEPTION})
    assert documented_exceptions("Adds two numbers.") == frozenset()


def test_an_exception_is_asserted_only_as_documented():
    documented = "b = Buffer(capacity=5)\nwith self.assertRaises(IndexError):\n    b.delete(pos=9)\n"
    assert CONTRACT.raise_problem(documented) == (documented, "")
    undocumented = "b = Buffer(capacity=5)\nwith self.assertRaises(KeyError):\n    b.clear()\n"
    body, why = CONTRACT.raise_problem(undocumented)
    assert body is None and "KeyError" in why
    # stated without a type ("fails if the text is invalid"): any exception, so the type is not pinned
    untyped = "b = Buffer(capacity=5)\nwith self.assertRaises(UnicodeError):\n    b.load(text='\\x00')\n"
    body, _ = CONTRACT.raise_problem(untyped)
    assert body is not None and "assertRaises(Exception)" in body and "UnicodeError" not in body


def test_screen_drops_each_break_with_its_reason():
    tests = {
        "zero": "b = Buffer(capacity=0)\nself.assertEqual(b.capacity, 0)\n",
        "char": "b = Buffer(capacity=5)\nb.insert(pos=0, char='ab')\nself.assertEqual(b.capacity, 5)\n",
        "float": "b = Buffer(capacity=5)\nself.assertIsNone(b.shift(steps=0.5))\n",
        "cent": "b = Buffer(capacity=Buffer.CENT)\nself.assertEqual(b.capacity, 5)\n",
        "raise": "b = Buffer(capacity=5)\nwith self.assertRaises(KeyError):\n    b.clear()\n",
        "fair": "b = Buffer(capacity=5)\nwith self.assertRaises(IndexError):\n    b.delete(pos=9)\n",
    }
    plus = [PlusTest(origin=k, methods=[], body=v) for k, v in tests.items()]
    repairs: list[str] = []
    kept, drops = screen(plus, 10, "Buffer", task_contract=CONTRACT, repairs=repairs)
    # "char" breaks the contract only through an argument it does not check: repaired with the
    # character the description shows (repair.py), not dropped; "zero" checks its own argument
    assert [t.origin for t in kept] == ["char", "fair"] and repairs == ["char"]
    assert kept[0].body == "b = Buffer(capacity=5)\nb.insert(pos=0, char='a')\nself.assertEqual(b.capacity, 5)\n"
    assert {d.origin: d.reason for d in drops} == {
        "zero": reasons.PLUS_OFF_DOMAIN,
        "float": reasons.PLUS_OFF_CONTRACT,
        "cent": reasons.PLUS_PRIVATE_ATTRIBUTE,
        "raise": reasons.PLUS_UNDOCUMENTED_EXCEPTION,
    }
    assert all(reasons.is_registered(d.reason) for d in drops)


INVOICE = textwrap.dedent('''
    class Invoice:
        def __init__(self, number, clock=None):
            """Create an invoice.
            :param number: invoice number, str
            :param clock: function returning the time; None uses time.monotonic, callable or None
            """
            self.number = number

        def overdue(self, today):
            """Whether it is overdue.
            :param today: the day it is, datetime.date
            :return: bool
            """
''')


def test_the_type_a_param_line_states_in_its_last_part():
    contract = derive_contract(INVOICE, "Invoice")
    # "invoice number, str": the type is the last part, not the word "number" in the description
    assert contract.declared["__init__"]["number"] == "str"
    assert contract.argument_problem("i = Invoice(number=-1038)\n")[0] == reasons.PLUS_OFF_CONTRACT
    assert contract.argument_problem("i = Invoice(number='A-1')\n") is None
    # a class no literal is: a dict for a callable, the task's own instance for a date
    assert contract.argument_problem("i = Invoice(number='A', clock={})\n")[0] == reasons.PLUS_OFF_CONTRACT
    assert contract.argument_problem("i = Invoice(number='A', clock=None)\n") is None
    assert contract.argument_problem("i = Invoice(number='A')\ni.overdue(today=i)\n") is not None
    assert contract.argument_problem("i = Invoice(number='A')\ni.overdue(today={'open': 1})\n") is not None


BIGNUM = '''
class BigNumCalculator:
    """Big number arithmetic on numbers written as strings."""

    def add(self, num1, num2):
        """Adds two big numbers.
        :param num1: The first number to add, str.
        :param num2: The second number to add, str.
        :return: The sum of the two numbers, str.
        >>> bigNum = BigNumCalculator()
        >>> bigNum.add("12345678901234567890", "98765432109876543210")
        '111111111011111111100'
        """
'''


def test_a_number_written_as_text_keeps_that_shape():
    # ClassEval_9: every string shown is digits; add("", "") and add("#:FIV", "0") ask what the
    # skeleton never states (two correct published answers failed the plus tier on them).
    contract = derive_contract(BIGNUM, "BigNumCalculator")
    for call in ('c = BigNumCalculator()\nc.add(num1="", num2="1")\n', 'c = BigNumCalculator()\nc.add("#:FIV", "0")\n'):
        problem = contract.argument_problem(call)
        assert problem is not None and problem[0] == reasons.PLUS_OFF_DOMAIN and "number in digits" in problem[1]
    assert contract.argument_problem('c = BigNumCalculator()\nc.add(num1="-03", num2="7")\n') is None
    # a string parameter whose examples are words keeps any string
    words = derive_contract(
        BIGNUM.replace('"12345678901234567890", "98765432109876543210"', '"ab", "cd"'), "BigNumCalculator"
    )
    assert words.argument_problem('c = BigNumCalculator()\nc.add(num1="", num2="#")\n') is None
