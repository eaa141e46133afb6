"""A small class, its tests and a backend that counts sandbox runs: shared by the mutation tests."""

from __future__ import annotations

import textwrap

SOLUTION = textwrap.dedent(
    """
    class Counter:
        def __init__(self):
            self.n = 0

        def add(self, k=1):
            if k < 0:
                raise ValueError("negative")
            self.n += k
            if False:
                self.n = -1
            return self.n

        def drain(self):
            while self.n > 0:
                self.n -= 1
            return self.n

        def describe(self):
            return "Counter"
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


    class CounterTestDrain(unittest.TestCase):
        def test_drain(self):
            c = Counter()
            c.add(3)
            self.assertEqual(c.drain(), 0)
    """
)


CLASSES = ["CounterTestAdd", "CounterTestDrain"]


class CountingBackend:
    """The real backend, counting the runs made through it."""

    def __init__(self, inner) -> None:
        self.inner, self.runs = inner, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def run(self, *args, **kwargs):
        self.runs += 1
        return self.inner.run(*args, **kwargs)
