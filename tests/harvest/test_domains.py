"""The first domain label of a harvested class: name, module path and docstrings as evidence."""

from __future__ import annotations

from classforge_bench.pipeline.config import DOMAINS, FALLBACK_DOMAIN
from classforge_bench.pipeline.harvest.domains import label_domains

# What security-use's CircuitBreaker offers the labeller (examples/real-repos): a name no keyword
# matches, and a method docstring with a passing "statistics".
BREAKER_DOCS = ["Circuit breaker for repeated failures.", "Get the breaker's statistics."]
BREAKER_WHERE = "security-use/security-use/src/security_use/sensor/circuit_breaker.py"


def test_the_package_outweighs_a_passing_word_in_a_method_docstring():
    assert label_domains("CircuitBreaker", BREAKER_DOCS, [])[0] == "Mathematical Operations"  # docstrings alone
    assert label_domains("CircuitBreaker", BREAKER_DOCS, [], where=BREAKER_WHERE) == [
        "Security & Crypto",
        "Mathematical Operations",
    ]


def test_the_class_name_outweighs_the_path():
    assert label_domains("SudokuBoard", [], [], where="acme/security-tools/games/board.py")[0] == "Game Development"


def test_path_words_split_on_separators_and_case_but_not_inside_a_word():
    assert label_domains("Thing", [], [], where="octo/ShoppingCart-app/src/file_manager.py") == [
        "Finance & E-commerce",
        "File Handling",
    ]
    # "tables" is not "table", and a file's extension is no word of the path
    assert label_domains("Thing", [], [], where="octo/kit/tables.py") == [FALLBACK_DOMAIN]


def test_query_domains_break_ties_and_nothing_found_is_the_catch_all():
    assert label_domains("Thing", [], ["Network & Web"]) == ["Network & Web"]
    assert label_domains("Thing", ["nothing here"], []) == [FALLBACK_DOMAIN] and FALLBACK_DOMAIN in DOMAINS
