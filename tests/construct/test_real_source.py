"""The real-source track: a real class in, a ClassEval-format skeleton out (and back through the
task model); docstrings written and judged against the fake server; observed examples; the
licence filter; the stages end to end with a scripted generator, gate and mutator."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest
from construct_kit import ENV, ScriptedGate, ScriptedMutator, endpoint, harvested, make_config, mutation_report

from classforge_bench.pipeline.construct.build import BuildSettings, build_tasks
from classforge_bench.pipeline.construct.common import Prompts, StageContext
from classforge_bench.pipeline.construct.real_candidate import GeneratedSuite, RealSourceTrack
from classforge_bench.pipeline.construct.real_docs import write_docstrings
from classforge_bench.pipeline.construct.real_examples import observed_examples
from classforge_bench.pipeline.construct.real_skeleton import check_real_skeleton, derive_skeleton, with_docstrings
from classforge_bench.pipeline.construct.task import code_columns
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.records import HarvestedClass, RepoRef
from classforge_bench.pipeline.core.source import is_placeholder_body
from classforge_bench.pipeline.core.task import Task, Track
from classforge_bench.pipeline.harvest.candidates import list_candidates, to_record
from classforge_bench.pipeline.llm.cache import ResponseCache
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.ledger import UsageLedger
from classforge_bench.pipeline.release.real_card import real_source_section
from classforge_bench.pipeline.release.stats import compute_stats
from tests.fakes.openai_server import FakeOpenAIServer, Text

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "examples" / "real-repos" / "security-use__security-use.bundle"
BREAKER_PATH = "src/security_use/sensor/circuit_breaker.py"


@pytest.fixture(scope="module")
def breaker_source(tmp_path_factory) -> str:
    """CircuitBreaker's module as its authors wrote it, read from the shipped bundle."""
    bare = tmp_path_factory.mktemp("bundle") / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(bare)], check=True)
    return subprocess.run(
        ["git", "--git-dir", str(bare), "show", f"HEAD:{BREAKER_PATH}"], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def breaker(breaker_source) -> HarvestedClass:
    """The harvest's record of CircuitBreaker (its module also defines CircuitState and CircuitStats)."""
    ref = RepoRef(
        full_name="security-use/security-use",
        clone_url="https://github.com/security-use/security-use.git",
        license_spdx="MIT",
        head_commit="9655b4fa110085bb6eac972bbb53120ee6fefda2",
    )
    found = [
        c
        for c in list_candidates(ref, BREAKER_PATH, breaker_source, ast.parse(breaker_source))
        if c.node.name == "CircuitBreaker"
    ]
    return to_record(found[0]).model_copy(update={"domains": ["Utils"]})


def _class(code: str, name: str) -> ast.ClassDef:
    return next(n for n in ast.parse(code).body if isinstance(n, ast.ClassDef) and n.name == name)


# -- skeleton derivation ------------------------------------------------------------------------


def test_real_class_becomes_a_classeval_skeleton(breaker):
    derived = derive_skeleton(breaker)
    assert derived.solution == breaker.module_source()
    skel = _class(derived.skeleton, "CircuitBreaker")
    methods = {fn.name: fn for fn in skel.body if isinstance(fn, ast.FunctionDef)}
    assert set(methods) == {m.name for m in breaker.methods}
    # every body but the constructor's and the private helper's is gone; those are given code
    given = {"__init__", "_get_state"}
    assert all(is_placeholder_body(fn) for name, fn in methods.items() if name not in given)
    assert not any(is_placeholder_body(methods[name]) for name in given)
    assert derived.implemented == ["_get_state"] and "_get_state" not in derived.docstrings
    assert "self.failure_threshold = failure_threshold" in derived.skeleton
    # Google-style sections became the checks' fields; nothing of this class is too thin
    assert ":param failure_threshold: Consecutive failures before opening circuit." in derived.skeleton
    assert ":return: True if the request should proceed, False if circuit is open." in derived.skeleton
    assert "Args:" not in ast.get_docstring(methods["__init__"])
    assert derived.thin == {}
    # the module context the class needs ships with it (its enum and its stats dataclass)
    assert "class CircuitState(Enum):" in derived.skeleton and "class CircuitStats:" in derived.skeleton


def test_skeleton_checks_want_observed_examples_then_pass(breaker):
    derived = derive_skeleton(breaker)
    report = check_real_skeleton(derived.skeleton, derived.context, 5)
    assert report.verdict().reason == R.UNDOCUMENTED_METHOD and ">>> example" in report.verdict().detail
    # the shipped helper is neither an elided body nor a method to document, and `state` may call it
    assert [p.reason for p in report.problems] == [
        R.UNDOCUMENTED_METHOD
    ] and "_get_state" not in report.verdict().detail
    public = [m for m in derived.docstrings if not m.startswith("_")]
    docs = {m: derived.docstrings[m] + "\n>>> breaker = CircuitBreaker()\n>>> breaker.reset()" for m in public}
    shipped = with_docstrings(derived.skeleton, "CircuitBreaker", docs)
    assert check_real_skeleton(shipped, derived.context, 5).ok


def test_skeleton_round_trips_through_the_task_model(breaker):
    derived = derive_skeleton(breaker)
    tests = (
        "import unittest\n\n\nclass CircuitBreakerTestAllowRequest(unittest.TestCase):\n"
        "    def test_allow(self):\n        self.assertTrue(CircuitBreaker().allow_request())\n"
    )
    columns = code_columns(
        "cand-real-x",
        skeleton=derived.skeleton,
        class_name="CircuitBreaker",
        tests=tests,
        test_classes=["CircuitBreakerTestAllowRequest"],
        method_test_classes={"allow_request": "CircuitBreakerTestAllowRequest"},
        solution=derived.solution,
    )
    task = Task(**columns, domain1="Utils", track=Track.REAL_SOURCE, extras={"methods_given": []})
    row = json.loads(json.dumps(task.to_row()))
    back = Task.from_row(row)
    assert back.model_dump() == task.model_dump() and back.track is Track.REAL_SOURCE and "track" not in back.extras
    assert list(row)[-2:] == ["track", "methods_given"], "the field is last, then the extras: the old column order"
    # a task built before the track was a field (its row came from `extras`) loads the same
    older = Task(**columns, domain1="Utils", extras={"track": "real-source", "methods_given": []}).to_row()
    assert older == row and Task.from_row(older).track is Track.REAL_SOURCE
    assert "track" not in Task(**columns, domain1="Utils").to_row(), "a composed task's row has no track column"
    # the records are the methods the model writes: not the constructor, not the shipped helper
    assert [m.method_name for m in task.methods_info] == [
        m.name for m in breaker.methods if m.name not in ("__init__", "_get_state")
    ]
    allow = task.method("allow_request")
    assert allow.test_class == "CircuitBreakerTestAllowRequest" and "return True" in allow.solution_code
    assert allow.method_description.startswith("def allow_request(self) -> bool:")
    assert task.metrics is not None and task.metrics.method_count == len(task.methods_info)


THIN = '''import json


class Ledger:
    """A ledger of named amounts."""

    def __init__(self):
        """Start empty."""
        self.items = {}

    def add(self, name, amount):
        """Add an amount.

        Args:
            name: the entry.
        """
        self.items[name] = self.items.get(name, 0) + amount

    def total(self):
        return sum(self.items.values())

    def names(self):
        """Return the names in insertion order."""
        return list(self.items)

    def dump(self):
        """Serialise the ledger.

        Returns:
            JSON text.
        """
        return json.dumps(self.items)

    def clear(self):
        """Remove every entry."""
        self.items.clear()
'''


def test_thin_docstrings_are_named(tmp_path):
    derived = derive_skeleton(harvested(THIN, "Finance & E-commerce"))
    assert derived.thin == {"add": ":param amount:", "total": "no docstring"}
    assert derived.docstrings["clear"].endswith(":return: None")
    assert derived.docstrings["names"].endswith(":return: Return the names in insertion order.")


TYPED = '''class Meter:
    """A meter of readings."""

    def __init__(self, limit: int = 10):
        self.limit = limit
        self.readings = self._empty()

    def add(self, value: float, *, unit: "Unit" = None) -> bool:
        """Record a reading if there is room."""
        if len(self.readings) >= self.limit:
            return False
        self.readings.append(value)
        return True

    def last(self, n: int) -> list[float]:
        """The last readings.

        Args:
            n: how many.

        Returns:
            the readings, oldest first.
        """
        return self.readings[-n:]

    def count(self, at_least) -> int:
        """Readings of at least a value."""
        return sum(r >= at_least for r in self.readings)

    def total(self, scale: float) -> float:
        return scale * sum(self.readings)

    def _empty(self):
        return []
'''


def test_a_described_method_is_completed_from_its_annotations_and_helpers_ship_whole():
    derived = derive_skeleton(harvested(TYPED, "Utilities"))
    # a description plus types: `:param value: float`, the forward reference unquoted, `:return: bool`
    assert (
        derived.docstrings["add"]
        == "Record a reading if there is room.\n\n:param value: float\n:param unit: Unit\n:return: bool"
    )
    # the authors' text wins over the annotation; an unannotated parameter stays thin; no description, no docstring
    assert derived.docstrings["last"].endswith(":param n: how many.\n:return: the readings, oldest first.")
    assert derived.thin == {"count": ":param at_least:", "total": "no docstring"}
    assert derived.from_annotations == ["add"]
    # the undocumented helper and the constructor without a docstring ship as written, and are not thin
    assert derived.implemented == ["_empty"] and "def _empty(self):\n        return []" in derived.skeleton
    assert "self.readings = self._empty()" in derived.skeleton
    # the constructor's body stays as written; its docstring now states the public field it sets to
    # an argument (type from the annotation), and not the computed backing list: internal state
    init = derived.docstrings["__init__"]
    assert "self.limit (int): the `limit` argument" in init and "readings" not in init
    assert '    def __init__(self, limit: int = 10):\n        """Create the object.' in derived.skeleton


def test_the_contract_observes_only_the_fields_a_real_skeleton_documents():
    from classforge_bench.pipeline.quality.plus.task_contract import derive_contract

    derived = derive_skeleton(harvested(TYPED, "Utilities"))
    contract = derive_contract(derived.skeleton, "Meter", documented_fields_only=True)
    assert contract.fields == frozenset({"limit"})
    assert contract.attribute_problem("m = Meter(limit=2)\nself.assertEqual(m.limit, 2)\n") is None
    assert "readings" in (contract.attribute_problem("m = Meter(limit=2)\nself.assertEqual(m.readings, [])\n") or "")
    # ClassEval's reading of the same skeleton (every constructor assignment declares) would allow it
    assert derive_contract(derived.skeleton, "Meter").attribute_problem("m = Meter(limit=2)\nm.readings\n") is None


def test_shipped_helpers_are_given_code_for_the_checks_and_the_task_model():
    typed = TYPED.replace("    def count(self, at_least) -> int:", "    def count(self, at_least: float) -> int:")
    derived = derive_skeleton(harvested(typed, "Utilities"))
    docs = {m: d + "\n>>> m = Meter()" for m, d in derived.docstrings.items() if m != "total"}
    docs["total"] = "Scaled sum.\n\n:param scale: float\n:return: float\n>>> m = Meter()"
    shipped = with_docstrings(derived.skeleton, "Meter", docs)
    assert check_real_skeleton(shipped, [], 3).ok  # the constructor calls the helper: allowed, it is given
    # a helper of the skeleton that was elided (the model must write it) is checked like any method
    elided = shipped.replace("def _empty(self):\n        return []", "def _empty(self):\n        pass")
    assert "_empty (no docstring)" in check_real_skeleton(elided, [], 3).verdict().detail
    columns = code_columns(
        "cand-real-m",
        skeleton=shipped,
        class_name="Meter",
        tests="import unittest\n",
        test_classes=[],
        method_test_classes={},
        solution=typed,
    )
    assert [m.method_name for m in columns["methods_info"]] == ["add", "last", "count", "total"]


GENERIC = '''from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class Registry(Generic[T]):
    """Items registered once each."""

    def __init__(self):
        self._items = {}

    def add(self, item: T) -> None:
        """Register an item."""
        self._items[item] = True

    def remove(self, item: T) -> None:
        """Forget an item.

        Args:
            item: a registered item.

        Raises:
            KeyError: if the item was never registered.
        """
        del self._items[item]

    def has(self, item: T) -> bool:
        """Whether an item is registered."""
        return item in self._items

    def size(self) -> int:
        """How many items are registered."""
        return len(self._items)

    def first(self) -> T:
        """The item registered first.

        Returns
        -------
        T
            that item.

        Raises
        ------
        LookupError
            If nothing is registered.
        """
        if not self._items:
            raise LookupError("empty")
        return next(iter(self._items))
'''


def test_a_type_variable_is_stated_by_its_bound_and_the_contract_admits_any_value():
    from classforge_bench.pipeline.construct.real_skeleton import contract_skeleton
    from classforge_bench.pipeline.quality.plus.task_contract import derive_contract

    derived = derive_skeleton(harvested(GENERIC, "Utilities"))
    assert derived.docstrings["add"] == "Register an item.\n\n:param item: T (a value of type Hashable)\n:return: None"
    contract = derive_contract(contract_skeleton(derived), "Registry", documented_fields_only=True)
    # written as `:param item: T` the contract read a class name and refused every literal
    assert contract.admits("add", "item", "1") and contract.admits("has", "item", "'a'")
    bare = derive_contract(contract_skeleton(derived).replace("T (a value of type Hashable)", "T"), "Registry")
    assert not bare.admits("add", "item", "1")


def test_google_and_numpy_raises_sections_stay_documented_for_the_contract():
    from classforge_bench.pipeline.construct.real_skeleton import contract_skeleton
    from classforge_bench.pipeline.quality.plus.task_contract import derive_contract

    derived = derive_skeleton(harvested(GENERIC, "Utilities"))
    assert ":raises KeyError: if the item was never registered." in derived.docstrings["remove"]
    assert ":raises LookupError: If nothing is registered." in derived.docstrings["first"]
    contract = derive_contract(contract_skeleton(derived), "Registry", documented_fields_only=True)
    assert contract.exception_for(["remove"], ["KeyError", "LookupError", "Exception"]) == "KeyError"
    assert contract.exception_for(["first"], ["LookupError", "Exception"]) == "LookupError"
    # an exception the text does not document stays undocumented
    assert contract.exception_for(["size"], ["KeyError"]) is None


def test_a_given_constructor_may_call_a_method_and_a_dataclass_needs_no_init():
    calls = GENERIC.replace("        self._items = {}\n", "        self._items = {}\n        self.add(0)\n")
    derived = derive_skeleton(harvested(calls, "Utilities"))
    docs = {m: d + "\n>>> r = Registry()" for m, d in derived.docstrings.items() if m != "__init__"}
    shipped = with_docstrings(derived.skeleton, "Registry", docs)
    # as 10 of ClassEval's constructors do (`self.create_deck()`): the call is given code
    assert check_real_skeleton(shipped, derived.context, 5).ok
    # the composition track's check, which the real-source track waives, refuses it
    from classforge_bench.pipeline.construct.real_skeleton import without_context
    from classforge_bench.pipeline.construct.skeleton_checks import check_skeleton

    composed = check_skeleton(without_context(shipped, derived.context), 5)
    assert R.CONSTRUCTOR_CALLS_METHOD in {p.reason for p in composed.problems}
    record = '''from dataclasses import dataclass


@dataclass
class Token:
    """A token and its expiry."""

    value: str
    expiry: str
    scopes: list
    owner: str = ""

    def upper(self) -> str:
        """The value in capitals.\n\n:return: str\n>>> Token('a', 'b', []).upper()\n'A'"""

    def lower(self) -> str:
        """The value in small letters.\n\n:return: str\n>>> Token('A', 'b', []).lower()\n'a'"""

    def size(self) -> int:
        """The value's length.\n\n:return: int\n>>> Token('ab', 'b', []).size()\n2"""

    def expired(self, now: str) -> bool:
        """Whether the expiry is before now.\n\n:param now: str\n:return: bool\n>>> Token('a', '1', []).expired('2')\nTrue"""

    def owned(self) -> bool:
        """Whether it has an owner.\n\n:return: bool\n>>> Token('a', 'b', []).owned()\nFalse"""
'''
    assert check_real_skeleton(record, [], 5).ok
    # without the decorator the same class has no constructor at all
    plain = check_real_skeleton(record.replace("@dataclass\n", ""), [], 5)
    assert [p.reason for p in plain.problems] == [R.NO_CONSTRUCTOR]


# -- docstrings written by an LLM and judged for leaks (fake server) ------------------------------


def _context(server: FakeOpenAIServer, tmp: Path, client_box: list) -> StageContext:
    cfg = make_config(server.base_url, tmp)
    cfg.llm.test_writer = endpoint(server.base_url, "writer-m")
    cache = ResponseCache(tmp / "c.sqlite")
    client = LLMClient(cfg.llm, ENV, cache, UsageLedger({}))
    client_box += [client, cache]
    return StageContext(
        client=client,
        llm=cfg.llm,
        construct=cfg.construction,
        prompts=Prompts(cfg.construction),
        candidate_id="cand-real-ledger",
    )


WRITTEN = {
    "add": {
        "description": "Add an amount to an entry, creating it at zero.",
        "params": {"name": "the entry", "amount": "what to add"},
        "returns": "",
    },
    "total": {"description": "Sum of every entry.", "params": {}, "returns": "the sum of all amounts"},
}


def _writer_reply(body) -> Text:
    prompt = body["messages"][-1]["content"]
    method = next(m for m in WRITTEN if f"method `{m}`" in prompt)
    return Text(text=json.dumps(WRITTEN[method]))


def _run_docs(tmp_path, leaks: bool, role: str = "test_writer", written=None):
    with FakeOpenAIServer() as server:
        server.add_rule(pattern="You write docstrings", respond=written or _writer_reply)
        server.add_rule(
            pattern="You check docstrings",
            respond=lambda body: Text(
                text=json.dumps({"leaks": leaks, "reason": "it restates the loop" if leaks else "behaviour only"})
            ),
        )
        box: list = []
        try:
            result = write_docstrings(
                _context(server, tmp_path, box), derive_skeleton(harvested(THIN, "Utilities")), role
            )
        finally:
            for item in box:
                item.close()
        return result, list(server.chat_requests)


def test_thin_docstrings_written_and_judged(tmp_path):
    result, requests = _run_docs(tmp_path, leaks=False)
    assert result.outcome.keep
    written = {w.method: w.docstring for w in result.written}
    assert set(written) == {"add", "total"}
    assert ":param amount: what to add" in written["add"] and written["total"].endswith(
        ":return: the sum of all amounts"
    )
    # one writer and one judge call per thin method; the judge is the first judge endpoint
    assert [r.body["model"] for r in requests] == ["writer-m", "judge-a", "writer-m", "judge-a"]
    assert result.versions == {"docstring_writer": "docstring_writer@v1", "docstring_judge": "docstring_judge@v1"}


def test_leaking_docstring_drops_the_class(tmp_path):
    result, _ = _run_docs(tmp_path, leaks=True)
    assert not result.outcome.keep and result.outcome.reason == R.DOCSTRING_LEAKS
    assert "restates the loop" in result.outcome.detail


def test_written_docstring_missing_a_parameter_is_invalid(tmp_path):
    bad = lambda body: Text(text=json.dumps({"description": "Add.", "params": {"name": "n"}, "returns": ""}))  # noqa: E731
    result, _ = _run_docs(tmp_path, leaks=False, written=bad)
    assert result.outcome.reason == R.DOCSTRING_INVALID and ":param amount:" in result.outcome.detail


def test_without_an_llm_thin_classes_are_dropped_with_a_named_reason(tmp_path):
    result, requests = _run_docs(tmp_path, leaks=False, role="none")
    assert result.outcome.reason == R.DOCSTRING_NEEDS_LLM and "total: no docstring" in result.outcome.detail
    assert requests == []


# -- observed examples ---------------------------------------------------------------------------


def test_examples_replay_a_passing_test_prefix():
    tests = """
import unittest
class T(unittest.TestCase):
    def test_a(self):
        b = CircuitBreaker(failure_threshold=1)
        self.assertTrue(isinstance(b, CircuitBreaker))
        b.record_failure()
        self.assertFalse(b.allow_request())
        self.assertEqual(b.stats.failure_count, 1)
    def test_b(self):
        b = CircuitBreaker()
        self.assertEqual(helper(b.allow_request()), 3)
        self.assertEqual(b.reset(), None)
"""
    found = observed_examples(tests, "CircuitBreaker", limit=3)
    assert found["record_failure"][0] == (
        ">>> b = CircuitBreaker(failure_threshold=1)\n>>> b.record_failure()\n>>> b.allow_request()\nFalse"
    )
    # the later example replays the earlier asserted call: it may have changed the object
    assert found["stats"] == [found["allow_request"][0] + "\n>>> b.stats.failure_count\n1"]
    # test_b's first check calls the object inside something else: the prefix ends, nothing after it counts
    assert "reset" not in found


# -- licences and the stages end to end -----------------------------------------------------------

OBSERVES_ALL = (
    "        b.record_failure()\n        b.record_success()\n        b.reset()\n"
    "        self.assertTrue(b.allow_request())\n        self.assertEqual(b.state, CircuitState.CLOSED)\n"
    "        self.assertEqual(b.stats.times_opened, 0)\n"
)


class Generator:
    name = "scripted-generator"

    def __init__(self, body: str = OBSERVES_ALL) -> None:
        self.calls: list[str] = []
        self.body = body

    def __call__(self, solution: str, class_name: str, *, item_id: str, skeleton: str = "", seeds=()) -> GeneratedSuite:
        self.calls.append(class_name)
        tests = (
            f"import unittest\n\n\nclass {class_name}TestMain(unittest.TestCase):\n"
            f"    def test_main(self):\n        b = {class_name}()\n" + self.body
        )
        return GeneratedSuite(tests=tests, test_classes=[f"{class_name}TestMain"], generator=self.name)


def _build(tmp_path, classes, mutator=None, generator=None, **real):
    cfg = make_config("http://127.0.0.1:9/v1", tmp_path, mode="replay")
    cfg.construction.track = "real-source"
    for k, v in real.items():
        setattr(cfg.construction.real_source, k, v)
    gen, gate = generator or Generator(), ScriptedGate()
    with ResponseCache(tmp_path / "c.sqlite") as cache, LLMClient(cfg.llm, ENV, cache, UsageLedger({})) as client:
        cfg.construction.mutation.enabled = mutator is not None
        track = RealSourceTrack(classes, BuildSettings.of(cfg), tmp_path / "built", gen, mutator=mutator)
        result = build_tasks(track, client, gate, tmp_path / "built")
    return result, gen, gate


def test_licence_filter(breaker, tmp_path):
    unlicensed = breaker.model_copy(update={"id": "cls-none", "license_spdx": None, "repo": "someone/unlicensed"})
    copyleft = breaker.model_copy(update={"id": "cls-gpl", "license_spdx": "GPL-3.0"})
    result, gen, _ = _build(tmp_path, [unlicensed, copyleft, breaker])
    assert result.funnel.stages["license"].dropped == {R.NO_LICENSE: 1, R.LICENSE_NOT_ALLOWED: 1}
    assert [t.sources[0].class_id for t in result.tasks] == [breaker.id] and gen.calls == ["CircuitBreaker"]
    # the allow-list is configuration: with GPL-3.0 on it, that class passes the licence stage
    again, _, _ = _build(tmp_path / "gpl", [copyleft], license_allow=["MIT", "GPL-3.0"])
    assert again.funnel.stages["license"].kept == 1


def test_no_licence_is_admitted_only_when_the_config_says_so(breaker, tmp_path):
    unlicensed = breaker.model_copy(update={"id": "cls-none", "license_spdx": None, "repo": "someone/unlicensed"})
    noassertion = breaker.model_copy(update={"id": "cls-na", "license_spdx": "NOASSERTION"})
    copyleft = breaker.model_copy(update={"id": "cls-gpl", "license_spdx": "GPL-3.0"})
    default, _, _ = _build(tmp_path / "default", [unlicensed, noassertion])
    assert default.funnel.stages["license"].dropped == {R.NO_LICENSE: 2}
    private, _, _ = _build(tmp_path / "private", [unlicensed, noassertion, copyleft], admit_unlicensed=True)
    # the switch admits "no licence" only: a licence off the allow-list is still refused
    assert private.funnel.stages["license"].kept == 2
    assert private.funnel.stages["license"].dropped == {R.LICENSE_NOT_ALLOWED: 1}


def test_built_task_records_provenance_examples_and_the_mutation_gate(breaker, tmp_path):
    result, _, gate = _build(tmp_path, [breaker], mutator=ScriptedMutator([mutation_report(9, 1)]))
    assert [s for s, c in result.funnel.stages.items() if c.kept] == [
        "license",
        "skeleton",
        "docstrings",
        "tests",
        "reference",
        "examples",
        "mutation",
        "task",
    ]
    (task,) = result.tasks
    assert gate.calls[0][0] == breaker.module_source()  # the reference the gate ran is the real class
    assert task.solution_code == breaker.module_source() and task.mutation_score == 0.9
    assert task.composition_type is None and task.domain1 == "Utils"
    src = task.sources[0]
    assert (src.repo, src.path, src.commit, src.license_spdx) == (breaker.repo, BREAKER_PATH, breaker.commit, "MIT")
    assert ">>> b.reset()" in task.method("reset").method_description
    row = task.to_row()
    assert row["track"] == "real-source" and row["test_generator"] == "scripted-generator"
    assert row["docstrings_llm_written"] == [] and "allow_request" in row["docstrings_original"]
    assert row["docstrings_from_annotations"] == [] and row["methods_given"] == ["_get_state"]
    card = real_source_section([row], compute_stats([row]))
    assert f"Docstrings: {len(row['docstrings_original'])} as written by the authors,\n0 completed from type" in card
    assert "1 private helper\nmethod(s) ship implemented" in card
    # a second run loads the finished candidate (extras included) instead of rebuilding it
    again, _, gate2 = _build(tmp_path, [breaker], mutator=ScriptedMutator([mutation_report(9, 1)]))
    assert again.resumed == 1 and gate2.calls == [] and again.tasks[0].to_row()["track"] == "real-source"


def test_weak_generated_tests_fail_the_mutation_gate(breaker, tmp_path):
    result, _, _ = _build(tmp_path, [breaker], mutator=ScriptedMutator([mutation_report(5, 5)]))
    assert result.tasks == [] and result.funnel.stages["mutation"].dropped == {R.WEAK_TESTS: 1}


def test_no_generator_is_a_named_drop(breaker, tmp_path):
    cfg = make_config("http://127.0.0.1:9/v1", tmp_path, mode="replay")
    with ResponseCache(tmp_path / "c.sqlite") as cache, LLMClient(cfg.llm, ENV, cache, UsageLedger({})) as client:
        track = RealSourceTrack([breaker], BuildSettings.of(cfg), tmp_path / "b", None)
        result = build_tasks(track, client, ScriptedGate(), tmp_path / "b")
    assert result.funnel.stages["tests"].dropped == {R.NO_TEST_GENERATOR: 1}


def test_methods_no_test_observes_ship_without_an_example(breaker, tmp_path):
    only_allow = Generator("        self.assertTrue(b.allow_request())\n        b.reset()\n")
    result, _, _ = _build(tmp_path, [breaker], generator=only_allow)
    (task,) = result.tasks
    assert ">>> b.allow_request()\n        True" in task.skeleton
    assert ">>>" not in task.method("reset").method_description  # called last, never observed afterwards
    assert task.to_row()["methods_without_example"] == ["state", "record_success", "record_failure", "reset", "stats"]


def test_a_suite_that_observes_no_public_method_drops_the_class(breaker, tmp_path):
    result, _, _ = _build(
        tmp_path, [breaker], generator=Generator("        b.reset()\n        self.assertTrue(True)\n")
    )
    assert result.tasks == [] and result.funnel.stages["examples"].dropped == {R.NO_OBSERVED_EXAMPLE: 1}


def test_the_generator_is_the_plus_tier_when_installed_else_none(tmp_path):
    from classforge_bench.pipeline.config import Config
    from classforge_bench.pipeline.construct.real_generators import (
        PlusGenerator,
        configured_generator,
        method_test_classes,
    )
    from classforge_bench.pipeline.quality.plus.generate import DEFAULT_PYTHON

    # the default is the checkout's own .venv-plus (scripts/setup.sh), next to pyproject.toml
    assert (DEFAULT_PYTHON.parents[2] / "pyproject.toml").is_file() and DEFAULT_PYTHON.parts[-3] == ".venv-plus"
    cfg = Config()
    cfg.plus.python = tmp_path / "missing" / "python"
    assert configured_generator(cfg) is None
    (tmp_path / "python").write_text("")
    cfg.plus.python = tmp_path / "python"
    assert isinstance(configured_generator(cfg), PlusGenerator)
    solution = "class A:\n    def __init__(self):\n        pass\n\n    def allow_request(self):\n        return 1\n"
    assert method_test_classes(["ATestAllowRequest", "ATestMain", "ATestInit"], "A", solution) == {
        "allow_request": "ATestAllowRequest"
    }


def test_the_generated_tests_own_funnel_joins_the_builds(breaker, tmp_path):
    from classforge_bench.pipeline.construct.real_generators import suite_funnel
    from classforge_bench.pipeline.core.funnel import StageCounts
    from classforge_bench.pipeline.core.task import PlusSuite
    from classforge_bench.pipeline.release.tables import stage_unit

    suite = PlusSuite(
        generated=12,
        tests=7,
        dropped={"plus-off-domain": 3, "plus-walk-unrecorded": 2},
        observed=5,
        unchecked={"plus-state-unrecorded": 1},
    )
    own = suite_funnel(suite)
    assert own.stages == {
        "generated-tests": StageCounts(seen=12, kept=7, dropped={"plus-off-domain": 3, "plus-walk-unrecorded": 2}),
        "state-checks": StageCounts(seen=5, kept=4, dropped={"plus-state-unrecorded": 1}),
    }
    assert "state-checks" not in suite_funnel(PlusSuite(generated=2, tests=2)).stages  # observation off

    class Counting(Generator):
        def __call__(
            self, solution: str, class_name: str, *, item_id: str, skeleton: str = "", seeds=()
        ) -> GeneratedSuite:
            return super().__call__(solution, class_name, item_id=item_id).model_copy(update={"funnel": own})

    result, _, _ = _build(tmp_path, [breaker], mutator=ScriptedMutator([mutation_report(9, 1)]), generator=Counting())
    assert result.funnel.stages["generated-tests"] == own.stages["generated-tests"]
    assert result.funnel.stages["state-checks"].dropped == {"plus-state-unrecorded": 1}
    assert stage_unit("generated-tests", result.funnel) == "generated tests"
    again, _, _ = _build(tmp_path, [breaker], mutator=ScriptedMutator([mutation_report(9, 1)]), generator=Counting())
    assert again.resumed == 1 and again.funnel.stages["generated-tests"] == own.stages["generated-tests"]


def _build_with(tmp_path, classes, generator, **construction):
    cfg = make_config("http://127.0.0.1:9/v1", tmp_path, mode="replay")
    cfg.construction.track = "real-source"
    cfg.construction.mutation.enabled = False
    for k, v in construction.items():
        setattr(cfg.construction, k, v)
    with ResponseCache(tmp_path / "c.sqlite") as cache, LLMClient(cfg.llm, ENV, cache, UsageLedger({})) as client:
        track = RealSourceTrack(classes, BuildSettings.of(cfg), tmp_path / "built", generator)
        return build_tasks(track, client, ScriptedGate(), tmp_path / "built")


def test_the_method_count_is_checked_before_any_test_is_generated(breaker, tmp_path):
    gen = Generator()
    result = _build_with(tmp_path, [breaker], gen, min_methods=50)
    assert result.funnel.stages["tests"].dropped == {R.TOO_FEW_METHODS: 1}
    assert gen.calls == []  # no search spent on a class the task check would drop


def test_the_repositorys_seeds_reach_the_generator(breaker, tmp_path):
    from classforge_bench.pipeline.core.records import RepoSeed, SeedCall

    seeds = [
        RepoSeed(
            origin="tests/test_cb.py:3", kind="test", constructor="CircuitBreaker()", calls=[SeedCall(call="reset()")]
        )
    ]

    class Seeing(Generator):
        def __call__(self, solution, class_name, *, item_id, skeleton="", seeds=()):
            self.calls.append(list(seeds))
            return super().__call__(solution, class_name, item_id=item_id, skeleton=skeleton)

    gen = Seeing()
    _build_with(tmp_path, [breaker.model_copy(update={"seeds": seeds})], gen)
    assert gen.calls[0] == seeds


def test_a_finished_candidate_is_rebuilt_when_its_seeds_change(breaker, tmp_path):
    """Resume: the class's id and source are the same, its repository's seeds are not; what the
    generator was given changed, so the finished candidate is not reused."""
    from classforge_bench.pipeline.core.records import RepoSeed, SeedCall

    seed = RepoSeed(origin="tests/test_cb.py:3", kind="test", constructor="CircuitBreaker()", calls=[])
    first, gen = [breaker.model_copy(update={"seeds": [seed]})], Generator()
    assert _build_with(tmp_path, first, gen).resumed == 0 and gen.calls == ["CircuitBreaker"]
    again = _build_with(tmp_path, first, gen)
    assert again.resumed == 1 and gen.calls == ["CircuitBreaker"]  # unchanged: reused
    changed = [breaker.model_copy(update={"seeds": [seed.model_copy(update={"calls": [SeedCall(call="reset()")]})]})]
    rebuilt = _build_with(tmp_path, changed, gen)
    assert rebuilt.resumed == 0 and gen.calls == ["CircuitBreaker", "CircuitBreaker"]


def test_a_generator_failure_reaches_the_funnel_with_its_reason(breaker, tmp_path):
    class Failing(Generator):
        def __call__(self, solution, class_name, *, item_id, skeleton="", seeds=()):
            self.calls.append(skeleton)
            return GeneratedSuite(
                tests="",
                test_classes=[],
                generator=self.name,
                failure_reason=R.PLUS_ALL_DROPPED,
                failure="10 generated, all dropped: plus-off-domain x10",
            )

    gen = Failing()
    result = _build_with(tmp_path, [breaker], gen)
    assert result.funnel.stages["tests"].dropped == {R.PLUS_ALL_DROPPED: 1}
    # the generator got the skeleton as shipped (bodies elided): the contract's source
    from classforge_bench.pipeline.construct.real_skeleton import contract_skeleton

    assert gen.calls == [contract_skeleton(derive_skeleton(breaker))]
