"""A hand-made task for the metric tests."""

from __future__ import annotations

from classforge_bench.pipeline.core.task import Dependencies, Method, Task


def _method(
    name: str, test_class: str | None, methods: list[str] | None = None, fields: list[str] | None = None
) -> Method:
    return Method(
        method_name=name,
        method_description=f"def {name}(self):",
        test_class=test_class,
        solution_code=f"def {name}(self):\n        pass",
        dependencies=Dependencies(
            standalone=not (methods or fields), method_dependencies=methods or [], field_dependencies=fields or []
        ),
    )


def _task(task_id: str = "T1") -> Task:
    return Task(
        task_id=task_id,
        class_name="Box",
        skeleton="class Box:\n    pass\n",
        test="import unittest\n",
        solution_code="class Box:\n    pass\n",
        test_classes=["BoxTestA", "BoxTestB", "BoxTest"],
        methods_info=[_method("a", "BoxTestA"), _method("b", "BoxTestB"), _method("c", None)],
    )
