"""The AST-derived spec of a source class that the composer sees.

After ClassEval-Pro: fields, method signatures, intra-class calls, docstrings, target
functionalities and interface constraints, plus the values of the module-level constants the class
relies on (rates, limits and formats define behaviour). Method bodies are left out: the composer
designs an interface from documented behaviour, and prompts stay short.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class
from classforge_bench.pipeline.core.class_analysis import analyse_class, import_aliases
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.records import FieldInfo, HarvestedClass


class SpecError(InputError):
    """A harvested class whose source no longer parses or no longer defines the class."""


class MethodSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    signature: str
    decorators: list[str] = Field(default_factory=list)
    docstring: str | None = None
    calls: list[str] = Field(default_factory=list, description="other methods of the class it calls")
    fields: list[str] = Field(default_factory=list, description="self.<field> names it uses")
    libs: list[str] = Field(default_factory=list, description="stdlib modules it uses")


class ClassSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    class_id: str
    class_name: str
    domain: str
    docstring: str | None
    imports: list[str]
    context_names: list[str] = Field(description="module-level constants, helpers and exceptions the class relies on")
    constants: list[str] = Field(default_factory=list, description="source of the module-level constants it relies on")
    fields: list[FieldInfo]
    methods: list[MethodSpec]

    @property
    def target_functionalities(self) -> list[str]:
        """One line per public behaviour: the method and the first line of its docstring."""
        out = []
        for m in self.methods:
            if m.name == "__init__" or (m.name.startswith("_") and not _is_dunder(m.name)):
                continue
            summary = _first_line(m.docstring) or "(undocumented)"
            out.append(f"{m.name}: {summary}")
        return out


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    return next((ln.strip() for ln in doc.strip().splitlines() if ln.strip()), "")


_MAX_CONSTANT_CHARS = 400


def _constants(context: list[str]) -> list[str]:
    """Context chunks that are plain assignments, shortened: their values define behaviour."""
    out = []
    for chunk in context:
        try:
            body = parsing.parse(chunk).body
        except SyntaxError:
            continue
        if body and all(isinstance(n, (ast.Assign, ast.AnnAssign)) for n in body):
            text = chunk.strip()
            out.append(text if len(text) <= _MAX_CONSTANT_CHARS else text[:_MAX_CONSTANT_CHARS] + " ...")
    return out


def _context_names(context: list[str]) -> list[str]:
    names: list[str] = []
    for chunk in context:
        try:
            module = parsing.parse(chunk)
        except SyntaxError:
            continue  # carried verbatim by the harvest; a fragment that does not parse adds no name
        for node in module.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def build_spec(hc: HarvestedClass, domain: str) -> ClassSpec:
    """Spec of one harvested class, computed from its source (not trusted from stored metadata)."""
    try:
        module = parsing.parse(hc.module_source())
    except SyntaxError as exc:
        raise SpecError(f"class {hc.id} ({hc.class_name}): source does not parse: {exc.msg}") from exc
    cls = find_class(module, hc.class_name, top_level_only=True)
    if cls is None:
        raise SpecError(f"class {hc.id}: source defines no top-level class {hc.class_name!r}")
    deps = analyse_class(cls, import_aliases(module))
    stored = {m.name: m for m in hc.methods}
    methods = []
    for fn in class_methods(cls):
        d = deps[fn.name]
        info = stored.get(fn.name)
        signature = info.signature if info is not None else f"def {fn.name}({ast.unparse(fn.args)})"
        methods.append(
            MethodSpec(
                name=fn.name,
                signature=signature,
                decorators=[ast.unparse(dec) for dec in fn.decorator_list],
                docstring=ast.get_docstring(fn),
                calls=list(d.method_calls),
                fields=list(d.fields),
                libs=list(d.libs),
            )
        )
    return ClassSpec(
        class_id=hc.id,
        class_name=hc.class_name,
        domain=domain,
        docstring=ast.get_docstring(cls),
        imports=list(hc.imports),
        context_names=_context_names(hc.context),
        constants=_constants(hc.context),
        fields=list(hc.fields),
        methods=methods,
    )


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + ln if ln.strip() else "" for ln in text.splitlines())


def render_spec(spec: ClassSpec) -> str:
    """Plain-text rendering for the composer prompt; stable, so the cache key is stable."""
    lines = [f"Class `{spec.class_name}` (domain: {spec.domain})"]
    if spec.docstring:
        lines += ["Docstring:", _indent(spec.docstring, "    ")]
    lines.append("Imports: " + ("; ".join(spec.imports) if spec.imports else "(none)"))
    if spec.context_names:
        lines.append("Module-level names it relies on: " + ", ".join(spec.context_names))
    if spec.constants:
        lines.append("Module-level constants:")
        lines += [_indent(c, "    ") for c in spec.constants]
    lines.append("Fields:")
    for f in spec.fields or []:
        ann = f": {f.annotation}" if f.annotation else ""
        lines.append(f"  - self.{f.name}{ann} (set in {f.declared_in})")
    if not spec.fields:
        lines.append("  (none)")
    lines.append("Methods:")
    for m in spec.methods:
        deco = "".join(f"@{d} " for d in m.decorators)
        lines.append(f"  - {deco}{m.signature}")
        if m.docstring:
            lines.append(_indent(m.docstring, "      | "))
        used = []
        if m.calls:
            used.append("calls " + ", ".join(f"self.{c}()" for c in m.calls))
        if m.fields:
            used.append("uses " + ", ".join(f"self.{f}" for f in m.fields))
        if m.libs:
            used.append("libraries " + ", ".join(m.libs))
        if used:
            lines.append("      uses: " + "; ".join(used))
    lines.append("Target functionalities:")
    lines += [f"  - {t}" for t in spec.target_functionalities]
    return "\n".join(lines)


def interface_constraints(min_methods: int) -> list[str]:
    """Rules the fused skeleton must follow; the skeleton checks enforce the same rules."""
    return [
        "Exactly one class in the module; imports only from the Python standard library.",
        f"At least {min_methods} methods besides `__init__`, all public (no leading underscore; dunder methods allowed).",
        "A class docstring describing the fused class.",
        "`__init__` with a docstring documenting every parameter; its body only assigns the fields "
        "(`self.x = ...`) and never calls another method of the class.",
        "Every other method: signature plus a docstring with a description, `:param name:` for every "
        "parameter, `:return:` and at least one `>>>` example; no body after the docstring.",
        "Module-level helpers of the sources (constants, exception classes, functions) are folded into "
        "the class as class attributes or replaced by built-in exceptions.",
        "Behaviour must be deterministic: time, randomness and the file system enter through parameters.",
        "Keep the sources' method names and semantics where a behaviour is kept; methods may call each "
        "other, and the fused class should combine both sources' state.",
    ]
