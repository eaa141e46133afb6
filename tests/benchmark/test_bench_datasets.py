"""Loaders: the real ClassEval file, a ClassEval-Pro-style JSONL, and a classforge release folder."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from classforge_bench.pipeline.core.ast_helpers import find_class
from classforge_bench.pipeline.core.source import parse
from classforge_bench.pipeline.formats.loader import DatasetError, load_dataset

# -- the real ClassEval release ---------------------------------------------------------------------


def test_classeval_counts(classeval):
    assert classeval.format == "classeval"
    assert len(classeval.tasks) == 100
    assert sum(len(t.methods_info) for t in classeval.tasks) == 410
    assert sum(len(t.test_classes) for t in classeval.tasks) == 502
    assert sum(len(t.class_level_test_classes) for t in classeval.tasks) == 92


def test_classeval_97_test_class_whitespace_fixed_and_reported(classeval):
    fixes = [f for f in classeval.fixes_applied if f.task_id == "ClassEval_97"]
    assert [(f.kind, f.field) for f in fixes] == [("test_class_whitespace", "test_classes")]
    assert "' Words2NumbersTestMain'" in fixes[0].detail
    task = classeval.by_id()["ClassEval_97"]
    assert "Words2NumbersTestMain" in task.test_classes
    assert all(tc == tc.strip() for t in classeval.tasks for tc in t.test_classes)


def test_classeval_skeleton_repairs_reported_and_every_skeleton_parses(classeval, classeval_path):
    raw = {r["task_id"]: r for r in json.loads(classeval_path.read_text())}
    skeleton_fixes = {(f.task_id, f.kind) for f in classeval.fixes_applied if f.field == "skeleton"}
    assert skeleton_fixes == {
        ("ClassEval_5", "skeleton_wrapped_in_string"),
        ("ClassEval_22", "unterminated_docstring"),
        ("ClassEval_43", "curly_docstring_quotes"),
        ("ClassEval_46", "curly_docstring_quotes"),
    }
    for task in classeval.tasks:
        module = parse(task.skeleton)
        assert find_class(module, task.class_name) is not None, task.task_id
        changed = task.skeleton != raw[task.task_id]["skeleton"]
        assert changed == any(tid == task.task_id for tid, _ in skeleton_fixes), task.task_id


def test_classeval_method_test_classes_are_runnable(classeval):
    for task in classeval.tasks:
        for m in task.methods_info:
            assert m.test_class in task.test_classes, (task.task_id, m.method_name)


def test_classeval_mislabelled_tests_kept_but_noticed(classeval):
    # ClassEval_60 labels create_table with the test class named after insert_ticket: kept as published
    task = classeval.by_id()["ClassEval_60"]
    assert task.method("create_table").test_class == "MovieTicketDBTestInsertTicket"
    kinds = {(n.task_id, n.kind) for n in classeval.notices}
    assert ("ClassEval_60", "method_test_class_mislabelled") in kinds
    assert ("ClassEval_69", "test_class_without_tests") in kinds


def test_classeval_without_methods_info_derives_the_same_methods(classeval, classeval_path, tmp_path):
    """Dropping methods_info (the ClassEval-Pro shape) must derive the same method list."""
    pro = tmp_path / "as_pro.jsonl"
    keep = ("task_id", "class_name", "skeleton", "test", "test_classes", "solution_code")
    with pro.open("w") as fh:
        for r in json.loads(classeval_path.read_text()):
            fh.write(json.dumps({k: r[k] for k in keep}) + "\n")
    derived = load_dataset(pro)
    assert derived.format == "classeval-pro"
    for task in derived.tasks:
        assert task.method_names == classeval.by_id()[task.task_id].method_names


# -- ClassEval-Pro-style JSONL ------------------------------------------------------------------------

SKELETON = '''import math


class Inventory:
    """
    Keeps item quantities and prices.
    """

    def __init__(self):
        """
        Start with no items.
        """
        self.items = {}
        self.prices = {}

    def add_item(self, name, qty, price):
        """
        Add qty of an item at a price.
        """

    def value_of(self, name):
        """
        Value of the stock of one item.
        """

    def total_value(self):
        """
        Total value, rounded up.
        :return: int
        """

    @staticmethod
    def format_money(amount):
        """
        Format an amount as money.
        """
'''

SOLUTION = """import math


class Inventory:
    def __init__(self):
        self.items = {}
        self.prices = {}

    def add_item(self, name, qty, price):
        self.items[name] = self.items.get(name, 0) + qty
        self.prices[name] = price

    def value_of(self, name):
        return self.items[name] * self.prices[name]

    def total_value(self):
        return math.ceil(sum(self.value_of(n) for n in self.items))

    @staticmethod
    def format_money(amount):
        return f"${amount:.2f}"
"""

TEST = """import unittest


class InventoryTestAddItem(unittest.TestCase):
    def test_add(self):
        inv = Inventory()
        inv.add_item("a", 2, 1.5)
        self.assertEqual(inv.items, {"a": 2})


class InventorytestValue_Of(unittest.TestCase):
    def test_value(self):
        inv = Inventory()
        inv.add_item("a", 2, 1.5)
        self.assertEqual(inv.value_of("a"), 3.0)


class InventoryTestTotalValue(unittest.TestCase):
    def test_total(self):
        inv = Inventory()
        inv.add_item("a", 1, 1.5)
        self.assertEqual(inv.total_value(), 2)


class InventoryTest(unittest.TestCase):
    def test_flow(self):
        inv = Inventory()
        inv.add_item("a", 1, 2.0)
        self.assertEqual(Inventory.format_money(inv.total_value()), "$2.00")
"""

COUNTER_SKELETON = '''class Counter:
    """Counts."""

    def __init__(self):
        """Start at zero."""

    def increment(self):
        """Add one and return the new count."""
'''

COUNTER_SOLUTION = """class Counter:
    def __init__(self):
        self.count = 0

    def increment(self):
        self.count += 1
        return self.count
"""

COUNTER_TEST = """import unittest


class CounterTestIncrement(unittest.TestCase):
    def test_once(self):
        self.assertEqual(Counter().increment(), 1)
"""


def _pro_records() -> list[dict]:
    return [
        {
            "task_id": "Pro_1",
            "class_name": "Inventory",
            "skeleton": SKELETON,
            "test": TEST,
            "test_classes": [
                "InventoryTestAddItem",
                "InventorytestValue_Of",
                "InventoryTestTotalValue",
                "InventoryTest",
                "InventoryTestGhost",
            ],
            "solution_code": SOLUTION,
            "composition_type": "cross-domain",
            "domain1": "Finance & E-commerce",
            "domain2": "Utils",
            "coverage": 0.97,
            "judge_scores": [5, 5, 4],
        },
        {
            "task_id": "Pro_2",
            "class_name": "Counter",
            "skeleton": COUNTER_SKELETON,
            "test": COUNTER_TEST,
            "solution_code": COUNTER_SOLUTION,
            "composition_type": "same-domain",
            "domain1": "Utils",
            "domain2": "Utils",
            "coverage": 1.0,
            "judge_scores": [5, 5, 5],
        },
    ]


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_pro_jsonl_derives_methods_dependencies_and_test_classes(tmp_path):
    ds = load_dataset(_write_jsonl(tmp_path / "pro.jsonl", _pro_records()))
    assert ds.format == "classeval-pro"
    inv, counter = ds.tasks
    assert inv.method_names == ["add_item", "value_of", "total_value", "format_money"]
    # naming convention, case-insensitive and underscore-blind; format_money has no test class of its own
    assert inv.method_test_classes == {
        "add_item": "InventoryTestAddItem",
        "value_of": "InventorytestValue_Of",
        "total_value": "InventoryTestTotalValue",
    }
    assert inv.method("format_money").test_class is None
    assert inv.class_level_test_classes == ["InventoryTest"]
    total = inv.method("total_value").dependencies
    assert (total.standalone, total.method_dependencies, total.field_dependencies, total.lib_dependencies) == (
        False,
        ["value_of"],
        ["self.items"],
        ["math"],
    )
    assert inv.method("format_money").dependencies.standalone is True
    assert inv.method("value_of").method_description.startswith("def value_of(self, name):")
    assert "return self.items[name] * self.prices[name]" in inv.method("value_of").solution_code
    assert inv.method("add_item").test_code.startswith("class InventoryTestAddItem(unittest.TestCase):")
    assert inv.import_statement == ["import math"]
    assert inv.fields == ["self.items", "self.prices"]
    assert (inv.composition_type, inv.domain1, inv.domain2, inv.source) == (
        "cross-domain",
        "Finance & E-commerce",
        "Utils",
        "classeval-pro",
    )
    assert inv.extras == {"coverage": 0.97, "judge_scores": [5, 5, 4]}
    # the listed-but-undefined test class is dropped and reported; Counter's list is derived and reported
    assert "InventoryTestGhost" not in inv.test_classes
    kinds = {(f.task_id, f.kind) for f in ds.fixes_applied}
    assert ("Pro_1", "test_class_missing") in kinds
    assert ("Pro_2", "test_classes_derived") in kinds
    assert counter.test_classes == ["CounterTestIncrement"]
    # an empty constructor whose reference does something is a method to write; fields come from the solution
    assert counter.method_names == ["__init__", "increment"]
    assert counter.fields == ["self.count"]
    assert ("Pro_1", "method_without_test_class") in {(n.task_id, n.kind) for n in ds.notices}


def test_pro_json_list_is_read_too(tmp_path):
    path = tmp_path / "pro.json"
    path.write_text(json.dumps(_pro_records()))
    assert [t.task_id for t in load_dataset(path).tasks] == ["Pro_1", "Pro_2"]


def test_duplicate_task_ids_are_an_error(tmp_path):
    records = _pro_records()
    records.append(dict(records[0]))
    with pytest.raises(DatasetError, match=r"duplicate task ids: 'Pro_1'"):
        load_dataset(_write_jsonl(tmp_path / "dup.jsonl", records))


def test_bad_record_names_file_task_and_fault(tmp_path):
    records = _pro_records()
    records[1]["skeleton"] = ""
    path = _write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    assert str(path) in str(err.value) and "Pro_2" in str(err.value) and "skeleton missing or empty" in str(err.value)


def test_unrepairable_skeleton_is_an_error(tmp_path):
    records = _pro_records()
    records[0]["skeleton"] = SKELETON.replace("def value_of(self, name):", "def value_of(self, name)")
    with pytest.raises(DatasetError, match=r"pro.jsonl:1: task Pro_1: skeleton does not parse"):
        load_dataset(_write_jsonl(tmp_path / "pro.jsonl", records))


def test_solution_missing_a_skeleton_method_is_an_error(tmp_path):
    records = _pro_records()
    records[0]["solution_code"] = SOLUTION.replace("def value_of(self, name)", "def worth(self, name)")
    with pytest.raises(
        DatasetError, match=r"task Pro_1: method 'value_of' of the skeleton is missing from the solution"
    ):
        load_dataset(_write_jsonl(tmp_path / "pro.jsonl", records))


def test_unknown_or_missing_paths(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_dataset(tmp_path / "nope.json")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DatasetError, match="unknown dataset format"):
        load_dataset(tmp_path / "x.csv")
    with pytest.raises(DatasetError, match="no Parquet files under data/"):
        load_dataset(tmp_path)


# -- classforge release folder -----------------------------------------------------------------------


def test_release_folder_parquet(tmp_path, classeval_path, classeval):
    raw = json.loads(classeval_path.read_text())[:3]
    rows = [dict(r, repo="octo/cat", commit="a" * 40, license="MIT") for r in raw]
    rows.append(
        dict(
            _pro_records()[1],
            import_statement=None,
            class_description=None,
            class_constructor=None,
            fields=None,
            methods_info=None,
            test_classes=None,
            repo="octo/dog",
            commit="b" * 40,
            license="Apache-2.0",
        )
    )
    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows[:2]), tmp_path / "data" / "test-00000-of-00002.parquet")
    pq.write_table(pa.Table.from_pylist(rows[2:]), tmp_path / "data" / "test-00001-of-00002.parquet")
    (tmp_path / "README.md").write_text("---\nconfigs:\n- config_name: default\n---\n")
    (tmp_path / "manifest.json").write_text("{}")  # a manifest alone does not make it classforge's

    ds = load_dataset(tmp_path)
    # Not written by classforge (no format key in the Parquet metadata): converted like any dataset.
    assert ds.format == "classeval-pro"
    assert [t.task_id for t in ds.tasks] == ["ClassEval_0", "ClassEval_1", "ClassEval_2", "Pro_2"]
    for task in ds.tasks[:3]:
        reference = classeval.by_id()[task.task_id]
        assert task.methods_info == reference.methods_info
        assert task.test_classes == reference.test_classes
        assert task.extras == {"repo": "octo/cat", "commit": "a" * 40, "license": "MIT"}
        assert task.source == "classeval-pro"
    assert ds.tasks[3].method_names == ["__init__", "increment"]
    assert ds.tasks[3].extras["license"] == "Apache-2.0"


def test_methods_info_naming_an_unknown_method_is_an_error(tmp_path, classeval_path):
    record = json.loads(classeval_path.read_text())[0]
    record["methods_info"][1]["method_name"] = "nope"
    path = tmp_path / "one.json"
    path.write_text(json.dumps([record]))
    with pytest.raises(DatasetError, match=r"one.json \[item 0\]: task ClassEval_0: methods_info names 'nope'"):
        load_dataset(path)


def test_only_the_asked_tasks_are_built(classeval_path):
    got = load_dataset(classeval_path, task_ids=["ClassEval_8", "ClassEval_97"])
    assert [t.task_id for t in got.tasks] == ["ClassEval_8", "ClassEval_97"]
    assert {f.task_id for f in got.fixes_applied} <= {"ClassEval_8", "ClassEval_97"}
    assert load_dataset(classeval_path, task_ids=[]).tasks == []
