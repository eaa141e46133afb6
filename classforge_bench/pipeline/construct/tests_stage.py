"""Stage 3, tests: the test writer turns the skeleton and test-case outlines into a unittest suite.

The suite is checked statically (suite_checks.py) and the method -> test class map is recorded. No
repair turn here (the issue asks for none): a suite that fails its checks drops the candidate.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.construct.common import StageContext, StageOutcome, ask, cut_detail
from classforge_bench.pipeline.construct.interface import ClassInterface
from classforge_bench.pipeline.construct.outlines import case_outlines
from classforge_bench.pipeline.construct.skeleton_checks import Problem
from classforge_bench.pipeline.construct.suite_checks import check_tests
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.llm.client import Completion
from classforge_bench.pipeline.llm.extraction import extract_code

ROLE = "test_writer"


class TestsResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: StageOutcome
    tests: str | None = None
    test_classes: list[str] = Field(default_factory=list)
    method_test_classes: dict[str, str] = Field(default_factory=dict)
    class_level_test_classes: list[str] = Field(default_factory=list)
    test_counts: dict[str, int] = Field(default_factory=dict)
    reply: str = ""
    cache_key: str = ""
    problems: list[Problem] = Field(default_factory=list)
    prompt_version: str


def tests_messages(ctx: StageContext, skeleton: str, iface: ClassInterface) -> list[dict[str, str]]:
    return ctx.prompts["tests_writer"].messages(
        class_name=iface.class_name,
        skeleton=skeleton.rstrip("\n"),
        outlines=case_outlines(skeleton, iface.class_name),
        methods=", ".join(iface.target_methods),
    )


def write_tests(ctx: StageContext, skeleton: str, iface: ClassInterface) -> TestsResult:
    stage = R.TESTS
    version = ctx.prompts["tests_writer"].version
    endpoint = ctx.llm.test_writer
    reply = ask(ctx, ROLE, endpoint, tests_messages(ctx, skeleton, iface), version)
    if not isinstance(reply, Completion):
        return TestsResult(outcome=StageOutcome.of(stage, reply), prompt_version=version)
    base = {"reply": reply.text, "cache_key": reply.cache_key, "prompt_version": version}
    if reply.truncated:
        return TestsResult(outcome=StageOutcome.drop(stage, R.TRUNCATED, cut_detail("test writer", reply)), **base)
    extraction = extract_code(reply.text)
    if not extraction.found:
        return TestsResult(outcome=StageOutcome.drop(stage, R.NO_CODE, "the reply holds no Python code"), **base)
    report = check_tests(extraction.source_file, iface)
    return TestsResult(
        outcome=StageOutcome.of(stage, report.verdict()),
        tests=extraction.source_file if report.ok else None,
        test_classes=report.test_classes,
        method_test_classes=report.method_test_classes,
        class_level_test_classes=report.class_level_test_classes,
        test_counts=report.test_counts,
        problems=report.problems,
        **base,
    )
