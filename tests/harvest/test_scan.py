"""One repository through the file and class filters and provenance, asserting reason codes."""

from __future__ import annotations

import ast
from datetime import UTC, date, datetime

import pytest
from classgen import first_method, make_class
from scan_kit import CUTOFF, reasons, scan

from classforge_bench.pipeline.config import CloneConfig, FilterConfig
from classforge_bench.pipeline.harvest.clone import clone_for_scan
from classforge_bench.pipeline.harvest.local_source import local_repo_ref


def no_class_files(shard) -> set[str]:
    return {r.item_id for r in shard.rejects if r.reason == "no-top-level-class"}


def test_good_class_is_kept_with_provenance_and_metadata(make_repo, tmp_path):
    src = make_class("ShoppingCart", methods=6)
    repo = make_repo(
        "acme__shop",
        [
            (
                "2025-02-03T10:00:00",
                {"shop/cart.py": src, "LICENSE": "Permission is hereby granted, free of charge, to any person"},
            )
        ],
    )
    shard = scan(repo, tmp_path)
    assert [c.class_name for c in shard.classes] == ["ShoppingCart"]
    cls = shard.classes[0]
    assert cls.repo == "acme/shop" and cls.path == "shop/cart.py" and cls.license_spdx == "MIT"
    assert cls.first_seen_date.date() == date(2025, 2, 3)
    assert cls.first_seen_commit == cls.commit == shard.head_commit
    assert cls.metrics.method_count == 6 and cls.metrics.loc == len(
        src.split("class ShoppingCart")[1].rstrip("\n").splitlines()
    )
    assert cls.imports == ["import json"]
    assert [m.name for m in cls.methods][:2] == ["__init__", first_method(src)]
    assert {f.name for f in cls.fields} == {"items", "total"}
    assert cls.id.startswith("cls-")
    ns: dict = {}
    exec(compile(cls.module_source(), "m", "exec"), ns)
    cart = ns["ShoppingCart"]()
    assert getattr(cart, first_method(src))("k").startswith('{"k": ')


@pytest.mark.parametrize(
    "imports, reason",
    [
        ("import requests\nimport json\n", "third-party-import"),
        ("from .helpers import x\nimport json\n", "relative-import"),
        ("from shop.paths import *\nimport json\n", "star-import"),
        ("from shop.helpers import slug\nimport json\n", "same-repo-import"),
    ],
)
def test_import_purity(make_repo, tmp_path, imports, reason):
    uses = {
        "third-party-import": "requests.get",
        "relative-import": "x",
        "star-import": "join",
        "same-repo-import": "slug",
    }[reason]
    src = make_class("Cart", methods=6, imports=imports, extra_method=f"def uses(self):\n    return {uses}\n")
    repo = make_repo(
        "acme__shop", [("2025-02-03", {"shop/cart.py": src, "shop/helpers.py": "def slug(s):\n    return s\n"})]
    )
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {"acme/shop:shop/cart.py::Cart": reason}


def test_unused_third_party_import_in_the_file_does_not_matter(make_repo, tmp_path):
    src = make_class("Cart", methods=6, imports="import json\nimport requests\n")
    src += "\n\ndef fetch():\n    return requests.get('x')\n"
    shard = scan(make_repo("a__b", [("2025-02-03", {"cart.py": src})]), tmp_path)
    assert [c.class_name for c in shard.classes] == ["Cart"]
    assert shard.classes[0].imports == ["import json"]


def test_import_inside_a_method_is_checked_too(make_repo, tmp_path):
    src = make_class("Cart", methods=6, extra_method="def fetch(self):\n    import requests\n    return requests.get\n")
    shard = scan(make_repo("a__b", [("2025-02-03", {"cart.py": src})]), tmp_path)
    assert reasons(shard) == {"a/b:cart.py::Cart": "third-party-import"}


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"methods": 4}, "too-few-methods"),
        ({"methods": 5, "body_lines": 2}, "too-short"),
        ({"methods": 60, "body_lines": 14}, "too-long"),
    ],
)
def test_structure(make_repo, tmp_path, kwargs, reason):
    shard = scan(make_repo("a__b", [("2025-02-03", {"m.py": make_class("Thing", **kwargs)})]), tmp_path)
    assert reasons(shard) == {"a/b:m.py::Thing": reason}


def test_structure_bounds_are_inclusive(make_repo, tmp_path):
    src = make_class("Thing", methods=5, body_lines=7)
    loc = len(src[src.index("class Thing") :].rstrip("\n").splitlines())
    shard = scan(
        make_repo("a__b", [("2025-02-03", {"m.py": src})]), tmp_path, FilterConfig(min_lines=loc, max_lines=loc)
    )
    assert [c.metrics.loc for c in shard.classes] == [loc]
    shard = scan(make_repo("a__c", [("2025-02-03", {"m.py": src})]), tmp_path, FilterConfig(min_lines=loc + 1))
    assert reasons(shard) == {"a/c:m.py::Thing": "too-short"}


def test_unresolved_name_and_carried_context(make_repo, tmp_path):
    prelude = "RATE = 3\n\n\ndef _scale(v):\n    return v * RATE + len(SEP)\n\n\nSEP = '-'\n\n\n"
    good = make_class("Good", methods=6, prelude=prelude, extra_method="def scaled(self, v):\n    return _scale(v)\n")
    bad = make_class("Bad", methods=6, extra_method="def broken(self):\n    return undefined_helper(self.items)\n")
    shard = scan(make_repo("a__b", [("2025-02-03", {"good.py": good, "bad.py": bad})]), tmp_path)
    assert reasons(shard) == {"a/b:bad.py::Bad": "unresolved-name"}
    assert "undefined_helper" in shard.rejects[0].detail
    (cls,) = shard.classes
    assert [ast.parse(c).body[0].__class__.__name__ for c in cls.context] == ["Assign", "FunctionDef", "Assign"]
    ns: dict = {}
    exec(compile(cls.module_source(), "m", "exec"), ns)
    assert ns["Good"]().scaled(2) == 7


def test_pre_cutoff_class_in_young_repository_is_dropped(make_repo, tmp_path):
    old = make_class("Legacy", methods=6)
    new = make_class("Fresh", methods=6)
    repo = make_repo(
        "a__b",
        [
            ("2024-06-01", {"legacy.py": old}),
            ("2025-03-01", {"legacy.py": old.replace("Start empty.", "Start with nothing."), "fresh.py": new}),
        ],
    )
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {"a/b:legacy.py::Legacy": "pre-cutoff"}
    assert "2024-06-01" in shard.rejects[0].detail
    assert [c.class_name for c in shard.classes] == ["Fresh"]


def test_class_moved_to_another_file_keeps_its_first_seen_date(make_repo, tmp_path):
    src = make_class("Mover", methods=6)
    repo = make_repo(
        "a__b",
        [
            ("2025-02-01", {"a.py": src}),
            ("2025-05-01", {"b.py": src}),
        ],
    )
    (cls,) = [c for c in scan(repo, tmp_path).classes if c.path == "b.py"]
    assert cls.first_seen_date.date() == date(2025, 2, 1)


def test_file_selection_and_content_reasons(make_repo, tmp_path):
    good = make_class("Kept", methods=6)
    files: dict[str, str | bytes] = {
        "pkg/kept.py": good,
        "tests/test_kept.py": good.replace("Kept", "KeptTest"),
        "pkg/test_thing.py": good.replace("Kept", "T2"),
        "conftest.py": good.replace("Kept", "Conf"),
        "app/migrations/0001_initial.py": good.replace("Kept", "Mig"),
        "setup.py": good.replace("Kept", "Setup"),
        "venv/lib/site.py": good.replace("Kept", "Vend"),
        "pkg/binary.py": b"\x00\x01class X: pass\n",
        "pkg/latin.py": "# caf\xe9\nclass Y:\n    pass\n".encode("latin-1"),
        "pkg/empty.py": "\n  \n",
        "pkg/scraped.py": "<div class='code'>\n" + good.replace("Kept", "Scraped") + "</div>\n",
        "pkg/template.py": good.replace("Kept", "Tmpl").replace("Start empty.", "Renders <div>x</div> safely."),
        "pkg/broken.py": "class Broken(:\n    pass\n",
        "pkg/deep.py": good.replace("Kept", "Deep") + "x = " + "[" * 90 + "1" + "]" * 90 + "\n",
        # No class statement: never parsed, so its depth is never measured.
        "pkg/deep_data.py": "x = " + "[" * 90 + "1" + "]" * 90 + "\n",
        "pkg/huge.py": "# " + "x" * (len(good) + 2000) + "\n",
    }
    shard = scan(
        make_repo("a__b", [("2025-02-03", files)]),
        tmp_path,
        FilterConfig(max_file_bytes=1500 + len(good), max_nesting_depth=60),
    )
    got = reasons(shard)
    expected = {
        "a/b:tests/test_kept.py": "test-file",
        "a/b:pkg/test_thing.py": "test-file",
        "a/b:conftest.py": "test-file",
        "a/b:app/migrations/0001_initial.py": "migration",
        "a/b:setup.py": "setup-script",
        "a/b:venv/lib/site.py": "vendored",
        "a/b:pkg/binary.py": "binary",
        "a/b:pkg/latin.py": "not-utf8",
        "a/b:pkg/empty.py": "empty",
        "a/b:pkg/scraped.py": "html-artefact",
        "a/b:pkg/broken.py": "syntax-error",
        "a/b:pkg/deep.py": "too-deeply-nested",
        "a/b:pkg/huge.py": "file-too-large",
    }
    assert got == expected
    assert no_class_files(shard) == {"a/b:pkg/deep_data.py"}
    assert sorted(c.class_name for c in shard.classes) == ["Kept", "Tmpl"]
    stages = shard.funnel.stages
    assert stages["select"].dropped == {"test-file": 3, "migration": 1, "setup-script": 1, "vendored": 1}
    assert stages["compile"].seen == stages["content"].kept


def test_pathological_nesting_never_crashes(make_repo, tmp_path):
    deep = "x = " + "[" * 3000 + "]" * 3000 + "\n"
    # A class worth analysing beside it, so the walk and the compile run on the whole file.
    lam = make_class("Beside", methods=6) + "f = " + "lambda: " * 2000 + "1\n"
    shard = scan(make_repo("a__b", [("2025-02-03", {"deep.py": deep, "lam.py": lam})]), tmp_path)
    assert set(reasons(shard).values()) <= {"too-deeply-nested", "syntax-error"}
    assert len(shard.rejects) == 2


def test_symlinks_are_never_followed(make_repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(make_class("Outside", methods=6))
    repo = make_repo("a__b", [("2025-02-03", {"real.py": make_class("Inside", methods=6)})])
    (repo / "link.py").symlink_to(outside / "secret.py")
    (repo / "linkdir").symlink_to(outside)
    import subprocess

    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links"],
        cwd=repo,
        check=True,
        env={
            "GIT_AUTHOR_DATE": "2025-03-01T00:00:00",
            "GIT_COMMITTER_DATE": "2025-03-01T00:00:00",
            "PATH": "/usr/bin:/bin",
        },
    )
    shard = scan(repo, tmp_path)
    assert [c.class_name for c in shard.classes] == ["Inside"]
    # the linked directory is not entered, and says so
    assert reasons(shard) == {"a/b:link.py": "symlink", "a/b:linkdir": "symlink"}
    assert "directory" in {r.item_id: r.detail for r in shard.rejects}["a/b:linkdir"]


def test_field_annotations_are_kept(make_repo, tmp_path):
    """Annotated instance fields keep their types: the composer's spec shows them."""
    extra = "def reset(self):\n    self.history: list[str] = []\n    self.total = 0\n"
    src = make_class("Annotated", methods=6, extra_method=extra).replace(
        "self.items = {}", "self.items: dict[str, int] = {}"
    )
    (cls,) = scan(make_repo("a__b", [("2025-02-03", {"m.py": src})]), tmp_path).classes
    fields = {f.name: (f.annotation, f.declared_in) for f in cls.fields}
    assert fields == {
        "items": ("dict[str, int]", "__init__"),
        "total": (None, "__init__"),
        "history": ("list[str]", "reset"),
    }


def _history_of_edits_moves_and_renames(make_repo):
    """A class line edited, a file renamed, a class moved to another file, a name that prefixes
    another (Cart / CartItem), and an older same-named class elsewhere."""

    def when(day: str) -> datetime:  # not imported from tests/conftest: another folder's conftest may own that name
        return datetime.fromisoformat(day).replace(tzinfo=UTC)

    from classforge_bench.pipeline.harvest.repo_builder import CommitSpec

    cart, item = make_class("Cart", methods=6), make_class("CartItem", methods=6, imports="")
    other = make_class("Cart", methods=5, imports="import re\n").replace("Start empty.", "Unrelated.")
    return make_repo(
        "a__hist",
        [
            CommitSpec(when("2025-01-10"), "start", {"a.py": cart + "\n\n" + item, "old/cart.py": other}),
            CommitSpec(
                when("2025-02-01"),
                "base class",
                {"a.py": cart.replace("class Cart:", "class Cart(object):") + "\n\n" + item},
            ),
            CommitSpec(
                when("2025-03-01"),
                "rename",
                {"shop/a.py": cart.replace("class Cart:", "class Cart(object):") + "\n\n" + item},
                delete=["a.py"],
            ),
            CommitSpec(
                when("2025-04-01"),
                "move the item",
                {"shop/a.py": cart.replace("class Cart:", "class Cart(object):"), "c.py": item},
            ),
        ],
    )


def test_history_limited_to_the_asked_names_answers_as_the_full_walk(make_repo, tmp_path):
    from classforge_bench.pipeline.harvest.provenance import History

    repo = _history_of_edits_moves_and_renames(make_repo)
    ref = local_repo_ref(repo)
    checkout = clone_for_scan(ref.clone_url, ref.full_name, CloneConfig(workdir=tmp_path / "clones"), CUTOFF)
    asked = [("shop/a.py", "Cart"), ("c.py", "CartItem"), ("old/cart.py", "Cart")]
    sources = {(p, n): (checkout / p).read_text() for p, n in asked}
    full = History(checkout)
    expected = {key: full.first_seen(*key, sources[key]) for key in asked}
    assert {key: seen.authored.date() for key, seen in expected.items()} == {
        ("shop/a.py", "Cart"): date(2025, 1, 10),
        ("c.py", "CartItem"): date(2025, 1, 10),
        ("old/cart.py", "Cart"): date(2025, 1, 10),
    }
    for names in (["Cart"], ["CartItem"], ["Cart", "CartItem"]):
        limited = History(checkout, names=names)
        assert {key: limited.first_seen(*key, sources[key]) for key in asked if key[1] in names} == {
            key: seen for key, seen in expected.items() if key[1] in names
        }
    with pytest.raises(AssertionError):
        History(checkout, names=["Cart"]).first_seen("c.py", "CartItem", sources[("c.py", "CartItem")])


def test_provenance_rejections_keep_their_place_among_the_others(make_repo, tmp_path):
    """Provenance runs once per repository after the class stages; its rejections still stand where
    a class-by-class scan put them (a.py's before z.py's)."""
    old, short = make_class("Legacy", methods=6), make_class("Tiny", methods=2)
    repo = make_repo(
        "a__order",
        [
            ("2024-06-01", {"a.py": old}),
            (
                "2025-03-01",
                {
                    "a.py": old.replace("Start empty.", "Start with nothing."),
                    "z.py": short,
                    "m.py": make_class("Fresh", methods=6),
                },
            ),
        ],
    )
    shard = scan(repo, tmp_path)
    assert [(r.item_id, r.stage) for r in shard.rejects if r.reason != "no-top-level-class"] == [
        ("a/order:a.py::Legacy", "provenance"),
        ("a/order:z.py::Tiny", "structure"),
    ]
    assert [c.class_name for c in shard.classes] == ["Fresh"]
