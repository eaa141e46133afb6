"""Mutant generation: every operator, what is left alone, determinism, the cap, bytecode equivalence."""

from __future__ import annotations

import textwrap

import pytest

from classforge_bench.pipeline.quality.mutants import MutantError, bytecode_fingerprint, generate_mutants

SOURCE = textwrap.dedent(
    '''
    import math

    LIMIT = 10


    class Shop:
        """A shop. "not mutated" either."""

        def __init__(self, items: int = 0):
            """The docstring "stays"."""
            self.items = items
            self.open = True

        def buy(self, k):
            if k <= 0 or not self.open:
                raise ValueError("bad")
            self.items += k
            self.log(k, "buy")
            return self.items * 2

        def log(self, a, b):
            return None

        def ratio(self, a, b):
            return a % b == a // b
    '''
)


def by_description(found):
    return {(m.method, m.operator, m.description) for m in found.mutants}


def test_every_operator_fires_on_its_site():
    found = generate_mutants(SOURCE, max_per_method=100, seed=0)
    got = by_description(found)
    expected = {
        ("Shop.buy", "boundary", "<= 0 -> < 0"),
        ("Shop.buy", "compare", "<= 0 -> > 0"),
        ("Shop.buy", "boolean", "k <= 0 or not self.open -> k <= 0 and not self.open"),
        ("Shop.buy", "boolean", "not self.open -> self.open"),
        ("Shop.buy", "boolean", "k <= 0 or not self.open -> not (k <= 0 or not self.open)"),
        ("Shop.buy", "constant", "0 -> 1"),
        ("Shop.buy", "constant", '"bad" -> ""'),
        ("Shop.buy", "statement", 'raise ValueError("bad") -> pass'),
        ("Shop.buy", "arith", "self.items += k -> self.items -= k"),
        ("Shop.buy", "arith", "self.items * 2 -> self.items / 2"),
        ("Shop.buy", "statement", 'self.log(k, "buy") -> pass'),
        ("Shop.buy", "arguments", 'self.log(k, "buy") -> self.log("buy", k)'),
        ("Shop.buy", "return", "return self.items * 2 -> return None"),
        ("Shop.buy", "constant", "2 -> 3"),
        ("Shop.buy", "constant", "2 -> 1"),
        ("Shop.__init__", "constant", "True -> False"),
        ("Shop.__init__", "constant", "0 -> 1"),  # a default value
        ("Shop.ratio", "arith", "a % b -> a / b"),
        ("Shop.ratio", "arith", "a // b -> a / b"),
        ("Shop.ratio", "compare", "== a // b -> != a // b"),
    }
    assert expected <= got, expected - got


def test_docstrings_annotations_module_code_and_none_returns_are_left_alone():
    found = generate_mutants(SOURCE, max_per_method=100, seed=0)
    descriptions = " | ".join(m.description for m in found.mutants + found.equivalent)
    assert "not mutated" not in descriptions and "stays" not in descriptions
    assert "LIMIT" not in descriptions and "10 ->" not in descriptions  # module level
    assert "int ->" not in descriptions  # annotation
    assert not any(m.method == "Shop.log" and m.operator == "return" for m in found.mutants)
    assert all(m.method.startswith("Shop.") for m in found.mutants)


def test_each_mutant_differs_in_one_place_and_carries_a_diff_and_line():
    found = generate_mutants(SOURCE, max_per_method=100, seed=0)
    lines = SOURCE.splitlines()
    for m in found.mutants:
        assert m.source != SOURCE
        changed = [i for i, (a, b) in enumerate(zip(lines, m.source.splitlines()), 1) if a != b]
        assert changed == [m.line], (m.description, changed)
        assert m.diff.startswith("--- original\n+++ mutant\n") and f"-{lines[m.line - 1]}" in m.diff


def test_generation_is_deterministic_and_ids_are_content_based():
    a = generate_mutants(SOURCE, max_per_method=3, seed=7)
    b = generate_mutants(SOURCE, max_per_method=3, seed=7)
    assert [m.model_dump() for m in a.mutants] == [m.model_dump() for m in b.mutants]
    assert len({m.mutant_id for m in a.mutants}) == len(a.mutants)
    full = {m.mutant_id: m.source for m in generate_mutants(SOURCE, max_per_method=100, seed=0).mutants}
    assert all(full[m.mutant_id] == m.source for m in a.mutants)  # same change, same id


def test_cap_samples_per_method_with_the_seed():
    capped = generate_mutants(SOURCE, max_per_method=3, seed=1)
    per_method: dict[str, int] = {}
    for m in capped.mutants + capped.equivalent:
        per_method[m.method] = per_method.get(m.method, 0) + 1
    assert per_method["Shop.buy"] == 3 and max(per_method.values()) <= 3
    other = generate_mutants(SOURCE, max_per_method=3, seed=2)
    assert {m.mutant_id for m in capped.mutants} != {m.mutant_id for m in other.mutants}
    assert capped.sites == generate_mutants(SOURCE, max_per_method=100, seed=0).sites


def test_bytecode_equivalent_mutants_are_set_apart():
    source = textwrap.dedent(
        """
        class Dead:
            def run(self, x):
                if False:
                    self.trace = -1
                return x + 1
        """
    )
    found = generate_mutants(source, max_per_method=100, seed=0)
    equivalent = {m.description for m in found.equivalent}
    # Dead code is compiled away, so changing or removing it changes no bytecode.
    assert {"self.trace = -1 -> pass", "1 -> 0"} <= equivalent
    assert "x + 1 -> x - 1" in {m.description for m in found.mutants}
    assert all(bytecode_fingerprint(m.source) == bytecode_fingerprint(source) for m in found.equivalent)
    assert all(bytecode_fingerprint(m.source) != bytecode_fingerprint(source) for m in found.mutants)


def test_fingerprint_tells_true_from_one():
    # 1 == True in Python, so a naive comparison of constants would call this mutant equivalent.
    assert bytecode_fingerprint("x = 1\n") != bytecode_fingerprint("x = True\n")
    assert bytecode_fingerprint("x = 1\n") == bytecode_fingerprint("\n\nx = 1  # moved\n")


def test_unparsable_source_is_an_error_naming_the_item():
    with pytest.raises(MutantError, match="task-9: cannot mutate"):
        generate_mutants("class A(:\n", max_per_method=5, seed=0, item_id="task-9")
