"""The public interface of a skeleton class: method signatures and fields, read with `ast`.

The test checks use it (calls must exist and fit a signature), the solution checks use it (the
solver must keep every signature), and the task record uses it (fields, method order).
"""

from __future__ import annotations

import ast
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class
from classforge_bench.pipeline.core.class_analysis import assigned_fields

MethodKind = Literal["method", "static", "class", "property"]


class MethodSig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: MethodKind
    positional: list[str] = Field(description="positional parameters after self/cls, in order")
    required_positional: int
    keyword_only: list[str] = Field(default_factory=list)
    required_keyword_only: list[str] = Field(default_factory=list)
    var_positional: bool = False
    var_keyword: bool = False
    text: str = Field(description="the parameter list as written, for messages and comparisons")

    def call_problem(self, n_positional: int, keywords: list[str], has_star: bool, has_double_star: bool) -> str | None:
        """Why a call with these arguments cannot bind to this signature, or None if it can."""
        if has_star or has_double_star:
            return None  # unpacked arguments: arity cannot be known statically
        if n_positional > len(self.positional) and not self.var_positional:
            return f"{self.name}() takes {len(self.positional)} positional argument(s), {n_positional} given"
        bound = set(self.positional[:n_positional])
        for kw in keywords:
            if kw in bound:
                return f"{self.name}() got multiple values for {kw!r}"
            if kw not in self.positional and kw not in self.keyword_only and not self.var_keyword:
                return f"{self.name}() has no parameter {kw!r}"
            bound.add(kw)
        missing = [p for p in self.positional[: self.required_positional] if p not in bound]
        missing += [k for k in self.required_keyword_only if k not in bound]
        if missing:
            return f"{self.name}() is missing required argument(s): {', '.join(missing)}"
        return None


class ClassInterface(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    class_name: str
    methods: dict[str, MethodSig] = Field(description="every method, __init__ included, in declaration order")
    fields: list[str] = Field(description="attributes assigned on self in __init__, in order")
    class_attributes: list[str] = Field(default_factory=list)

    @property
    def target_methods(self) -> list[str]:
        """The methods a solver must write and a test suite must cover: all but the constructor."""
        return [m for m in self.methods if m != "__init__"]

    def member(self, name: str) -> bool:
        return name in self.methods or name in self.fields or name in self.class_attributes


def _decorator_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for d in fn.decorator_list:
        node = d.func if isinstance(d, ast.Call) else d
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def method_sig(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> MethodSig:
    decos = _decorator_names(fn)
    kind: MethodKind = (
        "static"
        if "staticmethod" in decos
        else "class"
        if "classmethod" in decos
        else ("property" if {"property", "cached_property"} & decos else "method")
    )
    args = fn.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    if kind != "static" and positional:
        positional = positional[1:]  # self / cls
    n_defaults = len(args.defaults)
    required = max(len(positional) - n_defaults, 0)
    kw_only = [a.arg for a in args.kwonlyargs]
    required_kw = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    return MethodSig(
        name=fn.name,
        kind=kind,
        positional=positional,
        required_positional=required,
        keyword_only=kw_only,
        required_keyword_only=required_kw,
        var_positional=args.vararg is not None,
        var_keyword=args.kwarg is not None,
        text=ast.unparse(args),
    )


def init_fields(fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> list[str]:
    """Attributes assigned on the receiver anywhere in `fn`, in first-assignment order."""
    return assigned_fields(fn)


def interface_of(cls: ast.ClassDef) -> ClassInterface:
    methods = {fn.name: method_sig(fn) for fn in class_methods(cls)}
    init = next((fn for fn in class_methods(cls) if fn.name == "__init__"), None)
    class_attrs: list[str] = []
    for node in cls.body:
        if isinstance(node, ast.Assign):
            class_attrs += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            class_attrs.append(node.target.id)
    return ClassInterface(class_name=cls.name, methods=methods, fields=init_fields(init), class_attributes=class_attrs)


def interface_from_source(code: str, class_name: str) -> ClassInterface | None:
    try:
        module = parsing.parse(code)
    except (SyntaxError, ValueError):
        return None
    cls = find_class(module, class_name, top_level_only=True)
    return interface_of(cls) if cls is not None else None
