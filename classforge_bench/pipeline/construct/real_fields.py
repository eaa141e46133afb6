"""Real-source track: the public fields a skeleton states, documented from the constructor.

ClassEval's skeletons declare a class's fields by their constructor's assignments; a real class's
constructor is its author's code, so there an assignment is not a statement of the specification
and the task's contract (`quality/plus/task_contract.py`, `documented_fields_only`) lets tests read
only the fields the constructor's or the class's docstring names. This module adds the lines the
author left out, for what a reader can rely on from the constructor alone: public fields set to a
constructor argument or to a literal scalar, with their type and initial value. Containers and
computed values (the backing list of a buffer, a lock) stay undocumented: internal state no test
may assert.
"""

from __future__ import annotations

import ast

from classforge_bench.pipeline.quality.plus.task_contract import names_field

FIELDS_HEADER = "Public fields (set by the constructor):"
_SCALARS = (bool, int, float, str, type(None))


def _argument_types(init: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Parameter -> the type its annotation or default states ('' when neither does)."""
    a = init.args
    positional = [*a.posonlyargs, *a.args]
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults) :]], a.defaults))
    defaults |= {p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
    found: dict[str, str] = {}
    for p in [*positional, *a.kwonlyargs]:
        default = defaults.get(p.arg)
        if p.annotation is not None:
            found[p.arg] = ast.unparse(p.annotation).strip("'\"")
        elif isinstance(default, ast.Constant) and default.value is not None:
            found[p.arg] = type(default.value).__name__
        else:
            found[p.arg] = ""
    return found


def _field_line(name: str, value: ast.expr, arguments: dict[str, str]) -> str | None:
    """One documentation line for `self.name = value`, or None when it states nothing reliable."""
    if isinstance(value, ast.Name) and value.id in arguments:
        typed = f" ({arguments[value.id]})" if arguments[value.id] else ""
        return f"self.{name}{typed}: the `{value.id}` argument"
    if isinstance(value, ast.Constant) and isinstance(value.value, _SCALARS):
        typed = type(value.value).__name__ if value.value is not None else "None"
        return f"self.{name} ({typed}): initially {value.value!r}"
    return None


def field_lines(init: ast.FunctionDef | ast.AsyncFunctionDef, documented: str) -> list[str]:
    """Lines for the public fields the constructor's own statements set to an argument or a literal
    scalar, and `documented` (its docstring and the class's) does not name yet."""
    arguments = _argument_types(init)
    lines: dict[str, str] = {}
    for stmt in init.body:
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            name = target.attr
            if target.value.id != "self" or name.startswith("_") or name in lines:
                continue
            if names_field(documented, name):
                continue
            line = _field_line(name, stmt.value, arguments)
            if line is not None:
                lines[name] = line
    return list(lines.values())


def with_fields(docstring: str, lines: list[str]) -> str:
    """The constructor's docstring with the field lines after it."""
    if not lines:
        return docstring
    block = "\n".join([FIELDS_HEADER, *(f"    {line}" for line in lines)])
    return f"{docstring.rstrip()}\n\n{block}" if docstring.strip() else f"Create the object.\n\n{block}"
