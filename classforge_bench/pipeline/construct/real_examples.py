"""`>>>` examples for a real class's docstrings, taken from observed runs of the reference.

An example is a prefix of one generated test that passed on the reference in the gate: the
object built with literal arguments, the calls made on it, then one asserted call (or property
read) and the literal the test asserted it returns. Only tests made of such statements yield
examples, so every example is a run the tests check, written as the reference behaved. The shortest
example per method is kept (up to `limit`).

    >>> breaker = CircuitBreaker(failure_threshold=1)
    >>> breaker.record_failure()
    >>> breaker.allow_request()
    False
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from classforge_bench.pipeline.core import parsing

_TRUTH = {"assertTrue": "True", "assertFalse": "False", "assertIsNone": "None"}


def _literal(node: ast.expr) -> bool:
    try:
        parsing.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _dotted(node: ast.expr) -> bool:
    """A constant named by the module (`CircuitState.OPEN`): a name or attribute chain, no call."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id != "self"


def _expected(node: ast.expr) -> str | None:
    """How an asserted value is shown in an example, if it can be shown."""
    if _literal(node):
        return repr(parsing.literal_eval(node))
    return ast.unparse(node) if _dotted(node) else None


def _literal_call(call: ast.Call) -> bool:
    return all(_literal(a) for a in call.args) and all(k.arg is not None and _literal(k.value) for k in call.keywords)


@dataclass
class _Walk:
    """One test function's statements, read in order until one is not an example step."""

    class_name: str
    objects: set[str] = field(default_factory=set)
    pending: dict[str, ast.expr] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    called: list[str] = field(default_factory=list)
    found: list[tuple[str, list[str]]] = field(default_factory=list)

    def member(self, node: ast.expr) -> str | None:
        """The member of a built object that `node` calls or reads, if it is an example step."""
        if isinstance(node, ast.Name) and node.id in self.pending:
            node = self.pending[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _literal_call(node):
            target = node.func
        elif isinstance(node, ast.Attribute):
            target = node
        else:
            return None
        # `obj.stats.failure_count` reads member `stats`: walk down to the attribute of the object.
        while isinstance(target.value, ast.Attribute):
            target = target.value
        if isinstance(target.value, ast.Name) and target.value.id in self.objects:
            return target.attr
        return None

    def shown(self, node: ast.expr) -> str:
        return ast.unparse(self.pending.get(node.id, node) if isinstance(node, ast.Name) else node)

    def step(self, stmt: ast.stmt) -> bool:
        """Take one statement; False when it ends the example-bearing prefix."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            return self._assign(stmt.targets[0].id, stmt.value)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return self._call(stmt.value)
        if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
            cmp = stmt.test
            if len(cmp.ops) == 1 and isinstance(cmp.ops[0], (ast.Eq, ast.Is)):
                return self._asserted(cmp.left, cmp.comparators[0])
        return False

    def _assign(self, name: str, value: ast.expr) -> bool:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == self.class_name:
            if not _literal_call(value):
                return False
            self.objects.add(name)
            self.lines.append(f">>> {name} = {ast.unparse(value)}")
            return True
        if self.member(value) is not None:
            self.pending[name] = value
            return True
        return False

    def _call(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            args = call.args
            if func.attr in ("assertEqual", "assertIs") and len(args) >= 2 and self._asserted(args[0], args[1]):
                return True
            if func.attr in _TRUTH and len(args) == 1 and self._record(args[0], _TRUTH[func.attr]):
                return True
            # Another check (isinstance, assertAlmostEqual, ...) is left out of the examples; it may
            # be passed over only when it calls nothing on the object, so no state change is lost.
            return func.attr.startswith("assert") and not self._touches(call)
        member = self.member(call)
        if member is not None:
            self.lines.append(f">>> {ast.unparse(call)}")
            self.called.append(member)
            return True
        return False

    def _touches(self, node: ast.AST) -> bool:
        """A call on one of the built objects anywhere inside `node`."""
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and self.member(n.func) is not None
            for n in ast.walk(node)
        )

    def _asserted(self, left: ast.expr, right: ast.expr) -> bool:
        for actual, expected in ((left, right), (right, left)):
            shown = _expected(expected)
            if shown is not None and self.member(actual) is not None:
                return self._record(actual, shown)
        return False

    def _record(self, node: ast.expr, output: str) -> bool:
        """One example: credited to the asserted member, and to the methods called before it, whose
        effect (they may return nothing) is what the assertion observes."""
        name = self.member(node)
        if name is None:
            return False
        block = [*self.lines, f">>> {self.shown(node)}", output]
        for member in dict.fromkeys([*self.called, name]):
            self.found.append((member, block))
        # Later examples of this test replay this step too: the call may have changed the object.
        self.lines = block
        self.called.append(name)
        return True


def observed_examples(tests: str, class_name: str, limit: int = 1) -> dict[str, list[str]]:
    """Member name -> up to `limit` examples (each a block of doctest lines), shortest first."""
    try:
        module = parsing.parse(tests)
    except SyntaxError:
        return {}
    by_member: dict[str, list[list[str]]] = {}
    for cls in (n for n in module.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")):
            walk = _Walk(class_name)
            for stmt in fn.body:
                if not walk.step(stmt):
                    break
            for name, lines in walk.found:
                by_member.setdefault(name, []).append(lines)
    out: dict[str, list[str]] = {}
    for name, blocks in by_member.items():
        unique = sorted({"\n".join(b) for b in blocks}, key=lambda b: (b.count("\n"), b))
        out[name] = unique[:limit]
    return out


def with_examples(docstring: str, examples: list[str]) -> str:
    """The docstring with its examples after the `:return:` field, where ClassEval places them."""
    return "\n".join([docstring, *examples]) if examples else docstring
