"""Known data defects, fixed in the open: every change made to a task is returned as a `QuirkFix`.

Fixes are generic (they look for a kind of defect, not for a task id) and each is verified: a
source repair is kept only if the result parses, so a repair can never turn a readable file into
an unreadable one. What the loader notices but deliberately leaves as published is a notice,
reported the same way.

Defects found in ClassEval 1.0 (`ClassEval_data.json`):
- ClassEval_5: the whole skeleton is wrapped in a ''' string, so it defines no class.
- ClassEval_22: the docstring of `register_class` is never closed.
- ClassEval_43, ClassEval_46: docstrings delimited with typographic quotes (“”“ / ”“”).
- ClassEval_97: test class ' Words2NumbersTestMain' listed with a leading space.
"""

from __future__ import annotations

import ast
import re

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.core.ast_helpers import find_class
from classforge_bench.pipeline.core.source import decorator_line_match, def_line_match, parse

_CURLY_TRIPLE = re.compile(r"[“”]{3}")
_WRAPPED = re.compile(r"^\s*(?P<q>'''|\"\"\")(?P<inner>.*)(?P=q)\s*$", re.DOTALL)


class QuirkFix(BaseModel):
    """One change the loader made to a task (or, in `notices`, a defect it chose to leave)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    kind: str  # stable code, e.g. "test_class_whitespace"
    field: str  # which field of the task it concerns
    detail: str


def parses(text: str) -> bool:
    try:
        parse(text)
    except SyntaxError:
        return False
    return True


def replace_curly_triple_quotes(text: str) -> str:
    """Typographic triple quotes used as docstring delimiters -> `\"\"\"`. Never valid Python anyway."""
    return _CURLY_TRIPLE.sub('"""', text)


def close_unterminated_docstrings(text: str) -> tuple[str, list[int]]:
    """Close a `\"\"\"` docstring left open inside one method: the closing quotes go after the
    method's last non-blank line, at the indentation of the opening quotes.

    Works method by method (a chunk runs from a def, with its decorators, to the next def), so an
    odd number of triple quotes in a chunk pinpoints the method even when Python reports the
    error many lines later. Returns the new text and the 1-based lines after which quotes were added.
    """
    lines = text.split("\n")
    starts = [0]
    for i, line in enumerate(lines):
        if def_line_match(line):
            j = i
            while j > 0 and decorator_line_match(lines[j - 1]):
                j -= 1
            if j > starts[-1]:
                starts.append(j)
    bounds = list(zip(starts, starts[1:] + [len(lines)]))
    inserts: list[tuple[int, str]] = []
    for lo, hi in bounds:
        chunk = lines[lo:hi]
        if sum(line.count('"""') for line in chunk) % 2 == 0:
            continue
        opener = next(line for line in chunk if '"""' in line)
        indent = opener[: len(opener) - len(opener.lstrip())]
        last = max(i for i in range(lo, hi) if lines[i].strip())
        inserts.append((last + 1, indent + '"""'))
    for at, closing in reversed(inserts):
        lines.insert(at, closing)
    return "\n".join(lines), [at for at, _ in inserts]


def repair_source(text: str, task_id: str, field: str, *, force: bool = False) -> tuple[str, list[QuirkFix]]:
    """Apply the source repairs that `text` needs.

    Whole modules (`force=False`) are only touched when they do not parse, and a repair is kept only
    if the module parses afterwards. Fragments that never parse on their own (ClassEval's
    `method_description`) use `force=True`: the repairs apply when they change something.
    """
    if not force and parses(text):
        return text, []
    fixes: list[QuirkFix] = []
    fixed = replace_curly_triple_quotes(text)
    if fixed != text:
        fixes.append(
            QuirkFix(
                task_id=task_id,
                kind="curly_docstring_quotes",
                field=field,
                detail='typographic triple quotes replaced with """',
            )
        )
    closed, where = close_unterminated_docstrings(fixed)
    if where:
        fixes.append(
            QuirkFix(
                task_id=task_id,
                kind="unterminated_docstring",
                field=field,
                detail=f'closing """ added after line(s) {", ".join(map(str, where))}',
            )
        )
    if not force and not parses(closed):
        return text, []  # nothing we know how to fix; the caller reports the syntax error
    return closed, fixes


def unwrap_string_skeleton(text: str, class_name: str, task_id: str) -> tuple[str, list[QuirkFix]]:
    """A skeleton that is one big string literal defines nothing: use the code inside the quotes."""
    match = _WRAPPED.match(text)
    if not match:
        return text, []
    inner = match.group("inner")
    try:
        module = parse(inner)
    except SyntaxError:
        return text, []
    if find_class(module, class_name, top_level_only=True) is None:
        return text, []
    return inner.strip("\n") + "\n", [
        QuirkFix(
            task_id=task_id,
            kind="skeleton_wrapped_in_string",
            field="skeleton",
            detail=f"skeleton was a {match.group('q')} string literal; its contents are used",
        )
    ]


def defined_test_classes(test_module: ast.Module) -> dict[str, int]:
    """Top-level unittest classes of a test module -> number of test methods (inherited ones included)."""
    classes = {n.name: n for n in test_module.body if isinstance(n, ast.ClassDef)}

    def own_tests(cls: ast.ClassDef) -> set[str]:
        return {
            n.name
            for n in cls.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
        }

    def all_tests(cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> set[str]:
        tests = own_tests(cls)
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                tests |= all_tests(classes[base.id], seen | {cls.name})
        return tests

    def is_test_case(cls: ast.ClassDef) -> bool:
        for base in cls.bases:
            name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if name.endswith("TestCase") or name in classes:
                return True
        return bool(own_tests(cls))

    return {name: len(all_tests(cls)) for name, cls in classes.items() if is_test_case(cls)}


def fix_test_classes(
    task_id: str, listed: list[str], defined: dict[str, int]
) -> tuple[list[str], list[QuirkFix], list[QuirkFix]]:
    """Clean the list of test classes to run against what the test code defines.

    Returns (test classes, fixes, notices). A name with stray whitespace is trimmed when the trimmed
    name exists; a listed class the test code does not define is dropped (running it could only
    ever error); duplicates are dropped. Classes defined but not listed, and listed classes with no
    test methods, are left as published and reported as notices.
    """
    fixes: list[QuirkFix] = []
    result: list[str] = []
    for name in listed:
        clean = name
        if name not in defined and name.strip() in defined:
            clean = name.strip()
            fixes.append(
                QuirkFix(
                    task_id=task_id, kind="test_class_whitespace", field="test_classes", detail=f"{name!r} -> {clean!r}"
                )
            )
        if clean not in defined:
            fixes.append(
                QuirkFix(
                    task_id=task_id,
                    kind="test_class_missing",
                    field="test_classes",
                    detail=f"{name!r} is listed but the test code does not define it; dropped",
                )
            )
            continue
        if clean in result:
            fixes.append(
                QuirkFix(
                    task_id=task_id,
                    kind="test_class_duplicate",
                    field="test_classes",
                    detail=f"{clean!r} listed twice; kept once",
                )
            )
            continue
        result.append(clean)
    return result, fixes, _test_class_notices(task_id, result, defined)


def _test_class_notices(task_id: str, kept: list[str], defined: dict[str, int]) -> list[QuirkFix]:
    """What is left as published but reported: kept classes without test methods, and classes
    with tests that are not listed."""
    notices: list[QuirkFix] = []
    for name in kept:
        if defined[name] == 0:
            notices.append(
                QuirkFix(
                    task_id=task_id,
                    kind="test_class_without_tests",
                    field="test_classes",
                    detail=f"{name!r} defines no test methods; it can never pass",
                )
            )
    for name in defined:
        if name not in kept and defined[name] > 0:
            notices.append(
                QuirkFix(
                    task_id=task_id,
                    kind="test_class_not_listed",
                    field="test_classes",
                    detail=f"{name!r} is defined in the test code but not listed; not run",
                )
            )
    return notices
