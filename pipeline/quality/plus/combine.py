"""Base tests and a plus suite as one suite: the plus tests for a method join its base class.

The plus class for a method becomes a subclass of the base class (`<Base>Plus(<Base>)`), so one
test class runs both and a method's verdict means "passes its base and its plus tests"; plus
classes with no base counterpart (class-level sequences) run as classes of their own. Used by the
evaluator's plus scores and by the mutation gate's search-based strengthening.
"""

from __future__ import annotations

import re

from pipeline.core.task import PlusSuite


def combined_suite(tests: str, test_classes: list[str], plus: PlusSuite | None) -> tuple[str, list[str], dict[str, str]]:
    """(source, test classes, base class -> the class that now runs it); unchanged without plus tests."""
    if plus is None or not plus.tests or not plus.test:
        return tests, list(test_classes), {}
    code = plus.test
    renamed: dict[str, str] = {}
    for name in plus.test_classes:
        parent = name if name in test_classes else "unittest.TestCase"
        header = re.compile(rf"^class {re.escape(name)}\(unittest\.TestCase\):", re.MULTILINE)
        code = header.sub(f"class {name}Plus({parent}):", code)
        renamed[name] = f"{name}Plus"
    classes = [renamed.get(c, c) for c in test_classes]
    classes += [renamed[c] for c in plus.test_classes if c not in test_classes]
    replaced = {c: renamed[c] for c in test_classes if c in renamed}
    return f"{tests.rstrip()}\n\n\n# -- plus tier: tests no LLM wrote --\n{code}", classes, replaced
