"""ClassEval's per-method and class-level fields, derived from skeleton, solution and tests.

ClassEval-Pro-style records carry no `methods_info`; classforge's own releases may omit parts of
it. Everything here comes from `ast` over the three sources, and the dependency labels from
`classforge_bench.pipeline.core.class_analysis`, the project's one dependency analysis, run on the reference solution.
"""

from __future__ import annotations

import ast

from classforge_bench.pipeline.core.ast_helpers import docstring_node, find_class, methods_of, span
from classforge_bench.pipeline.core.class_analysis import analyse_class, assigned_fields, import_aliases
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.source import is_placeholder_body, parse, slice_lines
from classforge_bench.pipeline.core.task import Dependencies, Method
from classforge_bench.pipeline.formats.quirks import QuirkFix


class DeriveError(InputError):
    """The sources do not fit together (a method of the skeleton missing from the solution, ...)."""


def _classeval_form(segment: str) -> str:
    """ClassEval stores a method with its first line unindented and the rest as in the class."""
    return segment.lstrip(" \t")


def test_name_key(name: str) -> str:
    """Comparison key for ClassEval's test-class naming convention: case and underscores ignored."""
    return name.replace("_", "").lower()


def match_test_class(class_name: str, method_name: str, test_classes: list[str]) -> str | None:
    """ClassEval's naming convention `<ClassName>Test<MethodName>`, compared case-insensitively and
    ignoring underscores (`get_jwt_user` matches `AccessGatewayFilterTestGetJwtUser`)."""
    want = test_name_key(f"{class_name}Test{method_name}")
    return next((tc for tc in test_classes if test_name_key(tc) == want), None)


def target_methods(skeleton_cls: ast.ClassDef, solution_cls: ast.ClassDef) -> list[str]:
    """Methods a model must write: those with no body in the skeleton, in declaration order.

    A constructor with a real body in the skeleton is context (as in ClassEval); an empty one is a
    target only when the reference solution's constructor does something.
    """
    solution_methods = methods_of(solution_cls)
    targets = []
    for name, fn in methods_of(skeleton_cls).items():
        if not is_placeholder_body(fn):
            continue
        if name == "__init__":
            ref = solution_methods.get(name)
            if ref is None or is_placeholder_body(ref):
                continue
        targets.append(name)
    return targets


def _self_fields(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [f"self.{name}" for name in assigned_fields(fn)]


def class_level_fields(skeleton: str, skeleton_cls: ast.ClassDef, solution_cls: ast.ClassDef) -> dict[str, object]:
    """import_statement, class_description, class_constructor and fields, in ClassEval's layout."""
    module = parse(skeleton)
    imports = [
        slice_lines(skeleton, *span(n)).strip() for n in module.body if isinstance(n, (ast.Import, ast.ImportFrom))
    ]
    doc = docstring_node(skeleton_cls.body)
    description = slice_lines(skeleton, *span(doc)) + "\n" if doc else ""
    init = methods_of(skeleton_cls).get("__init__")
    constructor = f"class {skeleton_cls.name}: \n"
    if init is not None:
        constructor += slice_lines(skeleton, *span(init)) + "\n\n"
    field_source = init
    if init is None or is_placeholder_body(init):
        field_source = methods_of(solution_cls).get("__init__")
    # sorted, as ClassEval lists them
    fields = sorted(_self_fields(field_source)) if field_source is not None else []
    return {
        "import_statement": imports,
        "class_description": description,
        "class_constructor": constructor,
        "fields": fields,
    }


def derive_methods(
    task_id: str, class_name: str, skeleton: str, solution: str, test: str, test_classes: list[str]
) -> tuple[list[Method], list[QuirkFix]]:
    """Per-method records (ClassEval's `methods_info`) and notices for methods with no test class."""
    skel_mod, sol_mod, test_mod = parse(skeleton), parse(solution), parse(test)
    skel_cls, sol_cls = find_class(skel_mod, class_name), find_class(sol_mod, class_name)
    if skel_cls is None or sol_cls is None:
        raise DeriveError(f"class {class_name!r} not found in the {'skeleton' if skel_cls is None else 'solution'}")
    deps = analyse_class(sol_cls, import_aliases(sol_mod))
    skel_methods, sol_methods = methods_of(skel_cls), methods_of(sol_cls)
    test_nodes = {n.name: n for n in test_mod.body if isinstance(n, ast.ClassDef)}
    methods: list[Method] = []
    notices: list[QuirkFix] = []
    for name in target_methods(skel_cls, sol_cls):
        if name not in sol_methods:
            raise DeriveError(f"method {name!r} of the skeleton is missing from the solution")
        test_class = match_test_class(class_name, name, test_classes)
        if test_class is None:
            notices.append(
                QuirkFix(
                    task_id=task_id,
                    kind="method_without_test_class",
                    field="methods",
                    detail=f"no test class named like {class_name}Test<{name}>; the method counts at class level only",
                )
            )
        d = deps[name]
        methods.append(
            Method(
                method_name=name,
                method_description=_classeval_form(slice_lines(skeleton, *span(skel_methods[name]))),
                test_class=test_class,
                test_code=slice_lines(test, *span(test_nodes[test_class])) if test_class in test_nodes else "",
                solution_code=_classeval_form(slice_lines(solution, *span(sol_methods[name]))),
                dependencies=Dependencies(
                    standalone=d.standalone,
                    lib_dependencies=list(d.libs),
                    field_dependencies=[f"self.{f}" for f in d.fields],
                    method_dependencies=list(d.method_calls),
                ),
            )
        )
    return methods, notices
