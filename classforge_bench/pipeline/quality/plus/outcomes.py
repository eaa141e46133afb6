"""What a test asserts of a method's outcome, read from its source: (method, outcome class) pairs.

The outcome classes: `returns None`, `returns True`, `returns False`, `returns <type>` (an int, a
str, a list...), `returns not None`, `raises <Exception>`. Only a value the test takes straight from
the call is read (`self.assertIsNone(hotel.check_in(...))`, or `r = x.m(...)` then
`self.assertEqual(r, ...)`); a value derived from it (`len(r)`) is not the method's outcome. The
mutation-guided selection (selection.py) keeps a plus test that shows an outcome of a method that
neither the base tests nor the plus tests kept before it assert: a mutant of the reference seldom
changes what kind of value a method returns, a wrong solution often does (`check_in` returning True
where its description's example returns nothing).
"""

from __future__ import annotations

import ast

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.quality.plus.examples import literal_value
from classforge_bench.pipeline.quality.plus.literals import is_assert_call
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract

Outcome = tuple[str, str]
_FIXED = {"assertTrue": "returns True", "assertFalse": "returns False", "assertIsNone": "returns None"}
_EQUAL = ("assertEqual", "assertAlmostEqual", "assertIs")


def _of_value(node: ast.expr) -> str | None:
    literal = literal_value(node)
    if literal is None:
        return None
    kind, value = literal
    return f"returns {value}" if value is None or isinstance(value, bool) else f"returns {kind}"


class _Reader:
    def __init__(self, contract: TaskContract) -> None:
        self.contract = contract
        self.assigned: dict[str, str] = {}  # variable -> the method whose value it holds
        self.found: set[Outcome] = set()

    def method_of(self, node: ast.expr) -> str | None:
        """The method whose value `node` is, straight from the call."""
        if isinstance(node, ast.Name):
            return self.assigned.get(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return node.func.attr if node.func.attr in self.contract.methods else None
        return None

    def assertion(self, call: ast.Call) -> None:
        assert isinstance(call.func, ast.Attribute)
        name, args = call.func.attr, call.args
        if not args:
            return
        method = self.method_of(args[0])
        if method is None and name in _EQUAL and len(args) > 1:
            method, args = self.method_of(args[1]), [args[1], args[0]]
        outcome = _FIXED.get(name) or ("returns not None" if name == "assertIsNotNone" else None)
        if outcome is None and name in _EQUAL and len(args) > 1:
            outcome = _of_value(args[1])
        if method is not None and outcome is not None:
            self.found.add((method, outcome))

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.With) and node.items and is_assert_call(node.items[0].context_expr):
            raised = node.items[0].context_expr
            assert isinstance(raised, ast.Call)
            kind = ast.unparse(raised.args[0]) if raised.args else "Exception"
            self.found |= {(m, f"raises {kind}") for m in self.contract.called(node) if m != "__init__"}
            return
        if isinstance(node, ast.Expr) and is_assert_call(node.value):
            assert isinstance(node.value, ast.Call)
            self.assertion(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            method = self.method_of(node.value) if isinstance(node.value, ast.Call) else None
            if method is not None:
                self.assigned[node.targets[0].id] = method
            else:
                self.assigned.pop(node.targets[0].id, None)


def asserted_outcomes(body: str, contract: TaskContract) -> set[Outcome]:
    """The (method, outcome) pairs a test body asserts (module docstring)."""
    reader = _Reader(contract)
    for node in parsing.parse(body).body:
        reader.statement(node)
    return reader.found


def base_outcomes(base_tests: str, contract: TaskContract) -> set[Outcome]:
    """The pairs the base tests assert, over every test method of every class."""
    try:
        tree = parsing.parse(base_tests)
    except SyntaxError:
        return set()
    found: set[Outcome] = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        reader = _Reader(contract)
        for node in fn.body:
            reader.statement(node)
        found |= reader.found
    return found
