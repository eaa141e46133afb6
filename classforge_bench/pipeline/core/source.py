"""Source-text helpers shared by the loaders, the extractor and the assembler.

Everything works on line spans taken from `ast` (`classforge_bench.pipeline.core.ast_helpers.span`) so the original
text (comments, blank lines, string contents) is sliced, never regenerated: `ast.unparse` would drop
comments and reformat.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import FunctionNode, docstring_node

_DEF_LINE = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*\(")
_DECORATOR_LINE = re.compile(r"^(?P<indent>[ \t]*)@")


def lone_surrogate(text: str) -> str:
    """A description of the first lone surrogate in `text` (from an unpaired `\\ud800` escape or
    an escaped undecodable byte), or "" when the text is valid Unicode to encode as UTF-8."""
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udfff":
            line = text.count("\n", 0, i) + 1
            return f"lone surrogate U+{ord(ch):04X} at line {line} of the text"
    return ""


def parse(text: str) -> ast.Module:
    """`ast.parse` of other people's code: thread-safe, without their SyntaxWarning noise. Text
    that cannot be source at all (a lone surrogate) is a SyntaxError like any other bad code."""
    try:
        return parsing.parse(text)
    except UnicodeEncodeError as e:
        raise SyntaxError(f"not valid source text: {lone_surrogate(text) or e.reason}") from e


def slice_lines(text: str, first: int, last: int) -> str:
    """Lines first..last (1-based, inclusive) of `text`, joined with newlines."""
    return "\n".join(text.splitlines()[first - 1 : last])


def is_placeholder_body(fn: FunctionNode) -> bool:
    """True when a method has no implementation: only a docstring, `pass`, `...` (or another bare
    constant), `raise NotImplementedError` or `return NotImplemented`. The one definition of an
    elided body: the harvest's stub filter, the skeleton check and the skeleton derivation share it."""
    body = list(fn.body)
    if docstring_node(body) is not None:
        body = body[1:]
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                continue
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name) and stmt.value.id == "NotImplemented":
            continue
        return False
    return True


def string_continuation_lines(code: str) -> set[int]:
    """0-based indices of lines that lie inside a multi-line string (after its first line).

    Re-indenting must leave these alone, or the string's value would change. If the text cannot
    be tokenized (truncated model output), no line is protected: better an extra indent inside a
    docstring than refusing to produce code.
    """
    protected: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.STRING or getattr(tokenize, "FSTRING_MIDDLE", None) == tok.type:
                (srow, _), (erow, _) = tok.start, tok.end
                protected.update(range(srow, erow))  # rows are 1-based; row r+1 -> index r
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set()
    return protected


def _indent_width(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR to LF. Model output arrives with all three; every line-based rule here
    (fences, markers, indentation) assumes LF, and a fence written as "```\\r" would not close."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def dedent_code(code: str) -> str:
    """`textwrap.dedent` by tokens: the common indentation of code lines is removed, lines inside
    multi-line strings are left alone (their leading spaces are part of the string's value)."""
    lines = code.split("\n")
    protected = string_continuation_lines(code)
    margins = [ln[: _indent_width(ln)] for i, ln in enumerate(lines) if ln.strip() and i not in protected]
    if not margins:
        return code
    common = margins[0]
    for margin in margins[1:]:
        while not margin.startswith(common):
            common = common[:-1]
    if not common:
        return code
    return "\n".join(ln if i in protected or not ln.strip() else ln[len(common) :] for i, ln in enumerate(lines))


def reindent_def(code: str, indent: str = "    ") -> str:
    """Move one function definition (decorators included) to `indent`, keeping its inner layout.

    Handles ClassEval's stored form, where the first line lost its indentation but the body kept
    the class-level one (`def f(self):\\n        body`). Lines inside multi-line strings are not
    touched. Blank lines are kept as they are.
    """
    lines = code.strip("\n").splitlines()
    if not lines:
        return ""
    protected = string_continuation_lines("\n".join(lines) + "\n")
    header_end = next((i for i, ln in enumerate(lines) if _DEF_LINE.match(ln)), 0)
    def_indent = _indent_width(lines[header_end])
    body_widths = [
        _indent_width(ln) for i, ln in enumerate(lines) if i > header_end and ln.strip() and i not in protected
    ]
    base = def_indent
    if def_indent == 0 and body_widths and min(body_widths) >= 8:
        # ClassEval form: the def line was stripped, the body sits at class-body depth + 4.
        base = min(body_widths) - 4
    out: list[str] = []
    for i, ln in enumerate(lines):
        if i in protected:
            out.append(ln)  # part of a string's value
            continue
        if not ln.strip():
            out.append("")
            continue
        if i <= header_end:
            out.append(indent + ln.lstrip(" \t"))
            continue
        width = _indent_width(ln)
        cut = min(width, base)
        out.append(indent + ln[cut:])
    return "\n".join(out)


def def_line_match(line: str) -> re.Match[str] | None:
    return _DEF_LINE.match(line)


def decorator_line_match(line: str) -> re.Match[str] | None:
    return _DECORATOR_LINE.match(line)
