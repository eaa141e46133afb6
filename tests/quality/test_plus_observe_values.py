"""State observation of the standard library's value types (`observe_script._VALUE_TYPES`): a
datetime, date, timedelta, Decimal or Path a method returns or a declared field holds is asserted
through a reading every correct value gives alike (`isoformat()`, `total_seconds()`, `float()`,
`str()`), so a mutant that only moves such a value is caught; before, such values were left out."""

from __future__ import annotations

import textwrap

from classforge_bench.pipeline.config import EnvironmentChecksConfig, PlusConfig, SandboxConfig
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.observe import agreed, check, observe_tests
from classforge_bench.pipeline.quality.plus.render import name_tests
from classforge_bench.pipeline.quality.plus.validate import failing_on_reference

SOLUTION = textwrap.dedent('''
    from datetime import datetime, timedelta
    from decimal import Decimal
    from pathlib import Path


    class Token:
        def __init__(self, expiry: str):
            """A token.

            :param expiry: str, an ISO date
            """
            self.expiry = expiry

        def expires(self) -> datetime:
            """When it expires.

            :return: datetime
            """
            return datetime.fromisoformat(expiry_of(self.expiry))

        def lifetime(self) -> timedelta:
            """:return: timedelta, from 2025-01-01"""
            return self.expires() - datetime(2025, 1, 1)

        def price(self) -> Decimal:
            """:return: Decimal"""
            return Decimal("1.50")

        def where(self) -> Path:
            """:return: Path"""
            return Path("/tmp") / self.expiry


    def expiry_of(text):
        return text
''')
TESTS = [
    PlusTest(
        origin="test_0", methods=["expires"], body="token = Token(expiry='2025-03-04T05:06:07')\ntoken.expires()\n"
    ),
    PlusTest(origin="test_1", methods=["lifetime"], body="token = Token(expiry='2025-01-02')\ntoken.lifetime()\n"),
    PlusTest(origin="test_2", methods=["price"], body="token = Token(expiry='x')\ntoken.price()\n"),
    PlusTest(origin="test_3", methods=["where"], body="token = Token(expiry='x')\ntoken.where()\n"),
]
SANDBOX = SandboxConfig(wall_limit_s=30, environment_checks=EnvironmentChecksConfig(perturbations=["hash-seed"]))
IMPORTS = ["from datetime import datetime, timedelta", "from decimal import Decimal", "from pathlib import Path"]


def _failing(tests: list[PlusTest], solution: str) -> list[str]:
    return failing_on_reference(name_tests(tests, "Token"), solution, IMPORTS, SANDBOX, runs=1)


def test_value_types_a_method_returns_are_asserted_and_catch_a_mutant():
    observed = {t.origin: t.body for t in observe_tests(TESTS, SOLUTION, "Token", SANDBOX, PlusConfig()).tests}
    assert "self.assertEqual(token.expires().isoformat(), '2025-03-04T05:06:07')" in observed["test_0"]
    assert "self.assertAlmostEqual(token.lifetime().total_seconds(), 86400.0)" in observed["test_1"]
    assert "self.assertAlmostEqual(float(token.price()), 1.5)" in observed["test_2"]
    assert "self.assertEqual(str(token.where()), '/tmp/x')" in observed["test_3"]
    tests = [t.model_copy(update={"body": observed[t.origin]}) for t in TESTS]
    assert not _failing(tests, SOLUTION)
    moved = SOLUTION.replace("    return text", "    return text.replace('03-04', '03-05')")
    assert not _failing(TESTS, moved), "the premise: the calls alone do not see the date"
    assert len(_failing(tests, moved)) == 1


def test_value_types_are_compared_by_their_reading_between_recordings():
    first = {"kind": "via", "via": "{}.isoformat()", "of": {"kind": "lit", "src": "'2025-01-01T00:00:00'"}}
    later = {"kind": "via", "via": "{}.isoformat()", "of": {"kind": "lit", "src": "'2025-01-01T00:00:01'"}}
    run = {"ok": True, "observed": {}, "steps": {"1": {"returns": first}}}
    assert agreed(run, run)["steps"]["1"] == {"returns": first}
    # a clock read between the two recordings: only "it was set"
    assert agreed(run, {**run, "steps": {"1": {"returns": later}}})["steps"]["1"] == {"returns": {"kind": "notnone"}}
    assert check("t.at", first) == ["self.assertEqual(t.at.isoformat(), '2025-01-01T00:00:00')"]
