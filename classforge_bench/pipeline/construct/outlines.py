"""Test-case outlines for the test writer, derived from the skeleton alone.

For every method: the normal case (its docstring examples), boundary cases (per parameter, from its
annotation and default), error behaviour (only the exceptions the docstring documents, so tests do
not assert what the skeleton does not promise), and state after sequences of calls (other methods
its docstring mentions). The outline is deterministic, so it does not disturb the cache key.
"""

from __future__ import annotations

import ast
import re

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class

_RAISES = re.compile(r":raises?\s+([A-Za-z_][\w.]*)|\braises?\s+(?:an?\s+)?``?([A-Z][A-Za-z]*(?:Error|Exception))``?")


def _boundary_hint(arg: ast.arg, default: ast.expr | None) -> str:
    ann = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    hints: list[str] = []
    low = ann.lower()
    if any(t in low for t in ("int", "float", "decimal")):
        hints.append("0, a negative value, a large value")
    if "str" in low:
        hints.append("an empty string, different letter case, surrounding spaces")
    if any(t in low for t in ("list", "dict", "set", "tuple", "sequence", "mapping", "iterable")):
        hints.append("an empty collection, a single element")
    if "none" in low or "optional" in low:
        hints.append("None")
    if default is not None:
        hints.append(f"omitted (default {ast.unparse(default)}) and given explicitly")
    if not hints:
        hints.append("the smallest and largest sensible values")
    return f"`{arg.arg}`{': ' + ann if ann else ''} -> " + "; ".join(hints)


def _examples(doc: str) -> list[str]:
    """Doctest lines with their expected output: `expr` or `expr -> output`."""
    out: list[str] = []
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith(">>>"):
            out.append(s[3:].strip())
        elif s and out and not s.startswith(":") and "->" not in out[-1]:
            out[-1] += f" -> {s}"
        elif not s or s.startswith(":"):
            out.append("")  # an example ends at a blank line or a field
    return [e for e in out if e]


def _method_outline(fn: ast.FunctionDef | ast.AsyncFunctionDef, other_methods: list[str]) -> str:
    doc = ast.get_docstring(fn) or ""
    examples = _examples(doc)
    args = fn.args.posonlyargs + fn.args.args
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    params = args if is_static else args[1:]
    defaults: list[ast.expr | None] = [None] * (len(params) - len(fn.args.defaults)) + list(fn.args.defaults)
    raises = sorted({a or b for a, b in _RAISES.findall(doc)})
    mentioned = [m for m in other_methods if m != fn.name and re.search(rf"\b{re.escape(m)}\b", doc)]

    lines = [f"### {fn.name}"]
    lines.append(
        "- normal: "
        + (
            "reproduce the docstring examples: " + "; ".join(f"`{e}`" for e in examples)
            if examples
            else "typical inputs as the docstring describes"
        )
    )
    if params:
        lines.append("- boundary: " + "; ".join(_boundary_hint(p, d) for p, d in zip(params, defaults, strict=True)))
    else:
        lines.append("- boundary: call it on a freshly constructed instance and after the state is emptied")
    if raises:
        lines.append("- error: the documented exceptions " + ", ".join(raises) + " (assertRaises), nothing else")
    else:
        lines.append("- error: no exception is documented; do not assert one")
    state = "check the fields and later results after calling it"
    if mentioned:
        state += "; combine it with " + ", ".join(f"{m}()" for m in mentioned)
    lines.append(f"- state: {state}")
    return "\n".join(lines)


def case_outlines(skeleton: str, class_name: str) -> str:
    """Markdown outline of the test cases to write; empty if the skeleton does not parse."""
    try:
        module = parsing.parse(skeleton)
    except SyntaxError:
        return ""
    cls = find_class(module, class_name, top_level_only=True)
    if cls is None:
        return ""
    methods = [n for n in class_methods(cls) if n.name != "__init__"]
    names = [m.name for m in methods]
    parts = [_method_outline(fn, names) for fn in methods]
    parts.append(
        "### class level\n"
        "- sequences: construct the object, change its state with several methods, then check every "
        "query method and field agrees (at least one test class, e.g. "
        f"`{class_name}TestMain`)\n"
        "- round trips: operations that undo each other leave the state as before"
    )
    return "\n\n".join(parts)
