"""State assertions for generated tests (`observe.py`) and the seeded walks (`walks.py`): what is
asserted (public state only, agreed by two recordings), what a mutant that changes only state
can no longer hide, and that the walks are the same for the same tests and seed."""

from __future__ import annotations

import random
import textwrap

from classforge_bench.pipeline.config import EnvironmentChecksConfig, PlusConfig, SandboxConfig
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.observe import (
    Undocumented,
    agreed,
    check,
    observe_tests,
    program,
    statements,
    with_state_checks,
)
from classforge_bench.pipeline.quality.plus.render import name_tests
from classforge_bench.pipeline.quality.plus.task_contract import derive_contract
from classforge_bench.pipeline.quality.plus.validate import failing_on_reference
from classforge_bench.pipeline.quality.plus.walks import call_pool, constructor_rows, fits, walks

SOLUTION = textwrap.dedent("""
    import time
    from dataclasses import dataclass
    from enum import Enum


    class Light(Enum):
        GREEN = "green"
        RED = "red"


    @dataclass
    class Stats:
        trips: int
        last_trip: float


    class Breaker:
        def __init__(self, limit: int = 2, name: str = "b"):
            self.limit = limit
            self.name = name
            self._failures = 0
            self._trips = 0
            self._light = Light.GREEN
            self._last = None

        def fail(self) -> None:
            self._failures += 1
            self._last = time.time()
            if self._failures >= self.limit:
                self._light = Light.RED
                self._trips += 1

        def reset(self, note: str = "") -> None:
            self._failures = 0
            self._light = Light.GREEN

        def allow(self) -> bool:
            return self._light is Light.GREEN

        @property
        def light(self) -> Light:
            return self._light

        @property
        def stats(self) -> Stats:
            return Stats(trips=self._trips, last_trip=self._last)
""")

# What Pynguin's SIMPLE assertions give such a class: the calls, and a check of what they return.
PYNGUIN_LIKE = [
    PlusTest(
        origin="test_0",
        methods=["fail", "allow"],
        body="breaker = Breaker(limit=1, name='x')\nbreaker.fail()\nself.assertFalse(breaker.allow())\n",
    ),
    PlusTest(
        origin="test_1",
        methods=["fail", "reset"],
        body="breaker = Breaker(limit=2)\nbreaker.fail()\nbreaker.reset(note='n')\nself.assertTrue(breaker.allow())\n",
    ),
]
SANDBOX = SandboxConfig(wall_limit_s=30, environment_checks=EnvironmentChecksConfig(perturbations=["hash-seed"]))


def _passes(tests: list[PlusTest], solution: str) -> bool:
    return not failing_on_reference(name_tests(tests, "Breaker"), solution, ["import time"], SANDBOX, runs=1)


def test_state_checks_catch_a_mutant_the_generated_tests_let_through():
    mutant = SOLUTION.replace("self._trips += 1", "pass")
    assert _passes(PYNGUIN_LIKE, mutant), "the premise: returned values alone do not see the trip counter"
    observed = observe_tests(PYNGUIN_LIKE, SOLUTION, "Breaker", SANDBOX, PlusConfig()).tests
    assert len(observed) == len(PYNGUIN_LIKE) and _passes(observed, SOLUTION)
    assert not _passes(observed, mutant)
    body = observed[0].body
    assert "self.assertEqual(breaker.light, Light.RED)" in body and "self.assertEqual(observed.trips, 1)" in body
    # the clock differs between the two recordings: only "it was set" is asserted, never its value
    assert "self.assertIsNotNone(observed.last_trip)" in body and "last_trip, 1" not in body
    assert "._" not in body.replace("self.assert", "")


def test_walks_are_seeded_built_from_the_tests_values_and_asserted():
    plus = PlusConfig(observe_walks=8)
    first = walks(PYNGUIN_LIKE, SOLUTION, "Breaker", plus.observe_walks, plus.seed)
    assert first == walks(PYNGUIN_LIKE, SOLUTION, "Breaker", plus.observe_walks, plus.seed)
    assert first != walks(PYNGUIN_LIKE, SOLUTION, "Breaker", plus.observe_walks, plus.seed + 1)
    assert 0 < len(first) <= 8 and all(t.origin.startswith("walk_") for t in first)
    assert {"fail", "reset", "allow"} <= {m for t in first for m in t.methods}
    # `reset(note=...)` takes the value test_1 passed; every constructor argument is one the tests used
    assert any("reset(note='n')" in t.body for t in first)
    result = observe_tests(PYNGUIN_LIKE, SOLUTION, "Breaker", SANDBOX, plus)
    observed = result.tests
    assert len(observed) == len(PYNGUIN_LIKE) + len(first) and _passes(observed, SOLUTION)
    assert result.walks == len(first) and result.dropped == [] and result.unchecked == []


def test_the_pool_keeps_only_arguments_that_fit_the_annotation_and_are_short():
    tests = [
        PlusTest(
            origin="t",
            methods=["fail"],
            body=f"breaker = Breaker(limit='x', name={'y' * 80!r})\n"
            "breaker_2 = Breaker(limit=3, name=7)\nbreaker_3 = Breaker(limit=int)\nbreaker_4 = Breaker(limit=4)\n",
        )
    ]
    pool = call_pool(tests, SOLUTION, "Breaker")
    assert pool.calls["__init__"] == ["limit=4"] and pool.values == {"limit": ["4"]}
    assert fits("3", "float") and not fits("True", "int") and fits("None", "Optional[str]") and fits("x", "List[int]")
    assert not fits("int", "int") and fits("Light.RED", "Light")


def test_constructor_rows_cover_every_pair_of_values():
    tests = [
        PlusTest(
            origin="t",
            methods=[],
            body="breaker = Breaker(limit=5, name='p')\nbreaker_2 = Breaker(limit=-1, name='q')\n",
        )
    ]
    pool = call_pool(tests, SOLUTION, "Breaker")
    rows = constructor_rows(pool, random.Random(0), 50)
    settings = [dict(part.split("=", 1) for part in row.split(", ") if part) for row in rows]
    for limit in ["5", "-1", "1", "2", None]:  # None: left out, the default
        for name in ["'p'", "'q'", None]:
            assert any(s.get("limit") == limit and s.get("name") == name for s in settings), (limit, name)
    assert constructor_rows(pool, random.Random(0), 50) == rows


def test_recordings_that_disagree_assert_only_what_both_saw():
    run = {
        "ok": True,
        "observed": {
            "0:b": {"n": {"kind": "lit", "src": "1"}, "t": {"kind": "float", "value": 1.5}, "u": {"kind": "none"}}
        },
        "steps": {"1": {"returns": {"kind": "lit", "src": "2"}}},
    }
    other = {
        "ok": True,
        "observed": {
            "0:b": {
                "n": {"kind": "lit", "src": "1"},
                "t": {"kind": "float", "value": 2.5},
                "u": {"kind": "float", "value": 1.0},
            }
        },
        "steps": {"1": {"returns": {"kind": "lit", "src": "3"}}},
    }
    merged = agreed(run, other)
    assert merged["observed"]["0:b"] == {"n": {"kind": "lit", "src": "1"}, "t": {"kind": "notnone"}}
    assert merged["steps"]["1"] == {"returns": {"kind": "notnone"}}  # two different values, both set
    assert agreed(run, {**other, "ok": False}) == {}
    assert check("b.t", {"kind": "notnone"}) == ["self.assertIsNotNone(b.t)"]


def test_a_call_that_raises_is_asserted_only_when_the_description_documents_it():
    parts = statements("b = Breaker()\nb.fail()\nb.reset()\nb.allow()\n", "Breaker")
    assert [p.step for p in parts] == [None, "b.fail()", "b.reset()", "b.allow()"] and parts[0].observe == ["b"]
    assert "__cf_step__(1, lambda: (\nb.fail()\n))" in program(parts)
    rec = {"observed": {}, "steps": {"1": {"raises": "ValueError", "bases": ["ValueError", "Exception"]}}}
    documented = derive_contract(
        'class Breaker:\n    def fail(self):\n        """Count a failure.\n\n        :raises ValueError: when open\n        """\n',
        "Breaker",
    )
    body = with_state_checks(parts, rec, documented)
    assert body.startswith("b = Breaker()\nwith self.assertRaises(ValueError):\n    b.fail()\n")
    # a failure stated without a type: any exception is the documented behaviour
    untyped = derive_contract(
        'class Breaker:\n    def fail(self):\n        """Count a failure; raises if the breaker is invalid."""\n',
        "Breaker",
    )
    assert "with self.assertRaises(Exception):" in with_state_checks(parts, rec, untyped)
    # not documented: a precondition the skeleton never states, or a bug; the test cannot be kept
    silent = derive_contract('class Breaker:\n    def fail(self):\n        """Count a failure."""\n', "Breaker")
    dropped = with_state_checks(parts, rec, silent)
    assert isinstance(dropped, Undocumented) and "ValueError" in dropped.detail


TIMED = textwrap.dedent("""
    import time


    class Door:
        def __init__(self, limit: int = 3, cool_down: float = 60.0):
            self.limit = limit
            self.cool_down = cool_down
            self._fails = 0
            self._since = 0.0

        def fail(self) -> None:
            self._fails += 1
            self._since = time.time()

        @property
        def state(self) -> str:
            if self._fails < self.limit:
                return "closed"
            return "half-open" if time.time() - self._since >= self.cool_down else "open"
""")


TIMED_ZERO = TIMED.replace(
    "        self.limit = limit",
    '''        """A door that opens after `limit` failures.

        :param limit: int, failures before it opens
        :param cool_down: float, seconds (0 or more) before it may close again
        """
        self.limit = limit''',
)


def test_walks_pass_zero_only_where_the_description_admits_it():
    # What is left once the off-domain screening dropped the search's `Door(cool_down=-17.5)`: no
    # kept test names cool_down, and 60 s never elapse in a test.
    kept = [
        PlusTest(
            origin="test_0",
            methods=["fail"],
            body="door = Door(limit=1)\ndoor.fail()\nself.assertEqual(door.state, 'open')\n",
        )
    ]
    pool = call_pool(kept, TIMED, "Door")
    assert "cool_down" not in pool.values
    # The default 60.0 is all the description shows, and it never admits 0: no walk asks for it
    # (the old "0 for every number" rule gave a capacity of 0 that no description allows).
    found = walks(kept, TIMED, "Door", 16, PlusConfig().seed, contract=derive_contract(TIMED, "Door"))
    assert not any("cool_down=0" in t.body or "cool_down=-" in t.body for t in found)
    # Documented as "0 or more": 0 is in range, and a cool-down of 0 elapses at once.
    found = walks(kept, TIMED_ZERO, "Door", 16, PlusConfig().seed, contract=derive_contract(TIMED_ZERO, "Door"))
    assert any("cool_down=0" in t.body for t in found)
    assert not any("cool_down=-" in t.body for t in found)
    observed = observe_tests(kept, TIMED_ZERO, "Door", SANDBOX, PlusConfig(observe_walks=16)).tests
    assert any("self.assertEqual(door.state, 'half-open')" in t.body for t in observed)
    assert not failing_on_reference(name_tests(observed, "Door"), TIMED_ZERO, ["import time"], SANDBOX, runs=1)


def test_what_the_observation_cannot_check_or_leaves_out_is_counted_with_a_reason():
    # The recorder dies on the first call: no recording at all. The generated tests stay as they
    # were and are counted as unchecked; every walk is left out and counted.
    dying = SOLUTION.replace("self._failures += 1", "import os; os._exit(3)")
    plus = PlusConfig(observe_walks=4)
    result = observe_tests(PYNGUIN_LIKE, dying, "Breaker", SANDBOX, plus)
    assert [t.body for t in result.tests] == [t.body for t in PYNGUIN_LIKE]
    assert [d.reason for d in result.unchecked] == ["plus-state-unrecorded"] * len(PYNGUIN_LIKE)
    assert result.walks > 0 and [d.reason for d in result.dropped] == ["plus-walk-unrecorded"] * result.walks
    # A class with no public state: a walk has nothing to assert and is left out, counted.
    quiet = "class Quiet:\n    def __init__(self, n: int = 1):\n        self._n = n\n\n    def run(self) -> None:\n        self._n += 1\n"
    tests = [
        PlusTest(
            origin="test_0", methods=["run"], body="quiet = Quiet(n=3)\nquiet.run()\nself.assertIsNone(quiet.run())\n"
        )
    ]
    result = observe_tests(tests, quiet, "Quiet", SANDBOX, plus)
    assert result.walks > 0 and {d.reason for d in result.dropped} == {"plus-walk-breaks-rule"}
    assert len(result.tests) == 1 and result.unchecked == []
