"""Error taxonomy of failed samples."""

from __future__ import annotations

import pytest

from classforge_bench.benchmark.outcomes import (
    ExceptionInfo,
    SampleOutcome,
    TestClassOutcome,
    TestProblem,
    exception_from_traceback,
    syntax_error_of,
)
from classforge_bench.benchmark.taxonomy import CATEGORIES, classify, dependency_reason, summarise
from classforge_bench.pipeline.core.task import Dependencies, Method, Task


def _task() -> Task:
    def m(name, tc):
        return Method(
            method_name=name,
            method_description=f"def {name}(self):",
            test_class=tc,
            solution_code=f"def {name}(self):\n        pass",
            dependencies=Dependencies(standalone=True),
        )

    return Task(
        task_id="T",
        class_name="Box",
        skeleton="class Box:\n    pass\n",
        test="import unittest\n",
        solution_code="class Box:\n    pass\n",
        test_classes=["BoxTestA", "BoxTestB", "BoxTest"],
        methods_info=[m("a", "BoxTestA"), m("b", "BoxTestB")],
    )


OK = TestClassOutcome(tests_run=2)


def _failing(*problems: tuple[str, str, str]) -> TestClassOutcome:
    """problems: (kind, exception type, message)"""
    failures = sum(1 for kind, _, _ in problems if kind == "failure")
    return TestClassOutcome(
        tests_run=len(problems) + 1,
        failures=failures,
        errors=len(problems) - failures,
        problems=[
            TestProblem(test=f"test_{i}", kind=kind, exception=ExceptionInfo(type=t, message=msg))
            for i, (kind, t, msg) in enumerate(problems)
        ],
    )


def _sample(a=OK, b=OK, whole=OK, status="completed", error=None) -> SampleOutcome:
    return SampleOutcome(
        status=status,
        error=error,
        test_classes={"BoxTestA": a, "BoxTestB": b, "BoxTest": whole} if status == "completed" else {},
    )


def _category(sample: SampleOutcome) -> str:
    result = classify(_task(), sample)
    assert result is not None
    return result.category


def test_passing_sample_has_no_category():
    assert classify(_task(), _sample()) is None


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        (_sample(status="compile_error", error=ExceptionInfo(type="SyntaxError", message="invalid syntax")), "syntax"),
        (
            _sample(status="load_error", error=ExceptionInfo(type="IndentationError", message="unexpected indent")),
            "syntax",
        ),
        (_sample(status="timeout"), "timeout_resource"),
        (_sample(status="resource_limit", error=ExceptionInfo(type="MemoryError")), "timeout_resource"),
        (_sample(a=TestClassOutcome(tests_run=1, timed_out=True)), "timeout_resource"),
        (_sample(a=_failing(("error", "RecursionError", "maximum recursion depth exceeded"))), "timeout_resource"),
        (
            _sample(
                status="load_error", error=ExceptionInfo(type="ModuleNotFoundError", message="No module named 'numpy'")
            ),
            "dependency",
        ),
        (_sample(status="load_error", error=ExceptionInfo(type="ZeroDivisionError")), "other"),
        (_sample(status="no_code"), "other"),
        (_sample(status="crashed", error=ExceptionInfo(type="Segfault")), "other"),
    ],
)
def test_whole_sample_conditions(sample, expected):
    assert _category(sample) == expected


@pytest.mark.parametrize(
    ("exc_type", "message", "expected"),
    [
        ("NameError", "name 'math' is not defined", "dependency"),
        ("ImportError", "cannot import name 'x' from 'y'", "dependency"),
        ("AttributeError", "'Box' object has no attribute 'itemz'", "dependency"),
        ("AttributeError", "type object 'Box' has no attribute 'helper'", "dependency"),
        ("AttributeError", "module 'math' has no attribute 'clamp'", "dependency"),
        ("TypeError", "Box.a() takes 1 positional argument but 2 were given", "dependency"),
        ("TypeError", "Box.b() missing 1 required positional argument: 'x'", "dependency"),
        ("TypeError", "Box.__init__() got an unexpected keyword argument 'size'", "dependency"),
        ("builtins.TypeError", "unsupported operand type(s) for +: 'int' and 'str'", "other"),
        ("AttributeError", "'NoneType' object has no attribute 'append'", "other"),
        ("UnboundLocalError", "cannot access local variable 'x' where it is not associated with a value", "other"),
        ("KeyError", "'male'", "other"),
    ],
)
def test_exception_types_in_method_tests(exc_type, message, expected):
    assert _category(_sample(a=_failing(("error", exc_type, message)))) == expected


def test_assertion_failures_are_logic():
    assert _category(_sample(b=_failing(("failure", "AssertionError", "3 != 4")))) == "logic"


def test_dependency_beats_logic_when_both_appear():
    sample = _sample(
        a=_failing(("failure", "AssertionError", "1 != 2")),
        b=_failing(("error", "NameError", "name 'helper' is not defined")),
    )
    result = classify(_task(), sample)
    assert result.category == "dependency"
    assert result.exception_types == {"AssertionError": 1, "NameError": 1}


def test_method_level_pass_but_class_level_fail_is_integration():
    result = classify(
        _task(), _sample(whole=_failing(("error", "AttributeError", "'Box' object has no attribute 'x'")))
    )
    assert result.category == "integration" and "BoxTest" in result.reason


def test_unreported_test_class_is_other_not_a_pass():
    sample = SampleOutcome(status="completed", test_classes={"BoxTestA": OK, "BoxTestB": OK})
    result = classify(_task(), sample)
    assert result.category == "integration"  # method tests pass; the class-level one never ran
    sample = SampleOutcome(status="completed", test_classes={"BoxTestB": OK, "BoxTest": OK})
    result = classify(_task(), sample)
    assert result.category == "other" and "not reported: BoxTestA" in result.reason


def test_dependency_reason_helper():
    assert dependency_reason(ExceptionInfo(type="NameError", message="x"), "Box") == "undefined name"
    assert dependency_reason(ExceptionInfo(type="ValueError", message="x"), "Box") is None


def test_summarise_counts_every_category():
    results = [
        classify(_task(), s)
        for s in (
            _sample(),
            _sample(status="timeout"),
            _sample(b=_failing(("failure", "AssertionError", ""))),
            _sample(b=_failing(("failure", "AssertionError", ""))),
        )
    ]
    summary = summarise(results)
    assert list(summary) == list(CATEGORIES)
    assert summary == {"syntax": 0, "dependency": 0, "logic": 2, "integration": 0, "timeout_resource": 1, "other": 0}


def test_tampered_run_is_other():
    assert _category(_sample(status="tampered")) == "other"


def test_helpers_for_mapping_runner_output():
    tb = (
        'Traceback (most recent call last):\n  File "solution.py", line 1, in <module>\n    import numpy\n'
        "ModuleNotFoundError: No module named 'numpy'\n"
    )
    exc = exception_from_traceback(tb)
    assert (exc.type, exc.message) == ("ModuleNotFoundError", "No module named 'numpy'")
    assert _category(_sample(status="load_error", error=exc)) == "dependency"
    assert exception_from_traceback("no traceback here") is None
    assert syntax_error_of("class A:\n    def f(self):\n        return 1\n") is None
    err = syntax_error_of("class A:\ndef f(self):\n    pass\n")
    assert err.type == "IndentationError" and "line 2" in err.message
    assert _category(_sample(status="compile_error", error=err)) == "syntax"
