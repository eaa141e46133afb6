"""Hand-written sources for the construction tests: two small harvestable classes and a fused
class (skeleton, tests, solution) that really fit together: the solution passes the tests with
full line coverage, and the tests use only the skeleton's interface."""

from __future__ import annotations

COUNTER_SOURCE = '''\
from collections import Counter


class TallyCounter:
    """Count how often keys are seen."""

    def __init__(self):
        """Start with no counts."""
        self.counts = Counter()

    def add(self, key, n=1):
        """Count key n more times and return its new count."""
        self.counts[key] += n
        return self.counts[key]

    def count(self, key):
        """How often key was counted."""
        return self.counts[key]

    def most_common(self, k=1):
        """The k most frequent keys."""
        return [key for key, _ in self.counts.most_common(k)]

    def total(self):
        """Sum of all counts."""
        return sum(self.counts.values())

    def reset(self):
        """Forget every count."""
        self.counts.clear()
        return self.total()
'''

STACK_SOURCE = '''\
class BoundedStack:
    """A last-in first-out stack with a capacity."""

    def __init__(self, capacity=10):
        """Create an empty stack holding at most capacity items."""
        self.capacity = capacity
        self.items = []

    def push(self, value):
        """Push value; raises OverflowError when full."""
        if len(self.items) >= self.capacity:
            raise OverflowError("stack is full")
        self.items.append(value)
        return len(self.items)

    def pop(self):
        """Remove and return the top value."""
        if not self.items:
            raise IndexError("pop from empty stack")
        return self.items.pop()

    def peek(self):
        """The top value, or None."""
        return self.items[-1] if self.items else None

    def size(self):
        """Number of items."""
        return len(self.items)

    def is_full(self):
        """Whether another push would fail."""
        return self.size() >= self.capacity
'''

WALLET_SOURCE = '''\
class CoinWallet:
    """Hold coins of several currencies."""

    def __init__(self):
        """An empty wallet."""
        self.balances = {}

    def deposit(self, currency, amount):
        """Add amount of currency; returns the new balance."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.balances[currency] = self.balances.get(currency, 0) + amount
        return self.balances[currency]

    def withdraw(self, currency, amount):
        """Take amount of currency out; returns the new balance."""
        if self.balance(currency) < amount:
            raise ValueError("insufficient funds")
        self.balances[currency] -= amount
        return self.balances[currency]

    def balance(self, currency):
        """Balance of one currency."""
        return self.balances.get(currency, 0)

    def currencies(self):
        """Currencies held, sorted."""
        return sorted(c for c, v in self.balances.items() if v > 0)

    def empty(self):
        """Whether nothing is held."""
        return not self.currencies()
'''

SKELETON = '''\
from collections import Counter


class TallyStack:
    """
    A bounded last-in first-out stack that also tallies how often each value was pushed.
    """

    def __init__(self, capacity: int = 10):
        """
        Create an empty stack.
        :param capacity: most items the stack holds at once, int
        """
        self.capacity = capacity
        self.items = []
        self.tally = Counter()

    def push(self, value: str) -> int:
        """
        Push value on top of the stack and count it in self.tally.
        :param value: the value to push, str
        :return: the number of items after the push, int
        :raises OverflowError: if the stack already holds capacity items
        >>> stack = TallyStack(2)
        >>> stack.push("a")
        1
        """

    def pop(self) -> str:
        """
        Remove and return the top value; the tally is not changed.
        :return: the value that was on top, str
        :raises IndexError: if the stack is empty
        >>> stack = TallyStack()
        >>> stack.push("a")
        1
        >>> stack.pop()
        'a'
        """

    def peek(self) -> str | None:
        """
        The top value without removing it.
        :return: the top value, or None when the stack is empty
        >>> TallyStack().peek() is None
        True
        """

    def size(self) -> int:
        """
        Number of items on the stack.
        :return: the number of items, int
        >>> TallyStack().size()
        0
        """

    def count_of(self, value: str) -> int:
        """
        How many times value has been pushed, including pushes since popped.
        :param value: the value, str
        :return: the number of pushes of value, int
        >>> stack = TallyStack()
        >>> stack.push("a")
        1
        >>> stack.count_of("a")
        1
        """

    def most_common(self) -> str | None:
        """
        The value pushed most often; among equals, the one pushed first.
        :return: the value, or None if nothing was pushed yet
        >>> stack = TallyStack()
        >>> stack.push("b")
        1
        >>> stack.most_common()
        'b'
        """
'''

TESTS = """\
import unittest


class TallyStackTestPush(unittest.TestCase):
    def test_push_returns_size(self):
        stack = TallyStack(3)
        self.assertEqual(stack.push("a"), 1)
        self.assertEqual(stack.push("b"), 2)
        self.assertEqual(stack.items, ["a", "b"])

    def test_push_counts(self):
        stack = TallyStack()
        stack.push("a")
        stack.push("a")
        self.assertEqual(stack.tally["a"], 2)

    def test_push_full(self):
        stack = TallyStack(1)
        stack.push("a")
        with self.assertRaises(OverflowError):
            stack.push("b")


class TallyStackTestPop(unittest.TestCase):
    def test_pop_returns_top(self):
        stack = TallyStack()
        stack.push("a")
        stack.push("b")
        self.assertEqual(stack.pop(), "b")
        self.assertEqual(stack.items, ["a"])

    def test_pop_empty(self):
        with self.assertRaises(IndexError):
            TallyStack().pop()


class TallyStackTestPeek(unittest.TestCase):
    def test_peek_empty(self):
        self.assertIsNone(TallyStack().peek())

    def test_peek_top(self):
        stack = TallyStack()
        stack.push("x")
        self.assertEqual(stack.peek(), "x")
        self.assertEqual(stack.size(), 1)


class TallyStackTestSize(unittest.TestCase):
    def setUp(self):
        self.stack = TallyStack()

    def test_size_empty(self):
        self.assertEqual(self.stack.size(), 0)

    def test_size_after_pushes(self):
        self.stack.push("a")
        self.stack.push("b")
        self.assertEqual(self.stack.size(), 2)


class TallyStackTestCountOf(unittest.TestCase):
    def test_count_of_unknown(self):
        self.assertEqual(TallyStack().count_of("z"), 0)

    def test_count_of_survives_pop(self):
        stack = TallyStack()
        stack.push("a")
        stack.pop()
        stack.push("a")
        self.assertEqual(stack.count_of("a"), 2)


class TallyStackTestMostCommon(unittest.TestCase):
    def test_most_common_none(self):
        self.assertIsNone(TallyStack().most_common())

    def test_most_common_tie_first_pushed(self):
        stack = TallyStack()
        stack.push("b")
        stack.push("a")
        self.assertEqual(stack.most_common(), "b")

    def test_most_common_counts(self):
        stack = TallyStack()
        for value in ["b", "a", "a"]:
            stack.push(value)
        self.assertEqual(stack.most_common(), "a")


class TallyStackTestMain(unittest.TestCase):
    def test_sequence(self):
        stack = TallyStack(2)
        stack.push("a")
        stack.push("b")
        self.assertEqual(stack.pop(), "b")
        stack.push("a")
        self.assertEqual(stack.size(), 2)
        self.assertEqual(stack.count_of("a"), 2)
        self.assertEqual(stack.most_common(), "a")
        self.assertEqual(stack.peek(), "a")
"""

SOLUTION = """\
from collections import Counter


class TallyStack:
    def __init__(self, capacity: int = 10):
        self.capacity = capacity
        self.items = []
        self.tally = Counter()

    def push(self, value: str) -> int:
        if self.size() >= self.capacity:
            raise OverflowError("stack is full")
        self.items.append(value)
        self.tally[value] += 1
        return self.size()

    def pop(self) -> str:
        if not self.items:
            raise IndexError("pop from empty stack")
        return self.items.pop()

    def peek(self) -> str | None:
        return self.items[-1] if self.items else None

    def size(self) -> int:
        return len(self.items)

    def count_of(self, value: str) -> int:
        return self.tally[value]

    def most_common(self) -> str | None:
        if not self.tally:
            return None
        return self.tally.most_common(1)[0][0]
"""


def fenced(code: str, before: str = "Here is the result.", after: str = "") -> str:
    """A reply as a chat model writes it: prose, a fenced block, maybe more prose."""
    return f"{before}\n\n```python\n{code}```\n{after}"
