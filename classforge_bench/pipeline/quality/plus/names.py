"""Names for the variables a converted test still needs: the instance after its class, the rest `result`."""

from __future__ import annotations

import re

import libcst as cst

from classforge_bench.pipeline.quality.plus.asserts import assigned, code, transformed


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", name).lower()


class _Rename(cst.CSTTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.names.get(updated.value)
        return updated.with_changes(value=new) if new else updated


def _base_name(value: cst.BaseExpression, class_name: str) -> str:
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == class_name:
        return snake(class_name)
    return "result"


def rename_variables(statements: list[cst.BaseStatement], class_name: str) -> str:
    """The statements as unindented source, each remaining `var_N` renamed by what it holds."""
    names: dict[str, str] = {}
    taken: dict[str, int] = {}
    for stmt in statements:
        bound = assigned(stmt)
        if bound is None or bound[0] in names:
            continue
        base = _base_name(bound[1], class_name)
        taken[base] = taken.get(base, 0) + 1
        names[bound[0]] = base if taken[base] == 1 else f"{base}_{taken[base]}"
    renamer = _Rename(names)
    return "".join(code(transformed(stmt, renamer)) for stmt in statements).strip() + "\n"
