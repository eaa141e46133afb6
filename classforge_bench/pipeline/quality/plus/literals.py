"""Type-preserving mutation of one literal in a test body (EvalPlus's seed-input mutation, on the
literals of a class-level unittest body).

A literal keeps its type and, for a number, its sign: an int moves by one, doubles or grows by a
few (a negative one stays negative), a float doubles, halves or moves a little, a bool flips, a str
has one character changed within its class (a digit for a digit, a lower-case letter for one),
dropped or doubled, a list, tuple or set loses or doubles an element, a dict loses an entry or has
one of its values mutated. Dict keys are never changed: they are a record's structure (`{'name':
..., 'age': ...}`), not input values. Only literals in input positions are mutated: arguments of
calls, never the expected value an assertion compares with (that is re-observed on the reference).
Whether a mutant stays inside the task's contract is not decided here (seeds.py asks the contract).
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable

_ASSERT_ON_FIRST = ("assertTrue", "assertFalse", "assertIsNone", "assertIsNotNone")
_RAISES = ("assertRaises", "assertRaisesRegex")
_DIGITS, _LOWER, _UPPER = "0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def is_assert_call(node: ast.AST) -> bool:
    """`self.assert...(...)`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
        and node.func.attr.startswith("assert")
    )


def _assert_inputs(node: ast.Call) -> list[tuple[ast.expr, bool]]:
    """(argument, whether it is an assertion's top-level operand) of an assertion worth visiting:
    the first argument usually holds the calls (and their inputs); the rest is the expected value."""
    assert isinstance(node.func, ast.Attribute)
    name = node.func.attr
    if name in _RAISES:
        return [(a, False) for a in node.args[1:]]
    return [(a, True) for i, a in enumerate(node.args) if i == 0 or name in _ASSERT_ON_FIRST]


def input_nodes(body: list[ast.stmt]) -> list[ast.expr]:
    """Constants and displays in input positions (not an assertion's expected value), in source order."""
    found: list[ast.expr] = []

    def visit(node: ast.AST, in_assert_top: bool) -> None:
        if is_assert_call(node):
            assert isinstance(node, ast.Call)
            for arg, top in _assert_inputs(node):
                visit(arg, top)
            return
        if isinstance(node, ast.Call):
            for child in list(node.args) + [k.value for k in node.keywords]:
                visit(child, False)
            if isinstance(node.func, ast.Attribute):
                visit(node.func.value, False)
            return
        scalar = isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool))
        if (scalar or isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set))) and not in_assert_top:
            assert isinstance(node, ast.expr)
            found.append(node)
        # a dict display's keys are its structure (a record's field names), not input values
        children: list[ast.AST] = list(node.values) if isinstance(node, ast.Dict) else list(ast.iter_child_nodes(node))
        for kid in children:
            visit(kid, in_assert_top)

    for stmt in body:
        visit(stmt, False)
    return found


def mutate_str(text: str, rng: random.Random) -> str | None:
    """One character changed within its class, dropped or doubled, or replaced by another of the
    string's own; None for the empty string (nothing to keep the shape of)."""
    if not text:
        return None
    i = rng.randrange(len(text))
    c = text[i]
    ops: list[Callable[[], str]] = []
    for alphabet in (_DIGITS, _LOWER, _UPPER):
        if c in alphabet:
            ops.append(lambda a=alphabet: text[:i] + rng.choice(a.replace(c, "")) + text[i + 1 :])  # type: ignore[misc]
    if len(text) > 1:
        ops.append(lambda: text[:i] + text[i + 1 :])
        ops.append(lambda: text[:i] + c + text[i:])
        j = rng.randrange(len(text))
        ops.append(lambda: text[:i] + text[j] + text[i + 1 :] if text[j] != c else text[:i] + text[i + 1 :])
    return rng.choice(ops)() if ops else None


def _mutate_number(value: int | float, rng: random.Random) -> int | float:
    # The draws are made in this order whatever the sign, so a seed gives the same mutants as the
    # differential benchmark's first version (its recorded divergences stay reproducible).
    if isinstance(value, int):
        grown = value + rng.randint(2, 9)
        if value < 0:
            return rng.choice([value - 1, value * 2, value + 1 if value + 1 < 0 else value - 2])
        return rng.choice([value + 1, value * 2 if value else 1, grown] + ([value - 1] if value else []))
    if value >= 0:
        return rng.choice([value * 2, value + 0.5, value / 2, value + 1.25])
    return rng.choice([value * 2, value - 0.5, value / 2])


def _mutate_constant(node: ast.Constant, rng: random.Random) -> bool:
    value = node.value
    if isinstance(value, bool):
        node.value = not value
    elif isinstance(value, (int, float)):
        node.value = _mutate_number(value, rng)
    elif isinstance(value, str):
        changed = mutate_str(value, rng)
        if changed is None:
            return False
        node.value = changed
    else:
        return False
    return True


def mutate_node(node: ast.expr, rng: random.Random) -> bool:
    """Mutate `node` in place (see the module docstring); False when it has nothing to mutate."""
    if isinstance(node, ast.Constant):
        return _mutate_constant(node, rng)
    if not isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return False
    size = len(node.keys) if isinstance(node, ast.Dict) else len(node.elts)
    if not size:
        return False
    i = rng.randrange(size)
    drop = rng.choice(["drop", "dup"] if size > 1 else ["dup"]) == "drop"
    if isinstance(node, ast.Dict):
        if drop:
            del node.keys[i]
            del node.values[i]
            return True
        # a value duplicated under the same key changes nothing: mutate the value instead
        value = node.values[i]
        return _mutate_constant(value, rng) if isinstance(value, ast.Constant) else False
    if drop:
        del node.elts[i]
    else:
        node.elts.insert(i, copy.deepcopy(node.elts[i]))
    return True
