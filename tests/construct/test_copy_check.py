"""A composed class that keeps one source's name but draws on both is a fusion, not a copy."""

from __future__ import annotations

from classforge_bench.pipeline.construct.copy_check import copied_source, reproduced_example
from classforge_bench.pipeline.construct.spec import ClassSpec, MethodSpec
from classforge_bench.pipeline.llm.prompts import load_prompt


def _spec(name: str, methods: list[str]) -> ClassSpec:
    return ClassSpec(
        class_id=f"repo/{name}",
        class_name=name,
        domain="Finance",
        docstring=None,
        imports=[],
        context_names=[],
        fields=[],
        methods=[MethodSpec(name=m, signature=f"def {m}(self)") for m in ["__init__", *methods]],
    )


INVENTORY = _spec("Inventory", ["add_item", "remove_item", "count", "items", "clear"])
PRICES = _spec("PriceList", ["set_price", "price_of", "discount", "currencies", "reset"])


def _answer(name: str, methods: list[str]) -> str:
    body = "".join(f"    def {m}(self):\n        return None\n\n" for m in ["__init__", *methods])
    return f"class {name}:\n{body}"


def test_a_fusion_named_after_one_source_is_not_a_copy() -> None:
    fused = _answer("Inventory", ["add_item", "remove_item", "set_price", "total_value", "clear"])
    assert copied_source(fused, INVENTORY, PRICES) is None


def test_a_source_under_its_own_name_is_a_copy() -> None:
    found = copied_source(_answer("Inventory", ["add_item", "count", "total_value"]), INVENTORY, PRICES)
    assert found is not None and found.copied == ["Inventory"]


def test_both_sources_side_by_side_are_copies() -> None:
    both = _answer("Inventory", ["add_item", "count"]) + "\n\n" + _answer("Ledger", ["set_price", "price_of"])
    found = copied_source(both, INVENTORY, PRICES)
    assert found is not None and found.copied == ["Inventory", "PriceList"]


def test_the_prompts_example_renamed_is_still_the_example() -> None:
    # What the 1.5B model answered: LoanLedger as FinanceLedger, with getters added and nothing of
    # either source (detected by name only, it went to an ordinary repair).
    prompt = load_prompt("compose").text
    renamed = _answer("FinanceLedger", ["lend", "remove_loan", "get_loan", "get_loans", "get_log"])
    assert reproduced_example(renamed, prompt, INVENTORY, PRICES) == "LoanLedger"
    assert reproduced_example(_answer("LoanLedger", []), prompt, INVENTORY, PRICES) == "LoanLedger"


def test_a_class_with_the_examples_method_and_a_sources_is_not_the_example() -> None:
    prompt = load_prompt("compose").text
    fused = _answer("LendingInventory", ["lend", "add_item", "count"])
    assert reproduced_example(fused, prompt, INVENTORY, PRICES) is None
    assert reproduced_example(_answer("Ledger", ["record", "balance"]), prompt, INVENTORY, PRICES) is None
