"""File-level stages: which files are candidates (`select`), whether their text is sound
(`content`), and whether they parse and compile (`compile`)."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from classforge_bench.pipeline.config import FilterConfig
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import KEEP, Verdict

# tests/, testing/, __tests__/, and their suffixed and prefixed kin: tests_integ/, test-utils/,
# integration_tests/, e2e-tests/ (a separator is required, so latest/ and contest/ are not tests).
_TEST_DIR = re.compile(r"^(tests?|testing|unittests?|__tests__|testutils?|testdata)([_-].+)?$|^.+[_-](tests?|testing)$")
# Test-support code wherever it lives: it imports a test framework or defines a TestCase.
_TEST_CONTENT = re.compile(
    r"^[ \t]*(?:import[ \t]+(?:pytest|_pytest|unittest|hypothesis)\b|from[ \t]+(?:pytest|_pytest|unittest|hypothesis)\b"
    r"|@pytest\.fixture|class[ \t]+\w+\([\w.]*TestCase\b)",
    re.M,
)
# A top-level class statement starts a line with `class` (decorators stand on lines of their own),
# so a file without one has no candidate; a match inside a string only costs a parse.
_TOP_LEVEL_CLASS = re.compile(r"^class\b", re.M)
_VENDORED_DIRS = {
    "venv",
    ".venv",
    "env",
    "site-packages",
    "node_modules",
    "vendor",
    "vendored",
    "third_party",
    "build",
    "dist",
    ".tox",
    ".eggs",
}
_SETUP_SCRIPTS = {"setup.py", "noxfile.py", "fabfile.py", "conftest.py"}
# Markup that only appears in a .py file when a page was scraped or a merge went wrong.
_ARTEFACT = re.compile(
    r"^\s*(<!DOCTYPE|<\?xml|</?(html|head|body|div|span|script|table|tr|td|p|br)\b[^>]*>)", re.I | re.M
)


@dataclass
class SourceFile:
    repo: str
    path: str  # posix path relative to the checkout
    abspath: Path
    text: str | None = None
    module: ast.Module | None = None
    index: ModuleIndex | None = None

    @property
    def item_id(self) -> str:
        return f"{self.repo}:{self.path}"


@dataclass(frozen=True)
class RepoModules:
    """The names the repository's own code can be imported by, folder by folder."""

    by_dir: dict[str, frozenset[str]]  # posix folder ("" for the root) -> modules and packages directly in it

    def provides(self, top: str, importer: str) -> bool:
        """Whether `import top` in the file `importer` can reach the repository's own code: from the
        root, a `src`/`lib` folder, or a folder above the importing file (the script's folder is on
        sys.path, and projects run from their source root). A folder elsewhere that merely shares a
        package's name (examples/openai/) does not make `import openai` the repository's own."""
        roots = {"" if p.as_posix() == "." else p.as_posix() for p in PurePosixPath(importer).parents}
        return any(top in self.by_dir.get(r, ()) for r in roots | self._source_roots)

    @cached_property
    def _source_roots(self) -> frozenset[str]:
        # Once per repository, not once per import asked about: a large repository has hundreds of folders.
        return frozenset(d for d in self.by_dir if PurePosixPath(d).name in ("src", "lib"))


@dataclass
class CheckoutListing:
    """One walk of a checkout: what the file stages look at and what the class stages need to know."""

    python_files: list[tuple[str, Path]]  # (relative posix path, absolute path), in path order
    linked_dirs: list[str]  # symlinked directories: never entered, each one rejected
    modules: RepoModules  # what the repository's own code can be imported as


def list_checkout(checkout: Path) -> CheckoutListing:
    """Walk the checkout once, never entering .git or following a link."""
    files: list[tuple[str, Path]] = []
    linked: list[str] = []
    modules: dict[str, set[str]] = {}
    for dirpath, dirnames, filenames in os.walk(checkout, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(checkout)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for d in list(dirnames):
            if (here / d).is_symlink():
                dirnames.remove(d)
                linked.append((rel_dir / d).as_posix())
        py = [f for f in filenames if f.endswith(".py")]
        files += [((rel_dir / f).as_posix(), here / f) for f in py]
        if py and not {p.lower() for p in rel_dir.parts} & _VENDORED_DIRS:
            modules.setdefault(_posix_dir(rel_dir), set()).update(f[:-3] for f in py)
            # Every folder on the way down is a package or namespace package of its parent.
            for depth, part in enumerate(rel_dir.parts):
                modules.setdefault(_posix_dir(PurePosixPath(*rel_dir.parts[:depth])), set()).add(part)
    files.sort(key=lambda item: PurePosixPath(item[0]).parts)
    return CheckoutListing(files, sorted(linked), RepoModules({d: frozenset(n) for d, n in modules.items()}))


def _posix_dir(rel: Path | PurePosixPath) -> str:
    text = PurePosixPath(*rel.parts).as_posix() if rel.parts else ""
    return "" if text == "." else text


def select(path: str, abspath: Path, checkout: Path) -> Verdict:
    """Keep files that are ordinary library code of the repository itself."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    if abspath.is_symlink() or any((checkout / Path(*parts[:i])).is_symlink() for i in range(1, len(parts))):
        what = "directory" if abspath.is_dir() else "file"
        return Verdict.drop(R.SYMLINK, f"a linked {what}; links are never followed")
    dirs = {d.lower() for d in parts[:-1]}
    if dirs & _VENDORED_DIRS:
        return Verdict.drop(R.VENDORED, "inside a virtualenv, build or vendored folder")
    if "migrations" in dirs:
        return Verdict.drop(R.MIGRATION)
    if (
        name == "conftest.py"
        or any(_TEST_DIR.match(d) for d in dirs)
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "tests.py"
    ):
        return Verdict.drop(R.TEST_FILE)
    if name in _SETUP_SCRIPTS:
        return Verdict.drop(R.SETUP_SCRIPT)
    return KEEP


def read_content(f: SourceFile, cfg: FilterConfig) -> Verdict:
    """Content integrity: a bounded, decodable, non-empty text without markup artefacts."""
    size = f.abspath.stat().st_size
    if size > cfg.max_file_bytes:
        return Verdict.drop(R.FILE_TOO_LARGE, f"{size} bytes > {cfg.max_file_bytes}")
    data = f.abspath.read_bytes()
    if b"\x00" in data:
        return Verdict.drop(R.BINARY, "contains NUL bytes")
    try:
        # As Python reads source: a BOM or a PEP 263 coding declaration, else UTF-8.
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # tokenize says "invalid or missing encoding declaration" for UTF-8 it cannot decode in
        # the first two lines, and "unknown encoding" for a declaration Python does not know.
        return Verdict.drop(R.NOT_UTF8 if "missing" in str(exc) else R.BAD_ENCODING, str(exc))
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        return Verdict.drop(R.NOT_UTF8 if encoding in ("utf-8", "utf-8-sig") else R.BAD_ENCODING, f"{encoding}: {exc}")
    if not text.strip():
        return Verdict.drop(R.EMPTY)
    test_code = _TEST_CONTENT.search(text)
    if test_code:
        line = text.count("\n", 0, test_code.start()) + 1
        return Verdict.drop(R.TEST_FILE, f"test code by content, line {line}: {test_code.group(0).strip()[:60]}")
    # Tokenising is the expensive part: only text that has markup somewhere needs it.
    match = _ARTEFACT.search(text) and _ARTEFACT.search(_without_strings(text))
    if match:
        line = text.count("\n", 0, match.start()) + 1
        return Verdict.drop(R.HTML_ARTEFACT, f"markup at line {line}: {match.group(0).strip()[:60]}")
    if not _TOP_LEVEL_CLASS.search(text):
        # Most files of a real repository: the parse (the costliest step for them) would find nothing.
        return Verdict.drop(R.NO_TOP_LEVEL_CLASS)
    f.text = text
    return KEEP


def _without_strings(text: str) -> str:
    """Blank out string literals and comments so markup inside them (templates) is not an artefact."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text  # untokenisable text is judged as it stands
    lines = text.splitlines(keepends=True)
    out = [list(line) for line in lines]
    for tok in tokens:
        if tok.type not in (tokenize.STRING, tokenize.COMMENT) and not _is_fstring_part(tok):
            continue
        (sr, sc), (er, ec) = tok.start, tok.end
        for r in range(sr, er + 1):
            row = out[r - 1]
            start = sc if r == sr else 0
            end = ec if r == er else len(row)
            for c in range(start, min(end, len(row))):
                if row[c] != "\n":
                    row[c] = " "
    return "".join("".join(r) for r in out)


def _is_fstring_part(tok: tokenize.TokenInfo) -> bool:
    return tok.type in {
        getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, n)
    }


@dataclass
class ModuleIndex:
    """One walk of a parsed file: its depth, and every node under each top-level statement, so the
    class-level stages filter lists instead of walking the tree again for every question."""

    depth: int
    nodes: list[list[ast.AST]]  # nodes[i]: module.body[i] and everything under it


def index_module(module: ast.Module) -> ModuleIndex:
    """Computed without recursion, so a pathological file cannot overflow it. The loop reads
    `_fields` itself: `ast.iter_child_nodes` costs a generator per node, and this walk is the
    harvest's hottest loop."""
    node_type = ast.AST
    deepest = 1
    per_stmt: list[list[ast.AST]] = []
    for top in module.body:
        found: list[ast.AST] = []
        stack: list[tuple[ast.AST, int]] = [(top, 2)]
        while stack:
            current, depth = stack.pop()
            found.append(current)
            if depth > deepest:
                deepest = depth
            depth += 1
            for name in current._fields:
                value = getattr(current, name, None)
                if isinstance(value, node_type):
                    stack.append((value, depth))
                elif isinstance(value, list):
                    stack.extend((item, depth) for item in value if isinstance(item, node_type))
        per_stmt.append(found)
    return ModuleIndex(deepest, per_stmt)


def parse_and_compile(
    f: SourceFile, cfg: FilterConfig, worth_analysing: Callable[[ast.ClassDef], bool] | None = None
) -> Verdict:
    """The parse proves the syntax. The walk (nesting depth) and the bytecode compile, which only
    the class stages need, are paid only when a top-level class is `worth_analysing`: most files
    have none, and both cost as much as the parse itself."""
    assert f.text is not None, "content stage must run first"
    try:
        module = parsing.parse(f.text, filename=f.path)
        index = None
        if worth_analysing is None or any(isinstance(n, ast.ClassDef) and worth_analysing(n) for n in module.body):
            index = index_module(module)
            if index.depth > cfg.max_nesting_depth:
                return Verdict.drop(R.TOO_DEEPLY_NESTED, f"AST depth {index.depth} > {cfg.max_nesting_depth}")
            parsing.compile_code(module, f.path)
    except SyntaxError as exc:
        return Verdict.drop(R.SYNTAX_ERROR, f"line {exc.lineno}: {exc.msg}")
    except (RecursionError, MemoryError) as exc:
        return Verdict.drop(R.TOO_DEEPLY_NESTED, type(exc).__name__)
    except ValueError as exc:
        return Verdict.drop(R.SYNTAX_ERROR, str(exc))
    f.module, f.index = module, index
    return KEEP
