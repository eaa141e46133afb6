"""A class whose keyboard or terminal use is confined to some methods: kept without them when what
remains still meets every rule, else dropped naming the method.

A 23-method class is worth a task even if one method is an interactive menu; cutting that method
out is sound only when no other method calls it, `__init__` is not among them, and the rest passes
every class filter again (size, imports, references, testability) as the source that remains.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import span
from classforge_bench.pipeline.core.funnel import KEEP, Filter, Verdict
from classforge_bench.pipeline.harvest.candidates import Candidate, list_candidates
from classforge_bench.pipeline.harvest.filters import TERMINAL_MODULES, clears_screen


def _interactive_names(c: Candidate) -> dict[str, str]:
    """Names whose use reads the keyboard or drives a terminal -> what using them does."""
    bad: dict[str, str] = {}
    if "input" in c.resolution.builtins_used and "input" not in c.star_provided:
        bad["input"] = "reads the keyboard with input()"
    for n in c.import_nodes():
        for a in n.names:
            top = ((n.module or "") if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
            if top == "getpass" or top in TERMINAL_MODULES:
                bad[a.asname or a.name.split(".")[0]] = (
                    "reads the keyboard with getpass" if top == "getpass" else f"uses {top}"
                )
    for stmt in c.resolution.context:  # a module-level helper that does it itself (getch())
        evidence = _evidence(list(ast.walk(stmt)), bad)
        if evidence and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bad[stmt.name] = f"calls {stmt.name}, which {evidence.split(': ', 1)[-1]}"
    return bad


def _evidence(nodes: Sequence[ast.AST], bad: dict[str, str]) -> str | None:
    for n in nodes:
        if isinstance(n, ast.Name) and n.id in bad:
            return f"line {n.lineno}: {bad[n.id]}"
    return clears_screen(list(nodes))


def interactive_methods(c: Candidate) -> dict[str, str] | None:
    """Method name -> evidence of its keyboard or terminal use; None when such use also lies
    outside the methods (class body, decorators), so no set of methods can be cut out."""
    bad = _interactive_names(c)
    found: dict[str, str] = {}
    inside: set[int] = set()
    for fn in c.methods:
        nodes = c.method_nodes[id(fn)]
        inside.update(map(id, nodes))
        evidence = _evidence(nodes, bad)
        if evidence:
            found[fn.name] = evidence
    if not found or _evidence([n for n in c.nodes if id(n) not in inside], bad):
        return None
    return found


def without_methods(c: Candidate, names: set[str]) -> Candidate:
    """The candidate re-read from its file with those methods' lines (decorators included) removed."""
    cut: set[int] = set()
    for fn in c.methods:
        if fn.name in names:
            first, last = span(fn)
            cut.update(range(first - 1, last))
    text = "".join(line for i, line in enumerate(c.lines) if i not in cut)
    module = parsing.parse(text, filename=c.path)
    pruned = next(k for k in list_candidates(c.ref, c.path, text, module) if k.position == c.position)
    pruned.excluded = {}
    pruned.file_end_line = c.node.end_lineno
    return pruned


def cut_interactive(c: Candidate, filters: Sequence[Filter[Candidate]], verdict: Verdict) -> tuple[Candidate, Verdict]:
    """(the class to keep, KEEP) without its interactive methods, or (c, a drop naming the method)."""
    methods = interactive_methods(c)
    if methods is None:
        return c, verdict
    named = "; ".join(f"method {m} {e}" for m, e in methods.items())
    if "__init__" in methods:
        return c, Verdict.drop(verdict.reason, named)
    try:
        pruned = without_methods(c, set(methods))
    except SyntaxError as exc:
        return c, Verdict.drop(verdict.reason, f"{named}; the rest does not parse without it: {exc.msg}")
    caller = next((n for n in pruned.nodes if isinstance(n, ast.Attribute) and n.attr in methods), None)
    if caller is not None:
        return c, Verdict.drop(verdict.reason, f"{named}; line {caller.lineno} of the rest calls it")
    for flt in filters:
        rest = flt.check(pruned)
        if not rest.keep:
            return c, Verdict.drop(verdict.reason, f"{named}; without it: {rest.reason} {rest.detail}".rstrip())
    pruned.excluded = methods
    return pruned, KEEP
