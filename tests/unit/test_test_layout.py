"""How the suite itself is laid out: helpers in kit modules, fakes under tests/, not in the product."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_the_product_ships_no_test_fake() -> None:
    shipped = [p.relative_to(ROOT).as_posix() for p in (ROOT / "classforge_bench").rglob("*.py") if "fake" in p.stem]
    assert shipped == []
    assert (ROOT / "tests" / "fakes" / "openai_server.py").is_file()


def test_make_test_fast_touches_every_folder_of_the_suite() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = makefile[makefile.index("FAST_TESTS =") : makefile.index(".PHONY: test-fast")]
    named = {Path(word).parts[1] for word in block.split() if word.startswith("tests/")}
    folders = {p.parent.name for p in (ROOT / "tests").glob("*/test_*.py")}
    assert folders - named == set()
    for word in block.split():
        if word.startswith("tests/"):
            assert (ROOT / word).exists(), word
