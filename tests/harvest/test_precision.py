"""Issue 10's precision items, each on a real git repository shaped like the ones that exposed it."""

from __future__ import annotations

import ast
import subprocess
import sys
from datetime import UTC, date, datetime

import pytest
from classgen import make_class
from scan_kit import reasons, scan

from classforge_bench.pipeline.harvest.repo_builder import CommitSpec
from classforge_bench.pipeline.harvest.runtime_imports import version_guard


def when(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def run_module(cls) -> dict:
    """Execute the kept class as a task module would, in this (the target) interpreter."""
    ns: dict = {}
    exec(compile(cls.module_source(), cls.path, "exec"), ns)
    return ns


def test_version_guarded_and_type_checking_imports_do_not_count(make_repo, tmp_path):
    guarded = """import sys
from typing import TYPE_CHECKING

if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

if sys.version_info[:2] < (3, 9):
    from backports.zoneinfo import ZoneInfo
else:
    from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from pandas import DataFrame

import json
"""
    extra = (
        "def copy(self) -> Self:\n    return self\n\n"
        'def zone(self):\n    return ZoneInfo("UTC").key\n\n'
        'def frame(self, df: "DataFrame") -> "DataFrame":\n    return df\n'
    )
    src = make_class("Schedule", methods=6, imports=guarded, extra_method=extra)
    # The other branch is what this Python would run: a class needing it is still third-party.
    old_only = make_class(
        "Legacy",
        methods=6,
        extra_method="def copy(self) -> Self:\n    return self\n",
        imports=guarded.replace(">= (3, 11)", "< (3, 11)"),
    )
    repo = make_repo("tz__planner", [("2025-03-04", {"planner/schedule.py": src, "planner/legacy.py": old_only})])
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {"tz/planner:planner/legacy.py::Legacy": "third-party-import"}
    (cls,) = shard.classes
    assert run_module(cls)["Schedule"]().zone() == "UTC"


@pytest.mark.parametrize(
    "test, value",
    [
        ("sys.version_info >= (3, 8)", True),
        ("sys.version_info < (3, 11)", sys.version_info < (3, 11)),
        ("sys.version_info[:2] >= (3, 11)", sys.version_info[:2] >= (3, 11)),
        ("sys.version_info[0] == 2", False),
        ("sys.version_info >= (4,)", False),
        ("PY311", None),
        ("sys.version_info >= '3.8'", None),
        ("sys.platform == 'win32'", None),
        ("(3, 8) <= sys.version_info", None),
    ],
)
def test_version_guards_are_evaluated_for_the_running_python(test, value):
    assert version_guard(ast.parse(test, mode="eval").body) is value


def test_star_import_is_decided_per_class(make_repo, tmp_path):
    module = '''"""Path helpers and a ledger that have nothing in common."""
from os.path import *
from shop.compat import *
import json

'''
    paths = make_class(
        "PathTools",
        methods=6,
        imports="",
        extra_method="def under(self, root, name):\n    return normpath(join(root, name))\n",
    )
    ledger = make_class("Ledger", methods=6, imports="")
    needs_opaque = make_class("Needs", methods=6, imports="", extra_method="def rate(self):\n    return DEFAULT_RATE\n")
    text = module + paths + "\n\n" + ledger.replace("import json\n", "") + "\n\n" + needs_opaque
    repo = make_repo("acme__shop", [("2025-02-03", {"shop/tools.py": text, "shop/compat.py": "DEFAULT_RATE = 3\n"})])
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {"acme/shop:shop/tools.py::Needs": "star-import"}
    assert "DEFAULT_RATE" in next(r.detail for r in shard.rejects if r.reason == "star-import")
    kept = {c.class_name: c for c in shard.classes}
    assert set(kept) == {"PathTools", "Ledger"}
    # the star becomes the explicit import of what the class takes from it
    assert "from os.path import join, normpath" in kept["PathTools"].imports
    assert run_module(kept["PathTools"])["PathTools"]().under("/a", "b/../c") == "/a/c"
    assert not any("*" in i for i in kept["Ledger"].imports)


def test_stdlib_star_that_shadows_a_builtin_is_carried(make_repo, tmp_path):
    # `from os import *` rebinds open(): the class really calls os.open, so it must carry it.
    src = make_class(
        "Fd", methods=6, imports="from os import *\n", extra_method="def fd(self, p):\n    return open(p, O_RDONLY)\n"
    )
    (cls,) = scan(make_repo("a__b", [("2025-02-03", {"fd.py": src})]), tmp_path).classes
    assert "from os import O_RDONLY, open" in cls.imports


def test_same_repo_import_is_labelled_by_what_the_repository_contains(make_repo, tmp_path):
    uses = "def slug(self, s):\n    return slugify(s)\n"
    files = {
        "backend/app/services/catalog.py": make_class(
            "Catalog", methods=6, extra_method=uses, imports="from app.text.slugs import slugify\nimport json\n"
        ),
        "backend/app/text/slugs.py": "def slugify(s):\n    return s.lower()\n",
        "backend/app/services/fetch.py": make_class(
            "Fetcher",
            methods=6,
            extra_method="def get(self):\n    return httpx.get\n",
            imports="import httpx\nimport json\n",
        ),
    }
    shard = scan(make_repo("deep__layout", [("2025-02-03", files)]), tmp_path)
    assert reasons(shard) == {
        "deep/layout:backend/app/services/catalog.py::Catalog": "same-repo-import",
        "deep/layout:backend/app/services/fetch.py::Fetcher": "third-party-import",
    }


def test_pep_263_coding_declarations_are_decoded_as_python_does(make_repo, tmp_path):
    body = make_class("Marcador", methods=6).replace('"""A marcador used in tests."""', '"""Puntuación por jugador."""')
    files: dict[str, str | bytes] = {
        "juego/marcador.py": ("# -*- coding: latin-1 -*-\n" + body).encode("latin-1"),
        "juego/tabla.py": ("# vim: set fileencoding=cp1252 :\n" + body.replace("Marcador", "Tabla")).encode("cp1252"),
        "juego/bom.py": b"\xef\xbb\xbf" + body.replace("Marcador", "ConBom").encode("utf-8"),
        "juego/raro.py": ("# coding: klingon\n" + body.replace("Marcador", "Raro")).encode("utf-8"),
        "juego/sin.py": ("# ñ\n" + body.replace("Marcador", "Sin")).encode("latin-1"),
    }
    shard = scan(make_repo("es__juego", [("2025-02-03", files)]), tmp_path)
    assert reasons(shard) == {"es/juego:juego/raro.py": "bad-encoding", "es/juego:juego/sin.py": "not-utf8"}
    kept = {c.class_name: c for c in shard.classes}
    assert set(kept) == {"Marcador", "Tabla", "ConBom"}
    assert "Puntuación" in kept["Marcador"].source and not kept["ConBom"].source.startswith("\ufeff")


def test_provenance_follows_renames_and_ignores_unrelated_namesakes(make_repo, tmp_path):
    old_config = make_class("Config", methods=6, body_lines=8)
    new_config = make_class("Config", methods=7, body_lines=5, imports="import math\n").replace("Config", "Config")
    router = make_class("Router", methods=6)
    repo = make_repo(
        "web__kit",
        [
            CommitSpec(
                when("2024-05-01"), "legacy settings", {"legacy/settings.py": old_config, "kit/routing.py": router}
            ),
            # Router's file is renamed (git mv) and edited; the old namesake stays in legacy/.
            CommitSpec(
                when("2025-02-01"),
                "restructure",
                {"kit/router.py": router.replace("Start empty.", "Start with no routes.")},
                delete=["kit/routing.py"],
            ),
            CommitSpec(when("2025-03-01"), "new config", {"kit/config.py": new_config}),
        ],
    )
    shard = scan(repo, tmp_path)
    got = reasons(shard)
    assert got["web/kit:kit/router.py::Router"] == "pre-cutoff"  # followed through the rename
    assert got["web/kit:legacy/settings.py::Config"] == "pre-cutoff"
    (cls,) = shard.classes
    assert (cls.path, cls.class_name) == ("kit/config.py", "Config")  # not the unrelated 2024 Config
    assert cls.first_seen_date.date() == date(2025, 3, 1)
    log = subprocess.run(
        ["git", "log", "--format=%H", "-1", "--", "kit/config.py"], cwd=repo, capture_output=True, text=True
    )
    assert cls.first_seen_commit == log.stdout.strip()


def test_untestable_classes_are_dropped_with_named_reasons(make_repo, tmp_path):
    # Four methods besides the interactive one: without it the class is too small to keep.
    menu = make_class(
        "BankMenu",
        methods=4,
        body_lines=9,
        extra_method=(
            "def run(self):\n    while True:\n        choice = input('1) deposit 2) quit: ')\n"
            "        if choice == '2':\n            return self.total\n"
        ),
    )
    screen = make_class(
        "Screen",
        methods=4,
        body_lines=9,
        imports="import os\n",
        extra_method="def clear(self):\n    os.system('cls' if os.name == 'nt' else 'clear')\n",
    )
    cursor = make_class(
        "Spinner",
        methods=4,
        body_lines=9,
        imports="import sys\n",
        extra_method="def home(self):\n    sys.stdout.write('\\033[2J\\033[H')\n",
    )
    keys = make_class(
        "Keys",
        methods=4,
        body_lines=9,
        imports="import termios\nimport json\n",
        extra_method="def raw(self, fd):\n    return termios.tcgetattr(fd)\n",
    )
    stubs = '''import abc


class Storage(abc.ABC):
    """Where documents live."""

    def __init__(self, root):
        self.root = root

''' + "\n".join(
        f'''    @abc.abstractmethod
    def op{i}(self, key):
        """Operation {i}."""
{"        ..." if i % 3 == 0 else "        raise NotImplementedError" if i % 3 == 1 else "        pass"}
{chr(10).join("        # " + "x" * 10 for _ in range(6))}
'''
        for i in range(6)
    )
    colours = make_class(
        "Palette", methods=6, extra_method="def red(self, s):\n    return '\\033[31m' + s + '\\033[0m'\n"
    )
    files = {
        "cli/menu.py": menu,
        "cli/screen.py": screen,
        "cli/spinner.py": cursor,
        "cli/keys.py": keys,
        "cli/storage.py": stubs,
        "cli/palette.py": colours,
    }
    shard = scan(make_repo("tty__apps", [("2025-02-03", files)]), tmp_path)
    assert reasons(shard) == {
        "tty/apps:cli/menu.py::BankMenu": "interactive-input",
        "tty/apps:cli/screen.py::Screen": "terminal-control",
        "tty/apps:cli/spinner.py::Spinner": "terminal-control",
        "tty/apps:cli/keys.py::Keys": "terminal-control",
        "tty/apps:cli/storage.py::Storage": "abstract-stubs",
    }
    assert [c.class_name for c in shard.classes] == ["Palette"]  # colour codes are ordinary, testable text
    assert shard.funnel.stages["testability"].dropped == {
        "interactive-input": 1,
        "terminal-control": 3,
        "abstract-stubs": 1,
    }


def test_an_abstract_base_class_is_dropped_but_abstractmethod_without_abcmeta_is_not(make_repo, tmp_path):
    """An ABC with an abstract method cannot be instantiated (`Agent(...)` raises TypeError): no test
    of its own can build it. Concrete methods beside it (BaseAgent in the yield corpus) do not
    change that; `@abstractmethod` on a plain class enforces nothing and the class stays."""
    abstract = '@abstractmethod\ndef reply(self, text):\n    """The provider\'s answer."""\n'
    agent = make_class(
        "Agent", methods=6, imports="import json\nfrom abc import ABC, abstractmethod\n", extra_method=abstract
    )
    agent = agent.replace("class Agent:", "class Agent(ABC):")
    meta = make_class(
        "Driver",
        methods=6,
        imports="import json\nimport abc\n",
        extra_method=abstract.replace("@abstractmethod", "@abc.abstractmethod"),
    )
    meta = meta.replace("class Driver:", "class Driver(metaclass=abc.ABCMeta):")
    plain = make_class(
        "Plain", methods=6, imports="import json\nfrom abc import abstractmethod\n", extra_method=abstract
    )
    files = {"ag/agent.py": agent, "ag/driver.py": meta, "ag/plain.py": plain}
    shard = scan(make_repo("abc__kit", [("2025-02-03", files)]), tmp_path)
    assert reasons(shard) == {
        "abc/kit:ag/agent.py::Agent": "abstract-class",
        "abc/kit:ag/driver.py::Driver": "abstract-class",
    }
    assert [c.class_name for c in shard.classes] == ["Plain"]
    detail = next(r.detail for r in shard.rejects if r.reason == "abstract-class")
    assert "reply" in detail


# Issue 22's precision items.


def test_type_checking_imports_never_travel_with_a_kept_class(make_repo, tmp_path):
    header = """from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from pandas import DataFrame
    from .models import Order

if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

"""
    uses = (
        "def frame(self, df: DataFrame, order: Order) -> DataFrame:\n    return df\n\n"
        "def array(self, a: np.ndarray) -> Self:\n    return self\n"
    )
    report = make_class("Report", methods=6, imports=header, extra_method=uses)
    # The block has a runtime `else`: that branch is what the target runs, and all of it travels.
    fallback = make_class(
        "Plotter",
        methods=6,
        imports=(
            "import json\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import matplotlib\n"
            "else:\n    matplotlib = None\n\n"
        ),
        extra_method="def backend(self):\n    return matplotlib\n",
    )
    # A guarded import inside the class travels with its source as written: the class is dropped.
    inner = make_class(
        "Inner",
        methods=6,
        extra_method=("def typed(self):\n    if TYPE_CHECKING:\n        import pandas\n    return 1\n"),
        imports="import json\nfrom typing import TYPE_CHECKING\n",
    )
    repo = make_repo(
        "data__reports",
        [
            (
                "2024-10-01",
                {"reports/__init__.py": '"""Reports."""\n', "reports/models.py": "class Order:\n    pass\n"},
            ),
            ("2025-03-04", {"reports/report.py": report, "reports/plot.py": fallback, "reports/inner.py": inner}),
        ],
    )
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {
        "data/reports:reports/inner.py::Inner": "third-party-import",
        "data/reports:reports/models.py::Order": "too-few-methods",
    }
    assert any("pandas" in r.detail for r in shard.rejects)
    kept = {c.class_name: c for c in shard.classes}
    carried = kept["Report"].module_source()
    for name in ("numpy", "pandas", ".models", "typing_extensions", "TYPE_CHECKING:"):
        assert name not in carried, name
    assert "from typing import Self" in carried and "from __future__ import annotations" in carried
    assert run_module(kept["Report"])["Report"]().array(None) is not None
    plot = kept["Plotter"].module_source()
    assert "matplotlib = None" in plot and "import matplotlib" not in plot
    assert run_module(kept["Plotter"])["Plotter"]().backend() is None


def test_an_unused_terminal_module_in_a_shared_import_does_not_drop_the_class(make_repo, tmp_path):
    # `import sys, termios, tty` at the top of a CLI module; only getch() (not the class) uses termios.
    module = """import sys, termios, tty
import json


def getch():
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        return sys.stdin.read(1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)

"""
    scores = make_class("Scores", methods=6, imports=module, extra_method="def out(self):\n    return sys.maxsize\n")
    keys = make_class(
        "Keys", methods=4, body_lines=9, imports=module, extra_method="def key(self):\n    return getch()\n"
    )
    repo = make_repo(
        "cli__game",
        [
            ("2024-12-01", {"game/__init__.py": '"""The game."""\n'}),
            ("2025-02-03", {"game/scores.py": scores, "game/keys.py": keys}),
        ],
    )
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {"cli/game:game/keys.py::Keys": "terminal-control"}
    assert [c.class_name for c in shard.classes] == ["Scores"]


def test_test_support_code_is_recognised_by_folder_kin_and_by_content(make_repo, tmp_path):
    harness = make_class("Harness", methods=6, imports="import json\nimport unittest\n")
    fixture = make_class(
        "FakeStore",
        methods=6,
        imports="import json\n",
        prelude=("from unittest import mock\n\n\ndef patched():\n    return mock.patch('os.getcwd')\n\n\n"),
    )
    files = {
        "tests_integ/harness.py": make_class("IntegHarness", methods=6),
        "integration-tests/helpers.py": make_class("Helpers", methods=6),
        "qa/harness.py": harness,  # no test folder: known by its content
        "sdk/testing_support.py": fixture,  # mock-based fake beside library code
        "sdk/latest/feed.py": make_class("LatestFeed", methods=6),  # not a test folder
        "sdk/client.py": make_class("Client", methods=6, extra_method="def test_connection(self):\n    return True\n"),
    }
    repo = make_repo("cloud__sdk", [("2024-11-20", {"README.md": "sdk\n"}), ("2025-03-01", files)])
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {
        "cloud/sdk:tests_integ/harness.py": "test-file",
        "cloud/sdk:integration-tests/helpers.py": "test-file",
        "cloud/sdk:qa/harness.py": "test-file",
        "cloud/sdk:sdk/testing_support.py": "test-file",
    }
    assert sorted(c.class_name for c in shard.classes) == ["Client", "LatestFeed"]
    assert "line 2: import unittest" in next(r.detail for r in shard.rejects if r.item_id.endswith("qa/harness.py"))


def test_a_folder_named_like_a_package_does_not_make_it_the_repositorys_own(make_repo, tmp_path):
    uses = "def chat(self):\n    return openai.OpenAI\n"
    files = {
        "src/agentkit/models/chat.py": make_class(
            "ChatModel", methods=6, extra_method=uses, imports="import openai\nimport json\n"
        ),
        "examples/openai/basic.py": "def main():\n    return 1\n",  # examples grouped by provider
        "src/agentkit/memory.py": make_class(
            "Memory",
            methods=6,
            extra_method="def tok(self):\n    return encode('x')\n",
            imports="from agentkit.tokens import encode\nimport json\n",
        ),
        "src/agentkit/tokens.py": "def encode(s):\n    return list(s)\n",
        "scripts/report.py": make_class(
            "Report",
            methods=6,
            extra_method="def run(self):\n    return helpers.x\n",
            imports="import helpers\nimport json\n",
        ),
        "scripts/helpers.py": "x = 1\n",  # beside the script: on sys.path when it runs
    }
    repo = make_repo("ai__agentkit", [("2024-12-20", {"README.md": "kit\n"}), ("2025-03-02", files)])
    assert reasons(scan(repo, tmp_path)) == {
        "ai/agentkit:src/agentkit/models/chat.py::ChatModel": "third-party-import",
        "ai/agentkit:src/agentkit/memory.py::Memory": "same-repo-import",
        "ai/agentkit:scripts/report.py::Report": "same-repo-import",
    }


def test_interactive_use_confined_to_some_methods_is_cut_out_when_the_rest_stands(make_repo, tmp_path):
    menu = (
        "def menu(self):\n    while True:\n        choice = input('1) add 2) quit: ')\n"
        "        if choice == '2':\n            return self.total\n"
    )
    # 23 methods, one of them a keyboard menu: the other 22 are a task.
    inventory = make_class("Inventory", methods=22, imports="import json\nimport os\n", extra_method=menu)
    # The screen is cleared by a helper only show() calls.
    board = make_class(
        "Board",
        methods=8,
        imports="import json\nimport os\n\n\ndef clear():\n    os.system('clear')\n\n",
        extra_method="def show(self):\n    clear()\n    return str(self.items)\n",
    )
    # Another method calls the menu: cutting it out would break the rest.
    shop = make_class("Shop", methods=8, extra_method=menu + "\ndef run(self):\n    return self.menu()\n")
    repo = make_repo(
        "store__app",
        [
            ("2024-12-01", {"store/__init__.py": '"""Store."""\n'}),
            ("2025-02-03", {"store/inventory.py": inventory, "store/board.py": board, "store/shop.py": shop}),
        ],
    )
    shard = scan(repo, tmp_path)
    assert reasons(shard) == {"store/app:store/shop.py::Shop": "interactive-input"}
    (detail,) = [r.detail for r in shard.rejects if r.item_id.endswith("Shop")]
    assert "method menu" in detail and "calls it" in detail
    kept = {c.class_name: c for c in shard.classes}
    inv = kept["Inventory"]
    assert [m.split(":")[0] for m in inv.excluded_methods] == ["menu"] and "input()" in inv.excluded_methods[0]
    assert len(inv.methods) == 22 and "def menu" not in inv.source and "input(" not in inv.module_source()
    assert inv.end_line == len(inventory.splitlines()) - 1 or inv.end_line > inv.start_line + 100
    assert "def show" not in kept["Board"].source and kept["Board"].excluded_methods[0].startswith("show: ")
    ns = run_module(inv)
    assert not hasattr(ns["Inventory"], "menu") and ns["Inventory"]().items == {}


def test_a_harvested_class_id_is_its_exact_dedup_key(make_repo, tmp_path):
    # Dedup takes the exact key from the id instead of normalising the source again: they must agree,
    # decorators, comments and a cut-out method included.
    from classforge_bench.pipeline.harvest.dedup import DedupIndex

    src = (
        "import functools\n\n\n@functools.total_ordering\n"
        + make_class("Ranked", methods=7, imports="").replace(
            "    def __init__(self):", "    # state\n    def __init__(self):"
        )
        + "    def ask(self):\n        return input('? ')\n"
    )
    shard = scan(make_repo("a__rank", [("2025-02-03", {"rank.py": src})]), tmp_path)
    (cls,) = shard.classes
    assert cls.excluded_methods and "# state" in cls.source and cls.source.startswith("@functools")
    assert cls.id == "cls-" + DedupIndex._exact_key(cls.source)
