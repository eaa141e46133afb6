"""The repository's seeds in the plus tier (quality/plus/repo_seeds.py): as tests inside the task's
contract, and as Pynguin's initial population; with the generator installed, what they reach."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from classforge_bench.pipeline.config import PlusConfig
from classforge_bench.pipeline.core.records import RepoSeed, SeedCall
from classforge_bench.pipeline.quality.plus.repo_seeds import pynguin_seed_module, seed_calls, seed_tests
from classforge_bench.pipeline.quality.plus.task_contract import derive_contract

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox"))
from sandbox_support import make_config  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv-plus" / "bin" / "python"
needs_generator = pytest.mark.skipif(
    not PYTHON.exists(), reason="the plus generator is not set up (scripts/setup.sh makes .venv-plus)"
)
SOLUTION = (REPO / "tests" / "data" / "real-seeds" / "acme__ledger" / "c1" / "ledger" / "book.py").read_text(
    encoding="utf-8"
)
# The skeleton as the real-source track ships it: the `Raises:` section as `:raises OverflowError:`.
SKELETON = '''from datetime import date


class Ledger:
    """Amounts booked on ISO dates, up to a limit of entries."""

    def __init__(self, owner: str, limit: int = 100):
        """Create an empty ledger.

        :param owner: who keeps the ledger.
        :param limit: how many entries it holds at most.
        """
        self.owner = owner
        self.limit = limit
        self._entries = []

    def book(self, day: str, amount: int) -> int:
        """Book an amount on a day.

        :param day: the date, as an ISO string (YYYY-MM-DD).
        :param amount: the amount booked.
        :raises OverflowError: if the ledger already holds `limit` entries.
        :return: how many entries the ledger holds now.
        """

    def total(self) -> int:
        """The sum of every amount booked.

        :return: the sum, 0 for an empty ledger.
        """

    def count(self) -> int:
        """How many entries the ledger holds.

        :return: the number of entries.
        """
'''
CONTRACT = derive_contract(SKELETON, "Ledger", documented_fields_only=True)
FULL = RepoSeed(
    origin="tests/test_ledger.py:12",
    kind="test",
    constructor="Ledger('ann', limit=2)",
    calls=[
        SeedCall(call="book('2025-03-01', 5)"),
        SeedCall(call="book('2025-03-02', 7)"),
        SeedCall(call="book('2025-03-03', 1)", raises="OverflowError"),
        SeedCall(call="total()"),
    ],
)


def test_a_seed_is_a_test_body_and_a_documented_raise_stays_in_it():
    [test] = seed_tests([FULL], "Ledger", CONTRACT, SOLUTION)
    # arguments by name, so the contract's rules read them by parameter like any generated test's
    assert test.body == (
        "ledger = Ledger(owner='ann', limit=2)\n"
        "ledger.book(day='2025-03-01', amount=5)\n"
        "ledger.book(day='2025-03-02', amount=7)\n"
        "ledger.book(day='2025-03-03', amount=1)\n"
        "ledger.total()\n"
    )
    assert test.origin == "seed_1 test tests/test_ledger.py:12" and test.methods == ["book", "total"]
    # without the class's signatures the calls stay as the repository wrote them
    assert seed_tests([FULL], "Ledger", CONTRACT)[0].body.startswith("ledger = Ledger('ann', limit=2)\n")


def test_a_seed_is_screened_by_the_contract_like_any_generated_test():
    from classforge_bench.pipeline.quality.plus.suite import screen

    def screened(seed, solution=SOLUTION):
        return screen(seed_tests([seed], "Ledger", CONTRACT, solution), 40, "Ledger", task_contract=CONTRACT)

    negative = FULL.model_copy(update={"calls": [], "constructor": "Ledger('x', -1)"})
    kept, drops = screened(negative)
    # a negative limit: no value the skeleton shows is negative (the default is 100); the seed checks
    # nothing of it, so it is repaired with a value the skeleton shows, as a generated test is (repair.py)
    assert drops == [] and [t.body.strip() for t in kept] == ["ledger = Ledger(owner='x', limit=100)"]
    # an int where `:param day:` says a string: dropped like a generated test, whether the seed is
    # written with the arguments named (from the solution's signature) or, without it, positionally
    wrong_type = FULL.model_copy(update={"calls": [SeedCall(call="book(5, 5)")]})
    assert [d.reason for d in screened(wrong_type)[1]] == ["plus-off-contract"]
    assert [d.reason for d in screened(wrong_type, solution="")[1]] == ["plus-off-contract"]


def test_a_seed_ends_before_an_undocumented_raise_or_a_method_the_class_lacks():
    undocumented = FULL.model_copy(
        update={
            "calls": [
                SeedCall(call="count()"),
                SeedCall(call="book('x', 1)", raises="ValueError"),
                SeedCall(call="total()"),
            ]
        }
    )
    assert seed_calls(undocumented, CONTRACT) == ["count()"]
    # the same call with the exception the skeleton documents is kept (the observation asserts it)
    assert seed_calls(FULL, CONTRACT)[2] == "book('2025-03-03', 1)"
    # without the `:raises` line the skeleton no longer documents it: the seed stops there
    bare = derive_contract(
        SKELETON.replace("        :raises OverflowError: if the ledger already holds `limit` entries.\n", ""), "Ledger"
    )
    assert seed_calls(FULL, bare) == ["book('2025-03-01', 5)", "book('2025-03-02', 7)"]
    lacking = FULL.model_copy(update={"calls": [SeedCall(call="count()"), SeedCall(call="export('csv')")]})
    assert seed_calls(lacking, CONTRACT) == ["count()"]
    factory = FULL.model_copy(update={"constructor": "Ledger.from_rows([])"})
    assert seed_calls(factory, CONTRACT) is None and seed_tests([factory], "Ledger", CONTRACT) == []


def test_the_seeds_as_pynguins_initial_population():
    module = pynguin_seed_module([FULL], "Ledger", CONTRACT, SOLUTION)
    assert module.startswith("import under_test as module_0\n")
    assert "def seed_test_1():\n    ledger_0 = module_0.Ledger(owner='ann', limit=2)\n" in module
    assert "var_1 = ledger_0.book(day='2025-03-02', amount=7)" in module
    assert "2025-03-03" not in module  # the search starts from valid states
    assert pynguin_seed_module([], "Ledger", CONTRACT) == ""


def _plus(tmp_path, **kw) -> PlusConfig:
    return PlusConfig(
        python=PYTHON, cache_dir=tmp_path / "cache", max_iterations=10, budget_s=120, wall_limit_s=300, **kw
    )


@needs_generator
def test_the_search_starts_from_the_seeds(tmp_path):
    from classforge_bench.pipeline.quality.plus.generate import generate

    sandbox = make_config(wall_limit_s=300, memory_mb=4096, max_processes=64)
    module = pynguin_seed_module([FULL], "Ledger", CONTRACT, SOLUTION)
    seeded = generate(SOLUTION, sandbox, _plus(tmp_path), item_id="ledger", seeds=module)
    plain = generate(SOLUTION, sandbox, _plus(tmp_path), item_id="ledger")
    assert seeded.ok and plain.ok, seeded.detail + plain.detail
    # an ISO date no random search writes: only the seeded search books entries
    assert "2025-03-01" in seeded.module and "2025-03-01" not in plain.module


@needs_generator
def test_a_seeded_suite_asserts_what_the_reference_does_on_the_repositorys_calls(tmp_path):
    from classforge_bench.pipeline.config import EnvironmentChecksConfig
    from classforge_bench.pipeline.quality.plus.suite import make_plus_suite

    sandbox = make_config(
        wall_limit_s=300,
        memory_mb=4096,
        max_processes=64,
        environment_checks=EnvironmentChecksConfig(perturbations=["timezone"]),
    )
    plus = _plus(tmp_path, observe_state=True, observe_walks=4)
    suite = make_plus_suite(
        SOLUTION,
        "Ledger",
        import_statement=["from datetime import date"],
        sandbox=sandbox,
        plus=plus,
        item_id="ledger",
        described=SKELETON,
        documented_fields_only=True,
        seeds=[FULL],
    )
    assert "seed_1 test tests/test_ledger.py:12" not in {d.origin for d in suite.drops}
    # the seed, with the reference's answers asserted: the documented raise, then the total
    assert "ledger = Ledger(owner='ann', limit=2)" in suite.test
    assert "with self.assertRaises(OverflowError):\n            ledger.book(day='2025-03-03', amount=1)" in suite.test
    assert "self.assertEqual(ledger.total(), 12)" in suite.test


def test_a_utc_timestamp_gets_its_z_twin_and_a_round_trip_names_the_instance():
    from classforge_bench.pipeline.core.records import SEED_SELF
    from classforge_bench.pipeline.quality.plus.repo_seeds import utc_twins

    seed = RepoSeed(
        origin="tests/test_token.py:3",
        kind="test",
        constructor="Ledger('2025-03-01T10:30:00+00:00')",
        calls=[SeedCall(call="book('2025-03-01T09:00:00.5+00:00', 1)"), SeedCall(call="book('+00:00', 2)")],
    )
    (twin,) = utc_twins([seed, FULL])  # FULL writes no timestamp: no twin
    assert twin.constructor == "Ledger('2025-03-01T10:30:00Z')" and twin.origin.endswith("(UTC as Z)")
    assert [c.call for c in twin.calls] == ["book('2025-03-01T09:00:00.5Z', 1)", "book('+00:00', 2)"]
    round_trip = FULL.model_copy(update={"calls": [SeedCall(call=f"count({SEED_SELF}.total())")]})
    tests = seed_tests([round_trip, seed], "Ledger", CONTRACT)
    assert tests[0].body.splitlines()[-1] == "ledger.count(ledger.total())"
    assert [t.origin.endswith("(UTC as Z)") for t in tests] == [False, False, True]
