"""The five generation strategies as plans of prompt steps, and assembly of the results.

The evaluator drives a strategy like this (the LLM call is the caller's, not ours):

    generated: dict[str, str] = {}
    for step in plan(task, strategy):
        prompt = render_step(task, step, generated)        # chat messages + prompt version
        raw = <one LLM call with prompt.messages, recording prompt.prompt_version>
        out = read_step_output(task, step, raw)             # extraction, raw kept
        generated.update(out.methods)
    program = assemble(task, generated)   # or, for holistic: assemble_holistic(task, out.class_code)

Strategies (ClassEval, Du et al. 2023, section 4.2; ClassEval-Pro adds the last two):
- holistic: one step; the whole skeleton in, the whole class out.
- incremental: one method per step in declaration order; the prompt holds the class-level
  information, the methods generated so far (their code), and the target method's contract.
- compositional: one method per step; the prompt holds the class-level information, the *other*
  methods' signatures only (no docstrings, no bodies) and the target's contract; assembled after.
- bottom_up / top_down: methods ordered by dependency level (level 0 calls no other method of
  the class; a caller sits one level above its highest callee), lowest level first or highest
  first, declaration order within a level. The prompt holds the methods generated so far, the
  contracts of the ones still to come and the target's own dependencies. Levels come from the
  dataset's `method_dependencies` labels by default (`levels_from_labels`), from the reference
  solution's call graph (`levels_from_solution`), or from anywhere else (e.g. a model, as
  ClassEval-Pro does) via `plan(..., levels=...)`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core.ast_helpers import docstring_node, find_class, methods_of, span
from classforge_bench.pipeline.core.class_analysis import MethodDeps, analyse_class, dependency_levels, import_aliases
from classforge_bench.pipeline.core.source import parse, reindent_def, slice_lines
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.llm.extraction import Extraction, MethodExtraction, extract_code, extract_method
from classforge_bench.pipeline.llm.prompts import load_prompt

Strategy = Literal["holistic", "incremental", "compositional", "bottom_up", "top_down"]
STRATEGIES: tuple[Strategy, ...] = ("holistic", "incremental", "compositional", "bottom_up", "top_down")
PROMPT_VERSION = 1


class GenerationStep(BaseModel):
    """One model call: which method(s) it produces and which prompt renders it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    strategy: Strategy
    kind: Literal["class", "method"]
    targets: list[str] = Field(description="methods this step produces; for a class step, every method")
    level: int | None = Field(default=None, description="dependency level of the target (bottom_up/top_down)")
    previous: list[str] = Field(default_factory=list, description="methods produced by the earlier steps, in order")
    prompt_name: str
    prompt_version: int = PROMPT_VERSION

    @property
    def target(self) -> str:
        if self.kind != "method":
            raise ValueError("a class step has no single target method")
        return self.targets[0]


class RenderedPrompt(BaseModel):
    """A step's chat messages and the exact template they came from (record both with the sample)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_version: str = Field(description='e.g. "eval_holistic@v1"; pass it to the LLM client')
    sha256: str = Field(description="of the template file")
    messages: list[dict[str, str]]

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    @property
    def user(self) -> str:
        return next(m["content"] for m in self.messages if m["role"] == "user")


class StepOutput(BaseModel):
    """What one step's raw output yielded; the raw text is kept in the extraction."""

    model_config = ConfigDict(extra="forbid")

    step_index: int
    methods: dict[str, str] = Field(default_factory=dict, description="method -> code at class-body indentation")
    class_code: str | None = Field(default=None, description="holistic only: the extracted module code")
    extraction: Extraction | MethodExtraction


# -- dependency levels ---------------------------------------------------------------------------


def levels_from_labels(task: Task) -> dict[str, int]:
    """Levels from the dataset's `method_dependencies` labels, computed by the project's one
    `dependency_levels` (calls to names that are not target methods are ignored)."""
    names = set(task.method_names)
    deps = {
        m.method_name: MethodDeps(
            m.method_name,
            method_calls=[c for c in m.dependencies.method_dependencies if c in names and c != m.method_name],
        )
        for m in task.methods_info
    }
    return dependency_levels(deps)


def levels_from_solution(task: Task) -> dict[str, int]:
    """Levels from the reference solution's own call graph (`analyse_class`)."""
    module = parse(task.solution_code)
    cls = find_class(module, task.class_name)
    if cls is None:
        raise ValueError(f"task {task.task_id}: solution defines no class {task.class_name}")
    analysed = analyse_class(cls, import_aliases(module))
    names = set(task.method_names)
    deps = {
        n: MethodDeps(n, method_calls=[c for c in analysed[n].method_calls if c in names])
        if n in analysed
        else MethodDeps(n)
        for n in task.method_names
    }
    return dependency_levels(deps)


# -- planning --------------------------------------------------------------------------------------


def plan(task: Task, strategy: Strategy, levels: Mapping[str, int] | None = None) -> list[GenerationStep]:
    """The ordered steps of `strategy` on `task` (see the module docstring)."""
    name = f"eval_{strategy}"
    if strategy == "holistic":
        return [GenerationStep(index=0, strategy=strategy, kind="class", targets=task.method_names, prompt_name=name)]
    order = task.method_names
    level_of: Mapping[str, int] = {}
    if strategy in ("bottom_up", "top_down"):
        level_of = levels if levels is not None else levels_from_labels(task)
        missing = [m for m in order if m not in level_of]
        if missing:
            raise ValueError(f"task {task.task_id}: no dependency level for {', '.join(missing)}")
        position = {m: i for i, m in enumerate(order)}
        sign = 1 if strategy == "bottom_up" else -1
        order = sorted(order, key=lambda m: (sign * level_of[m], position[m]))
    elif strategy not in ("incremental", "compositional"):
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    return [
        GenerationStep(
            index=i,
            strategy=strategy,
            kind="method",
            targets=[m],
            level=level_of.get(m),
            previous=order[:i],
            prompt_name=name,
        )
        for i, m in enumerate(order)
    ]


# -- prompt pieces -----------------------------------------------------------------------------------


class _Skeleton:
    """The skeleton cut into the pieces prompts are made of; slices of its text, never regenerated."""

    def __init__(self, task: Task):
        self.task = task
        self.text = task.skeleton
        self.module = parse(self.text)
        cls = find_class(self.module, task.class_name)
        if cls is None:
            raise ValueError(f"task {task.task_id}: skeleton defines no class {task.class_name}")
        self.cls = cls
        self.methods = methods_of(cls)
        first = cls.body[0]
        self.indent = " " * first.col_offset
        # ClassEval's `import_statement` sometimes lists imports its skeleton lacks (ClassEval_39,
        # 45, 61, 92); its evaluator prepends them to every program, and so do we.
        present = {line.strip() for line in self.text.split("\n")}
        self.missing_imports = [imp for imp in task.import_statement if imp.strip() not in present]

    def contract(self, name: str) -> str:
        """Decorators, signature, docstring (and placeholder body) of a method, as in the skeleton."""
        return slice_lines(self.text, *span(self.methods[name]))

    def signature(self, name: str) -> str:
        """Decorators and `def` line(s) only, with `...` as body so the listing reads as Python."""
        fn = self.methods[name]
        start, _ = span(fn)
        header_end = max(fn.lineno, fn.body[0].lineno - 1)
        header = slice_lines(self.text, start, header_end)
        if fn.body[0].lineno == fn.lineno:  # one-liner: cut at the body
            header = header.split(":", 1)[0] + ":"
        return header + "\n" + self.indent * 2 + "..."

    def class_info(self) -> str:
        """Module-level code (imports, ...), the class header and docstring, class attributes and any
        method that already has a body (the constructor, in ClassEval). No target method appears."""
        targets = set(self.task.method_names)
        start, end = span(self.cls)
        # module code around the class, sliced whole so comments and layout survive
        before = "\n".join(self.missing_imports + [slice_lines(self.text, 1, start - 1)]).strip("\n")
        after = slice_lines(self.text, end + 1, len(self.text.split("\n"))).strip("\n")
        header = slice_lines(self.text, start, max(self.cls.lineno, self.cls.body[0].lineno - 1))
        body: list[str] = []
        doc = docstring_node(self.cls.body)
        for stmt in self.cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in targets:
                continue
            body.append(slice_lines(self.text, *span(stmt)))
        if doc is not None and doc.lineno == self.cls.lineno:  # `class X: """doc"""` on one line
            body = body[1:]
        cls_text = header + "\n" + "\n\n".join(body) if body else header + "\n" + self.indent + "pass"
        return "\n\n".join(p for p in (before, cls_text, after) if p)


def _generated_listing(sk: _Skeleton, names: list[str], generated: Mapping[str, str]) -> str:
    """Methods generated so far; one the model failed to produce is shown by its contract, so later
    prompts still know it exists."""
    chunks = [reindent_def(generated[n], sk.indent) if generated.get(n, "").strip() else sk.contract(n) for n in names]
    return "\n\n".join(chunks) if chunks else f"{sk.indent}# (none yet)"


def step_variables(task: Task, step: GenerationStep, generated: Mapping[str, str]) -> dict[str, str]:
    """The `$placeholder` values of `step`'s template, given the methods generated so far."""
    sk = _Skeleton(task)
    base = {"class_name": task.class_name}
    if step.kind == "class":
        return base | {"skeleton": task.skeleton.strip("\n")}
    target = step.target
    order = task.method_names
    done = step.previous  # shown even if the model failed them: later prompts must know they exist
    base |= {"method_name": target, "class_info": sk.class_info(), "target_contract": sk.contract(target)}
    if step.strategy == "incremental":
        return base | {"generated_methods": _generated_listing(sk, done, generated)}
    if step.strategy == "compositional":
        others = [m for m in order if m != target]
        return base | {
            "other_signatures": "\n\n".join(sk.signature(m) for m in others) or f"{sk.indent}# (no other methods)"
        }
    pending = [m for m in order if m != target and m not in done]
    deps = [d for d in task.method(target).dependencies.method_dependencies if d in order and d != target]
    return base | {
        "generated_methods": _generated_listing(sk, done, generated),
        "pending_contracts": "\n\n".join(sk.contract(m) for m in pending) or f"{sk.indent}# (none)",
        "target_dependencies": ", ".join(deps) if deps else "none (it calls no other method of the class)",
        "level": str(step.level),
    }


def render_step(
    task: Task, step: GenerationStep, generated: Mapping[str, str], prompt_dir: Path | None = None
) -> RenderedPrompt:
    """Render `step`'s prompt with the project's prompt loader (`classforge_bench/pipeline/prompts/<name>.v<N>.md`)."""
    template = load_prompt(step.prompt_name, step.prompt_version, prompt_dir)
    return RenderedPrompt(
        prompt_version=template.version,
        sha256=template.sha256,
        messages=template.messages(**step_variables(task, step, generated)),
    )


def read_step_output(task: Task, step: GenerationStep, raw: str) -> StepOutput:
    """Extract the code a step produced from its raw output."""
    if step.kind == "class":
        ex = extract_code(raw, class_name=task.class_name)
        return StepOutput(step_index=step.index, class_code=ex.code, extraction=ex)
    mex = extract_method(raw, step.target, class_name=task.class_name)
    methods = {step.target: mex.code} if mex.found else {}
    return StepOutput(step_index=step.index, methods=methods, extraction=mex)


# -- assembly ----------------------------------------------------------------------------------------

_FIRST_PARAM = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([ \t\n]*(?P<first>\*{0,2}\w+)?")


def _has_decorators(code: str) -> bool:
    first = next((line for line in code.split("\n") if line.strip()), "")
    return first.lstrip().startswith("@")


def _first_param(code: str) -> str | None:
    """Name of a def's first parameter, read from its text (the code may not parse)."""
    m = _FIRST_PARAM.search("\n".join(ln for ln in code.split("\n") if not ln.lstrip().startswith("@")))
    return m.group("first") if m else None


def _skeleton_first_param(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    a = fn.args
    positional = a.posonlyargs + a.args
    if positional:
        return positional[0].arg
    if a.vararg is not None:
        return "*" + a.vararg.arg
    return "**" + a.kwarg.arg if a.kwarg is not None else None


def takes_skeleton_decorators(fn: ast.FunctionDef | ast.AsyncFunctionDef, code: str) -> bool:
    """Whether a generated method without decorators gets the skeleton's: only when its parameter
    list starts as the skeleton's does. A model that wrote `def add(self, a, b)` for a skeleton's
    `@staticmethod def add(a, b)` meant an instance method, and `@staticmethod` on it would make
    every call pass one argument too few."""
    return bool(fn.decorator_list) and not _has_decorators(code) and _first_param(code) == _skeleton_first_param(fn)


def assemble(task: Task, generated: Mapping[str, str]) -> str:
    """Put generated methods into the skeleton; the result is the program to test.

    Imports, module-level code and class-level code of the skeleton are kept as they are, and the
    task's `import_statement` lines the skeleton lacks are put on top (as ClassEval's evaluator does). A method
    the model failed to produce (missing or blank) keeps its skeleton body, so the class still
    imports and the failure shows up in that method's tests. The model's own signature and decorators
    win; a generated method without decorators gets the skeleton's only when its parameters start
    as the skeleton's do (`takes_skeleton_decorators`), so no method ends up uncallable. Methods not in
    the skeleton (helpers the model wrote) are appended to the class.
    """
    sk = _Skeleton(task)
    lines = sk.text.split("\n")
    edits: list[tuple[int, int, list[str]]] = []  # (first, last) 1-based inclusive -> new lines
    extras: list[str] = []
    for name, code in generated.items():
        if not code or not code.strip():
            continue
        new = reindent_def(code, sk.indent)
        fn = sk.methods.get(name)
        if fn is None:
            extras.append(new)
            continue
        start, end = span(fn)
        if takes_skeleton_decorators(fn, new):
            new = slice_lines(sk.text, start, fn.lineno - 1) + "\n" + new
        edits.append((start, end, new.split("\n")))
    if extras:
        end = sk.cls.end_lineno or sk.cls.lineno
        edits.append((end + 1, end, ["", *"\n\n".join(extras).split("\n")]))
    for first, last, new_lines in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[first - 1 : last] = new_lines
    return with_imports(sk.missing_imports, "\n".join(lines)).rstrip("\n") + "\n"


def defines_class(code: str | None, class_name: str) -> bool:
    """Whether the code has a `class <class_name>` line (it need not parse: a class with a syntax
    error is the model's answer, scored as a compile error)."""
    return bool(code and re.search(rf"(?m)^[ \t]*class[ \t]+{re.escape(class_name)}\b", code))


def assemble_holistic(task: Task, class_code: str | None) -> str:
    """The program for a holistic sample: the model's whole module, as ClassEval does it (its
    evaluator prepends the task's import statements to the model's code; so do we, as duplicate
    imports are harmless). Output that defines no class is not a program: the caller makes it a
    `no_code` sample (scoring the skeleton instead would credit methods the model never wrote)."""
    if not defines_class(class_code, task.class_name):
        raise ValueError(f"task {task.task_id}: the answer defines no class {task.class_name}")
    assert class_code is not None  # defines_class is False for None
    return with_imports(task.import_statement, class_code.strip("\n")) + "\n"


# A `from __future__` import at column 0, one line or parenthesised over several. It can only stand
# at a module's top, so one found lower is a future import the prepended lines pushed down (or, in
# the rarest case, text inside a string, which would not compile as a module's start either way).
_FUTURE = re.compile(r"^from[ \t]+__future__[ \t]+import[ \t]+(?:\([^)]*\)|[^\n]*)\n?", re.MULTILINE)


def with_imports(imports: list[str], code: str) -> str:
    """`imports` put on top of `code`, as ClassEval's evaluator prepends a task's import lines; every
    `from __future__` import of either is hoisted above them (Python requires them first in a module:
    a real class written with `from __future__ import annotations`, whose task lists that line among
    its imports, otherwise fails to import, reference and answers alike). Without future imports the
    program is exactly the lines joined, as before."""
    program = "\n".join([*imports, code])
    futures = [m.group(0).rstrip("\n") for m in _FUTURE.finditer(program)]
    if not futures:
        return program
    rest = _FUTURE.sub("", program)
    return "\n".join([*dict.fromkeys(futures), rest])


def reference_program(task: Task) -> str:
    """The program of the special model `reference`: the dataset's canonical solution."""
    return assemble_holistic(task, task.solution_code)


def empty_program(task: Task) -> str:
    """The program of the special model `empty`: the skeleton, no method implemented."""
    return assemble(task, {})
