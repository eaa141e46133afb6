"""Base tests and a plus suite as one suite: the plus tests for a method join its base class.

The plus class for a method becomes a subclass of the base class (`<Base>Plus(<Base>)`), so one
test class runs both and a method's verdict means "passes its base and its plus tests"; plus
classes with no base counterpart (class-level sequences) run as classes of their own. Inside a
subclass the plus tests are renamed `test_plus_*` (no clash with a base test's name) and skip the
base class's setUp/tearDown, which were written for the base tests (ClassEval_45's tearDown closes
an image only its own tests open). Each plus test runs in a fresh folder of its own (the working
directory is set back after it): what the base tests leave behind (ClassEval_99's extracted files)
cannot change its verdict, as it could not when its checks were recorded on the reference
(observe_script.py runs each program in a folder of its own too). Used by the evaluator's plus
scores, by the mutation gate's search-based strengthening and by the plus tests' selection.
"""

from __future__ import annotations

import re

from classforge_bench.pipeline.core.task import PlusSuite

FOLDER_IMPORTS = "import os as _cf_plus_os\nimport tempfile as _cf_plus_tempfile\n"
_OWN_FIXTURES = (
    "    def setUp(self):\n"
    '        if not self._testMethodName.startswith("test_plus_"):\n'
    "            super().setUp()\n"
    "        else:\n"
    "            self._cf_plus_home = _cf_plus_os.getcwd()\n"
    '            _cf_plus_os.chdir(_cf_plus_tempfile.mkdtemp(prefix="cf_plus_"))\n\n'
    "    def tearDown(self):\n"
    '        if not self._testMethodName.startswith("test_plus_"):\n'
    "            super().tearDown()\n"
    "        else:\n"
    "            _cf_plus_os.chdir(self._cf_plus_home)\n\n"
)
FOLDER_FIXTURES = (
    "    def setUp(self):\n"
    "        self._cf_plus_home = _cf_plus_os.getcwd()\n"
    '        _cf_plus_os.chdir(_cf_plus_tempfile.mkdtemp(prefix="cf_plus_"))\n\n'
    "    def tearDown(self):\n"
    "        _cf_plus_os.chdir(self._cf_plus_home)\n\n"
)


def combined_suite(
    tests: str, test_classes: list[str], plus: PlusSuite | None
) -> tuple[str, list[str], dict[str, str]]:
    """(source, test classes, base class -> the class that now runs it); unchanged without plus tests."""
    if plus is None or not plus.tests or not plus.test:
        return tests, list(test_classes), {}
    code = plus.test
    renamed: dict[str, str] = {}
    for name in plus.test_classes:
        header = re.compile(rf"^class {re.escape(name)}\(unittest\.TestCase\):\n", re.MULTILINE)
        if name in test_classes:
            code = header.sub(lambda _: f"class {name}Plus({name}):\n{_OWN_FIXTURES}", code)  # noqa: B023 - called within this iteration
        else:
            code = header.sub(lambda _: f"class {name}Plus(unittest.TestCase):\n{FOLDER_FIXTURES}", code)  # noqa: B023 - as above
        renamed[name] = f"{name}Plus"
    # Only plus code is rewritten here: its methods are all `    def test_...(self):`.
    code = re.sub(r"^    def test_", "    def test_plus_", code, flags=re.MULTILINE)
    classes = [renamed.get(c, c) for c in test_classes]
    classes += [renamed[c] for c in plus.test_classes if c not in test_classes]
    replaced = {c: renamed[c] for c in test_classes if c in renamed}
    return f"{tests.rstrip()}\n\n\n# -- plus tier: tests no LLM wrote --\n{FOLDER_IMPORTS}{code}", classes, replaced
