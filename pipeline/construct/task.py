"""Stage 6, the task record: ClassEval's columns plus composition, provenance, judges and models.

Everything is derived from the three sources with `ast` line spans (never regenerated text), so a
record reads like ClassEval's release: `method_description` is the method's signature and docstring
from the skeleton with its first line unindented, `solution_code` the method from the solution,
`test_code` its test class. Dependencies come from `pipeline.class_analysis` over the solution, the
project's one dependency analysis. Nothing time- or run-dependent is stored, so replaying a build
reproduces its records byte for byte.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipeline.class_analysis import analyse_class, dependency_depth, import_aliases
from pipeline.construct.interface import find_top_class, init_fields
from pipeline.construct.judges import JudgeVote
from pipeline.construct.pairing import CompositionType, Pair, SourceRef
from pipeline.records import SCHEMA_VERSION
from pipeline.core import parsing


class RecordError(ValueError):
    """The stage outputs do not fit together into a task (should not happen after the checks)."""


class Dependencies(BaseModel):
    """ClassEval's per-method dependency labels, with its key spelling (`Standalone`)."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    standalone: bool = Field(alias="Standalone")
    lib_dependencies: list[str] = Field(default_factory=list)
    field_dependencies: list[str] = Field(default_factory=list, description="as `self.x`, like ClassEval")
    method_dependencies: list[str] = Field(default_factory=list)


class MethodRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method_name: str
    method_description: str
    test_class: str | None
    test_code: str
    solution_code: str
    dependencies: Dependencies


class TaskMetrics(BaseModel):
    """The paper's Table 3 figures for this task, from the solution."""

    model_config = ConfigDict(extra="forbid")

    loc: int = Field(description="physical lines of the solution's class statement")
    method_count: int = Field(description="methods to generate (the constructor not counted), as ClassEval counts")
    dependency_depth: int = Field(description="longest chain of intra-class calls, 1 = no method calls another")


class BuiltTask(BaseModel):
    """One verified task. Keys up to `methods_info` are ClassEval's; the rest is ClassEval-Pro's and ours."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    class_name: str
    skeleton: str
    test: str
    test_classes: list[str]
    solution_code: str
    import_statement: list[str]
    class_description: str
    class_constructor: str
    fields: list[str]
    methods_info: list[MethodRecord]
    composition_type: CompositionType
    domain1: str
    domain2: str
    coverage: float = Field(description="line coverage of the solution by the tests, percent")
    branch_coverage: float | None = None
    environment_checks: dict[str, Any] | None = Field(
        None, description="environment checks the solution passed: applied, skipped (with why), isolation")
    judge_scores: list[int | None] = Field(description="one per judge, None for a failed vote")
    judge_votes: list[JudgeVote]
    source_class_ids: list[str]
    sources: list[SourceRef]
    models: dict[str, str] = Field(description="role -> model")
    prompt_versions: dict[str, str] = Field(description="stage -> prompt version(s) used")
    metrics: TaskMetrics
    candidate_id: str
    schema_version: int = SCHEMA_VERSION


def task_id_for(candidate_id: str) -> str:
    """Deterministic: the same pair of source classes and kind always gets the same id."""
    return "cf-" + candidate_id.removeprefix("cand-")


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno] + [d.lineno for d in decorators])
    return start, node.end_lineno or node.lineno


def _slice(text: str, node: ast.stmt) -> str:
    first, last = _span(node)
    return "\n".join(text.splitlines()[first - 1:last])


def _header_and_doc(text: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Decorators, signature and docstring of a skeleton method (its elided body left out)."""
    first, _ = _span(fn)
    body = fn.body
    has_doc = bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    last = (body[0].end_lineno if has_doc else body[0].lineno - 1) or fn.lineno
    return "\n".join(text.splitlines()[first - 1:last])


def _classeval_form(segment: str) -> str:
    """ClassEval keeps a method's first line unindented and the rest as in the class."""
    return segment.lstrip(" \t")


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def build_record(
    pair: Pair,
    *,
    skeleton: str,
    class_name: str,
    tests: str,
    test_classes: list[str],
    method_test_classes: dict[str, str],
    solution: str,
    coverage: float,
    branch_coverage: float | None,
    votes: list[JudgeVote],
    models: dict[str, str],
    prompt_versions: dict[str, str],
) -> BuiltTask:
    try:
        skel_mod, sol_mod, test_mod = parsing.parse(skeleton), parsing.parse(solution), parsing.parse(tests)
    except SyntaxError as exc:
        raise RecordError(f"candidate {pair.candidate_id}: a source does not parse: {exc.msg}") from exc
    skel_cls, sol_cls = find_top_class(skel_mod, class_name), find_top_class(sol_mod, class_name)
    if skel_cls is None or sol_cls is None:
        raise RecordError(f"candidate {pair.candidate_id}: class {class_name} missing from the "
                          f"{'skeleton' if skel_cls is None else 'solution'}")
    test_nodes = {n.name: n for n in test_mod.body if isinstance(n, ast.ClassDef)}
    deps = analyse_class(sol_cls, import_aliases(sol_mod))
    skel_methods, sol_methods = _methods(skel_cls), _methods(sol_cls)

    methods: list[MethodRecord] = []
    for name, fn in skel_methods.items():
        if name == "__init__":
            continue
        if name not in sol_methods:
            raise RecordError(f"candidate {pair.candidate_id}: method {name} missing from the solution")
        d = deps[name]
        tc = method_test_classes.get(name)
        methods.append(MethodRecord(
            method_name=name,
            method_description=_classeval_form(_header_and_doc(skeleton, fn)),
            test_class=tc,
            test_code=_slice(tests, test_nodes[tc]) if tc in test_nodes else "",
            solution_code=_classeval_form(_slice(solution, sol_methods[name])),
            dependencies=Dependencies(
                standalone=d.standalone, lib_dependencies=d.libs,
                field_dependencies=[f"self.{f}" for f in d.fields], method_dependencies=d.method_calls,
            ),
        ))

    init = skel_methods.get("__init__")
    doc = skel_cls.body[0] if skel_cls.body and isinstance(skel_cls.body[0], ast.Expr) else None
    imports = [_slice(skeleton, n).strip() for n in skel_mod.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    first, last = _span(sol_cls)
    return BuiltTask(
        task_id=task_id_for(pair.candidate_id),
        class_name=class_name,
        skeleton=skeleton,
        test=tests,
        test_classes=list(test_classes),
        solution_code=solution,
        import_statement=imports,
        class_description=(_slice(skeleton, doc) + "\n") if doc is not None else "",
        class_constructor=f"class {class_name}: \n" + (_slice(skeleton, init) + "\n\n" if init is not None else ""),
        # ClassEval lists fields sorted; an elided constructor leaves them to the solution's
        fields=sorted(f"self.{f}" for f in (init_fields(init) or init_fields(sol_methods.get("__init__")))),
        methods_info=methods,
        composition_type=pair.composition_type,
        domain1=pair.domain1,
        domain2=pair.domain2,
        coverage=round(coverage, 2),
        branch_coverage=round(branch_coverage, 2) if branch_coverage is not None else None,
        judge_scores=[v.score if v.valid else None for v in votes],
        judge_votes=votes,
        source_class_ids=[pair.first.class_id, pair.second.class_id],
        sources=[pair.first, pair.second],
        models=models,
        prompt_versions=prompt_versions,
        metrics=TaskMetrics(loc=last - first + 1, method_count=len(methods),
                            dependency_depth=dependency_depth(deps)),
        candidate_id=pair.candidate_id,
    )
