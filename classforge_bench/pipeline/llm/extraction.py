"""Code out of raw model output, keeping every code line.

What ClassEval's and ClassEval-Pro's extraction got wrong: an unclosed fence gave an empty string, and blank
lines were deleted. Here:

- Line endings are normalised first (CRLF and lone CR to LF): every rule below is line-based.
- A prompt echo is cut: when the output holds a response marker on a line of its own
  (`### Response:`, `### Answer:`, `### Assistant:`, `[/INST]`), only the text after the last
  one counts, the rest of the marker's own line included.
- Reasoning (`<think>`, `<thinking>`, `<reasoning>` blocks, a dangling closing tag whose opener
  was consumed upstream, or an opener truncated before its close) is removed first; the tag must
  open a line, so a tag inside a string literal on a code line is left alone.
- Fenced blocks (``` or ~~~, with or without a language tag) are found line by line; an unclosed
  fence runs to the end of the output. Block contents are kept verbatim (blank lines included);
  only a fence's own indentation is removed from its lines, as Markdown does.
- With several blocks: the longest block that defines the target method (`def <method>`);
  failing that, the longest defining the target class; then the longest Python (or untagged)
  block; then the longest block. Ties go to the later block, usually the corrected answer.
- Without fences: from the first line that starts Python code (`class`, `def`, `@`, `import`,
  `from ... import`) to the end, minus trailing prose only when the code parses without it. Only
  prose after the last such line can be dropped: a class with a syntax error is kept (and is a
  compile error), never trimmed back to the imports before it.
"""

from __future__ import annotations

import ast
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of, span
from classforge_bench.pipeline.core.source import (
    decorator_line_match,
    dedent_code,
    def_line_match,
    normalize_newlines,
    parse,
    reindent_def,
    slice_lines,
    string_continuation_lines,
)

ExtractionHow = Literal["fenced", "unclosed_fence", "unfenced", "empty"]
MethodHow = Literal["ast", "ast_dedented", "lines", "not_found"]

_REASONING_TAGS = ("think", "thinking", "reasoning")
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*?)[ \t]*$")
_PYTHON_TAGS = {"", "python", "py", "python3", "py3", "ipython"}
_RESPONSE_MARKER = re.compile(
    r"(?im)^[ \t]*(?:#{2,}[ \t]*(?:response|answer|assistant)\b[ \t]*(?::|$)|\[/INST\])[ \t]*"
)
_CODE_START = re.compile(
    r"^(?:[ \t]*(?:class\s+\w|(?:async\s+)?def\s+\w|@\w)|(?:import\s+\w|from\s+[\w.]+\s+import\s))"
)


class CodeBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    language: str
    code: str
    closed: bool
    start_line: int  # 1-based line of the opening fence in the reasoning-free text


class Extraction(BaseModel):
    """Raw output, the code taken from it, and how."""

    model_config = ConfigDict(extra="forbid")

    raw: str
    code: str
    how: ExtractionHow
    reasoning_removed: bool = False
    blocks_found: int = 0
    chosen_block: int | None = None
    reason: str = ""

    @property
    def found(self) -> bool:
        return bool(self.code.strip())

    @property
    def source_file(self) -> str:
        """The code as a file stores it: ending with exactly one newline ('' when nothing was found)."""
        code = self.code.strip("\n")
        return code + "\n" if code.strip() else ""


class MethodExtraction(BaseModel):
    """One method out of raw output, placed at class-body indentation."""

    model_config = ConfigDict(extra="forbid")

    method_name: str
    code: str  # "" when not found
    how: MethodHow
    extraction: Extraction
    other_defs: list[str] = Field(
        default_factory=list
    )  # other functions the output defined (not used; recorded for analysis)

    @property
    def found(self) -> bool:
        return self.how != "not_found"


# -- reasoning -----------------------------------------------------------------------------------


def strip_reasoning(text: str) -> tuple[str, bool]:
    """Remove reasoning blocks; returns (text, whether anything was removed)."""
    original = text
    names = "|".join(_REASONING_TAGS)
    # closed blocks whose opening tag starts a line
    text = re.sub(rf"(?ims)^[ \t]*<(?P<t>{names})>.*?</(?P=t)>[ \t]*\n?", "", text)
    # a closing tag with no opener: everything before it was reasoning
    closing = list(re.finditer(rf"(?i)</(?:{names})>[ \t]*\n?", text))
    if closing:
        text = text[closing[-1].end() :]
    # an opener that never closes: the output was cut inside the reasoning
    opener = re.search(rf"(?im)^[ \t]*<(?:{names})>", text)
    if opener:
        text = text[: opener.start()]
    return text, text != original


def after_response_marker(text: str) -> tuple[str, bool]:
    """The answer after the last response marker (an echoed prompt before it is dropped)."""
    markers = list(_RESPONSE_MARKER.finditer(text))
    if not markers:
        return text, False
    return text[markers[-1].end() :], True


# -- fences ----------------------------------------------------------------------------------------


def fenced_blocks(text: str) -> list[CodeBlock]:
    """Every fenced block, in order; an unclosed one runs to the end of `text`."""
    lines = text.split("\n")
    blocks: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        language = (m.group("info").split() or [""])[0].lower()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        closed = False
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if close.match(line):
                closed = True
                break
            if (
                fence[0] == "`"
                and line.rstrip().endswith(fence)
                and line.strip() != fence
                and not line.strip().startswith("`")
            ):
                # "    return x```": the fence closes on a code line; keep the code part
                body.append(line.rstrip()[: -len(fence)])
                closed = True
                break
            body.append(line)
            j += 1
        body = [_strip_indent(line, indent) for line in body]
        blocks.append(
            CodeBlock(index=len(blocks), language=language, code="\n".join(body), closed=closed, start_line=i + 1)
        )
        i = j + 1
    return blocks


def _strip_indent(line: str, width: int) -> str:
    if width == 0:
        return line
    lead = len(line) - len(line.lstrip(" "))
    return line[min(lead, width) :]


def _defines_method(code: str, name: str) -> bool:
    return bool(re.search(rf"(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", code))


def _defines_class(code: str, name: str) -> bool:
    return bool(re.search(rf"(?m)^[ \t]*class[ \t]+{re.escape(name)}\b", code))


def _weight(block: CodeBlock) -> tuple[int, int]:
    return sum(1 for line in block.code.split("\n") if line.strip()), block.index


def choose_block(blocks: list[CodeBlock], class_name: str | None, method_name: str | None) -> tuple[CodeBlock, str]:
    """Tiers, first non-empty wins, longest within a tier (ties: the later block): blocks defining
    the target method, blocks defining the target class, Python or untagged blocks, any block."""
    tiers = [
        (
            [b for b in blocks if method_name and _defines_method(b.code, method_name)],
            "longest block defining the method",
        ),
        ([b for b in blocks if class_name and _defines_class(b.code, class_name)], "longest block defining the class"),
        ([b for b in blocks if b.language in _PYTHON_TAGS], "longest Python block (none defines the target)"),
        (blocks, "longest block (none is tagged Python)"),
    ]
    candidates, reason = next((tier, why) for tier, why in tiers if tier)
    return max(candidates, key=_weight), reason


# -- unfenced ---------------------------------------------------------------------------------------


def _parses(code: str) -> bool:
    try:
        parse(code)
    except SyntaxError:
        return False
    return True


def _is_code_module(text: str) -> bool:
    """Parses and defines or imports something: a lone word like "Sorry" parses too, but is not code."""
    try:
        module = parse(text)
    except SyntaxError:
        return False
    return any(
        isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom))
        for n in module.body
    )


def _unfenced(text: str) -> tuple[str, str]:
    lines = text.split("\n")
    if _is_code_module(text):
        return text.strip("\n"), "whole output parses as Python"
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)]
    if not starts:
        return "", "no code found"
    start, last_start = starts[0], starts[-1]
    # try to end before trailing prose: candidate ends are lines at column 0 after the last line
    # that starts code, so a class that does not parse is never cut away to make the rest parse
    ends = [len(lines)] + [
        k for k in range(len(lines) - 1, last_start, -1) if lines[k].strip() and not lines[k][0].isspace()
    ]
    for end in ends:
        chunk = "\n".join(lines[start:end]).strip("\n")
        if _parses(chunk) or _parses(dedent_code(chunk)):
            dropped = len(lines) - end
            return chunk, f"code from line {start + 1}" + (
                f"; {dropped} trailing line(s) of prose left out" if dropped else ""
            )
    return "\n".join(lines[start:]).strip("\n"), f"code from line {start + 1} to the end (does not parse)"


# -- public ---------------------------------------------------------------------------------------


def extract_code(raw: str, *, class_name: str | None = None, method_name: str | None = None) -> Extraction:
    """The code in `raw`, preferring what defines `class_name` / `method_name` (see module doc)."""
    text, echoed = after_response_marker(normalize_newlines(raw or ""))
    text, removed = strip_reasoning(text)
    blocks = fenced_blocks(text)
    if blocks:
        block, reason = choose_block(blocks, class_name, method_name)
        code = block.code.strip("\n")
        how: ExtractionHow = "fenced" if block.closed else "unclosed_fence"
        if not code.strip():
            how = "empty"
        return Extraction(
            raw=raw,
            code=code,
            how=how,
            reasoning_removed=removed,
            blocks_found=len(blocks),
            chosen_block=block.index,
            reason=_echo_note(reason, echoed),
        )
    code, reason = _unfenced(text)
    reason = _echo_note(reason, echoed)
    return Extraction(
        raw=raw, code=code, how="unfenced" if code.strip() else "empty", reasoning_removed=removed, reason=reason
    )


def _echo_note(reason: str, echoed: bool) -> str:
    return f"{reason}; answer taken after the response marker" if echoed else reason


def _find_def(
    module: ast.Module, method_name: str, class_name: str | None
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def: in the target class first, then in any class, then at module level."""
    classes = [c for c in ([find_class(module, class_name)] if class_name else []) if c is not None]
    classes += [n for n in ast.walk(module) if isinstance(n, ast.ClassDef)]
    for cls in classes:
        fn = methods_of(cls).get(method_name)
        if fn is not None:
            return fn
    return next(
        (n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method_name),
        None,
    )


def _all_defs(module: ast.Module) -> list[str]:
    return [n.name for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _by_lines(code: str, method_name: str) -> str | None:
    """Line-based fallback for output that does not parse (often truncated): the def, the
    decorators right above it, and every following line indented deeper (or blank)."""
    lines = code.split("\n")
    in_string = string_continuation_lines(code)
    for i, line in enumerate(lines):
        m = def_line_match(line)
        if not m or m.group("name") != method_name:
            continue
        width = len(m.group("indent"))
        start = i
        while (
            start > 0
            and decorator_line_match(lines[start - 1])
            and len(lines[start - 1]) - len(lines[start - 1].lstrip()) == width
        ):
            start -= 1
        end = i + 1
        while end < len(lines) and (
            end in in_string or not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > width
        ):
            end += 1
        return "\n".join(lines[start:end]).rstrip("\n")
    return None


def extract_method(
    raw: str, method_name: str, *, class_name: str | None = None, indent: str = "    "
) -> MethodExtraction:
    """One method from output holding the whole class, the method alone, or the method plus extras.

    The result is re-indented to `indent` (class-body level) without touching string contents.
    """
    ex = extract_code(raw, class_name=class_name, method_name=method_name)
    code = ex.code
    attempts: list[tuple[str, MethodHow]] = [(code, "ast"), (dedent_code(code), "ast_dedented")]
    others: list[str] = []
    for text, how in attempts:
        try:
            module = parse(text)
        except SyntaxError:
            continue
        others = [n for n in _all_defs(module) if n != method_name]
        fn = _find_def(module, method_name, class_name)
        if fn is not None:
            segment = slice_lines(text, *span(fn))
            return MethodExtraction(
                method_name=method_name, code=reindent_def(segment, indent), how=how, extraction=ex, other_defs=others
            )
        break  # it parses and the method is not there: lines will not find it either
    by_lines = _by_lines(code, method_name)
    if by_lines is not None:
        return MethodExtraction(
            method_name=method_name, code=reindent_def(by_lines, indent), how="lines", extraction=ex, other_defs=others
        )
    return MethodExtraction(method_name=method_name, code="", how="not_found", extraction=ex, other_defs=others)
