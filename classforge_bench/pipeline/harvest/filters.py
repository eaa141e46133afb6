"""Class-level filters. Each answers keep, or drop with a reason code, for one candidate."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from classforge_bench.pipeline.config import FilterConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.ast_helpers import class_methods
from classforge_bench.pipeline.core.class_analysis import is_stdlib_module
from classforge_bench.pipeline.core.funnel import KEEP, Verdict
from classforge_bench.pipeline.core.source import is_placeholder_body
from classforge_bench.pipeline.harvest.candidates import Candidate, class_loc
from classforge_bench.pipeline.harvest.files import RepoModules
from classforge_bench.pipeline.harvest.resolver import ResolutionError


@dataclass
class ImportPurity:
    """Every import the class executes must be the standard library's.

    An import the repository's own code can answer (`repo_modules`) is labelled `same-repo-import`,
    any other non-stdlib one `third-party-import`.
    """

    repo_modules: RepoModules
    name: str = R.IMPORTS

    def check(self, c: Candidate) -> Verdict:
        try:
            nodes = c.import_nodes()
            unresolved = c.unresolved
        except ResolutionError as exc:
            return Verdict.drop(R.UNRESOLVABLE, str(exc))
        opaque = c.opaque_stars()
        if opaque and unresolved:
            # A name nothing else binds can only come from a star import whose names we cannot know.
            names = ", ".join(sorted({u.name for u in unresolved})[:5])
            return Verdict.drop(R.STAR_IMPORT, f"line {opaque[0].lineno}: {ast.unparse(opaque[0])} may provide {names}")
        for node in nodes:
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    return Verdict.drop(R.RELATIVE_IMPORT, f"line {node.lineno}: {ast.unparse(node)}")
                modules = [node.module or ""]
            else:
                modules = [a.name for a in node.names]
            for mod in modules:
                top = mod.split(".")[0]
                if is_stdlib_module(top):
                    continue
                # A name the repo itself provides shadows the stdlib, and is not portable either.
                reason = R.SAME_REPO_IMPORT if self.repo_modules.provides(top, c.path) else R.THIRD_PARTY_IMPORT
                return Verdict.drop(reason, f"line {node.lineno}: {mod}")
        return KEEP


@dataclass
class Structure:
    """Size and shape: methods are the def/async def statements directly in the class body;
    lines are the physical lines of the class statement, decorators, comments and blank lines included."""

    cfg: FilterConfig
    name: str = R.STRUCTURE

    def check(self, c: Candidate) -> Verdict:
        return self.fits(c.node)

    def fits(self, node: ast.ClassDef) -> Verdict:
        """Answerable from the class statement alone, so it runs first and a file whose classes
        all fail it is never analysed further."""
        n = len(class_methods(node))
        if n < self.cfg.min_methods:
            return Verdict.drop(R.TOO_FEW_METHODS, f"{n} < {self.cfg.min_methods}")
        loc = class_loc(node)
        if loc < self.cfg.min_lines:
            return Verdict.drop(R.TOO_SHORT, f"{loc} lines < {self.cfg.min_lines}")
        if loc > self.cfg.max_lines:
            return Verdict.drop(R.TOO_LONG, f"{loc} lines > {self.cfg.max_lines}")
        return KEEP


@dataclass
class ReferenceCompleteness:
    """Every name the class (and the context it carries) uses must resolve."""

    name: str = R.REFERENCES

    def check(self, c: Candidate) -> Verdict:
        try:
            unresolved = c.unresolved
        except ResolutionError as exc:
            return Verdict.drop(R.UNRESOLVABLE, str(exc))
        if unresolved:
            shown = ", ".join(f"{u.name} (line {u.line})" for u in unresolved[:5])
            return Verdict.drop(R.UNRESOLVED_NAME, shown)
        return KEEP


# Modules whose only purpose is driving a terminal: their classes need a real TTY to run at all.
TERMINAL_MODULES = frozenset({"curses", "termios", "tty", "msvcrt", "pty"})
# Clear screen, cursor movement and cursor visibility (colour codes alone are ordinary text).
_TERMINAL_ESCAPE = re.compile(r"\x1b\[(\d*(;\d*)?[ABCDHJKf]|\?25[hl])")


def clears_screen(nodes: list[ast.AST]) -> str | None:
    """`os.system("clear")`/`("cls")` or a cursor-control escape sequence in the code, as evidence."""
    for n in nodes:
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "system"
            and n.args
            and any(isinstance(a, ast.Constant) and a.value in ("clear", "cls") for a in ast.walk(n.args[0]))
        ):
            return f"line {n.lineno}: {ast.unparse(n)}"
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _TERMINAL_ESCAPE.search(n.value):
            return f"line {n.lineno}: cursor-control escape {n.value[:20]!r}"
    return None


@dataclass
class Testability:
    """Classes a unit test cannot drive as shipped: they would only waste the LLM budget.

    `interactive-input` reads the keyboard (`input()`, `getpass`), `terminal-control` drives a
    terminal (curses/termios/tty/msvcrt, clearing the screen, moving the cursor), `abstract-stubs`
    has no behaviour (every method but `__init__` is a stub), `abstract-class` cannot be instantiated
    (an ABC with abstract methods: a test can only reach it through a subclass no skeleton states).
    """

    name: str = R.TESTABILITY

    def check(self, c: Candidate) -> Verdict:
        if "input" in c.resolution.builtins_used and "input" not in c.star_provided:
            return Verdict.drop(R.INTERACTIVE_INPUT, "reads the keyboard with input()")
        tops = {m.split(".")[0] for m in c.used_modules()}
        if "getpass" in tops:
            return Verdict.drop(R.INTERACTIVE_INPUT, "reads the keyboard with getpass")
        if tops & TERMINAL_MODULES:
            return Verdict.drop(R.TERMINAL_CONTROL, f"imports {', '.join(sorted(tops & TERMINAL_MODULES))}")
        # The carried context counts too: a module-level clear() helper clears the screen for the class.
        evidence = clears_screen(c.nodes) or next(
            filter(None, (clears_screen(list(ast.walk(s))) for s in c.resolution.context)), None
        )
        if evidence:
            return Verdict.drop(R.TERMINAL_CONTROL, evidence)
        behaviour = [m for m in c.methods if m.name != "__init__"]
        if behaviour and all(is_placeholder_body(m) for m in behaviour):
            return Verdict.drop(R.ABSTRACT_STUBS, f"all {len(behaviour)} methods besides __init__ are stubs")
        abstract = abstract_methods(c.node)
        if abstract:
            return Verdict.drop(
                R.ABSTRACT_CLASS, f"abstract methods {', '.join(abstract)}: `{c.name}(...)` raises TypeError"
            )
        return KEEP


_ABSTRACT_DECORATORS = {"abstractmethod", "abstractproperty", "abstractclassmethod", "abstractstaticmethod"}


def abstract_methods(cls: ast.ClassDef) -> list[str]:
    """The methods an ABC declares abstract (Python refuses to instantiate it while they are); none
    when the class is no ABC (`@abstractmethod` alone, without ABCMeta, enforces nothing)."""
    meta = [ast.unparse(b) for b in cls.bases] + [ast.unparse(k.value) for k in cls.keywords if k.arg == "metaclass"]
    if not any(m.rsplit(".", 1)[-1] in ("ABC", "ABCMeta") for m in meta):
        return []
    return [
        fn.name
        for fn in class_methods(cls)
        if any(
            (d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) in _ABSTRACT_DECORATORS
            for d in fn.decorator_list
        )
    ]
