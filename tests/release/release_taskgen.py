"""Three realistic ClassEval-style task records, with hand-countable statistics.

    task                 type   domain1 / domain2                        LOC  depth  methods (to generate)
    cf-0001 LinkedStack  intra  Utils / Utils                             28    2      6 (5)
    cf-0002 InventoryQ.  cross  Database Operations / Game Development    19    3      5 (4)
    cf-0003 CsvLedger    cross  File Handling / Finance & E-commerce      23    2      5 (4)

LOC is the class statement's physical lines, counted by hand from the strings below (LinkedStack:
lines 1-28; InventoryQuery: 4-22 after the import and two blank lines; CsvLedger: 5-27). Depth is
the longest self.method() chain (pop -> is_empty; report -> total_value -> price_of; to_csv -> balance).
Extras follow construct.task.BuiltTask's shapes (judge votes, sources with provenance, metrics).
"""

from __future__ import annotations

import ast
import copy
from datetime import UTC, datetime
from typing import Any

from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.core.funnel import FunnelReport, StageCounts
from classforge_bench.pipeline.core.task import Task

LINKED_STACK = '''class LinkedStack:
    """A stack stored as a singly linked list of (value, next) pairs."""

    def __init__(self):
        self.head = None
        self.length = 0

    def push(self, value):
        self.head = (value, self.head)
        self.length += 1

    def is_empty(self):
        return self.head is None

    def pop(self):
        if self.is_empty():
            raise IndexError("pop from empty stack")
        value, self.head = self.head
        self.length -= 1
        return value

    def peek(self):
        if self.is_empty():
            return None
        return self.head[0]

    def size(self):
        return self.length
'''

INVENTORY_QUERY = '''import json


class InventoryQuery:
    """Player inventory that answers SQL-like queries over its items."""

    def __init__(self, prices):
        self.prices = dict(prices)
        self.items = {}

    def add_item(self, name, qty=1):
        self.items[name] = self.items.get(name, 0) + qty
        return self.items[name]

    def price_of(self, name):
        return self.prices.get(name, 0) * self.items.get(name, 0)

    def total_value(self):
        return sum(self.price_of(name) for name in self.items)

    def report(self):
        return json.dumps({"items": len(self.items), "value": self.total_value()}, sort_keys=True)
'''

CSV_LEDGER = '''import csv
import io


class CsvLedger:
    """Account ledger that reads and writes CSV text."""

    def __init__(self):
        self.entries = []

    def add(self, account, amount):
        self.entries.append((account, float(amount)))

    def balance(self, account):
        return round(sum(a for acc, a in self.entries if acc == account), 2)

    def to_csv(self):
        out = io.StringIO()
        writer = csv.writer(out)
        for account in sorted({acc for acc, _ in self.entries}):
            writer.writerow([account, self.balance(account)])
        return out.getvalue()

    def load(self, text):
        for account, amount in csv.reader(io.StringIO(text)):
            self.add(account, amount)
        return len(self.entries)
'''

LOC = {"LinkedStack": 28, "InventoryQuery": 19, "CsvLedger": 23}  # class statement lines, counted by hand
DEPTH = {"LinkedStack": 2, "InventoryQuery": 3, "CsvLedger": 2}
METHODS = {"LinkedStack": 6, "InventoryQuery": 5, "CsvLedger": 5}  # defs, __init__ included

# method -> (docstring, test statements using `obj`, dependencies)
_SPECS: dict[str, dict[str, Any]] = {
    "LinkedStack": {
        "init": "LinkedStack()",
        "methods": {
            "push": (
                "Push value on top of the stack.\n:param value: any object\n>>> s.push(1)",
                "obj.push(3)\nself.assertEqual(obj.size(), 1)",
                ([], ["self.head", "self.length"], []),
            ),
            "is_empty": (
                "Whether the stack holds no values.\n:return: bool",
                "self.assertTrue(obj.is_empty())",
                ([], ["self.head"], []),
            ),
            "pop": (
                "Remove and return the top value.\n:raises IndexError: when empty",
                "obj.push(3)\nself.assertEqual(obj.pop(), 3)",
                ([], ["self.head", "self.length"], ["is_empty"]),
            ),
            "peek": (
                "Top value without removing it, None when empty.",
                "self.assertIsNone(obj.peek())",
                ([], ["self.head"], ["is_empty"]),
            ),
            "size": ("Number of values on the stack.", "self.assertEqual(obj.size(), 0)", ([], ["self.length"], [])),
        },
    },
    "InventoryQuery": {
        "init": "InventoryQuery({'sword': 10})",
        "methods": {
            "add_item": (
                "Add qty of an item; return the new quantity.",
                "self.assertEqual(obj.add_item('sword', 2), 2)",
                ([], ["self.items"], []),
            ),
            "price_of": (
                "Value of all units of one item.",
                "obj.add_item('sword', 2)\nself.assertEqual(obj.price_of('sword'), 20)",
                ([], ["self.prices", "self.items"], []),
            ),
            "total_value": (
                "Value of the whole inventory.",
                "obj.add_item('sword')\nself.assertEqual(obj.total_value(), 10)",
                ([], ["self.items"], ["price_of"]),
            ),
            "report": (
                "JSON summary of item count and value.",
                'self.assertEqual(obj.report(), \'{"items": 0, "value": 0}\')',
                (["json"], ["self.items"], ["total_value"]),
            ),
        },
    },
    "CsvLedger": {
        "init": "CsvLedger()",
        "methods": {
            "add": (
                "Record an amount against an account.",
                "obj.add('a', 1)\nself.assertEqual(len(obj.entries), 1)",
                ([], ["self.entries"], []),
            ),
            "balance": (
                "Sum of an account's amounts, rounded to cents.",
                "obj.add('a', 1.005)\nself.assertEqual(obj.balance('a'), 1.0)",
                ([], ["self.entries"], []),
            ),
            "to_csv": (
                "Balances as CSV text, one account per row.",
                "obj.add('a', 2)\nself.assertEqual(obj.to_csv(), 'a,2.0\\r\\n')",
                (["csv", "io"], ["self.entries"], ["balance"]),
            ),
            "load": (
                "Add every row of CSV text; return the entry count.",
                "self.assertEqual(obj.load('a,1\\nb,2\\n'), 2)",
                (["csv", "io"], ["self.entries"], ["add"]),
            ),
        },
    },
}


def _indent(text: str, n: int) -> str:
    return "\n".join((" " * n + line) if line else line for line in text.splitlines())


def _skeleton(solution: str, class_name: str, docs: dict[str, str]) -> str:
    """The solution with every method body replaced by its docstring (ClassEval's skeleton shape)."""
    module = ast.parse(solution)
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef):
            doc = docs.get(node.name, "Initialise the fields.")
            node.body = [ast.Expr(ast.Constant(doc))]
    return ast.unparse(module) + "\n"


def _task(n: int, class_name: str, solution: str, composition: str, d1: str, d2: str) -> dict[str, Any]:
    spec = _SPECS[class_name]
    docs = {m: d for m, (d, _, _) in spec["methods"].items()}
    skeleton = _skeleton(solution, class_name, docs)
    sol_mod = ast.parse(solution)
    sol_cls = next(x for x in sol_mod.body if isinstance(x, ast.ClassDef))
    sol_src = {f.name: ast.get_source_segment(solution, f) for f in sol_cls.body if isinstance(f, ast.FunctionDef)}
    methods_info, test_parts = [], ["import unittest"]
    for name, (doc, body, (libs, fields, calls)) in spec["methods"].items():
        tc = f"{class_name}Test{name.title().replace('_', '')}"
        code = (
            f"class {tc}(unittest.TestCase):\n    def test_{name}(self):\n"
            f"        obj = {spec['init']}\n{_indent(body, 8)}"
        )
        test_parts.append(code)
        methods_info.append(
            {
                "method_name": name,
                "method_description": f'def {name}(self):\n    """{doc}"""',
                "test_class": tc,
                "test_code": code,
                "solution_code": sol_src[name],
                "dependencies": {
                    "Standalone": not (libs or fields or calls),
                    "lib_dependencies": libs,
                    "field_dependencies": fields,
                    "method_dependencies": calls,
                },
            }
        )
    main_tc = f"{class_name}TestMain"
    test_parts.append(
        f"class {main_tc}(unittest.TestCase):\n    def test_main(self):\n"
        f"        obj = {spec['init']}\n        self.assertIsNotNone(obj)"
    )
    imports = [ln for ln in solution.splitlines() if ln.startswith("import ")]
    return {
        "task_id": f"cf-{n:04d}",
        "class_name": class_name,
        "skeleton": skeleton,
        "test": "\n\n\n".join(test_parts) + "\n",
        "test_classes": [m["test_class"] for m in methods_info] + [main_tc],
        "solution_code": solution,
        "import_statement": imports,
        "class_description": ast.get_docstring(sol_cls) or "",
        "class_constructor": sol_src["__init__"],
        "fields": sorted({f for m in methods_info for f in m["dependencies"]["field_dependencies"]}),
        "methods_info": methods_info,
        "composition_type": composition,
        "domain1": d1,
        "domain2": d2,
        # classforge extras, shaped like construct.task.BuiltTask's
        "coverage": 100.0 - n,
        "branch_coverage": 90.0 + n,
        "judge_scores": [10, 10, None if n == 2 else 7],
        "judge_votes": [
            {
                "judge": j,
                "role": f"judge{j}",
                "model": f"judge-model-{j}",
                "status": "malformed" if (n == 2 and j == 3) else "scored",
                "score": None if (n == 2 and j == 3) else (10 if j < 3 else 7),
                "reasons": "tests match the documented behaviour",
                "problems": [],
                "attempts": 1,
                "errors": [],
            }
            for j in (1, 2, 3)
        ],
        "source_class_ids": [f"cls-{n}a", f"cls-{n}b"],
        "sources": [
            {
                "class_id": f"cls-{n}a",
                "class_name": "Part",
                "domain": d1,
                "repo": f"alice/repo{n}",
                "clone_url": f"https://github.com/alice/repo{n}.git",
                "path": f"pkg/a{n}.py",
                "commit": f"{n:040x}",
                "first_seen_commit": f"{n + 100:040x}",
                "first_seen_date": f"2025-03-0{n}T12:00:00Z",
                "license_spdx": "MIT",
            },
            {
                "class_id": f"cls-{n}b",
                "class_name": "Other",
                "domain": d2,
                "repo": "bob/tools",
                "clone_url": "https://github.com/bob/tools.git",
                "path": "tools/b.py",
                "commit": "b" * 40,
                "first_seen_commit": "c" * 40,
                "first_seen_date": "2025-02-01T00:00:00Z",
                "license_spdx": "Apache-2.0",
            },
        ],
        "models": {"composer": "m-compose", "test_writer": "m-test", "solver": "m-solve"},
        "prompt_versions": {"compose": "v1", "tests": "v2", "solve": "v1"},
        "metrics": {"loc": LOC[class_name], "method_count": len(methods_info), "dependency_depth": DEPTH[class_name]},
        "candidate_id": f"cand-{n:04d}",
        "schema_version": 1,
    }


def make_tasks() -> list[dict[str, Any]]:
    return copy.deepcopy(
        [
            _task(1, "LinkedStack", LINKED_STACK, "intra", "Utils", "Utils"),
            _task(2, "InventoryQuery", INVENTORY_QUERY, "cross", "Database Operations", "Game Development"),
            _task(3, "CsvLedger", CSV_LEDGER, "cross", "File Handling", "Finance & E-commerce"),
        ]
    )


def as_tasks(rows: list[Any]) -> list[Task]:
    """The generator's rows as the typed records a release is written from (Tasks pass as they are)."""
    return [r if isinstance(r, Task) else Task.from_row(r) for r in rows]


VERSION = "2025.06.01"
CREATED = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def sample_funnel() -> FunnelReport:
    return FunnelReport(
        stages={
            "harvest.filters": StageCounts(seen=40, kept=12, dropped={"too_few_methods": 20, "third_party_import": 8}),
            "judges": StageCounts(seen=6, kept=4, dropped={"judge_disagreement": 2}),
            "solution": StageCounts(seen=4, kept=3, dropped={"coverage_below_threshold": 1}),
        }
    )


def release_kwargs(**overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = dict(
        version=VERSION,
        funnel=sample_funnel(),
        config=Config(),
        models={"composer": "m-compose", "judges": ["j1", "j2", "j3"], "solver": "m-solve"},
        prompt_versions={"compose": "v1", "tests": "v2"},
        pipeline_version="0.1.0-test",
        created_at=CREATED,
    )
    kwargs.update(overrides)
    return kwargs
