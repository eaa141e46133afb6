"""Seeds from the repository (harvest/seeds.py): how a repository's own tests, examples, README,
notebooks and call sites build and call a kept class, read with ast and never run."""

from __future__ import annotations

from pathlib import Path

from scan_kit import scan

from classforge_bench.pipeline.core.records import SEED_SELF, RepoSeed, SeedCall
from classforge_bench.pipeline.harvest.files import list_checkout
from classforge_bench.pipeline.harvest.repo_builder import build_repo, load_spec
from classforge_bench.pipeline.harvest.seeds import MAX_SEEDS, collect_seeds, sequences

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "real-seeds" / "acme__ledger"


def _ledger_repo(tmp_path: Path) -> Path:
    _, branch, commits = load_spec(FIXTURE)
    dest = tmp_path / "repos" / "acme__ledger"
    build_repo(dest, commits, branch)
    return dest


def _seeds(source: str, kind="test", names=("Ledger",)) -> list[RepoSeed]:
    return [seed for _, seed in sequences(source, "t.py", kind, set(names))]


def test_every_source_of_the_repository_gives_its_seeds_and_none_is_run(tmp_path):
    repo = _ledger_repo(tmp_path)
    shard = scan(repo, tmp_path)
    [ledger] = shard.classes
    by_origin = {s.origin: s for s in ledger.seeds}
    # its own test: the literal bound to `day` inlined, the call the test expects to raise marked,
    # the calls in order (asserted or not)
    test = by_origin["tests/ledger_checks.py:12"]
    assert test.kind == "test" and test.constructor == "Ledger('ann', limit=2)"
    assert test.calls == [
        SeedCall(call="book('2025-03-01', 5)"),
        SeedCall(call="book('2025-03-02', 7)"),
        SeedCall(call="total()"),
        SeedCall(call="book('2025-03-03', 1)", raises="OverflowError"),
        SeedCall(call="count()"),
    ]
    # a write into the instance's internals ends the sequence: what follows depends on them
    assert by_origin["tests/ledger_checks.py:22"].calls == [SeedCall(call="book('2025-01-01', 3)")]
    # an example, a call site in the library, the README's code block and session, a notebook cell
    assert by_origin["examples/demo.py:3"].kind == "example"
    assert [c.call for c in by_origin["examples/demo.py:3"].calls] == [
        "book('2025-05-05', 40)",
        "total_since('2025-01-01')",
    ]
    assert by_origin["ledger/report.py:7"].kind == "call-site"
    assert by_origin["ledger/report.py:7"].constructor == "Ledger('report', limit=12)"
    readme = [s for s in ledger.seeds if s.kind == "readme"]
    assert {s.constructor for s in readme} == {"Ledger('readme')", "Ledger('session')"}
    notebook = next(s for s in ledger.seeds if s.origin.startswith("docs/walkthrough.ipynb"))
    assert notebook.kind == "example" and [c.call for c in notebook.calls] == ["book('2025-07-07', 2)", "clear()"]
    # a value only a fixture gives (tmp_path) is no literal: no seed from that test; a vendored
    # folder is someone else's code, its README no usage of this repository's class
    assert not any("tmp_path" in s.constructor for s in ledger.seeds)
    assert not any("vendored" in s.constructor for s in ledger.seeds)
    # the repository's tests come first; nothing of it was executed
    assert ledger.seeds[0].kind == "test"
    assert not list(repo.rglob("*.ran")) and not list((tmp_path / "clones").rglob("*.ran"))


def test_constructors_in_every_spelling_and_factories():
    src = (
        "import pkg\n"
        "def t():\n"
        "    a = pkg.Ledger('x')\n"
        "    a.count()\n"
        "    b = Ledger[int]('y')\n"
        "    b.total()\n"
        "    c = Ledger.from_rows([('2025-01-01', 1)])\n"
        "    c.total()\n"
        "    use(Ledger('inline'))\n"
    )
    seeds = _seeds(src)
    assert [(s.constructor, [c.call for c in s.calls]) for s in seeds] == [
        ("Ledger('inline')", []),
        ("Ledger('x')", ["count()"]),
        ("Ledger('y')", ["total()"]),
        ("Ledger.from_rows([('2025-01-01', 1)])", ["total()"]),
    ]


def test_arguments_must_be_literals_and_a_rebinding_ends_a_sequence():
    src = (
        "def t(tmp):\n"
        "    n = 3\n"
        "    a = Ledger('x', limit=n)\n"
        "    a.book(tmp, 1)\n"  # not a literal: the call is left out, the sequence goes on
        "    a.book('2025-01-01', -2)\n"
        "    a.book(*args)\n"
        "    assert a._entries[0] is not None\n"  # reading private state changes nothing: the sequence goes on
        "    a.count()\n"
        "    a = Ledger('z')\n"
        "    a._reset()\n"  # a private call ends it
        "    a.total()\n"
    )
    seeds = _seeds(src)
    assert [(s.constructor, [c.call for c in s.calls]) for s in seeds] == [
        ("Ledger('x', limit=3)", ["book('2025-01-01', -2)", "count()"]),
        ("Ledger('z')", []),
    ]


def test_unittest_assert_raises_marks_the_call_and_other_code_is_not_read_as_python():
    src = (
        "class T(unittest.TestCase):\n"
        "    def test_full(self):\n"
        "        led = Ledger('a', 1)\n"
        "        led.book('2025-01-01', 1)\n"
        "        with self.assertRaises((OverflowError, ValueError)):\n"
        "            led.book('2025-01-02', 1)\n"
    )
    [seed] = _seeds(src)
    assert seed.calls[-1] == SeedCall(call="book('2025-01-02', 1)", raises="OverflowError")
    assert _seeds("pip install Ledger\nLedger(") == []  # a shell line or a cut block: nothing
    assert _seeds("x = Other(1)\nx.count()\n") == []  # no kept class named


def test_at_most_max_seeds_per_class(tmp_path):
    body = "".join(f"def test_{i}():\n    Ledger('n{i}').count()\n" for i in range(MAX_SEEDS + 5))
    repo = _ledger_repo(tmp_path)
    (repo / "tests" / "many_checks.py").write_text(body, encoding="utf-8")
    shard = scan(repo, tmp_path)
    record = shard.classes[0].model_copy(update={"seeds": []})
    collect_seeds(repo, list_checkout(repo), [record])
    assert len(record.seeds) == MAX_SEEDS
    assert len({(s.constructor, tuple(s.calls)) for s in record.seeds}) == MAX_SEEDS


def test_a_round_trip_feeds_the_instances_own_result_back_to_the_class():
    """`data = t.to_dict(); Token.from_dict(data)`: the factory's argument is no literal, but the
    instance's own result; the seed carries it as a call of its sequence (`SEED_SELF`)."""
    src = (
        "def t():\n"
        "    token = Token(expiry='2024-01-15', created_at='2024-01-14')\n"
        "    data = token.to_dict()\n"
        "    restored = Token.from_dict(data)\n"
        "    other = Token.from_dict(unknown)\n"  # not the instance's result: no seed, no call
        "    Token.from_dict(data, strict=True)\n"
    )
    (seed,) = _seeds(src, names=("Token",))
    assert [c.call for c in seed.calls] == [
        "to_dict()",
        f"from_dict({SEED_SELF}.to_dict())",
        f"from_dict({SEED_SELF}.to_dict(), strict=True)",
    ]
