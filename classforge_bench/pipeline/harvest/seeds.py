"""Seeds from the repository: how its own tests, examples, README snippets and other code build a
harvested class and call it (`RepoSeed`).

The harvest leaves test files, examples and documentation out of the candidates; here they are
read, never run: each is parsed with `ast` (Markdown and reST code blocks, `>>>` lines and notebook
cells too), and every instance of a kept class built with literal arguments (`DisjointSet([1, 2])`,
`DisjointSet[int]()`, a factory `TokenData.from_dict({...})`) yields its constructor and the public
calls made on that instance afterwards in the same function, in source order, with the arguments
literal (a name bound to a literal earlier in the function is inlined; a name bound to the
result of a public call on the instance, fed back to the class, `Token.from_dict(data)` after
`data = token.to_dict()`, becomes the call `from_dict(__seed_self__.to_dict())`). A call inside
`pytest.raises(X)` / `assertRaises(X)` carries the X the author expects. A sequence ends where the
code writes into the instance or calls a private method: what follows depends on internals no
skeleton states. The plus tier replays the seeds on the reference in the sandbox, inside the
task's contract (`classforge_bench/pipeline/quality/plus/repo_seeds.py`).
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.records import SEED_SELF, HarvestedClass, RepoSeed, SeedCall
from classforge_bench.pipeline.harvest import files

Kind = Literal["test", "example", "readme", "call-site"]
MAX_SEEDS = 24  # per class: each seed becomes a test, and a task keeps plus.max_tests at most
_MAX_CALLS = 20  # per seed
_MAX_LITERAL = 400  # characters of one argument: a fixture's whole payload is not a seed
_MAX_BYTES = 1_000_000
_KIND_ORDER = ("test", "example", "readme", "call-site")
_EXAMPLE_DIRS = {"examples", "example", "demo", "demos", "docs", "doc", "notebooks", "samples", "tutorial"}
_DOC_SUFFIXES = (".md", ".rst", ".markdown")
# Builtins whose call on literals is itself a literal value (`DisjointSet(range(5))`).
_PURE_BUILTINS = {"range", "list", "tuple", "set", "frozenset", "dict", "str", "int", "float", "bool", "bytes"}
_RAISES_CONTEXTS = {"raises", "assertRaises", "assertRaisesRegex"}
_FENCE = re.compile(r"^```[ \t]*(?:python|py|python3|pycon)?[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_NOT_THE_REPOSITORYS = (R.SYMLINK, R.VENDORED)  # links are never followed; vendored code is someone else's
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.) ?(.*)$")


@dataclass
class _Builder:
    """One instance being followed through a function."""

    origin: str
    constructor: str
    calls: list[SeedCall] = field(default_factory=list)


# -- what to read -----------------------------------------------------------------------------------


def _kind(path: str, abspath: Path, checkout: Path) -> Kind:
    parts = {p.lower() for p in PurePosixPath(path).parts[:-1]}
    if files.select(path, abspath, checkout).reason == R.TEST_FILE:
        return "test"
    return "example" if parts & _EXAMPLE_DIRS else "call-site"


def _doc_code(text: str) -> str:
    """The Python a Markdown/reST page shows: fenced blocks, then `>>>` session lines (prompts cut)."""
    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    session = [m.group(1) for line in text.splitlines() if (m := _PROMPT.match(line))]
    return "\n\n".join(blocks + (["\n".join(session)] if session else []))


def _notebook_code(text: str) -> str:
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return ""
    sources = ["".join(c.get("source", [])) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    # IPython magics and shell escapes are not Python.
    return "\n\n".join(
        "\n".join(ln for ln in s.splitlines() if not ln.lstrip().startswith(("%", "!"))) for s in sources
    )


def seed_texts(checkout: Path, listing: files.CheckoutListing) -> Iterator[tuple[str, Kind, str]]:
    """(path, kind, Python source) of every file that may show the classes in use, in path order."""
    for rel, abspath in listing.python_files:
        if files.select(rel, abspath, checkout).reason in _NOT_THE_REPOSITORYS:
            continue
        text = _read(abspath)
        if text is not None:
            yield rel, _kind(rel, abspath, checkout), text
    for rel, abspath in _documents(checkout):
        text = _read(abspath)
        if text is None:
            continue
        if abspath.suffix.lower() == ".ipynb":
            yield rel, "example", _notebook_code(text)
        else:
            yield rel, "readme", _doc_code(text)


def _documents(checkout: Path) -> list[tuple[str, Path]]:
    """Markdown/reST pages and notebooks, in path order; `.git`, vendored and linked folders are
    not entered (a repository may keep a whole virtualenv)."""
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(checkout, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(checkout)
        dirnames[:] = [
            d
            for d in dirnames
            if d != ".git"
            and files.select((rel_dir / d / "x.py").as_posix(), here / d / "x.py", checkout).reason
            not in _NOT_THE_REPOSITORYS
        ]
        for name in filenames:
            if name.lower().endswith((*_DOC_SUFFIXES, ".ipynb")) and not (here / name).is_symlink():
                found.append(((rel_dir / name).as_posix(), here / name))
    return sorted(found, key=lambda item: PurePosixPath(item[0]).parts)


def _read(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# -- literals ---------------------------------------------------------------------------------------


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, type(...))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float, complex))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(_is_literal(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS:
        return all(_is_literal(a) for a in node.args) and all(k.arg and _is_literal(k.value) for k in node.keywords)
    return False


class _Inline(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.env.get(node.id, node)


def literal(node: ast.expr, env: dict[str, ast.expr]) -> str | None:
    """The argument's source with names bound to literals inlined, if it is a literal then."""
    inlined = _Inline(env).visit(parsing.parse_expression(ast.unparse(node))).body
    if not _is_literal(inlined):
        return None
    src = ast.unparse(inlined)
    return src if len(src) <= _MAX_LITERAL else None


def _arguments(call: ast.Call, env: dict[str, ast.expr]) -> str | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    parts = [literal(a, env) for a in call.args] + [
        None if (v := literal(k.value, env)) is None else f"{k.arg}={v}" for k in call.keywords
    ]
    return None if any(p is None for p in parts) else ", ".join(p for p in parts if p is not None)


# -- sequences --------------------------------------------------------------------------------------


def _constructed(call: ast.Call, names: set[str]) -> str | None:
    """The class a call builds an instance of: `C(...)`, `pkg.C(...)`, `C[int](...)`, a factory
    `C.make(...)`; None for any other call."""
    func = call.func
    if isinstance(func, ast.Subscript):
        func = func.value
    if isinstance(func, ast.Name) and func.id in names:
        return func.id
    if isinstance(func, ast.Attribute) and func.attr in names:
        return func.attr
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in names
        and not func.attr.startswith("_")
    ):
        return func.value.id
    return None


def _constructor_source(call: ast.Call, name: str, env: dict[str, ast.expr]) -> str | None:
    args = _arguments(call, env)
    if args is None:
        return None
    factory = call.func.attr if isinstance(call.func, ast.Attribute) and call.func.attr != name else None
    return f"{name}.{factory}({args})" if factory else f"{name}({args})"


def _expected_raise(item: ast.withitem) -> str | None:
    """X of `pytest.raises(X)` / `self.assertRaises(X)` (a tuple of types: the first)."""
    call = item.context_expr
    if not (isinstance(call, ast.Call) and call.args):
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name not in _RAISES_CONTEXTS:
        return None
    first = call.args[0].elts[0] if isinstance(call.args[0], ast.Tuple) and call.args[0].elts else call.args[0]
    return ast.unparse(first).rsplit(".", 1)[-1]


def _linear(body: list[ast.stmt], raises: str | None = None) -> Iterator[tuple[ast.stmt, str | None]]:
    """A function body's statements in source order, compound ones opened (nested functions and
    classes are scopes of their own), with the exception a `raises` context around them expects."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            expected = next((x for x in map(_expected_raise, stmt.items) if x), raises)
            yield from _linear(stmt.body, expected)
        elif isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield stmt, raises
            yield from _linear(stmt.body, raises)
            yield from _linear(stmt.orelse, raises)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from _linear(part, raises)
        else:
            yield stmt, raises


def _header(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement itself evaluates (a compound statement: its test or iterable)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    return [stmt]


def _calls(stmt: ast.stmt) -> list[ast.Call]:
    found = [n for part in _header(stmt) for n in ast.walk(part) if isinstance(n, ast.Call)]
    return sorted(found, key=lambda c: (c.lineno, c.col_offset))


def _root(node: ast.expr) -> tuple[str | None, bool]:
    """(the name an attribute/subscript chain starts from, whether a private attribute is on the way)."""
    private = False
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            private = True
        node = node.func if isinstance(node, ast.Call) else node.value
    return (node.id if isinstance(node, ast.Name) else None), private


def _internals(stmt: ast.stmt) -> set[str]:
    """Names whose object the statement changes behind its public methods: a write into it
    (`x.a = 1`, `x.items[0] = 2`, `del x.a`) or a call through a private part (`x._entries.append(1)`).
    Reading private state (`x._rank[r] == 1`) changes nothing and ends nothing."""
    out: set[str] = set()
    for node in (n for part in _header(stmt) for n in ast.walk(part)):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            name, _ = _root(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name, private = _root(node.func.value)
            name = name if private else None
        else:
            continue
        if name is not None:
            out.add(name)
    return out


@dataclass
class _Scope:
    """One function (or module) body being read: literals bound so far, instances followed."""

    path: str
    kind: Kind
    names: set[str]
    env: dict[str, ast.expr] = field(default_factory=dict)
    live: dict[str, tuple[str, _Builder]] = field(default_factory=dict)  # variable -> (class, builder)
    done: list[tuple[str, RepoSeed]] = field(default_factory=list)
    # variable -> (the instance, the public call on it whose result it holds): `data = t.to_dict()`
    results: dict[str, tuple[str, str]] = field(default_factory=dict)

    def finish(self, var: str) -> None:
        if var in self.live:
            cls, b = self.live.pop(var)
            self.done.append((cls, RepoSeed(origin=b.origin, kind=self.kind, constructor=b.constructor, calls=b.calls)))

    def call(self, call: ast.Call, raises: str | None) -> None:
        """A call on a followed instance: kept when public with literal arguments; a private one
        ends the sequence (it works on internals)."""
        func = call.func
        assert isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        var = func.value.id
        if func.attr.startswith("_"):
            self.finish(var)
            return
        args = _arguments(call, self.env)
        builder = self.live[var][1]
        if args is not None and len(builder.calls) < _MAX_CALLS:
            builder.calls.append(SeedCall(call=f"{func.attr}({args})", raises=raises))

    def round_trip(self, call: ast.Call, raises: str | None) -> bool:
        """`C.from_dict(data)` where `data = t.to_dict()` and `t` is followed: a call of `t`'s
        sequence, `from_dict(SEED_SELF.to_dict())` (the instance's own result fed back to the
        class); other arguments literal. False when the call is no such thing."""
        func = call.func
        fed = [a for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)]
        sources = {self.results[a.id][0] for a in fed if a.id in self.results}
        if not isinstance(func, ast.Attribute) or func.attr.startswith("_") or len(sources) != 1:
            return False
        var = sources.pop()
        if var not in self.live:
            return False
        env = dict(self.env) | {
            name: parsing.parse_expression(f"{SEED_SELF}.{made}").body
            for name, (source, made) in self.results.items()
            if source == var
        }
        inlined = _Inline(env).visit(parsing.parse_expression(ast.unparse(call)).body)
        assert isinstance(inlined, ast.Call)
        own = {ast.unparse(v) for v in env.values() if ast.unparse(v).startswith(SEED_SELF)}
        parts = [*inlined.args, *(k.value for k in inlined.keywords)]
        if any(k.arg is None for k in inlined.keywords) or not all(
            ast.unparse(p) in own or _is_literal(p) for p in parts
        ):
            return False
        builder = self.live[var][1]
        if len(builder.calls) < _MAX_CALLS:
            args = ", ".join(
                [ast.unparse(a) for a in inlined.args] + [f"{k.arg}={ast.unparse(k.value)}" for k in inlined.keywords]
            )
            builder.calls.append(SeedCall(call=f"{func.attr}({args})", raises=raises))
        return True

    def statement(self, stmt: ast.stmt, raises: str | None) -> None:
        bound: ast.Call | None = None
        for call in _calls(stmt):
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.live:
                self.call(call, raises)
                if isinstance(stmt, ast.Assign) and stmt.value is call and isinstance(stmt.targets[0], ast.Name):
                    args = _arguments(call, self.env)
                    if args is not None and not func.attr.startswith("_"):
                        self.results[stmt.targets[0].id] = (func.value.id, f"{func.attr}({args})")
            elif _constructed(call, self.names) is not None and self.round_trip(call, raises):
                continue
            elif (cls := _constructed(call, self.names)) is not None:
                if isinstance(stmt, ast.Assign) and stmt.value is call:
                    bound = call
                elif (src := _constructor_source(call, cls, self.env)) is not None:
                    seed = RepoSeed(origin=f"{self.path}:{call.lineno}", kind=self.kind, constructor=src)
                    self.done.append((cls, seed))
        for var in _internals(stmt):
            self.finish(var)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self.bind(stmt.targets[0].id, stmt.value, bound)

    def bind(self, var: str, value: ast.expr, constructor: ast.Call | None) -> None:
        self.finish(var)
        self.env.pop(var, None)
        if constructor is not None:
            cls = _constructed(constructor, self.names)
            src = _constructor_source(constructor, cls, self.env) if cls else None
            if cls and src:
                self.live[var] = (cls, _Builder(origin=f"{self.path}:{constructor.lineno}", constructor=src))
        elif literal(value, self.env) is not None:
            self.env[var] = parsing.parse_expression(literal(value, self.env) or "").body


def _scopes(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    yield tree.body
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.body


def sequences(source: str, path: str, kind: Kind, names: set[str]) -> list[tuple[str, RepoSeed]]:
    """(class, seed) for every instance of `names` the source builds with literal arguments."""
    if not any(n in source for n in names):
        return []
    try:
        tree = parsing.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # not Python (a shell block in a README), or too deep to read safely
    found: list[tuple[str, RepoSeed]] = []
    for body in _scopes(tree):
        scope = _Scope(path, kind, names)
        for stmt, raises in _linear(body):
            scope.statement(stmt, raises)
        for var in list(scope.live):
            scope.finish(var)
        found += scope.done
    return found


def _order(seed: RepoSeed) -> tuple[int, str, int]:
    path, _, line = seed.origin.rpartition(":")
    return _KIND_ORDER.index(seed.kind), path, int(line)


def collect_seeds(checkout: Path, listing: files.CheckoutListing, classes: list[HarvestedClass]) -> None:
    """Each kept class's seeds (`MAX_SEEDS` at most: tests first, then examples, README snippets,
    call sites; each in path and line order; the same sequence once), set on its record."""
    names = {c.class_name for c in classes}
    if not names:
        return
    found: dict[str, list[RepoSeed]] = {n: [] for n in names}
    for rel, kind, text in seed_texts(checkout, listing):
        for cls, seed in sequences(text, rel, kind, names):
            found[cls].append(seed)
    for record in classes:
        unique: dict[tuple[str, tuple[SeedCall, ...]], RepoSeed] = {}
        for seed in sorted(found[record.class_name], key=_order):
            unique.setdefault((seed.constructor, tuple(seed.calls)), seed)
        record.seeds = list(unique.values())[:MAX_SEEDS]
