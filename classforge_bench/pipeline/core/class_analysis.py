"""What each method of a class depends on, from the class's AST.

One implementation used by the harvest (metrics), the construction stages (ClassEval's
`dependencies` labels) and the evaluator (DEP(M)/DEP(F) and dependency levels).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from classforge_bench.pipeline.core.ast_helpers import class_methods

STDLIB = frozenset(sys.stdlib_module_names)


def is_stdlib_module(dotted: str) -> bool:
    """Whether `import <dotted>` imports from the standard library (its top-level package decides)."""
    return dotted.split(".")[0] in STDLIB


@dataclass
class MethodDeps:
    name: str
    method_calls: list[str] = field(default_factory=list)  # self.m() / cls.m() on methods of this class
    fields: list[str] = field(default_factory=list)  # self.x that are not methods
    libs: list[str] = field(default_factory=list)  # top-level modules of imports it uses

    @property
    def standalone(self) -> bool:
        return not (self.method_calls or self.fields or self.libs)


def _self_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    args = fn.args.posonlyargs + fn.args.args
    if not args:
        return None
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        return None
    return args[0].arg


def import_aliases(module: ast.Module, nodes: Iterable[ast.AST] | None = None) -> dict[str, str]:
    """Local name -> top-level module, for every import anywhere in the module (`nodes`: every node
    of the module, when the caller already has them listed)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(module) if nodes is None else nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[(a.asname or a.name).split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = node.module.split(".")[0]
    return aliases


def assigned_fields(
    fn: ast.FunctionDef | ast.AsyncFunctionDef | None, nodes: Iterable[ast.AST] | None = None
) -> list[str]:
    """Attributes assigned on the method's receiver (`self.x = ...`, `self.x: T = ...`,
    `self.x += ...`, also inside tuple targets), in source order, each once (`nodes`: every node of
    the method, when the caller already has them listed)."""
    if fn is None:
        return []
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return []
    receiver = params[0].arg
    hits: list[tuple[int, int, str]] = []
    for node in ast.walk(fn) if nodes is None else nodes:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == receiver:
                    hits.append((sub.lineno, sub.col_offset, sub.attr))
    # ast.walk is breadth-first; sorting by position makes the list read like the method
    return list(dict.fromkeys(attr for _, _, attr in sorted(hits)))


def analyse_class(cls: ast.ClassDef, aliases: dict[str, str] | None = None) -> dict[str, MethodDeps]:
    """Per-method dependencies, in declaration order. Properties count as fields, as in ClassEval."""
    aliases = aliases or {}
    methods = class_methods(cls)
    callable_names = {
        m.name for m in methods if not any(isinstance(d, ast.Name) and d.id == "property" for d in m.decorator_list)
    }
    result: dict[str, MethodDeps] = {}
    for fn in methods:
        deps = MethodDeps(fn.name)
        # Static methods reach siblings through the class name, so that counts as a receiver too.
        receivers = {_self_name(fn), cls.name} - {None}
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in receivers:
                attr = node.attr
                if attr in callable_names:
                    if attr != fn.name and attr not in deps.method_calls:
                        deps.method_calls.append(attr)
                elif attr not in deps.fields:
                    deps.fields.append(attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in aliases:
                lib = aliases[node.id]
                if lib not in deps.libs:
                    deps.libs.append(lib)
        result[fn.name] = deps
    return result


def dependency_levels(deps: dict[str, MethodDeps]) -> dict[str, int]:
    """Level 0 calls no other method; a method's level is one more than the highest it calls.

    Cycles (mutual recursion) share the level of their members' highest non-cyclic callee + 1.
    """
    levels: dict[str, int] = {}
    visiting: set[str] = set()

    def level(name: str) -> int:
        if name in levels:
            return levels[name]
        if name in visiting:
            return 0
        visiting.add(name)
        callees = [c for c in deps[name].method_calls if c in deps]
        lv = 0 if not callees else 1 + max(level(c) for c in callees)
        visiting.discard(name)
        levels[name] = lv
        return lv

    for name in deps:
        level(name)
    return levels


def dependency_depth(deps: dict[str, MethodDeps]) -> int:
    """Longest chain of intra-class calls, counted in methods (1 = no method calls another)."""
    levels = dependency_levels(deps)
    return 1 + max(levels.values(), default=0) if deps else 0
