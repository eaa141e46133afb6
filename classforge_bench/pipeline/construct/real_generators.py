"""The test generator of the real-source track: the plus tier's search-based generator (Pynguin,
in the sandbox, validated on the reference), adapted to the track's `TestGenerator` protocol.

`configured_generator` gives it when its virtualenv (`plus.python`, default the checkout's
.venv-plus) exists, else None: the classes are then dropped at `tests` with `no-test-generator`,
and the funnel says so.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from classforge_bench.pipeline.config import Config, PlusConfig, SandboxConfig
from classforge_bench.pipeline.construct.gate import GateUnavailable
from classforge_bench.pipeline.construct.real_candidate import GeneratedSuite, TestGenerator
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class
from classforge_bench.pipeline.core.funnel import FunnelReport, StageCounts
from classforge_bench.pipeline.core.records import RepoSeed
from classforge_bench.pipeline.core.task import PlusSuite


def import_lines(solution: str) -> list[str]:
    """The module's top-level import statements, as written."""
    module = parsing.parse(solution)
    return [
        ast.get_source_segment(solution, n) or "" for n in module.body if isinstance(n, (ast.Import, ast.ImportFrom))
    ]


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def method_test_classes(test_classes: list[str], class_name: str, solution: str) -> dict[str, str]:
    """Method -> its test class, by the plus tier's naming (`<Class>Test<Method>`, method in CamelCase)."""
    cls = find_class(parsing.parse(solution), class_name, top_level_only=True)
    assert cls is not None, f"{class_name} is not in its own reference solution"  # the solution is the class
    methods = {_squash(n.name): n.name for n in class_methods(cls) if n.name != "__init__"}
    found: dict[str, str] = {}
    for tc in test_classes:
        key = _squash(tc.removeprefix(f"{class_name}Test"))
        if key in methods and methods[key] not in found:
            found[methods[key]] = tc
    return found


def suite_funnel(suite: PlusSuite) -> FunnelReport:
    """The plus suite's counts as funnel stages: tests generated (walks included) to tests kept,
    and the generated tests the state observation could not check."""
    stages = {R.GENERATED_TESTS: StageCounts(seen=suite.generated, kept=suite.tests, dropped=dict(suite.dropped))}
    if suite.observed:
        stages[R.STATE_CHECKS] = StageCounts(
            seen=suite.observed, kept=suite.observed - sum(suite.unchecked.values()), dropped=dict(suite.unchecked)
        )
    return FunnelReport(stages=stages)


class PlusGenerator:
    """`make_plus_suite` for a reference; an unusable generator or sandbox is an infrastructure fault."""

    def __init__(self, sandbox: SandboxConfig, plus: PlusConfig) -> None:
        from classforge_bench.pipeline.quality.plus import GENERATOR

        self.sandbox, self.plus, self.name = sandbox, plus, GENERATOR

    def __call__(
        self,
        solution: str,
        class_name: str,
        *,
        item_id: str,
        skeleton: str = "",
        seeds: Sequence[RepoSeed] = (),
    ) -> GeneratedSuite | None:
        """The suite, its tests inside the contract of `skeleton` (the task as shipped; default: the
        solution), where only the fields the constructor's docstring documents are observable;
        `seeds`: how the class's repository builds and calls it (tests and the search's start)."""
        from classforge_bench.pipeline.quality.plus import GeneratorUnavailable, make_plus_suite

        try:
            suite = make_plus_suite(
                solution,
                class_name,
                import_statement=import_lines(solution),
                sandbox=self.sandbox,
                plus=self.plus,
                item_id=item_id,
                described=skeleton or None,
                documented_fields_only=bool(skeleton),
                seeds=seeds,
            )
        except GeneratorUnavailable as exc:
            raise GateUnavailable(f"candidate {item_id}: test generator unavailable: {exc}") from exc
        if suite.failure or not suite.test_classes:
            return GeneratedSuite(
                tests="",
                test_classes=[],
                generator=suite.generator or self.name,
                funnel=suite_funnel(suite),
                failure_reason=suite.failure_reason,
                failure=suite.failure or "",
            )
        return GeneratedSuite(
            tests=suite.test,
            test_classes=list(suite.test_classes),
            method_test_classes=method_test_classes(suite.test_classes, class_name, solution),
            generator=suite.generator or self.name,
            funnel=suite_funnel(suite),
        )


def configured_generator(config: Config) -> TestGenerator | None:
    from classforge_bench.pipeline.quality.plus import GeneratorUnavailable
    from classforge_bench.pipeline.quality.plus.generate import generator_python

    try:
        generator_python(config.plus)
    except GeneratorUnavailable:
        return None
    return PlusGenerator(config.sandbox, config.plus)
