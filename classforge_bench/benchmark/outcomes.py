"""The typed result of running one sample's test suite: what metrics and taxonomy read.

Shaped after what `unittest` reports per test class (testsRun, failures, errors, skipped), so a
sandbox result maps over field by field:

    TestClassOutcome(tests_run=r.testsRun, failures=len(r.failures), errors=len(r.errors),
                     skipped=len(r.skipped), problems=[TestProblem(test=id, kind="failure", exception=...)...])

Whole-sample conditions (the code did not compile, the module raised while loading, the run hit
its time or memory limit, the interpreter died) go in `SampleOutcome.status`; per-test-class time
limits in `TestClassOutcome.timed_out`.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from classforge_bench.pipeline.core import parsing

_EXCEPTION_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration)\w*)(?::\s?(?P<message>.*))?$"
)

TestClassStatus = Literal["success", "partial", "fail", "error"]
SampleStatus = Literal[
    "completed", "compile_error", "load_error", "timeout", "resource_limit", "crashed", "tampered", "no_code"
]


class ExceptionInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str  # e.g. "AssertionError", "NameError"; a dotted name is fine
    message: str = ""
    traceback: str = ""

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]


class TestProblem(BaseModel):
    """One failing test: `failure` is an assertion failure, `error` any other exception (unittest's split)."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name
    model_config = ConfigDict(extra="forbid")

    test: str
    kind: Literal["failure", "error"]
    exception: ExceptionInfo


class TestClassOutcome(BaseModel):
    """One test class's run in one sample."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name
    model_config = ConfigDict(extra="forbid")

    tests_run: int = Field(ge=0)
    failures: int = Field(default=0, ge=0)
    errors: int = Field(default=0, ge=0)
    skipped: int = Field(default=0, ge=0)
    timed_out: bool = False
    problems: list[TestProblem] = Field(default_factory=list)

    @model_validator(mode="after")
    def _counts_add_up(self) -> TestClassOutcome:
        if self.failures + self.errors + self.skipped > self.tests_run:
            raise ValueError(
                f"failures+errors+skipped ({self.failures}+{self.errors}+{self.skipped}) "
                f"exceed tests_run ({self.tests_run})"
            )
        return self

    @property
    def passed(self) -> int:
        return self.tests_run - self.failures - self.errors - self.skipped

    @property
    def status(self) -> TestClassStatus:
        """ClassEval's four answers (`get_test_answer` in its evaluator), made strict on one point:
        a class with no passing test is never a success (zero tests run, or all skipped, is `error`).

        - error: timed out, nothing ran, or every test that ran raised an error;
        - success: at least one test passed and none failed or raised;
        - partial: at least one test passed, at least one failed or raised;
        - fail: no test passed, at least one failed.
        """
        if (
            self.timed_out
            or self.tests_run == 0
            or self.errors == self.tests_run
            or (self.passed == 0 and self.failures == 0)
        ):
            return "error"
        if self.passed > 0 and self.failures + self.errors == 0:
            return "success"
        if self.passed > 0:
            return "partial"
        return "fail"


class SampleOutcome(BaseModel):
    """Everything known about running one sample (one generated program) of one task."""

    model_config = ConfigDict(extra="forbid")

    # Which task and sample this is lives in the sample's record (`SampleRecord`), and the status
    # is written once, as the bucket of the record's score, which fills it in when a file is read.
    status: SampleStatus = Field(exclude=True)
    error: ExceptionInfo | None = Field(default=None, description="what stopped a sample that did not complete")
    test_classes: dict[str, TestClassOutcome] = Field(default_factory=dict)

    @property
    def compiled(self) -> bool:
        return self.status not in ("compile_error", "no_code")

    def test_class_status(self, name: str) -> TestClassStatus:
        """A test class that did not run (sample stopped, or not reported) is an error, never a pass."""
        if self.status != "completed" or name not in self.test_classes:
            return "error"
        return self.test_classes[name].status


def exception_from_traceback(text: str) -> ExceptionInfo | None:
    """The exception a Python traceback ends with (`NameError: name 'x' is not defined`), for
    runners that report a load failure as text. None when no such line is found."""
    for line in reversed(text.strip().splitlines()):
        m = _EXCEPTION_LINE.match(line.strip())
        if m:
            return ExceptionInfo(type=m["type"], message=m["message"] or "", traceback=text)
    return None


def syntax_error_of(program: str, filename: str = "<solution>") -> ExceptionInfo | None:
    """SyntaxError/IndentationError of a program, found by compiling it here: compiling never runs
    the code, so this is safe outside the sandbox and gives the syntax category without a run."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # escape-sequence warnings of the program are not errors
        try:
            parsing.compile_code(program, filename)
        except SyntaxError as e:  # IndentationError and TabError are SyntaxErrors
            return ExceptionInfo(type=type(e).__name__, message=f"{e.msg} (line {e.lineno})")
        except ValueError as e:  # e.g. source code string cannot contain null bytes
            return ExceptionInfo(type="SyntaxError", message=str(e))
    return None
