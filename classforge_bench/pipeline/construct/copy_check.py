"""Is a composed skeleton one of its two source classes (or both side by side) instead of a fusion?

Small models asked to fuse two classes often return one of them unchanged, or both one after the
other. A repair of such an answer cannot produce a fusion (it starts from the copy), so the copy is
detected here, by structure, and the composer is asked again with both specs. A class of the answer
reproduces a source when none of its public methods is only the other source's and it has the
source's name, or nearly all of its methods (COPY_SHARE) are the source's: a genuine fusion draws on
both classes (often keeping one's name) and renames freely, so it does not look like that.
"""

from __future__ import annotations

import ast
import re

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.construct.skeleton_checks import is_private
from classforge_bench.pipeline.construct.spec import ClassSpec
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods

# Share of a class's public methods that must be one source's for the class to count as its copy.
COPY_SHARE = 0.8


class CopiedSource(BaseModel):
    """What was copied: the source classes reproduced (by their names) and how it looks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    copied: list[str]
    detail: str


def public_methods(spec: ClassSpec) -> list[str]:
    return [m.name for m in spec.methods if m.name != "__init__" and not is_private(m.name)]


_CLASS = re.compile(r"^class\s+(\w+)", re.MULTILINE)
_METHOD = re.compile(r"^(?:class\s+(\w+)|    (?:async\s+)?def\s+(\w+))", re.MULTILINE)


def _scanned_classes(code: str) -> list[tuple[str, list[str]]]:
    """Classes and their method names by line shape: an answer cut at max_tokens does not parse,
    and a copy of two long classes is exactly what runs out of room."""
    out: list[tuple[str, list[str]]] = []
    for cls, method in _METHOD.findall(code):
        if cls:
            out.append((cls, []))
        elif out and method != "__init__" and not is_private(method):
            out[-1][1].append(method)
    return out


def _answer_classes(code: str) -> list[tuple[str, list[str]]]:
    try:
        module = parsing.parse(code)
    except SyntaxError:
        return _scanned_classes(code)
    out = []
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            names = [f.name for f in class_methods(node)]
            out.append((node.name, [n for n in names if n != "__init__" and not is_private(n)]))
    return out


def _reproduces(name: str, methods: list[str], source: ClassSpec, other: ClassSpec) -> bool:
    own, others = set(public_methods(source)), set(public_methods(other)) - set(public_methods(source))
    if any(m in others for m in methods):
        return False  # it draws on the other class: a fusion, even under one source's name
    if name == source.class_name:
        return True
    return bool(methods) and sum(m in own for m in methods) >= COPY_SHARE * len(methods)


def copied_source(code: str, a: ClassSpec, b: ClassSpec) -> CopiedSource | None:
    """The source classes that `code` reproduces, or None when it does not reproduce either."""
    found: list[str] = []
    shown: list[str] = []
    for name, methods in _answer_classes(code):
        for label, source, other in (("Class A", a, b), ("Class B", b, a)):
            if source.class_name not in found and _reproduces(name, methods, source, other):
                found.append(source.class_name)
                shown.append(f"{name} is {label} `{source.class_name}` (methods {', '.join(methods) or 'none'})")
                break
    if not found:
        return None
    how = "both source classes side by side" if len(found) == 2 else "a source class, not a fusion of the two"
    return CopiedSource(copied=found, detail=f"the answer reproduces {how}: {'; '.join(shown)}")


def fusion_requirement(a: ClassSpec, b: ClassSpec) -> str:
    """What a fusion must contain, named from both specs, for the re-ask after a copy."""

    def side(label: str, spec: ClassSpec) -> str:
        fields = ", ".join(f"self.{f.name}" for f in spec.fields[:6]) or "no fields"
        methods = ", ".join(public_methods(spec)[:8]) or "no public methods"
        return f"{label} `{spec.class_name}` (state: {fields}; behaviour: {methods})"

    return (
        f"ONE class whose constructor holds state from both {side('Class A', a)} and {side('Class B', b)}, "
        "and whose methods use both: at least one method builds on Class A's behaviour and at least one "
        "on Class B's, and some method combines the two"
    )


def reproduced_example(code: str, example: str, a: ClassSpec, b: ClassSpec) -> str | None:
    """The class of the prompt's format example (`example`: the prompt's text) that `code` reproduces,
    under its own name or another: the 1.5B model renamed `LoanLedger` to `FinanceLedger` and kept its
    docstring, constructor and `lend`, adding loan getters and nothing of either source. A class counts
    when it has every public method of the example and none of either source's."""
    sources = set(public_methods(a)) | set(public_methods(b))
    answer = _answer_classes(code)
    for example_name, example_methods in _answer_classes(example):
        for name, methods in answer:
            renamed = bool(example_methods) and set(example_methods) <= set(methods) and not sources & set(methods)
            if name == example_name or renamed:
                return example_name
    return None
