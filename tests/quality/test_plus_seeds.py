"""The seed-mutation generator (`seeds.py`, `seed_scenarios.py`, `literals.py`), the repair of
off-contract arguments (`repair.py`), what a description says a method returns (`returns.py`) and
the mutation-guided selection (`selection.py`, `outcomes.py`): each rule with a case it decides and
the near miss it must not."""

from __future__ import annotations

import ast
import random
import textwrap

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.task import PlusSuite
from classforge_bench.pipeline.quality.plus.combine import combined_suite
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.literals import input_nodes, mutate_node
from classforge_bench.pipeline.quality.plus.observe import CLOCK_SHIFT_S, record
from classforge_bench.pipeline.quality.plus.outcomes import asserted_outcomes, base_outcomes
from classforge_bench.pipeline.quality.plus.render import name_tests, render
from classforge_bench.pipeline.quality.plus.repair import repaired
from classforge_bench.pipeline.quality.plus.returns import returns_nothing
from classforge_bench.pipeline.quality.plus.seed_scenarios import Scenario, scenarios
from classforge_bench.pipeline.quality.plus.seeds import inline, probe_parts, seed_tests
from classforge_bench.pipeline.quality.plus.selection import greedy, kill_matrix, select_by_mutants
from classforge_bench.pipeline.quality.plus.task_contract import ANY_EXCEPTION, derive_contract, documented_exceptions
from classforge_bench.pipeline.sandbox import run_suite
from classforge_bench.pipeline.sandbox.results import (
    ClassResult,
    ClassStatus,
    MethodResult,
    SuiteResult,
    SuiteStatus,
    TestOutcome,
)

SANDBOX = SandboxConfig(wall_limit_s=60)

SKELETON = textwrap.dedent('''
    class Wallet:
        """A wallet of coins."""

        def __init__(self, owner):
            """Make an empty wallet.

            :param owner: str, who owns it
            """
            self.owner = owner
            self.coins = 0

        def deposit(self, amount):
            """Add coins.

            :param amount: int, how many
            >>> w = Wallet("ann")
            >>> w.deposit(5)
            >>> w.coins
            5
            """

        def withdraw(self, amount):
            """Take coins out.

            :param amount: int, how many
            :return: True if the wallet held enough, False otherwise, bool
            >>> w.withdraw(3)
            True
            """
''')
REFERENCE = textwrap.dedent("""
    class Wallet:
        def __init__(self, owner):
            self.owner = owner
            self.coins = 0

        def deposit(self, amount):
            self.coins += amount

        def withdraw(self, amount):
            if amount > self.coins:
                return False
            self.coins -= amount
            return True
""")
# returns the balance where the description's example shows deposit returns nothing
RETURNS_BALANCE = REFERENCE.replace("self.coins += amount", "self.coins += amount\n        return self.coins")
BASE = textwrap.dedent("""
    import unittest


    class WalletTestDeposit(unittest.TestCase):
        def setUp(self):
            self.wallet = Wallet("ann")

        def test_deposit(self):
            self.wallet.deposit(5)
            self.assertEqual(self.wallet.coins, 5)


    class WalletTestWithdraw(unittest.TestCase):
        def test_withdraw(self):
            w = Wallet("ann")
            w.deposit(10)
            self.assertTrue(w.withdraw(4))
            self.assertEqual(w.coins, 6)
""")
BASE_CLASSES = ["WalletTestDeposit", "WalletTestWithdraw"]
CONTRACT = derive_contract(SKELETON, "Wallet", BASE)


# -- literals and scenarios ----------------------------------------------------------------------


def test_a_literal_mutant_keeps_its_type_sign_and_shape_and_never_touches_an_expected_value():
    body = ast.parse("x = C(3, -4, 'ab7', {'k': 'v'})\nself.assertEqual(x.m(2.5), 99)\n").body
    # -4 is a unary minus on 4: its magnitude is what mutates, so it stays negative
    assert [ast.unparse(n) for n in input_nodes(body)] == ["3", "4", "'ab7'", "{'k': 'v'}", "'v'", "2.5"]
    for seed in range(200):
        rng = random.Random(seed)
        mutated = ast.parse("x = C(3, -4, 'ab7', {'k': 'v'})\nself.assertEqual(x.m(2.5), 99)\n").body
        nodes = input_nodes(mutated)
        if not mutate_node(rng.choice(nodes), rng):
            continue
        call = mutated[0].value
        first, negative, text, record_ = (ast.literal_eval(a) for a in call.args)
        assert isinstance(first, int) and first > 0 and isinstance(negative, int) and negative < 0
        assert isinstance(text, str) and set(record_) == {"k"}  # a dict key is a record's structure
        assert ast.unparse(mutated[1]).endswith(", 99)")  # the expected value is re-observed, not mutated


def test_scenarios_are_the_same_for_the_same_key_capped_and_spliced_on_one_object():
    tests = BASE + textwrap.dedent("""
        class WalletTestMain(unittest.TestCase):
            def test_a(self):
                a = Wallet("ann")
                a.deposit(3)

            def test_b(self):
                b = Wallet("bob")
                self.assertFalse(b.withdraw(1))
    """)
    first = scenarios(tests, "Wallet", "0:Wallet", mutants=2, splices=1)
    assert first == scenarios(tests, "Wallet", "0:Wallet", mutants=2, splices=1)
    kinds = [(s.test, s.kind) for s in first]
    assert kinds.count(("test_deposit", "mutant")) <= 2 and ("test_deposit", "base") in kinds
    splice = next(s for s in first if s.kind == "splice")
    # the second test's constructor goes and its object is the first's
    assert splice.body == "b = Wallet('bob')\nself.assertFalse(b.withdraw(1))\nb.deposit(3)"


# -- from a scenario to probes -----------------------------------------------------------------------


def test_fixtures_become_local_variables_and_a_helper_of_the_test_class_refuses_the_scenario():
    fixture = Scenario(
        test_class="T", test="t", kind="base", setup="self.wallet = Wallet('ann')", body="self.wallet.deposit(5)"
    )
    assert inline(fixture) == "wallet = Wallet('ann')\nwallet.deposit(5)"
    helper = fixture.model_copy(update={"body": "self.fill(self.wallet)"})
    assert inline(helper) is None


def test_an_assertion_becomes_a_probe_of_what_it_checked_and_assert_raises_is_unwrapped():
    body = (
        "w = Wallet('ann')\nw.deposit(10)\nr = w.withdraw(4)\nself.assertTrue(r)\n"
        "self.assertEqual(6, w.coins)\nwith self.assertRaises(ValueError):\n    w.deposit(-1)\n"
    )
    parts = probe_parts(body, CONTRACT, base=False)
    assert not isinstance(parts, str)
    steps = [(p.step, p.target, p.none_checked) for p in parts]
    assert steps == [
        ("Wallet('ann')", "w", False),
        ("w.deposit(10)", None, True),  # the example shows deposit returns nothing
        ("w.withdraw(4)", "r", False),  # `assertTrue(r)` repeats the assignment's check: no probe
        ("w.coins", None, False),  # the checked operand, not the literal 6
        ("w.deposit(-1)", None, True),  # unwrapped: the reference says whether it raises
    ]
    looped = "w = Wallet('ann')\nfor n in (1, 2):\n    self.assertTrue(w.withdraw(n))\n"
    assert isinstance(probe_parts(looped, CONTRACT, base=False), str)  # a mutant would keep 1, 2's verdicts
    assert not isinstance(probe_parts(looped, CONTRACT, base=True), str)  # the base test's own are right


def test_a_none_return_is_part_of_the_contract_only_where_the_description_says_so():
    assert returns_nothing(">>> hotel.check_in('single', 1, 'guest 1')\n>>> hotel.booked_rooms", "check_in")
    assert returns_nothing(":return: None", "clear")
    # a stated return value outweighs an example that shows no output (ClassEval_99's extract_file)
    assert not returns_nothing(":return: True or False\n>>> zfp.extract_file('b.txt', 'out')\n", "extract_file")
    assert not returns_nothing(">>> w.withdraw(3)\nTrue", "withdraw")
    assert not returns_nothing(">>> x = w.balance()\n", "balance")  # assigned: its value is not shown


def test_a_stated_check_of_the_parameters_documents_a_failure():
    stated = "Add a status to the current status,and check the parameters wheather they are legal."
    assert documented_exceptions(stated) == frozenset({ANY_EXCEPTION})
    # a check of something else is no failure of the method's own parameters
    assert documented_exceptions("Check whether the password is valid and return a bool.") == frozenset()


# -- repair ------------------------------------------------------------------------------------------

TRACKER = textwrap.dedent('''
    class FitnessTracker:
        def __init__(self, height, weight, age, sex) -> None:
            """Initialize the tracker."""
            self.sex = sex
            self.BMI_std = [{"male": [20, 25]}, {"female": [19, 24]}]

        def condition_judge(self):
            """Judge the condition.
            >>> fitnessTracker = FitnessTracker(1.8, 70, 20, "male")
            >>> fitnessTracker.condition_judge()
            -1
            """
''')


def test_an_argument_the_test_does_not_check_is_repaired_one_it_checks_is_not():
    contract = derive_contract(TRACKER, "FitnessTracker")
    field = "t = FitnessTracker(1.8, 70, 20, sex=(-1297, True))\nself.assertEqual(t.BMI_std[0], {'male': [20, 25]})\n"
    fixed = repaired(field, contract)
    assert fixed == (field.replace("(-1297, True)", "'male'"), 1)
    echoed = "t = FitnessTracker(1.8, 70, 20, sex=(-1297, True))\nself.assertEqual(t.sex, (-1297, True))\n"
    assert repaired(echoed, contract) is None  # the assertion expects the argument itself
    inside = "t = FitnessTracker(1.8, 70, 20, 'male')\nself.assertIsNone(t.condition_judge(b'x'))\n"
    assert repaired(inside, contract) is None or contract.argument_problem(inside) is None
    fair = "t = FitnessTracker(1.8, 70, 20, 'female')\nself.assertEqual(t.condition_judge(), 0)\n"
    assert repaired(fair, contract) == (fair, 0)


# -- outcomes and selection ------------------------------------------------------------------------


def test_outcomes_are_read_straight_from_the_call_only():
    body = (
        "w = Wallet('ann')\nself.assertIsNone(w.deposit(5))\nr = w.withdraw(9)\nself.assertEqual(r, False)\n"
        "self.assertEqual(len(str(w.withdraw(1))), 4)\nwith self.assertRaises(ValueError):\n    w.deposit(-1)\n"
    )
    assert asserted_outcomes(body, CONTRACT) == {
        ("deposit", "returns None"),
        ("withdraw", "returns False"),
        ("deposit", "raises ValueError"),
    }
    assert base_outcomes(BASE, CONTRACT) == {("withdraw", "returns True")}


def _run(outcomes: dict[str, str], status: SuiteStatus = SuiteStatus.FAILED) -> SuiteResult:
    classes: dict[str, list[MethodResult]] = {}
    for test_id, outcome in outcomes.items():
        cls, name = test_id.split(".")
        classes.setdefault(cls, []).append(MethodResult(name=name, outcome=TestOutcome(outcome)))
    return SuiteResult(
        status=status,
        classes=[ClassResult(name=c, status=ClassStatus.PASSED, methods=m) for c, m in classes.items()],
        limit_s=5,
        wall_s=0.1,
    )


def test_the_kill_matrix_leaves_to_the_base_tests_what_they_kill_and_greedy_takes_the_strongest():
    plus = {"P.test_plus_a", "P.test_plus_b", "P.test_plus_c"}
    results = [
        _run({"B.test_x": "failed", "P.test_plus_a": "failed"}),  # the base tests kill it already
        _run({"B.test_x": "passed", "P.test_plus_a": "failed", "P.test_plus_b": "failed"}),
        _run({"B.test_x": "passed", "P.test_plus_b": "failed", "P.test_plus_c": "passed"}),
        _run({"B.test_x": "passed", "P.test_plus_c": "passed"}, SuiteStatus.PASSED),  # nobody kills it
        _run({}, SuiteStatus.TIMEOUT),  # no test can be told apart
    ]
    killers, by_base, unattributed = kill_matrix(results, plus)
    assert (by_base, unattributed) == (1, 1)
    assert killers == [set(), {"P.test_plus_a", "P.test_plus_b"}, {"P.test_plus_b"}, set(), set()]
    assert greedy(["P.test_plus_a", "P.test_plus_b", "P.test_plus_c"], killers) == ["P.test_plus_b"]


def _plus(origin: str, body: str, methods: list[str]) -> PlusTest:
    return PlusTest(origin=origin, methods=methods, body=body)


def test_selection_keeps_a_test_that_kills_a_mutant_the_base_tests_miss_and_one_that_shows_a_new_outcome():
    # The base tests never withdraw more than the wallet holds: `return False` -> `return True` survives them.
    overdraw = _plus("over", "w = Wallet('ann')\nself.assertEqual(w.withdraw(3), False)\n", ["withdraw"])
    again = _plus("again", "w = Wallet('ann')\nw.deposit(10)\nself.assertEqual(w.withdraw(4), True)\n", ["withdraw"])
    silent = _plus("none", "w = Wallet('ann')\nself.assertIsNone(w.deposit(2))\n", ["deposit"])
    named = name_tests([overdraw, again, silent], "Wallet")
    chosen = select_by_mutants(named, REFERENCE, (BASE, BASE_CLASSES), [], SANDBOX, CONTRACT, item_id="wallet")
    assert [t.test.origin for t in chosen.kept] == ["over", "none"]
    assert [(d.origin, d.reason) for d in chosen.drops] == [("again", reasons.PLUS_NOT_SELECTED)]
    assert chosen.killed_by_plus >= 1 and chosen.for_outcomes == 1 and chosen.mutants > chosen.killed_by_base


# -- end to end, in the sandbox -------------------------------------------------------------------


def test_seed_tests_assert_what_the_reference_does_and_catch_a_wrong_return():
    plus = PlusConfig(seeds=True, seed_mutants=2, seed_splices=1)
    made = seed_tests(BASE, REFERENCE, CONTRACT, import_statement=[], sandbox=SANDBOX, plus=plus, item_id="wallet")
    assert made.scenarios >= 2 and made.tests
    assert all(t.test_class in BASE_CLASSES for t in made.tests)
    first = made.tests[0].test.body
    assert "self.assertIsNone(wallet.deposit(5))" in first and "self.assertEqual(wallet.coins, 5)" in first
    classes = {t.test.origin: t.test_class for t in made.tests}
    code, test_classes = render(name_tests([t.test for t in made.tests], "Wallet", classes), [])
    suite = PlusSuite(test=code, test_classes=test_classes, tests=len(made.tests))
    tests, both, _ = combined_suite(BASE, BASE_CLASSES, suite)
    assert run_suite(REFERENCE, tests, both, config=SANDBOX, coverage=False).passed
    # the base tests pass the wrong return; the seeds do not
    assert run_suite(RETURNS_BALANCE, BASE, BASE_CLASSES, config=SANDBOX, coverage=False).passed
    assert not run_suite(RETURNS_BALANCE, tests, both, config=SANDBOX, coverage=False).passed


def test_a_scenario_in_which_the_reference_raises_an_undocumented_exception_is_dropped():
    strict = REFERENCE.replace(
        "self.coins += amount", "if amount > 5:\n            raise KeyError(amount)\n        self.coins += amount"
    )
    plus = PlusConfig(seeds=True, seed_mutants=0, seed_splices=0)
    made = seed_tests(BASE, strict, CONTRACT, import_statement=[], sandbox=SANDBOX, plus=plus, item_id="wallet")
    dropped = {d.origin.split(":")[1]: d.reason for d in made.dropped}
    # deposit(10) raises a KeyError its description never mentions: not a fair check
    assert dropped == {"WalletTestWithdraw.test_withdraw": reasons.PLUS_UNDOCUMENTED_EXCEPTION}
    assert [t.test_class for t in made.tests] == ["WalletTestDeposit"]


def test_each_recorded_program_and_each_plus_test_runs_in_a_folder_of_its_own():
    programs = {
        "a": ("open('left.txt', 'w').write('x')\n", []),
        "b": ("import os\nseen = os.path.exists('left.txt')\nassert not seen\n", []),
    }
    first = record(programs, REFERENCE, SANDBOX, 0, "folders")
    assert first["a"]["ok"] and first["b"]["ok"], first["b"].get("error")
    base = "import unittest\n\n\nclass WalletTestDeposit(unittest.TestCase):\n    def test_a(self):\n        open('left.txt', 'w').write('x')\n"
    plus = PlusSuite(
        test="import unittest\nimport os\n\n\nclass WalletTestDeposit(unittest.TestCase):\n    def test_b(self):\n"
        "        self.assertFalse(os.path.exists('left.txt'))\n",
        test_classes=["WalletTestDeposit"],
        tests=1,
    )
    tests, classes, _ = combined_suite(base, ["WalletTestDeposit"], plus)
    result = run_suite(REFERENCE, tests, classes, config=SANDBOX, coverage=False)
    assert result.passed, result.detail
    # without a folder of its own the plus test would see the base test's file
    shared = tests.replace('_cf_plus_os.chdir(_cf_plus_tempfile.mkdtemp(prefix="cf_plus_"))', "pass")
    assert not run_suite(REFERENCE, shared, classes, config=SANDBOX, coverage=False).passed


STRONG_BASE = BASE.replace(
    "        self.assertEqual(w.coins, 6)\n",
    "        self.assertEqual(w.coins, 6)\n        self.assertFalse(w.withdraw(7))\n"
    "        self.assertTrue(w.withdraw(6))\n        self.assertEqual(w.coins, 0)\n"
    "        self.assertIsNone(w.deposit(1))\n        self.assertEqual(w.owner, 'ann')\n",
)
assert STRONG_BASE != BASE


def test_a_suite_the_selection_leaves_empty_is_no_generator_failure_but_one_all_screened_out_is():
    from classforge_bench.pipeline.quality.plus.generate import GeneratedTests
    from classforge_bench.pipeline.quality.plus.suite import _screened_suite

    plus = PlusConfig(seeds=True, seed_mutants=1, seed_splices=0, select_by_mutants=True)
    nothing = GeneratedTests(ok=True, module="def test_0():\n    pass\n")
    contract = derive_contract(SKELETON, "Wallet", STRONG_BASE)
    base = (STRONG_BASE, BASE_CLASSES)
    # the base tests kill every mutant and assert every outcome: no seed test is needed
    suite = _screened_suite(PlusSuite(), nothing, contract, {}, REFERENCE, [], base, SANDBOX, plus, "wallet")
    assert suite.tests == 0 and suite.dropped.get(reasons.PLUS_NOT_SELECTED, 0) > 0
    assert suite.failure is None and suite.failure_reason is None
    assert suite.selection["mutants"] == suite.selection["killed_by_base"] > 0
    # without seeds the one generated test asserts nothing: that is a generator that gave nothing usable
    bare = _screened_suite(PlusSuite(), nothing, contract, {}, REFERENCE, [], base, SANDBOX, PlusConfig(), "wallet")
    assert bare.tests == 0 and bare.failure_reason == reasons.PLUS_ALL_DROPPED


STAMP_SKELETON = textwrap.dedent('''
    class Stamp:
        def __init__(self, label):
            """A labelled time stamp.

            :param label: str, its label
            """
            self.label = label
            self.made = ""
''')
STAMP = textwrap.dedent("""
    import time


    class Stamp:
        def __init__(self, label):
            self.label = label
            self.made = time.strftime("%Y-%m-%d", time.localtime())
""")
STAMP_TESTS = textwrap.dedent("""
    import unittest


    class StampTest(unittest.TestCase):
        def test_label(self):
            s = Stamp("a")
            self.assertEqual(s.label, "a")
""")


def test_a_value_read_from_the_clock_is_never_asserted_exactly():
    # the second recording's clock runs a day, an hour, a minute and a second ahead: the two never
    # agree on `made`, even when both fall within the same second, so the suite does not depend on when it was made
    contract = derive_contract(STAMP_SKELETON, "Stamp", STAMP_TESTS)
    plus = PlusConfig(seeds=True, seed_mutants=0, seed_splices=0)
    made = seed_tests(STAMP_TESTS, STAMP, contract, import_statement=[], sandbox=SANDBOX, plus=plus, item_id="stamp")
    body = made.tests[0].test.body
    assert "self.assertIsNotNone(s.made)" in body and "self.assertEqual(s.label, 'a')" in body
    assert "self.assertEqual(s.made" not in body
    # the shift is what parts them: a day ahead of any earlier reading, the recorded date always differs
    # (without it, two recordings on one day agree, the date would be asserted, and fail the next day)
    programs = {"p": ("s = Stamp('a')\n__cf_observe__('0:s', s)\n", [])}
    plain = record(programs, STAMP, SANDBOX, 0, "stamp")["p"]["observed"]["0:s"]["made"]
    shifted = record(programs, STAMP, SANDBOX, 1, "stamp", CLOCK_SHIFT_S)["p"]["observed"]["0:s"]["made"]
    assert plain != shifted
