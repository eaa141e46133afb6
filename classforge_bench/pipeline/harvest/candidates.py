"""A top-level class found in a parsed file, and the record it becomes once it is kept."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from functools import cached_property

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, span
from classforge_bench.pipeline.core.class_analysis import (
    analyse_class,
    assigned_fields,
    dependency_depth,
    import_aliases,
)
from classforge_bench.pipeline.core.records import (
    ClassMetrics,
    FieldInfo,
    HarvestedClass,
    MethodInfo,
    Parameter,
    RepoRef,
    content_id,
)
from classforge_bench.pipeline.harvest.files import ModuleIndex, index_module
from classforge_bench.pipeline.harvest.resolver import ModuleAnalysis, Resolution, UnresolvedName
from classforge_bench.pipeline.harvest.runtime_imports import executed_imports, stdlib_public_names, taken_branch


def normalised_source(source: str) -> str:
    """Formatting- and comment-independent form of code; the basis of ids and exact dedup."""
    return ast.unparse(parsing.parse(textwrap.dedent(source)))


def segment(lines: list[str], node: ast.stmt) -> str:
    """The physical lines of a statement, decorators included, exactly as written."""
    first, last = span(node)
    return "".join(lines[first - 1 : last])


def class_loc(node: ast.ClassDef) -> int:
    """Physical lines of the class statement, decorators, comments and blank lines included."""
    first, last = span(node)
    return last - first + 1


def carried_statement(lines: list[str], stmt: ast.stmt) -> tuple[str, list[ast.stmt]]:
    """A context statement as the target Python runs it: of an `if TYPE_CHECKING:` or a
    `sys.version_info` test only the branch taken travels, so no import the target never runs
    (a third-party package's, typically) is carried. The names such a block bound are used only in
    annotations nothing evaluates (the resolver guarantees it: string annotations, or any under
    `from __future__ import annotations`, which is carried). Returns (text, statements it holds)."""
    branch = taken_branch(stmt)
    # An `elif` or a one-line body has no lines of its own to cut out: carried as written.
    if branch is None or any(s.col_offset <= stmt.col_offset or s.lineno == stmt.lineno for s in branch):
        return segment(lines, stmt), [stmt]
    texts, roots = [], []
    for inner in branch:
        text, held = carried_statement(lines, inner)
        texts.append(text)
        roots += held
    return textwrap.indent(textwrap.dedent("".join(texts)), " " * stmt.col_offset), roots


@dataclass
class Candidate:
    ref: RepoRef
    path: str
    text: str
    module: ast.Module
    node: ast.ClassDef
    analysis: _SharedAnalysis
    position: int  # index of the class statement in module.body
    # Methods left out of the task (name -> why), and then where the class ends in its real file.
    excluded: dict[str, str] = field(default_factory=dict)
    file_end_line: int | None = None

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """The class statement and every node under it (from the file's one walk)."""
        return self.analysis.index().nodes[self.position]

    @property
    def name(self) -> str:
        return self.node.name

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)

    @cached_property
    def source(self) -> str:
        return segment(self.lines, self.node)

    @cached_property
    def id(self) -> str:
        # The same text as normalised_source(self.source), without parsing the class a second time.
        return content_id(ast.unparse(self.node), prefix="cls-")

    @property
    def item_id(self) -> str:
        return f"{self.ref.full_name}:{self.path}::{self.name}"

    @property
    def start_line(self) -> int:
        return span(self.node)[0]

    @property
    def loc(self) -> int:
        return class_loc(self.node)

    @property
    def methods(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        return class_methods(self.node)

    @cached_property
    def method_nodes(self) -> dict[int, list[ast.AST]]:
        """id(method) -> the method and every node under it, sliced from the file's one walk: that
        walk is depth-first, so a subtree runs from its root to the class's next direct child."""
        position = {id(n): i for i, n in enumerate(self.nodes)}
        direct = sorted(position[id(child)] for child in ast.iter_child_nodes(self.node))
        sliced: dict[int, list[ast.AST]] = {}
        for fn in self.methods:
            start = position[id(fn)]
            end = next((p for p in direct if p > start), len(self.nodes))
            sliced[id(fn)] = self.nodes[start:end]
        return sliced

    @cached_property
    def resolution(self) -> Resolution:
        return self.analysis.get().resolve(self.name)

    @cached_property
    def future_imports(self) -> list[ast.ImportFrom]:
        return [n for n in self.module.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]

    @cached_property
    def carried_context(self) -> list[tuple[str, list[ast.stmt]]]:
        """The context statements as the task carries them: (text, the statements that text holds)."""
        return [carried_statement(self.lines, n) for n in self.resolution.context]

    @cached_property
    def _import_nodes(self) -> list[ast.Import | ast.ImportFrom]:
        """Every import the task would carry: the class's own, guarded or not (its source travels
        as written), the carried context's, and the module-level ones the class uses."""
        found: list[ast.Import | ast.ImportFrom] = list(executed_imports(self.node, every_branch=True))
        for _text, roots in self.carried_context:
            for root in roots:
                found.extend(executed_imports(root, every_branch=True))
        found += self.resolution.imports
        return found

    def import_nodes(self) -> list[ast.Import | ast.ImportFrom]:
        return self._import_nodes

    def used_modules(self) -> set[str]:
        """Modules the class really imports: of a module-level `import a, b` only the names it uses
        count (the rest of the statement travels but is never called)."""
        top_level = {id(n) for n in self.resolution.imports}
        used = self.resolution.used_import_names
        found: set[str] = set()
        for n in self._import_nodes:
            for a in n.names:
                bound = a.asname or a.name.split(".")[0]
                if id(n) in top_level and bound not in used:
                    continue
                found.add((n.module or "") if isinstance(n, ast.ImportFrom) else a.name)
        return found

    @cached_property
    def star_provided(self) -> dict[str, str]:
        """Names the class uses that a standard-library star import of its file binds -> that module.

        A star import rebinds every public name of its module, builtins included, so a class is
        affected exactly when it reads one of those names that no definition of its own file binds.
        """
        used = {u.name for u in self.resolution.unresolved} | self.resolution.builtins_used
        provided: dict[str, str] = {}
        for module, names in self.analysis.known_stars():
            provided.update(dict.fromkeys(used & names, module))  # a later star import wins, as at run time
        return provided

    @cached_property
    def unresolved(self) -> list[UnresolvedName]:
        """Unresolved names once the standard-library star imports have provided theirs."""
        return [u for u in self.resolution.unresolved if u.name not in self.star_provided]

    def opaque_stars(self) -> list[ast.ImportFrom]:
        """Star imports whose names cannot be known (not standard library)."""
        return self.analysis.opaque_stars()


class _SharedAnalysis:
    """One scope analysis per file, made on first need and shared by the file's classes."""

    def __init__(self, module: ast.Module, index: ModuleIndex | None):
        self.module = module
        self._index = index
        self._analysis: ModuleAnalysis | None = None
        self._stars: list[tuple[ast.ImportFrom, frozenset[str] | None]] | None = None
        self._aliases: dict[str, str] | None = None

    def index(self) -> ModuleIndex:
        """Walked on first need: most files have no class worth it."""
        if self._index is None:
            self._index = index_module(self.module)
        return self._index

    def aliases(self) -> dict[str, str]:
        if self._aliases is None:
            self._aliases = import_aliases(self.module, (n for nodes in self.index().nodes for n in nodes))
        return self._aliases

    def get(self) -> ModuleAnalysis:
        if self._analysis is None:
            self._analysis = ModuleAnalysis(self.module)
        return self._analysis

    def _star_names(self) -> list[tuple[ast.ImportFrom, frozenset[str] | None]]:
        if self._stars is None:
            self._stars = [
                (n, stdlib_public_names(n.module) if n.module and not n.level else None)
                for n in self.get().star_imports
            ]
        return self._stars

    def known_stars(self) -> list[tuple[str, frozenset[str]]]:
        return [(n.module or "", names) for n, names in self._star_names() if names is not None]

    def opaque_stars(self) -> list[ast.ImportFrom]:
        return [n for n, names in self._star_names() if names is None]


def list_candidates(
    ref: RepoRef, path: str, text: str, module: ast.Module, index: ModuleIndex | None = None
) -> list[Candidate]:
    shared = _SharedAnalysis(module, index)
    return [
        Candidate(ref, path, text, module, n, shared, i)
        for i, n in enumerate(module.body)
        if isinstance(n, ast.ClassDef)
    ]


def _parameters(args: ast.arguments) -> list[Parameter]:
    params: list[Parameter] = []
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"
        params.append(_param(a, kind, d))
    if args.vararg:
        params.append(_param(args.vararg, "var_positional", None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        params.append(_param(a, "keyword_only", d))
    if args.kwarg:
        params.append(_param(args.kwarg, "var_keyword", None))
    return params


def _param(a: ast.arg, kind: str, default: ast.expr | None) -> Parameter:
    return Parameter(
        name=a.arg,
        kind=kind,
        annotation=ast.unparse(a.annotation) if a.annotation else None,
        default=ast.unparse(default) if default is not None else None,
    )


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(fn, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    return f"{prefix} {fn.name}({ast.unparse(fn.args)}){returns}"


def _self_annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef, annotated: list[ast.AnnAssign]) -> dict[str, str]:
    """`self.x: T = ...` annotations in a method (the first one of each field); `annotated` holds
    every annotated assignment of the class."""
    receiver = (fn.args.posonlyargs + fn.args.args)[0].arg if (fn.args.posonlyargs + fn.args.args) else None
    found: dict[str, str] = {}
    for node in annotated:
        if (
            fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno)
            and isinstance(node.target, ast.Attribute)
            and isinstance(node.target.value, ast.Name)
            and node.target.value.id == receiver
        ):
            found.setdefault(node.target.attr, ast.unparse(node.annotation))
    return found


def _fields(
    cls: ast.ClassDef,
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef],
    nodes: list[ast.AST],
    method_nodes: dict[int, list[ast.AST]],
) -> list[FieldInfo]:
    fields: dict[str, FieldInfo] = {}
    for stmt in cls.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Name) and t.id not in fields:
                ann = ast.unparse(stmt.annotation) if isinstance(stmt, ast.AnnAssign) else None
                fields[t.id] = FieldInfo(name=t.id, annotation=ann, declared_in="class")
    # __init__ first: that is where a reader looks for a class's state.
    annotated = sorted((n for n in nodes if isinstance(n, ast.AnnAssign)), key=lambda n: (n.lineno, n.col_offset))
    for fn in sorted(methods, key=lambda m: m.name != "__init__"):
        annotations = _self_annotations(fn, annotated)
        for name in assigned_fields(fn, method_nodes[id(fn)]):
            fields.setdefault(name, FieldInfo(name=name, annotation=annotations.get(name), declared_in=fn.name))
    return list(fields.values())


def to_record(c: Candidate) -> HarvestedClass:
    """The kept class as a typed record (provenance and domains are stamped by later stages)."""
    deps = analyse_class(c.node, c.analysis.aliases())
    methods = []
    for fn in c.methods:
        d = deps[fn.name]
        methods.append(
            MethodInfo(
                name=fn.name,
                signature=_signature(fn),
                parameters=_parameters(fn.args),
                docstring=ast.get_docstring(fn),
                source=textwrap.dedent(segment(c.lines, fn)),
                decorators=[ast.unparse(x) for x in fn.decorator_list],
                start_line=span(fn)[0],
                end_line=fn.end_lineno,
                calls=d.method_calls,
                fields_read=d.fields,
            )
        )
    imports = [ast.unparse(n) for n in c.future_imports]
    imports += [textwrap.dedent(segment(c.lines, n)).strip() for n in c.resolution.imports if n not in c.future_imports]
    # A star import becomes the explicit import of the names the class takes from it.
    by_module: dict[str, list[str]] = {}
    for name, module in sorted(c.star_provided.items()):
        by_module.setdefault(module, []).append(name)
    imports += [f"from {module} import {', '.join(names)}" for module, names in by_module.items()]
    return HarvestedClass(
        id=c.id,
        repo=c.ref.full_name,
        clone_url=c.ref.clone_url,
        license_spdx=c.ref.license_spdx,
        path=c.path,
        commit=c.ref.head_commit or "",
        class_name=c.name,
        source=c.source,
        context=[text for text, _roots in c.carried_context if text.strip()],
        imports=list(dict.fromkeys(imports)),
        docstring=ast.get_docstring(c.node),
        fields=_fields(c.node, c.methods, c.nodes, c.method_nodes),
        methods=methods,
        metrics=ClassMetrics(loc=c.loc, method_count=len(c.methods), dependency_depth=dependency_depth(deps)),
        start_line=c.start_line,
        end_line=c.file_end_line or c.node.end_lineno,
        domains=list(c.ref.domains),
        excluded_methods=[f"{name}: {why}" for name, why in c.excluded.items()],
    )
