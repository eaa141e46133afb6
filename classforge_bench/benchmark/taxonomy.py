"""The error category of a failed sample, from its outcomes and exceptions.

Categories follow ClassEval-Pro's error analysis (logic, dependency, integration, syntax, other),
plus timeout/resource, which we can tell apart from the run itself. Each failed sample gets exactly
one category, decided in this order (the first that applies wins, so a root cause beats its
symptoms):

1. syntax: the program did not compile (SyntaxError, IndentationError, TabError) — also when it
   is reported as a load error of those types.
2. timeout_resource: the run or a test class hit its time limit, or the run hit a resource limit
   (MemoryError, RecursionError).
3. dependency at load time: the module failed while loading (ImportError/ModuleNotFoundError,
   NameError, AttributeError, TypeError...): nothing could be tested.
4. integration: every method-level test class passes but a class-level one does not.
5. dependency: a failing test raised a dependency error — ImportError/ModuleNotFoundError, NameError
   (not UnboundLocalError, a control-flow bug), AttributeError on the class, its instances or a
   module (wrong field or method name, missing library function), or a TypeError from a call
   that does not fit the signature (unexpected/missing/too many arguments).
6. logic: failing tests are assertion failures (unittest "failures", AssertionError).
7. other: anything else (KeyError, IndexError, ValueError, AttributeError on other objects, no
   code extracted, the interpreter crashed, tampered results, no exception information).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.benchmark.outcomes import ExceptionInfo, SampleOutcome
from classforge_bench.pipeline.core.task import Task

Category = Literal["syntax", "dependency", "logic", "integration", "timeout_resource", "other"]
CATEGORIES: tuple[Category, ...] = ("syntax", "dependency", "logic", "integration", "timeout_resource", "other")

_SYNTAX = {"SyntaxError", "IndentationError", "TabError"}
_RESOURCE = {"MemoryError", "RecursionError", "TimeoutError", "WallClockCeiling"}
_IMPORT = {"ImportError", "ModuleNotFoundError"}
_SIGNATURE = re.compile(
    r"unexpected keyword argument|missing \d+ required (?:positional|keyword-only) argument"
    r"|takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:was|were) given"
    r"|takes no arguments|got multiple values for argument|takes exactly \d+ argument"
)


class Classification(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Category
    reason: str
    exception_types: dict[str, int] = Field(default_factory=dict, description="exception types seen in failing tests")


def _attribute_on_class(exc: ExceptionInfo, class_name: str) -> bool:
    msg = exc.message
    return (
        f"'{class_name}' object has no attribute" in msg
        or f"type object '{class_name}' has no attribute" in msg
        or (msg.startswith("module ") and "has no attribute" in msg)
    )


def dependency_reason(exc: ExceptionInfo, class_name: str) -> str | None:
    """Why `exc` is a dependency error, or None if it is not one."""
    kind = exc.short_type
    if kind in _IMPORT:
        return f"missing import ({kind})"
    if kind == "NameError":
        return "undefined name"
    if kind == "AttributeError" and _attribute_on_class(exc, class_name):
        return "wrong field, method or library attribute"
    if kind == "TypeError" and _SIGNATURE.search(exc.message):
        return "call does not fit the signature"
    return None


def classify(task: Task, sample: SampleOutcome) -> Classification | None:
    """The category of a failed sample; None when the sample passes every test class."""
    statuses = {tc: sample.test_class_status(tc) for tc in task.test_classes}
    if sample.status == "completed" and all(s == "success" for s in statuses.values()):
        return None
    error = sample.error
    error_type = error.short_type if error else ""
    if sample.status == "compile_error" or error_type in _SYNTAX:
        return Classification(category="syntax", reason=f"does not compile ({error_type or 'SyntaxError'})")
    if sample.status in ("timeout", "resource_limit") or error_type in _RESOURCE:
        return Classification(category="timeout_resource", reason=error_type or sample.status)
    if sample.status == "no_code":
        return Classification(category="other", reason="no code extracted from the output")
    if sample.status == "tampered":
        return Classification(category="other", reason="the run's evidence was forged or inconsistent")
    if sample.status == "crashed":
        return Classification(category="other", reason=f"interpreter crashed ({error_type or 'no exception'})")
    if sample.status == "load_error":
        if error is not None and (why := dependency_reason(error, task.class_name)):
            return Classification(category="dependency", reason=f"at load time: {why}")
        return Classification(category="other", reason=f"module failed to load ({error_type or 'unknown'})")

    timed_out = [tc for tc in task.test_classes if tc in sample.test_classes and sample.test_classes[tc].timed_out]
    if timed_out:
        return Classification(category="timeout_resource", reason=f"time limit in {', '.join(timed_out)}")
    problems = [
        p
        for tc, s in statuses.items()
        if s != "success" and tc in sample.test_classes
        for p in sample.test_classes[tc].problems
    ]
    types = dict(Counter(p.exception.short_type for p in problems))
    resource = next((t for t in types if t in _RESOURCE), None)
    if resource:
        return Classification(category="timeout_resource", reason=resource, exception_types=types)

    method_level = set(task.method_test_classes.values())
    failing = [tc for tc, s in statuses.items() if s != "success"]
    if (
        method_level
        and all(statuses[tc] == "success" for tc in method_level if tc in statuses)
        and all(tc not in method_level for tc in failing)
    ):
        return Classification(
            category="integration", reason=f"method-level tests pass; {', '.join(failing)} fail", exception_types=types
        )
    for p in problems:
        if why := dependency_reason(p.exception, task.class_name):
            return Classification(category="dependency", reason=f"{why} in {p.test}", exception_types=types)
    if any(p.kind == "failure" or p.exception.short_type == "AssertionError" for p in problems):
        return Classification(category="logic", reason="assertion failures", exception_types=types)
    if not problems:
        missing = [tc for tc in failing if tc not in sample.test_classes]
        detail = f"not reported: {', '.join(missing)}" if missing else "no exception information"
        return Classification(category="other", reason=detail, exception_types=types)
    top = max(types, key=lambda t: types[t])
    return Classification(category="other", reason=f"{top} in failing tests", exception_types=types)


def summarise(classifications: Iterable[Classification | None]) -> dict[Category, int]:
    """Counts per category (passing samples, None, are not counted), every category present."""
    counts = Counter(c.category for c in classifications if c is not None)
    return {cat: counts.get(cat, 0) for cat in CATEGORIES}
