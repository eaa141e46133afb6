"""Repair a test that breaks the task's contract only through an argument it does not check.

Pynguin builds a FitnessTracker with `sex=(-1297, True)` and then checks the declared field
`BMI_std`, which no sex changes; a literal mutant of a base test may leave a parameter's shown
shape. Dropping such a test loses the check it makes on an input that does not matter to it. So a
literal argument the contract refuses is replaced by the first value the description or the base
tests show for that parameter which the contract admits (`Shown.sources`). An argument inside an
assertion, or one whose value an assertion expects (`Buffer(capacity=0)`, then `capacity == 0`), is
what the test checks: that test is not repaired. Whether the repaired test's checks
still hold is then the reference's to say (the observation re-records them; a Pynguin test whose
assertion depended on the argument fails validation on the reference and is dropped there).
"""

from __future__ import annotations

import ast

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.quality.plus.examples import literal_value
from classforge_bench.pipeline.quality.plus.literals import is_assert_call
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract

_MAX_REPAIRS = 8  # arguments repaired in one test at most: a test needing more is not one input off


def _asserted(tree: ast.AST) -> set[int]:
    """ids of every node inside an assertion's call."""
    return {id(n) for call in ast.walk(tree) if is_assert_call(call) for n in ast.walk(call)}


def _echoed(tree: ast.AST, arg: ast.expr) -> bool:
    """An assertion compares with the argument's own value (`Buffer(capacity=0)` then
    `assertEqual(b.capacity, 0)`): the argument is what the test checks."""
    value = literal_value(arg)
    for call in (n for n in ast.walk(tree) if is_assert_call(n)):
        assert isinstance(call, ast.Call)
        if any(literal_value(a) == value for a in call.args[1:]):
            return True
    return False


def _method(call: ast.Call, contract: TaskContract) -> str | None:
    if isinstance(call.func, ast.Name) and call.func.id == contract.class_name:
        return "__init__"
    if isinstance(call.func, ast.Attribute) and call.func.attr in contract.methods:
        return call.func.attr
    return None


def _arguments(call: ast.Call, method: str, contract: TaskContract) -> list[tuple[str, ast.expr]]:
    """(parameter, argument) of a call of the class, positional ones named by the signature's order."""
    order = list(contract.evidence.get(method, {}))
    named = [(order[i], a) for i, a in enumerate(call.args) if i < len(order) and not isinstance(a, ast.Starred)]
    return named + [(k.arg, k.value) for k in call.keywords if k.arg]


def _offending(tree: ast.AST, contract: TaskContract) -> tuple[str, str, ast.expr] | None:
    """(method, parameter, argument) of the first literal argument the contract refuses."""
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        method = _method(call, contract)
        if method is None:
            continue
        for param, arg in _arguments(call, method, contract):
            if literal_value(arg) is not None and not contract.admits(method, param, ast.unparse(arg)):
                return method, param, arg
    return None


def _splice(body: str, node: ast.expr, text: str) -> str | None:
    """`body` with the one-line `node` replaced by `text`; None for a node spanning lines."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return None
    lines = body.splitlines(keepends=True)
    line = lines[node.lineno - 1].encode("utf-8")
    start, end = node.col_offset, node.end_col_offset
    lines[node.lineno - 1] = (line[:start] + text.encode("utf-8") + line[end:]).decode("utf-8")
    return "".join(lines)


def repaired(body: str, contract: TaskContract) -> tuple[str, int] | None:
    """(the body with every off-contract argument outside an assertion replaced by an in-contract
    value shown for its parameter, how many were replaced), or None: an argument inside an
    assertion, or one with no in-contract value to take its place, breaks the contract."""
    count = 0
    while contract.argument_problem(body) is not None:
        tree = parsing.parse(body)
        found = _offending(tree, contract) if count < _MAX_REPAIRS else None
        if found is None or id(found[2]) in _asserted(tree) or _echoed(tree, found[2]):
            return None
        method, param, arg = found
        shown = contract.evidence.get(method, {}).get(param)
        value = next((s for s in (shown.sources if shown else []) if contract.admits(method, param, s)), None)
        fixed = _splice(body, arg, value) if value is not None else None
        if fixed is None:
            return None
        body, count = fixed, count + 1
    return body, count
