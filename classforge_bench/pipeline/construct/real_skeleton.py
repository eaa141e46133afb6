"""Real-source track: a ClassEval-format skeleton derived deterministically from a real class.

The reference solution is the harvested class as a standalone module (`HarvestedClass.module_source`:
its imports, the module-level context it needs, the class). The skeleton is that module with
libcst (comments and layout kept):
  - the class docstring kept as written;
  - `__init__` kept whole (it is how ClassEval states the fields), its docstring rewritten so each
    parameter has a `:param name:` line (from its own docstring, else the class docstring's Args,
    else its annotation), or left as written when that cannot be done: the body is given code;
  - private helper methods (`_name`, not dunder) kept whole too: given code, like the constructor,
    which the model may call but does not write (the tests and the coverage gate still run them);
  - every other method reduced to its decorators, signature and docstring, the docstring rewritten
    in the skeleton checks' form: description, `:param name:` per parameter, `:return:`.
Docstrings are read with `docstring_parser` (Google, NumPy, reST or Epydoc style). A parameter or a
returned value the author described nowhere is stated by its type annotation (`:param n: int`, as
ClassEval's own skeletons often do) when the method has a description: such methods are listed in
`from_annotations`. A method the model writes whose docstring still cannot state its contract
(none, no description, a parameter or a returned value neither described nor annotated) is listed
in `thin`; the docstring stage has it written by an LLM, or drops the class.
`>>>` examples are added later, from observed runs (`classforge_bench.pipeline.construct.real_examples`).
"""

from __future__ import annotations

import ast
import re
from functools import partial

import docstring_parser
import libcst as cst
from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.construct.real_fields import field_lines, with_fields
from classforge_bench.pipeline.construct.skeleton_checks import (
    Problem,
    SkeletonReport,
    check_skeleton,
    doc_problems,
    is_elided,
)
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class
from classforge_bench.pipeline.core.errors import IntegrityError
from classforge_bench.pipeline.core.records import HarvestedClass


class DerivationError(IntegrityError):
    """The harvested class cannot be turned into a skeleton (it no longer parses, or is not there)."""


class DerivedSkeleton(BaseModel):
    model_config = ConfigDict(extra="forbid")

    class_name: str
    solution: str = Field(description="the reference: the real class as a standalone module")
    skeleton: str = Field(description="bodies removed, docstrings in the checks' form, no examples yet")
    context: list[str] = Field(default_factory=list, description="module-level definitions shipped with the skeleton")
    thin: dict[str, str] = Field(default_factory=dict, description="method -> what its docstring lacks")
    docstrings: dict[str, str] = Field(
        default_factory=dict, description="method -> the docstring written into the skeleton"
    )
    from_annotations: list[str] = Field(
        default_factory=list, description="methods whose docstrings were completed from type annotations"
    )
    implemented: list[str] = Field(
        default_factory=list, description="private helpers shipped with their bodies, as given context"
    )


# A summary that already says what comes back ("Return the ...", "Get the ...") serves as `:return:`.
_RETURNING_SUMMARY = re.compile(
    r"^(returns?|gets?|checks? (if|whether)|whether|is|true if|converts?|computes?|calculates?|counts?|builds?|creates?)\b",
    re.IGNORECASE,
)


def param_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [p.arg for p in [*a.posonlyargs, *a.args]]
    if names and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        names = names[1:]
    if a.vararg is not None:
        names.append(a.vararg.arg)
    names += [p.arg for p in a.kwonlyargs]
    if a.kwarg is not None:
        names.append(a.kwarg.arg)
    return names


def returns_value(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A `return <value>` or `yield` in the function itself (nested functions not counted)."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def protocol_docstring(name: str, params: list[str]) -> str:
    """The docstring of a special method nobody documented: Python's data model states its contract."""
    args = "".join(f"\n    {p}: the operand of `{name}`." for p in params)
    body = f"Implements `{name}` for this class, as Python's data model defines it."
    return body + (f"\n\nArgs:{args}" if args else "") + f"\n\nReturns:\n    what `{name}` returns for this object."


def normalise_docstring(
    doc: str | None,
    params: list[str],
    *,
    returns: bool,
    constructor: bool,
    fallback_params: dict[str, str] | None = None,
    is_property: bool = False,
    annotations: dict[str, str] | None = None,
) -> tuple[str, str]:
    """(docstring in the checks' form, what is missing: '' when complete). A property's summary
    says what it returns, so it stands for `:return:` when there is no Returns section.
    `annotations` (parameter -> type, `return` -> type) state what the text leaves undescribed,
    only when there is a description: a type completes a contract, it does not make one."""
    if not doc or not doc.strip():
        return "", "no docstring"
    parsed = docstring_parser.parse(doc)
    description = "\n\n".join(p.strip() for p in (parsed.short_description, parsed.long_description) if p and p.strip())
    described = {p.arg_name.lstrip("*"): _one_line(p.description) for p in parsed.params if p.description}
    for name, text in (fallback_params or {}).items():
        described.setdefault(name, text)
    typed = annotations if description and annotations else {}
    for name in params:
        if not described.get(name) and typed.get(name):
            described[name] = typed[name]
    lacking = [f":param {p}:" for p in params if not described.get(p)]
    fields = [f":param {p}: {described.get(p, '')}".rstrip() for p in params] + raises_lines(parsed)
    if not constructor:
        ret = _one_line(parsed.returns.description) if parsed.returns and parsed.returns.description else ""
        if not ret and returns and (is_property or _RETURNING_SUMMARY.match(parsed.short_description or "")):
            ret = _one_line(parsed.short_description)
        if not ret and not returns:
            ret = "None"
        if not ret:
            ret = typed.get("return", "")
        if not ret:
            lacking.append(":return:")
        fields.append(f":return: {ret}".rstrip())
    if not description:
        lacking.insert(0, "no description")
    blocks = [b for b in (description, "\n".join(fields)) if b]
    return "\n\n".join(blocks), ", ".join(lacking)


def raises_lines(parsed: docstring_parser.Docstring) -> list[str]:
    """`:raises X: when` per exception the author documents (a Google `Raises:` or NumPy `Raises`
    section, reST `:raises X:`): the task's contract reads the exceptions a test may expect from
    these, so a section left out would make a documented failure an undocumented one."""
    return [
        f":raises {r.type_name}: {_one_line(r.description)}".rstrip()
        for r in parsed.raises
        if r.type_name and r.type_name.strip()
    ]


def docstring_literal(text: str, indent: str) -> str:
    """A docstring statement's source at `indent` (the body's indentation)."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.splitlines() or [""]
    inner = "\n".join((indent + ln) if ln.strip() else "" for ln in lines[1:])
    return f'"""{lines[0]}\n{inner}\n{indent}"""' if len(lines) > 1 else f'"""{lines[0]}"""'


def _doc_statement(text: str, indent: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(value=cst.SimpleString(docstring_literal(text, indent)))])


def _body_indent(module: cst.Module, fn: cst.FunctionDef, depth: int) -> str:
    unit = module.default_indent
    return unit * (depth + 1)


class _Strip(cst.CSTTransformer):
    """Reduce the target class's methods to signature + the given docstring (`__init__` keeps its body)."""

    def __init__(self, module: cst.Module, class_name: str, docs: dict[str, str]) -> None:
        self.module, self.class_name, self.docs = module, class_name, docs
        self.depth = 0
        self.in_target = False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.in_target = self.depth == 0 and node.name.value == self.class_name
        self.depth += 1
        return self.in_target

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.depth -= 1
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if not self.in_target or self.depth != 1 or original.name.value not in self.docs:
            return updated
        indent = _body_indent(self.module, original, self.depth)
        doc = _doc_statement(self.docs[original.name.value], indent)
        body = list(updated.body.body) if isinstance(updated.body, cst.IndentedBlock) else []
        if original.name.value == "__init__":
            rest = body[1:] if body and original.get_docstring() is not None else body
            return updated.with_changes(body=cst.IndentedBlock(body=[doc, *rest]))
        return updated.with_changes(body=cst.IndentedBlock(body=[doc]))


def _is_special(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("property", "cached_property") for d in fn.decorator_list)


def _completed_special(doc: str | None, name: str, params: list[str]) -> str:
    """A special method's docstring with the data model's wording where the author's lacks a part."""
    if not doc or not doc.strip():
        return protocol_docstring(name, params)
    parsed = docstring_parser.parse(doc)
    have = {p.arg_name.lstrip("*") for p in parsed.params if p.description}
    args = "".join(f"\n    {p}: the operand of `{name}`." for p in params if p not in have)
    extra = f"\n\nArgs:{args}" if args and not parsed.params else ""
    if args and parsed.params:
        return protocol_docstring(name, params).replace(
            f"Implements `{name}` for this class, as Python's data model defines it.", doc.strip().splitlines()[0]
        )
    returns = "" if parsed.returns else f"\n\nReturns:\n    what `{name}` returns for this object."
    return doc.strip() + extra + returns


def _class_params(cls: ast.ClassDef) -> dict[str, str]:
    """Parameter/attribute descriptions the class docstring gives (Args, Attributes, ...)."""
    doc = ast.get_docstring(cls)
    if not doc:
        return {}
    return {p.arg_name: _one_line(p.description) for p in docstring_parser.parse(doc).params if p.description}


def _target(solution: str, hc: HarvestedClass) -> ast.ClassDef:
    try:
        module = parsing.parse(solution)
    except SyntaxError as exc:
        raise DerivationError(f"{hc.id}: the reference does not parse: {exc.msg}") from exc
    cls = find_class(module, hc.class_name, top_level_only=True)
    if cls is None:
        raise DerivationError(f"{hc.id}: class {hc.class_name} is not at the top level of its module")
    return cls


def is_private_helper(name: str) -> bool:
    return name.startswith("_") and not _is_special(name)


def type_variables(module: ast.Module) -> dict[str, str]:
    """Module-level `T = TypeVar("T", ...)` -> how a docstring states a value of that type.

    An annotation `T` is no class: written as it stands (`:param item: T`), the task's contract
    would read a class name there and refuse every literal for the parameter. The statement names
    the bound (`bound=Hashable`: a value of type Hashable) and is long enough not to read as a
    type name itself."""
    found: dict[str, str] = {}
    for node in module.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if not (isinstance(call, ast.Call) and ast.unparse(call.func).rsplit(".", 1)[-1] == "TypeVar"):
            continue
        name = node.targets[0].id
        bound = next((ast.unparse(k.value).strip("'\"") for k in call.keywords if k.arg == "bound"), None)
        if bound:
            found[name] = f"{name} (a value of type {bound})"
        elif len(call.args) > 1:
            found[name] = f"{name} (a value of one of the types {name} is constrained to)"
        else:
            found[name] = f"{name} (a value of any type)"
    return found


def annotations_of(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, typevars: dict[str, str] | None = None
) -> dict[str, str]:
    """Parameter -> its annotation's source, and `return` -> the return annotation (quotes of
    forward references dropped; `-> None` left out: a method that returns nothing says so already;
    a bare type variable stated by `typevars`)."""
    a = fn.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]
    found = {p.arg: ast.unparse(p.annotation) for p in every if p.annotation is not None}
    if fn.returns is not None:
        found["return"] = ast.unparse(fn.returns)
    found = {k: (typevars or {}).get(v.strip("'\""), v.strip("'\"")) for k, v in found.items()}
    if found.get("return") == "None":
        del found["return"]
    return found


def _method_docstring(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, fallback: dict[str, str], typevars: dict[str, str]
) -> tuple[str, str, bool]:
    """(docstring in the checks' form, what it lacks, whether annotations completed it)."""
    constructor = fn.name == "__init__"
    doc = ast.get_docstring(fn)
    if _is_special(fn.name) and not constructor:
        # Special methods' contracts are Python's; what their authors left out, the data model says.
        doc = _completed_special(doc, fn.name, param_names(fn))
    normalise = partial(
        normalise_docstring,
        params=param_names(fn),
        returns=returns_value(fn),
        constructor=constructor,
        fallback_params=fallback if constructor else None,
        is_property=_is_property(fn),
    )
    text, lacking = normalise(doc)
    if not lacking:
        return text, lacking, False
    typed, still = normalise(doc, annotations=annotations_of(fn, typevars))
    return typed, still, not still


def derive_skeleton(hc: HarvestedClass) -> DerivedSkeleton:
    """The skeleton of a harvested class, and which of its docstrings are too thin to ship."""
    solution = hc.module_source()
    cls = _target(solution, hc)
    fallback = _class_params(cls)
    typevars = type_variables(parsing.parse(solution))
    docs: dict[str, str] = {}
    thin: dict[str, str] = {}
    typed: list[str] = []
    helpers: list[str] = []
    for fn in class_methods(cls):
        if is_private_helper(fn.name):
            helpers.append(fn.name)  # shipped whole, as written: given code, not a specification
            continue
        text, lacking, from_types = _method_docstring(fn, fallback, typevars)
        if fn.name == "__init__":
            # Given code like a helper; its docstring states the public fields (real_fields.py),
            # after the normalised text, or the author's own when that cannot be completed.
            text = text if not lacking else ast.get_docstring(fn) or ""
            fields = field_lines(fn, "\n".join([text, ast.get_docstring(cls) or ""]))
            if lacking and not fields:
                continue  # shipped whole: its author's docstring, or none, stays as written
            docs[fn.name] = with_fields(text, fields)
            typed += [fn.name] if from_types else []
            continue
        docs[fn.name] = text
        if from_types:
            typed.append(fn.name)
        if lacking:
            thin[fn.name] = lacking
    module = cst.parse_module(solution)
    skeleton = module.visit(_Strip(module, hc.class_name, docs)).code
    return DerivedSkeleton(
        class_name=hc.class_name,
        solution=solution,
        skeleton=skeleton,
        context=list(hc.context),
        thin=thin,
        docstrings=docs,
        from_annotations=typed,
        implemented=helpers,
    )


def with_docstrings(skeleton: str, class_name: str, docs: dict[str, str]) -> str:
    """The skeleton with the named methods' docstrings replaced (examples, LLM-written ones)."""
    module = cst.parse_module(skeleton)
    return module.visit(_Strip(module, class_name, docs)).code


def without_context(skeleton: str, context: list[str]) -> str:
    """The skeleton minus the carried module context, for the checks written for one-class modules:
    real classes need their module's constants and helper types, which ship beside them verbatim."""
    out = skeleton
    for block in context:
        out = out.replace(block.strip("\n"), "", 1)
    return re.sub(r"\n{4,}", "\n\n\n", out)


def _exempt_from_examples(name: str) -> bool:
    """Special methods and private helpers: the tests never call them by name, so no run shows them."""
    return name.startswith("_")


def _given(fn: cst.FunctionDef) -> bool:
    """Shipped with its body (the constructor, private helpers): context, not a specification."""
    return fn.name.value == "__init__" or (is_private_helper(fn.name.value) and not is_elided(fn))


def _written_problems(cls: cst.ClassDef, unobserved: frozenset[str]) -> list[Problem]:
    """The docstring and elision checks on the methods the model writes only."""
    undocumented, not_elided = [], []
    for fn in (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and not _given(s)):
        missing = doc_problems(fn, is_constructor=False)
        if _exempt_from_examples(fn.name.value) or fn.name.value in unobserved:
            missing = [m for m in missing if m != ">>> example"]
        if missing:
            undocumented.append(f"{fn.name.value} ({', '.join(missing)})")
        if not is_elided(fn):
            not_elided.append(fn.name.value)
    problems = []
    if undocumented:
        problems.append(
            Problem(reason=R.UNDOCUMENTED_METHOD, detail="incomplete docstrings: " + "; ".join(undocumented))
        )
    if not_elided:
        problems.append(
            Problem(reason=R.BODY_NOT_ELIDED, detail="bodies must be elided (docstring only): " + ", ".join(not_elided))
        )
    return problems


def check_real_skeleton(
    skeleton: str, context: list[str], min_methods: int, unobserved: frozenset[str] = frozenset()
) -> SkeletonReport:
    """The existing skeleton checks on a derived skeleton (context set aside), with the differences
    real code needs: private helper methods are allowed and ship implemented, like the constructor
    (given code: neither their docstrings nor their bodies are checked); the constructor may call
    any method, as 10 of ClassEval's 100 constructors do (`self.create_deck()`): its code is given,
    so the dependency is stated, and the tests run the model's method through it; a dataclass needs
    no `__init__` (the fields it declares are its constructor); methods in `unobserved` need no
    `>>>` example (no generated test observes them; the task records which)."""
    code = without_context(skeleton, context)
    report = check_skeleton(code, min_methods)
    recomputed = (R.PRIVATE_METHOD, R.UNDOCUMENTED_METHOD, R.BODY_NOT_ELIDED, R.CONSTRUCTOR_CALLS_METHOD)
    module = cst.parse_module(code) if report.class_name else None
    cls = next((s for s in module.body if isinstance(s, cst.ClassDef)), None) if module is not None else None
    waived = recomputed + ((R.NO_CONSTRUCTOR,) if cls is not None and is_dataclass_with_fields(cls) else ())
    kept = [p for p in report.problems if p.reason not in waived]
    if len(kept) == len(report.problems) or cls is None:
        return report
    kept += _written_problems(cls, unobserved)
    return SkeletonReport(problems=kept, class_name=report.class_name, methods=report.methods)


def is_dataclass_with_fields(cls: cst.ClassDef) -> bool:
    """`@dataclass` (any spelling, with or without arguments) over annotated fields: the generated
    `__init__` takes exactly the fields the skeleton shows."""
    names = [
        cst.Module([]).code_for_node(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
        for d in cls.decorators
    ]
    fields = [
        s
        for line in (cls.body.body if isinstance(cls.body, cst.IndentedBlock) else [])
        if isinstance(line, cst.SimpleStatementLine)
        for s in line.body
        if isinstance(s, cst.AnnAssign)
    ]
    return any(n.rsplit(".", 1)[-1] == "dataclass" for n in names) and bool(fields)


def contract_skeleton(derived: DerivedSkeleton) -> str:
    """The skeleton the task's contract is derived from: every docstring as it will ship (written
    ones included, field documentation in the constructor's), before the observed examples."""
    return with_docstrings(derived.skeleton, derived.class_name, derived.docstrings)


def too_few_methods(derived: DerivedSkeleton, min_methods: int) -> str | None:
    """The skeleton checks' method count, run before any test is generated: why the class has too
    few public methods for a task, or None."""
    report = check_skeleton(without_context(derived.skeleton, derived.context), min_methods)
    return next((p.detail for p in report.problems if p.reason == R.TOO_FEW_METHODS), None)
