"""Class/method-level full and partial pass@k, and DEP(M)/DEP(F), on hand-made outcomes."""

from __future__ import annotations

import pytest
from metrics_kit import _method, _task

from classforge_bench.benchmark.metrics import (
    DepCounts,
    canonical_dependencies,
    class_level_status,
    compute_metrics,
    dep_counts,
    method_level_status,
)
from classforge_bench.benchmark.outcomes import ExceptionInfo, SampleOutcome, TestClassOutcome
from classforge_bench.pipeline.core.task import Task

OK3 = TestClassOutcome(tests_run=3)
PARTIAL = TestClassOutcome(tests_run=2, failures=1)
FAILED = TestClassOutcome(tests_run=2, failures=2)
NOTHING_RAN = TestClassOutcome(tests_run=0)


def _samples(task_id: str = "T1") -> list[SampleOutcome]:
    def s(i, a, b, whole, status="completed"):
        return SampleOutcome(
            status=status,
            test_classes={} if status != "completed" else {"BoxTestA": a, "BoxTestB": b, "BoxTest": whole},
        )

    return [
        s(0, OK3, OK3, OK3),  # class success
        s(1, OK3, PARTIAL, OK3),  # class partial; b partial
        s(2, FAILED, OK3, OK3),  # class fail; a fail
        s(3, None, None, None, status="compile_error"),
        s(4, OK3, OK3, NOTHING_RAN),  # zero tests run is never a pass
    ]


def test_test_class_status_definitions():
    assert OK3.status == "success"
    assert PARTIAL.status == "partial"
    assert FAILED.status == "fail"
    assert NOTHING_RAN.status == "error"
    assert TestClassOutcome(tests_run=2, errors=2).status == "error"
    assert TestClassOutcome(tests_run=2, skipped=2).status == "error"
    assert TestClassOutcome(tests_run=3, errors=1, failures=2).status == "fail"
    assert TestClassOutcome(tests_run=3, errors=1).status == "partial"
    assert TestClassOutcome(tests_run=3, timed_out=True).status == "error"
    with pytest.raises(ValueError, match="exceed tests_run"):
        TestClassOutcome(tests_run=1, failures=2)


def test_per_sample_levels():
    task, samples = _task(), _samples()
    assert [class_level_status(task, s) for s in samples] == ["success", "partial", "fail", "fail", "fail"]
    assert [method_level_status(task, s, "a") for s in samples] == ["success", "success", "fail", "fail", "success"]
    assert [method_level_status(task, s, "b") for s in samples] == ["success", "partial", "success", "fail", "success"]
    assert method_level_status(task, samples[0], "c") is None
    unreported = SampleOutcome(status="completed", test_classes={"BoxTestA": OK3})
    assert class_level_status(task, unreported) == "fail"


def test_pass_at_k_hand_computed():
    report = compute_metrics([_task()], {"T1": _samples()}, n_resamples=200)
    assert report.ks == [1, 3, 5]
    (counts,) = report.per_task
    assert (counts.class_level.full, counts.class_level.partial) == (1, 2)
    assert {m: (c.full, c.partial) for m, c in counts.methods.items()} == {"a": (3, 3), "b": (3, 4)}
    assert report.methods_without_test_class == ["T1/c"] and report.n_methods_scored == 2
    cls, meth = report.class_level, report.method_level
    # class: c=1 and c=2 of n=5. pass@1 = c/5; pass@3 = 1 - C(5-c,3)/C(5,3)
    assert cls.full[1].value == pytest.approx(0.2)
    assert cls.partial[1].value == pytest.approx(0.4)
    assert cls.full[3].value == pytest.approx(1 - 4 / 10)
    assert cls.partial[3].value == pytest.approx(1 - 1 / 10)
    assert cls.full[5].value == cls.partial[5].value == 1.0
    # methods pooled: a 3/5, b 3/5 (full); a 3/5, b 4/5 (partial)
    assert meth.full[1].value == pytest.approx(0.6)
    assert meth.partial[1].value == pytest.approx(0.7)
    assert meth.full[3].value == pytest.approx(1.0)
    # one task: the bootstrap over tasks has nothing to vary
    assert (cls.full[1].ci_low, cls.full[1].ci_high) == (pytest.approx(0.2), pytest.approx(0.2))


def test_confidence_intervals_bracket_the_estimate_over_several_tasks():
    tasks = [_task(f"T{i}") for i in range(6)]
    outcomes = {t.task_id: _samples(t.task_id)[: 1 + i % 5] for i, t in enumerate(tasks)}
    outcomes["T5"] = _samples("T5")
    report = compute_metrics(tasks, outcomes, n_resamples=500, seed=3)
    assert report.ks == [1]  # T0 has a single sample: pass@3 and pass@5 are undefined
    for scores in (report.class_level.full, report.class_level.partial, report.method_level.full):
        est = scores[1]
        assert est.ci_low <= est.value <= est.ci_high
    assert report == compute_metrics(tasks, outcomes, n_resamples=500, seed=3)


def test_every_task_needs_samples_and_no_stray_samples():
    with pytest.raises(ValueError, match="no samples for task"):
        compute_metrics([_task("T1"), _task("T2")], {"T1": _samples()})
    with pytest.raises(ValueError, match="not being scored: X"):
        compute_metrics([_task("T1")], {"T1": _samples(), "X": _samples("X")})


def test_compile_error_sample_fails_every_test_class():
    sample = SampleOutcome(
        status="compile_error",
        error=ExceptionInfo(type="SyntaxError", message="invalid syntax"),
    )
    assert not sample.compiled
    assert {tc: sample.test_class_status(tc) for tc in _task().test_classes} == {
        "BoxTestA": "error",
        "BoxTestB": "error",
        "BoxTest": "error",
    }


# -- DEP -------------------------------------------------------------------------------------------

SHOP_SOLUTION = """class Shop:
    def __init__(self):
        self.items = []
        self.discount = 0

    def add(self, item):
        self.items.append(item)

    def subtotal(self):
        return sum(self.items)

    def total(self):
        return self.subtotal() * (1 - self.discount) + self._fee()

    def _fee(self):
        return 1
"""

SHOP_GENERATED = """class Shop:
    def __init__(self):
        self.items = []
        self.discount = 0

    def add(self, item):
        self.items.append(item)

    def subtotal(self):
        return sum(self.stock)

    def total(self):
        return sum(self.items) * (1 - self.discount) + self._fee()
"""


def _shop() -> Task:
    return Task(
        task_id="Shop",
        class_name="Shop",
        skeleton="class Shop:\n    pass\n",
        test="import unittest\n",
        solution_code=SHOP_SOLUTION,
        test_classes=["ShopTestAdd"],
        methods_info=[
            _method("add", "ShopTestAdd", fields=["self.items"]),
            _method("subtotal", None, fields=["self.items"]),
            _method("total", None, methods=["subtotal"], fields=["self.discount", "self.items"]),
            _method("_fee", None),
        ],
    )


def test_dep_hand_example():
    # canonical (solution): total calls subtotal and _fee; fields add {items}, subtotal {items}, total {discount}
    # generated: total calls _fee only (1 of 2); subtotal reads a wrong field (0 of 1); _fee is missing
    counts = dep_counts(_shop(), SHOP_GENERATED)
    assert counts == DepCounts(method_hits=1, method_total=2, field_hits=2, field_total=3)
    assert counts.dep_m == pytest.approx(0.5) and counts.dep_f == pytest.approx(2 / 3)


def test_dep_with_dataset_labels_as_canonical():
    # labels: total -> subtotal; fields add {items}, subtotal {items}, total {discount, items}
    labels = canonical_dependencies(_shop(), canonical="labels")
    counts = dep_counts(_shop(), SHOP_GENERATED, canonical=labels)
    assert counts == DepCounts(method_hits=0, method_total=1, field_hits=3, field_total=4)


def test_dep_unparseable_program_keeps_its_denominator():
    counts = dep_counts(_shop(), "class Shop:\n    def add(self\n")
    assert counts == DepCounts(method_hits=0, method_total=2, field_hits=0, field_total=3)
    assert (counts + counts).method_total == 4
    assert DepCounts().dep_m is None


def test_reference_solutions_score_full_dep(classeval):
    total = DepCounts()
    for task in classeval.tasks:
        total += dep_counts(task, task.solution_code)
    assert total.method_total > 50 and total.field_total > 300
    assert total.dep_m == 1.0 and total.dep_f == 1.0
