"""Reference completeness (harvest filter 5): does a top-level class only use names it can carry?

`resolve_class` answers, for one top-level class of a parsed module, which names the class uses
that nothing resolves (an empty list means the class is reference-complete), and which
module-level statements and imports must travel with it so that it runs on its own.

How it works. One pass over the module builds a scope tree that mirrors CPython's symbol table
(module, class, function/lambda, comprehension scopes; `global`/`nonlocal`; walrus binding in the
nearest non-comprehension scope; class scopes invisible to nested scopes except the first
iterator of a comprehension) and records every name *use* with its line and the scope it was
read in. A second, iterative pass resolves each use. Uses that reach the module namespace become
requirements on the top-level statements that bind the name; those statements are carried as
context and their own requirements are followed transitively (a breadth-first walk, so long
dependency chains cannot exhaust the stack).

We do our own scope analysis instead of `symtable` because we need line numbers per use, the
order of bindings inside class bodies (a class-body name is visible only after it is bound), and
laziness of annotations, none of which `symtable` reports. The tests use `symtable` as an oracle.

Rules chosen for the ambiguous cases (the tests pin each one):
- Module-level definitions count wherever they appear at module level (late binding); execution
  order at module level is not modelled. All top-level statements that bind a needed name are
  carried, in file order. A binding nested in a top-level `if`/`try`/`for`/`with` carries that
  whole top-level statement, so its other requirements (and unresolved names) come along too.
- Imports: top-level `import`/`from ... import` statements go to `imports`, whole, even when only
  some of their names are used (`import a, b` with only `a` used is returned as-is). Imports
  nested in a carried compound statement (`try: import x / except ImportError: ...`,
  `if TYPE_CHECKING: ...`) travel inside that statement in `context`; callers checking import
  purity must walk `context` too. `from __future__ import ...` statements are always included.
  `used_import_names` holds every needed name bound by an import, top-level or nested.
- Names bound at module level only inside `if TYPE_CHECKING:` (or `if typing.TYPE_CHECKING:`)
  resolve only lazily evaluated annotation uses: string annotations (the string is parsed), every
  annotation under `from __future__ import annotations`, and annotations of local variables in
  functions (never evaluated, PEP 526). The `if TYPE_CHECKING:` statement is then carried.
  Strings inside `Literal[...]` and the metadata of `Annotated[...]` are not forward references.
  Lazy annotations resolve in the scope an eager one would, except that a class-body name counts
  as visible wherever it is bound in that class body (evaluation happens after the body ran).
- Class bodies are order-aware: a name is class-local at a use only if bound earlier in the body
  (in evaluation order); otherwise the lookup goes to the module and builtins, as LOAD_NAME does.
  `__module__` and `__qualname__` are bound at the start of every class body.
- `global x` in a function (or nested class) that binds `x` makes `x` a module-level definition
  whose defining statement is the enclosing top-level statement. If that statement is the class
  itself, the name resolves with no extra context.
- The class's own name resolves to the class; other statements rebinding that name (e.g.
  `Foo = wrap(Foo)`) are not carried. With several top-level classes of that name, the last (the
  one bound at runtime) is analysed.
- `del x` inside a function makes `x` local (as in CPython); at module and class level it is a use
  of `x` and never a definition. `except ... as e` binds `e` (its deletion after the handler is
  ignored). Annotation-only `x: int` at module or class level binds nothing (no value is stored);
  inside a function it makes `x` local.
- Builtins are the public names of the running interpreter's `builtins` module plus the module
  attributes every module has (`__name__`, `__file__`, `__doc__`, `__spec__`, ...). A
  module-level definition shadows a builtin and is then carried.
- `__class__` resolves inside any scope nested in a class body (as CPython's implicit cell).
- Recursion: nesting the analysis cannot walk (far beyond what `compile()` accepts for parsed
  source; binary-operator chains and `elif` chains are walked iteratively) raises
  `ResolutionError(class_name, reason)` when it affects the class or a statement it needs. A
  too-deep statement the class does not need is ignored. The only other exceptions caught are
  SyntaxError/ValueError from parsing a string annotation that is not code (it is then ignored).

Known limitations: dynamic definitions (`globals()[...] = `, `exec`, module `__getattr__`) and
names provided by `from x import *` are not seen here (they count as unresolved, or as builtins
they would shadow; `ModuleAnalysis.star_imports` lists the star imports for the caller to decide); PEP 695 type
parameters (Python 3.12+ syntax) are not modelled; forward references in strings outside
annotations (`TypeVar("T", bound="Foo")`, `cast("Foo", x)`) are not checked.
"""

from __future__ import annotations

import ast
import builtins
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.errors import ClassforgeError
from classforge_bench.pipeline.harvest.runtime_imports import is_type_checking

__all__ = [
    "ModuleAnalysis",
    "Resolution",
    "ResolutionError",
    "UnresolvedName",
    "analyse_module",
    "resolve_class",
]

# Attributes every module namespace has at run time, beyond what `builtins` provides.
_MODULE_ATTRIBUTES = frozenset(
    {
        "__name__",
        "__file__",
        "__doc__",
        "__package__",
        "__spec__",
        "__loader__",
        "__builtins__",
        "__cached__",
        "__annotations__",
    }
)
_COMPREHENSION_NAMES = {
    ast.ListComp: "<listcomp>",
    ast.SetComp: "<setcomp>",
    ast.DictComp: "<dictcomp>",
    ast.GeneratorExp: "<genexpr>",
}


@cache
def _builtin_names() -> frozenset[str]:
    # Single-underscore names (e.g. `_` from an interactive displayhook) are not real builtins.
    names = {n for n in dir(builtins) if not n.startswith("_") or n.startswith("__")}
    return frozenset(names) | _MODULE_ATTRIBUTES


# --------------------------------------------------------------------------- public types


@dataclass(frozen=True)
class UnresolvedName:
    name: str
    line: int
    where: str  # scope qualname, e.g. "Ledger.add", or "module-level _fmt" for carried context


@dataclass
class Resolution:
    unresolved: list[UnresolvedName]  # sorted by line; empty => reference-complete
    context: list[ast.stmt]  # carried top-level statements, file order, no imports/class
    imports: list[ast.Import | ast.ImportFrom]  # top-level import statements needed, file order
    used_import_names: set[str]
    builtins_used: set[str] = field(default_factory=set)  # names that resolved to builtins

    @property
    def complete(self) -> bool:
        return not self.unresolved


class ResolutionError(ClassforgeError):
    """The class (or a statement it needs) is too deeply nested to analyse."""

    def __init__(self, class_name: str, reason: str) -> None:
        super().__init__(f"cannot resolve class {class_name!r}: {reason}")
        self.class_name = class_name
        self.reason = reason


# --------------------------------------------------------------------------- scope tree

ScopeKind = Literal["module", "class", "function", "comprehension"]


@dataclass(eq=False)
class _Scope:
    kind: ScopeKind
    qualname: str
    parent: _Scope | None
    bindings: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    bound_so_far: set[str] = field(default_factory=set)  # class scopes only: evaluation order

    def child_qualname(self, name: str) -> str:
        if self.kind == "module":
            return name
        if self.kind == "class":
            return f"{self.qualname}.{name}"
        return f"{self.qualname}.<locals>.{name}"


@dataclass(frozen=True, eq=False)
class _Use:
    name: str
    line: int
    scope: _Scope
    stmt: int  # index of the top-level statement the use belongs to
    lazy: bool  # inside a lazily evaluated annotation
    class_visible: bool  # class scope only: bound earlier in the class body


@dataclass(frozen=True)
class _Def:
    stmt: int
    via_import: bool
    type_only: bool  # bound only inside `if TYPE_CHECKING:`


def _subscript_head(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _Collector:
    """Builds the scope tree and records uses, visiting in CPython's evaluation order."""

    def __init__(self, lazy_annotations: bool) -> None:
        self.lazy_annotations = lazy_annotations  # `from __future__ import annotations`
        self.module = _Scope("module", "", None)
        self.scope = self.module
        self.stmt = -1
        self.uses: list[_Use] = []
        self.defs: dict[str, list[_Def]] = {}
        self.star_imports: list[ast.ImportFrom] = []
        self.type_checking = 0  # depth of module-level `if TYPE_CHECKING:` bodies
        self.lazy = 0  # depth of lazily evaluated annotations
        self.annotation = 0  # depth of annotation expressions (string forward refs parsed)
        self.line_override: int | None = None  # names parsed from a string take its line

    def reset(self, stmt: int) -> None:
        # Called per top-level statement, so a RecursionError mid-statement leaves no stale state.
        self.scope, self.stmt = self.module, stmt
        self.type_checking = self.lazy = self.annotation = 0
        self.line_override = None

    # -- recording

    def use(self, name: str, node: ast.AST) -> None:
        s = self.scope
        line = self.line_override if self.line_override is not None else getattr(node, "lineno", 0)
        self.uses.append(_Use(name, line, s, self.stmt, self.lazy > 0, s.kind == "class" and name in s.bound_so_far))

    def bind(self, name: str, *, via_import: bool = False, scope: _Scope | None = None) -> None:
        s = scope or self.scope
        s.bindings.add(name)
        if s.kind == "module" or name in s.globals:
            # A module-level definition, also when made through `global` in a nested scope.
            self.defs.setdefault(name, []).append(
                _Def(self.stmt, via_import, s.kind == "module" and self.type_checking > 0)
            )
        elif s.kind == "class" and name not in s.nonlocals:
            s.bound_so_far.add(name)

    def push(self, kind: ScopeKind, qualname: str) -> _Scope:
        self.scope = _Scope(kind, qualname, self.scope)
        if kind == "class":
            for implicit in ("__module__", "__qualname__"):
                self.scope.bindings.add(implicit)
                self.scope.bound_so_far.add(implicit)
        return self.scope

    def pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    # -- dispatch

    def visit(self, node: ast.AST) -> None:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is not None:
            method(node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)):
                self.visit(child)

    def visit_all(self, nodes: list[ast.stmt] | list[ast.expr]) -> None:
        for node in nodes:
            self.visit(node)

    # -- names and bindings

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.bind(node.id)
        elif isinstance(node.ctx, ast.Del) and self.scope.kind in ("function", "comprehension"):
            self.scope.bindings.add(node.id)  # `del x` makes x local, as in CPython
        elif isinstance(node.ctx, ast.Del):
            self.use(node.id, node)  # module/class `del x` needs x and defines nothing
            self.scope.bound_so_far.discard(node.id)
        else:
            self.use(node.id, node)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.globals.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.nonlocals.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bind(alias.asname or alias.name.split(".")[0], via_import=True)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_imports.append(node)
            else:
                self.bind(alias.asname or alias.name, via_import=True)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        target = self.scope
        while target.kind == "comprehension":  # walrus binds in the enclosing non-comprehension scope
            assert target.parent is not None
            target = target.parent
        self.bind(node.target.id, scope=target)

    # -- statements whose evaluation order differs from field order

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        self.visit_all(node.targets)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.use(node.target.id, node.target)
            self.visit(node.value)
            self.bind(node.target.id)
        else:
            self.visit(node.target)
            self.visit(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        # Local-variable annotations are never evaluated (PEP 526), so they are lazy.
        never_evaluated = self.scope.kind in ("function", "comprehension")
        self.visit_annotation(node.annotation, lazy=self.lazy_annotations or never_evaluated)
        if isinstance(node.target, ast.Name):
            # `x: int` without a value stores nothing at module/class level; in a function it
            # still makes x local.
            if node.value is not None or never_evaluated:
                self.bind(node.target.id)
        else:
            self.visit(node.target)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        self.visit_all(node.body)
        self.visit_all(node.orelse)

    visit_AsyncFor = visit_For

    def visit_If(self, node: ast.If) -> None:
        # elif chains are walked in a loop: long chains must not exhaust the stack.
        current: ast.If | None = node
        while current is not None:
            self.visit(current.test)
            guarded = self.scope.kind == "module" and is_type_checking(current.test)
            self.type_checking += guarded
            self.visit_all(current.body)
            self.type_checking -= guarded
            orelse = current.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                current = orelse[0]
            else:
                self.visit_all(orelse)
                current = None

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bind(node.name)
        self.visit_all(node.body)

    # -- match patterns: captures bind, class names and value patterns are uses

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self.bind(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.visit_all(node.keys)
        for pattern in node.patterns:
            self.visit(pattern)
        if node.rest:
            self.bind(node.rest)

    # -- expressions walked iteratively

    def visit_BinOp(self, node: ast.BinOp) -> None:
        # Long `a + b + c ...` chains nest to the left; walk the spine without recursing.
        rights: list[ast.expr] = []
        left: ast.expr = node
        while isinstance(left, ast.BinOp):
            rights.append(left.right)
            left = left.left
        self.visit(left)
        for right in reversed(rights):
            self.visit(right)

    # -- scopes

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.visit_all(node.decorator_list)
        self.visit_arguments_outer(node.args)
        self.visit_annotation(node.returns, lazy=self.lazy_annotations)
        self.bind(node.name)
        self.push("function", self.scope.child_qualname(node.name))
        self.bind_parameters(node.args)
        self.visit_all(node.body)
        self.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit_arguments_outer(node.args)
        self.push("function", self.scope.child_qualname("<lambda>"))
        self.bind_parameters(node.args)
        self.visit(node.body)
        self.pop()

    def visit_arguments_outer(self, args: ast.arguments) -> None:
        """Defaults and annotations are evaluated in the scope that defines the function."""
        self.visit_all(args.defaults)
        for default in args.kw_defaults:
            if default is not None:
                self.visit(default)
        for arg in self.all_args(args):
            self.visit_annotation(arg.annotation, lazy=self.lazy_annotations)

    @staticmethod
    def all_args(args: ast.arguments) -> Iterator[ast.arg]:
        yield from args.posonlyargs
        yield from args.args
        if args.vararg:
            yield args.vararg
        yield from args.kwonlyargs
        if args.kwarg:
            yield args.kwarg

    def bind_parameters(self, args: ast.arguments) -> None:
        for arg in self.all_args(args):
            self.bind(arg.arg)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.visit_all(node.decorator_list)
        self.visit_all(node.bases)
        for keyword in node.keywords:
            self.visit(keyword.value)
        self.push("class", self.scope.child_qualname(node.name))
        self.visit_all(node.body)
        self.pop()
        self.bind(node.name)

    def visit_comprehension_scope(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        generators = node.generators
        # The first iterable is evaluated in the enclosing scope (so it sees class-body names).
        self.visit(generators[0].iter)
        self.push("comprehension", self.scope.child_qualname(_COMPREHENSION_NAMES[type(node)]))
        for i, gen in enumerate(generators):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            self.visit_all(gen.ifs)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_comprehension_scope

    # -- annotations

    def visit_annotation(self, node: ast.expr | None, *, lazy: bool) -> None:
        if node is None:
            return
        self.lazy += lazy
        self.annotation += 1
        self.visit(node)
        self.annotation -= 1
        self.lazy -= lazy

    def visit_Constant(self, node: ast.Constant) -> None:
        if not (self.annotation and isinstance(node.value, str)):
            return
        try:
            parsed = parsing.parse_expression(node.value.strip())
        except (SyntaxError, ValueError):
            return  # not a forward reference (free text); nothing to resolve
        saved = self.line_override
        self.line_override = saved if saved is not None else node.lineno
        self.lazy += 1  # a string annotation is never evaluated eagerly
        self.visit(parsed.body)
        self.lazy -= 1
        self.line_override = saved

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.visit(node.value)
        head = _subscript_head(node.value) if self.annotation else None
        if head == "Literal":
            self.visit_not_annotation(node.slice)  # Literal["a"] holds values, not types
        elif head == "Annotated" and isinstance(node.slice, ast.Tuple) and node.slice.elts:
            self.visit(node.slice.elts[0])
            for meta in node.slice.elts[1:]:
                self.visit_not_annotation(meta)
        else:
            self.visit(node.slice)

    def visit_not_annotation(self, node: ast.expr) -> None:
        saved = self.annotation
        self.annotation = 0
        self.visit(node)
        self.annotation = saved


# --------------------------------------------------------------------------- module analysis


def _top_level_label(stmt: ast.stmt) -> str:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name
    names = _shallow_bindings(stmt)
    return ", ".join(names) if names else f"statement at line {stmt.lineno}"


def _shallow_bindings(stmt: ast.stmt) -> list[str]:
    """Names a top-level statement obviously binds, without recursing (for too-deep statements)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"]
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _has_future_annotations(module: ast.Module) -> bool:
    return any(
        isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(a.name == "annotations" for a in s.names)
        for s in module.body
    )


class ModuleAnalysis:
    """Scope analysis of one module, reusable for every class in it (analyse once per file)."""

    def __init__(self, module: ast.Module) -> None:
        self.module = module
        self._collector = _Collector(_has_future_annotations(module))
        self._too_deep: set[int] = set()
        for i, stmt in enumerate(module.body):
            self._collector.reset(i)
            try:
                self._collector.visit(stmt)
            except RecursionError:
                # Record what the statement obviously defines; it is unusable as context.
                self._too_deep.add(i)
                self._collector.reset(i)
                for name in _shallow_bindings(stmt):
                    self._collector.bind(name, via_import=isinstance(stmt, (ast.Import, ast.ImportFrom)))
        # Per top-level statement: module-level names it needs -> True if every use of the name
        # is a lazy annotation (only then may TYPE_CHECKING-only bindings satisfy it).
        self._requires: list[dict[str, bool]] = [{} for _ in module.body]
        self._unresolved: list[list[_Use]] = [[] for _ in module.body]
        self._builtins: list[set[str]] = [set() for _ in module.body]
        for use in self._collector.uses:
            self._classify(use)

    @property
    def star_imports(self) -> list[ast.ImportFrom]:
        """Every `from x import *` of the module, in file order."""
        return self._collector.star_imports

    # -- resolving one use

    def _classify(self, use: _Use) -> None:
        outcome = self._lookup(use)
        if outcome == "module":
            requires = self._requires[use.stmt]
            # A name needed eagerly anywhere must not resolve to TYPE_CHECKING-only bindings.
            requires[use.name] = requires.get(use.name, True) and use.lazy
        elif outcome == "unresolved":
            self._unresolved[use.stmt].append(use)
        elif outcome == "builtin":
            self._builtins[use.stmt].add(use.name)

    def _lookup(self, use: _Use) -> Literal["local", "builtin", "module", "unresolved"]:
        name, scope = use.name, use.scope
        if scope.kind == "class":
            if name in scope.globals:
                return self._module_lookup(name, use.lazy)
            if name in scope.nonlocals:
                return self._enclosing_function_binds(scope, name)
            if use.class_visible or (use.lazy and name in scope.bindings):
                return "local"
            if name in scope.bindings:
                # Bound later in the class body: LOAD_NAME goes straight to globals/builtins.
                return self._module_lookup(name, use.lazy)
        elif scope.kind != "module":
            if name in scope.globals:
                return self._module_lookup(name, use.lazy)
            if name in scope.nonlocals:
                return self._enclosing_function_binds(scope, name)
            if name in scope.bindings:
                return "local"
        else:
            return self._module_lookup(name, use.lazy)
        # Free name: the nearest enclosing function scope binding it; class scopes are skipped.
        parent = scope.parent
        while parent is not None:
            if parent.kind == "module":
                return self._module_lookup(name, use.lazy)
            if parent.kind == "class":
                if name == "__class__" and scope.kind != "class":
                    return "local"  # the implicit __class__ cell of methods (used by super())
            elif name in parent.globals:
                return self._module_lookup(name, use.lazy)
            elif name in parent.bindings or name in parent.nonlocals:
                return "local"
            parent = parent.parent
        return self._module_lookup(name, use.lazy)

    @staticmethod
    def _enclosing_function_binds(scope: _Scope, name: str) -> Literal["local", "unresolved"]:
        parent = scope.parent
        while parent is not None and parent.kind != "module":
            if parent.kind != "class" and (name in parent.bindings or name in parent.nonlocals):
                return "local"
            parent = parent.parent
        return "unresolved"

    def _module_lookup(self, name: str, lazy: bool) -> Literal["builtin", "module", "unresolved"]:
        defs = self._collector.defs.get(name, ())
        if any(lazy or not d.type_only for d in defs):
            return "module"
        if name in _builtin_names():
            return "builtin"  # needs nothing carried (a star import may still shadow it)
        return "unresolved"

    # -- per class

    def class_index(self, class_name: str) -> int:
        indices = [i for i, s in enumerate(self.module.body) if isinstance(s, ast.ClassDef) and s.name == class_name]
        if not indices:
            raise ValueError(f"no top-level class named {class_name!r}")
        return indices[-1]  # the binding that survives at run time

    def resolve(self, class_name: str) -> Resolution:
        body = self.module.body
        root = self.class_index(class_name)
        seen = {root}
        queue = deque([root])
        unresolved: set[UnresolvedName] = set()
        used_imports: set[str] = set()
        builtins_used: set[str] = set()
        while queue:
            i = queue.popleft()
            builtins_used |= self._builtins[i]
            if i in self._too_deep:
                what = "the class" if i == root else f"needed statement {_top_level_label(body[i])!r}"
                raise ResolutionError(class_name, f"{what} at line {body[i].lineno} is nested too deeply to analyse")
            for use in self._unresolved[i]:
                unresolved.add(UnresolvedName(use.name, use.line, self._where(use, i == root, class_name)))
            for name, lazy in self._requires[i].items():
                if name == class_name:
                    continue  # the class itself; other rebindings of its name are not carried
                for d in self._collector.defs.get(name, ()):
                    if d.type_only and not lazy:
                        continue
                    if d.via_import:
                        used_imports.add(name)
                    if d.stmt not in seen:
                        seen.add(d.stmt)
                        queue.append(d.stmt)
        seen |= {i for i, s in enumerate(body) if isinstance(s, ast.ImportFrom) and s.module == "__future__"}
        seen.discard(root)
        ordered = sorted(seen)
        return Resolution(
            unresolved=sorted(unresolved, key=lambda u: (u.line, u.name, u.where)),
            context=[body[i] for i in ordered if not isinstance(body[i], (ast.Import, ast.ImportFrom))],
            imports=[stmt for stmt in (body[i] for i in ordered) if isinstance(stmt, (ast.Import, ast.ImportFrom))],
            used_import_names=used_imports,
            builtins_used=builtins_used,
        )

    def _where(self, use: _Use, in_class: bool, class_name: str) -> str:
        if in_class:
            # Decorators and bases of the class are read at module level but belong to it.
            return use.scope.qualname if use.scope.kind != "module" else class_name
        inner = use.scope.qualname if use.scope.kind != "module" else _top_level_label(self.module.body[use.stmt])
        return f"module-level {inner}"


def analyse_module(module: ast.Module) -> ModuleAnalysis:
    """Analyse a module once; call `.resolve(name)` for each of its classes."""
    return ModuleAnalysis(module)


def resolve_class(module: ast.Module, class_name: str) -> Resolution:
    """Resolve one top-level class. Raises ValueError if there is no such class and
    ResolutionError if the class or a statement it needs is nested too deeply to analyse."""
    return ModuleAnalysis(module).resolve(class_name)
