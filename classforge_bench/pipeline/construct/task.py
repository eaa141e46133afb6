"""Stage 6, the task record: the core `Task` filled from the stage outputs.

Everything is derived from the three sources with `ast` line spans (never regenerated text), so a
record reads like ClassEval's release: `method_description` is the method's signature and docstring
from the skeleton with its first line unindented, `solution_code` the method from the solution,
`test_code` its test class. Dependencies come from `classforge_bench.pipeline.core.class_analysis` over the solution, the
project's one dependency analysis. Nothing time- or run-dependent is stored, so replaying a build
reproduces its records byte for byte.
"""

from __future__ import annotations

import ast

from classforge_bench.pipeline.construct.interface import init_fields
from classforge_bench.pipeline.construct.pairing import Pair
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of, span
from classforge_bench.pipeline.core.class_analysis import analyse_class, dependency_depth, import_aliases
from classforge_bench.pipeline.core.errors import IntegrityError
from classforge_bench.pipeline.core.records import SCHEMA_VERSION, ClassMetrics
from classforge_bench.pipeline.core.source import is_placeholder_body, slice_lines
from classforge_bench.pipeline.core.task import Dependencies, JudgeVote, Method, MutationReport, Task


class RecordError(IntegrityError):
    """The stage outputs do not fit together into a task (should not happen after the checks)."""


def task_id_for(candidate_id: str) -> str:
    """Deterministic: the same pair of source classes and kind always gets the same id."""
    return "cf-" + candidate_id.removeprefix("cand-")


def _slice(text: str, node: ast.stmt) -> str:
    return slice_lines(text, *span(node))


def _header_and_doc(text: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Decorators, signature and docstring of a skeleton method (its elided body left out)."""
    first, _ = span(fn)
    body = fn.body
    has_doc = bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    last = (body[0].end_lineno if has_doc else body[0].lineno - 1) or fn.lineno
    return "\n".join(text.splitlines()[first - 1 : last])


def _classeval_form(segment: str) -> str:
    """ClassEval keeps a method's first line unindented and the rest as in the class."""
    return segment.lstrip(" \t")


def _top_classes(candidate_id: str, class_name: str, skeleton: str, solution: str, tests: str):
    """(skeleton module, skeleton class, solution module, solution class, test module)."""
    try:
        skel_mod, sol_mod, test_mod = parsing.parse(skeleton), parsing.parse(solution), parsing.parse(tests)
    except SyntaxError as exc:
        raise RecordError(f"candidate {candidate_id}: a source does not parse: {exc.msg}") from exc
    skel_cls = find_class(skel_mod, class_name, top_level_only=True)
    sol_cls = find_class(sol_mod, class_name, top_level_only=True)
    if skel_cls is None or sol_cls is None:
        raise RecordError(
            f"candidate {candidate_id}: class {class_name} missing from the "
            f"{'skeleton' if skel_cls is None else 'solution'}"
        )
    return skel_mod, skel_cls, sol_mod, sol_cls, test_mod


def _method_records(
    candidate_id: str,
    skeleton: str,
    skel_cls: ast.ClassDef,
    solution: str,
    sol_cls: ast.ClassDef,
    tests: str,
    test_mod: ast.Module,
    method_test_classes: dict[str, str],
    deps,
) -> list[Method]:
    """ClassEval's per-method records, in the skeleton's order, for the methods the model writes:
    the constructor and methods the skeleton ships implemented (a real class's private helpers) are
    given code, not records."""
    test_nodes = {n.name: n for n in test_mod.body if isinstance(n, ast.ClassDef)}
    sol_methods = methods_of(sol_cls)
    methods: list[Method] = []
    for name, fn in methods_of(skel_cls).items():
        if name == "__init__" or not is_placeholder_body(fn):
            continue
        if name not in sol_methods:
            raise RecordError(f"candidate {candidate_id}: method {name} missing from the solution")
        d = deps[name]
        tc = method_test_classes.get(name)
        methods.append(
            Method(
                method_name=name,
                method_description=_classeval_form(_header_and_doc(skeleton, fn)),
                test_class=tc,
                test_code=_slice(tests, test_nodes[tc]) if tc in test_nodes else "",
                solution_code=_classeval_form(_slice(solution, sol_methods[name])),
                dependencies=Dependencies(
                    standalone=d.standalone,
                    lib_dependencies=d.libs,
                    field_dependencies=[f"self.{f}" for f in d.fields],
                    method_dependencies=d.method_calls,
                ),
            )
        )
    return methods


def _class_columns(
    class_name: str, skeleton: str, skel_mod: ast.Module, skel_cls: ast.ClassDef, sol_cls: ast.ClassDef
) -> dict:
    """ClassEval's class-level columns, sliced from the skeleton."""
    init = methods_of(skel_cls).get("__init__")
    doc = skel_cls.body[0] if skel_cls.body and isinstance(skel_cls.body[0], ast.Expr) else None
    return {
        "import_statement": [
            _slice(skeleton, n).strip() for n in skel_mod.body if isinstance(n, (ast.Import, ast.ImportFrom))
        ],
        "class_description": (_slice(skeleton, doc) + "\n") if doc is not None else "",
        "class_constructor": f"class {class_name}: \n" + (_slice(skeleton, init) + "\n\n" if init is not None else ""),
        # ClassEval lists fields sorted; an elided constructor leaves them to the solution's
        "fields": sorted(f"self.{f}" for f in (init_fields(init) or init_fields(methods_of(sol_cls).get("__init__")))),
    }


def code_columns(
    candidate_id: str,
    *,
    skeleton: str,
    class_name: str,
    tests: str,
    test_classes: list[str],
    method_test_classes: dict[str, str],
    solution: str,
) -> dict:
    """The task columns that come from the three texts alone (ClassEval's, and the metrics), for any track."""
    skel_mod, skel_cls, sol_mod, sol_cls, test_mod = _top_classes(candidate_id, class_name, skeleton, solution, tests)
    deps = analyse_class(sol_cls, import_aliases(sol_mod))
    methods = _method_records(
        candidate_id, skeleton, skel_cls, solution, sol_cls, tests, test_mod, method_test_classes, deps
    )
    first, last = span(sol_cls)
    return {
        "task_id": task_id_for(candidate_id),
        "class_name": class_name,
        "skeleton": skeleton,
        "test": tests,
        "test_classes": list(test_classes),
        "solution_code": solution,
        **_class_columns(class_name, skeleton, skel_mod, skel_cls, sol_cls),
        "methods_info": methods,
        "metrics": ClassMetrics(
            loc=last - first + 1, method_count=len(methods), dependency_depth=dependency_depth(deps)
        ),
    }


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
    mutation: MutationReport | None = None,
) -> Task:
    columns = code_columns(
        pair.candidate_id,
        skeleton=skeleton,
        class_name=class_name,
        tests=tests,
        test_classes=test_classes,
        method_test_classes=method_test_classes,
        solution=solution,
    )
    return Task(
        **columns,
        composition_type=pair.composition_type,
        domain1=pair.domain1,
        domain2=pair.domain2,
        coverage=round(coverage, 2),
        branch_coverage=round(branch_coverage, 2) if branch_coverage is not None else None,
        mutation_score=round(mutation.score, 4) if mutation is not None and mutation.score is not None else None,
        mutation=mutation,
        judge_scores=[v.score if v.valid else None for v in votes],
        judge_votes=votes,
        source_class_ids=[pair.first.class_id, pair.second.class_id],
        sources=[pair.first, pair.second],
        models=models,
        prompt_versions=prompt_versions,
        candidate_id=pair.candidate_id,
        schema_version=SCHEMA_VERSION,
    )
