import ast

from classforge_bench.pipeline.core.class_analysis import (
    analyse_class,
    dependency_depth,
    dependency_levels,
    import_aliases,
)

SOURCE = """
import math
from datetime import datetime as dt

class Account:
    RATE = 0.1

    def __init__(self, owner):
        self.owner = owner
        self.balance = 0

    def deposit(self, amount):
        self.balance += amount
        return self.balance

    def transfer(self, other, amount):
        self.withdraw(amount)
        other.deposit(amount)

    def withdraw(self, amount):
        self.balance -= self._fee(amount)

    @staticmethod
    def _fee(amount):
        return amount + Account.rounded(amount * 0.01)

    @staticmethod
    def rounded(x):
        return math.floor(x)

    @property
    def summary(self):
        return f"{self.owner}: {self.balance} at {dt.now()}"

    def report(self):
        return self.summary
"""


def deps():
    module = ast.parse(SOURCE)
    return analyse_class(module.body[2], import_aliases(module))


def test_method_field_and_library_dependencies():
    d = deps()
    assert d["transfer"].method_calls == ["withdraw"] and d["transfer"].fields == []
    assert d["withdraw"].method_calls == ["_fee"] and d["withdraw"].fields == ["balance"]
    assert d["_fee"].method_calls == ["rounded"], "calls through the class name count"
    assert d["rounded"].libs == ["math"] and d["summary"].libs == ["datetime"]
    assert d["report"].fields == ["summary"], "a property reads like a field, as in ClassEval"
    assert d["deposit"].standalone is False and d["rounded"].method_calls == []


def test_levels_and_depth():
    levels = dependency_levels(deps())
    assert levels["rounded"] == 0 and levels["_fee"] == 1 and levels["withdraw"] == 2 and levels["transfer"] == 3
    assert dependency_depth(deps()) == 4


def test_mutual_recursion_terminates():
    module = ast.parse(
        "class C:\n    def a(self):\n        return self.b()\n    def b(self):\n        return self.a()\n"
    )
    levels = dependency_levels(analyse_class(module.body[0]))
    assert set(levels) == {"a", "b"} and max(levels.values()) <= 2
