"""The statement-level rewrite of one generated test: inline what reads better inline, and turn
pytest's `assert`/`pytest.raises` into unittest's `self.assert*`/`self.assertRaises`.

Pynguin binds every value to a variable (`var_3 = 42`), once each (its tests are in single
assignment form), so a variable can be replaced by its value wherever that keeps the meaning: a
value with no side effect and no identity (a number, a string, a builtin, the class) anywhere; a
fresh list, dict, set or lambda only where it is used once; a call's result only in the one check
that directly follows the call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

import libcst as cst

from classforge_bench.pipeline.core.errors import InputError

_VAR = re.compile(r"^var_\d+$")
_CODE = cst.Module([])


class ConversionFailed(InputError):
    """A statement has no faithful unittest form; the message says which."""


def code(node: cst.CSTNode) -> str:
    return _CODE.code_for_node(node)


def _pure(node: cst.BaseExpression, *, mutable_ok: bool) -> bool:
    """No side effect when evaluated; `mutable_ok`: a fresh mutable object is fine too."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Name)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value, mutable_ok=mutable_ok)
    if isinstance(node, cst.UnaryOperation):
        return _pure(node.expression, mutable_ok=mutable_ok)
    if isinstance(node, cst.Tuple):
        return all(_pure(e.value, mutable_ok=mutable_ok) for e in node.elements)
    if isinstance(node, (cst.List, cst.Set)):
        return mutable_ok and all(_pure(e.value, mutable_ok=True) for e in node.elements)
    if isinstance(node, cst.Dict):
        return mutable_ok and all(
            isinstance(e, cst.DictElement) and _pure(e.key, mutable_ok=True) and _pure(e.value, mutable_ok=True)
            for e in node.elements
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "complex":
        return all(_pure(a.value, mutable_ok=mutable_ok) for a in node.args)
    if isinstance(node, cst.Lambda):
        return mutable_ok
    return False


def _names_anything(node: cst.CSTNode) -> bool:
    """Whether an expression reads a variable (anything but a builtin constant)."""
    found: list[str] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if name.value not in ("True", "False", "None", "complex"):
                found.append(name.value)

    node.visit(_Names())
    return bool(found)


class _Substitute(cst.CSTTransformer):
    def __init__(self, values: dict[str, cst.BaseExpression]) -> None:
        self.values = values

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.values.get(updated.value, updated)


class _Uses(cst.CSTVisitor):
    def __init__(self) -> None:
        self.count: dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        if _VAR.match(node.value):
            self.count[node.value] = self.count.get(node.value, 0) + 1


_Node = TypeVar("_Node", bound=cst.CSTNode)


def transformed(node: _Node, transformer: cst.CSTTransformer) -> _Node:
    """`node.visit(transformer)` for a transformer that rewrites inside the node and never removes or
    splits it (libcst's `visit` is typed for transformers that may)."""
    out = node.visit(transformer)
    assert isinstance(out, type(node)), f"{type(transformer).__name__} replaced a {type(node).__name__}"
    return out


def uses(nodes: Sequence[cst.CSTNode]) -> dict[str, int]:
    visitor = _Uses()
    for node in nodes:
        node.visit(visitor)
    return visitor.count


def _small(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> cst.BaseSmallStatement | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None


def assigned(stmt: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """(`var_N`, value) for `var_N = value`, else None."""
    small = _small(stmt)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name) and _VAR.match(target.value):
            return target.value, small.value
    return None


def _approx_delta(call: cst.Call) -> tuple[cst.BaseExpression, str]:
    expected = call.args[0].value
    named = {a.keyword.value: code(a.value) for a in call.args if a.keyword is not None}
    tolerance = [float(named[k]) for k in ("abs", "rel") if k in named]
    try:
        scale = abs(complex(code(expected).replace(" ", "")))
    except ValueError:
        scale = 1.0
    absolute = float(named.get("abs", 0.0))
    relative = float(named.get("rel", 0.0)) * scale
    return expected, repr(max(absolute, relative, *tolerance[:0]) or 1e-6)


def _type_name_check(
    left: cst.BaseExpression,
    right: cst.BaseExpression,
    class_name: str,
    bound: dict[str, tuple[str, str]],
    used: set[str],
) -> str | None:
    """Pynguin's `f"{type(x).__module__}.{type(x).__qualname__}" == "builtins.list"` as assertIsInstance."""
    if not isinstance(left, cst.FormattedString) or not isinstance(right, cst.SimpleString):
        return None
    match = re.search(r"\{type\((.+?)\)\.__module__\}", code(left))
    qualified = right.evaluated_value
    if match is None or not isinstance(qualified, str) or "." not in qualified:
        return None
    module, _, name = qualified.rpartition(".")
    if module == "builtins" or (module == "under_test" and name == class_name):
        return f"self.assertIsInstance({match.group(1)}, {name})"
    top = next((m for m in sorted(bound, key=len, reverse=True) if module == m or module.startswith(m + ".")), None)
    if top is not None and "." not in name:
        alias, line = bound[top]
        used.add(line)
        return f"self.assertIsInstance({match.group(1)}, {alias}{module[len(top) :]}.{name})"
    raise ConversionFailed(f"type check against {qualified}, which the task does not name")


def assert_call(
    test: cst.BaseExpression,
    class_name: str,
    bound: dict[str, tuple[str, str]] | None = None,
    used: set[str] | None = None,
) -> str:
    """The unittest call that checks what `assert <test>` checks."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return f"self.assertFalse({code(test.expression)})"
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return f"self.assertTrue({code(test)})"
    left, (op, right) = test.left, (test.comparisons[0].operator, test.comparisons[0].comparator)
    shown = code(left)
    if isinstance(op, cst.Is) and isinstance(right, cst.Name) and right.value in ("True", "False", "None"):
        return {
            "True": f"self.assertTrue({shown})",
            "False": f"self.assertFalse({shown})",
            "None": f"self.assertIsNone({shown})",
        }[right.value]
    if isinstance(op, cst.IsNot) and isinstance(right, cst.Name) and right.value == "None":
        return f"self.assertIsNotNone({shown})"
    if isinstance(op, cst.Equal):
        typed = _type_name_check(left, right, class_name, bound or {}, used if used is not None else set())
        if typed is not None:
            return typed
        if isinstance(right, cst.Call) and code(right.func) == "pytest.approx":
            expected, delta = _approx_delta(right)
            return f"self.assertAlmostEqual({shown}, {code(expected)}, delta={delta})"
        return f"self.assertEqual({shown}, {code(right)})"
    names = {
        cst.NotEqual: "assertNotEqual",
        cst.In: "assertIn",
        cst.NotIn: "assertNotIn",
        cst.Is: "assertIs",
        cst.IsNot: "assertIsNot",
    }
    for kind, method in names.items():
        if isinstance(op, kind):
            return f"self.{method}({shown}, {code(right)})"
    return f"self.assertTrue({code(test)})"


class AssertRewriter:
    """Rewrites one generated test's statements; raises ConversionFailed for what it cannot."""

    def __init__(self, class_name: str, bound: dict[str, tuple[str, str]] | None = None) -> None:
        self.class_name = class_name
        self.bound = bound or {}
        self.used: set[str] = set()  # the task's import lines the rewritten checks need

    def rewrite(self, statements: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> list[cst.BaseStatement]:
        for stmt in statements:
            self._check_supported(stmt)
        # what is left are whole statements: a one-line body's small statements were refused above
        body = self._inline_values([stmt for stmt in statements if isinstance(stmt, cst.BaseStatement)])
        body = [stmt for stmt in body if not self._says_nothing(stmt)]
        body = self._check_in_place(body)
        return [self._unittest_form(stmt) for stmt in body]

    def _says_nothing(self, stmt: cst.BaseStatement) -> bool:
        """An assert true by construction: on an input literal (Pynguin's simple assertions check
        its own arguments too: `"x" == "x"` once inlined), or that a fresh instance is one."""
        small = _small(stmt)
        if not isinstance(small, cst.Assert):
            return False
        test = small.test
        if isinstance(test, cst.Comparison) and _pure(test.left, mutable_ok=True) and not _names_anything(test.left):
            return True
        text = code(test)
        return bool(re.fullmatch(rf"isinstance\(\w+, (under_test_\.)?{re.escape(self.class_name)}\)", text))

    def _check_supported(self, stmt: cst.BaseStatement | cst.BaseSmallStatement) -> None:
        small = _small(stmt)
        if isinstance(small, (cst.Assign, cst.Expr, cst.Assert)):
            return
        if isinstance(stmt, cst.With) and "pytest.raises" in code(stmt.items[0]):
            for inner in stmt.body.body:
                self._check_supported(inner)
            return
        raise ConversionFailed(f"unsupported statement: {code(stmt).strip()[:80]}")

    def _inline_values(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        counts = uses(body)
        values: dict[str, cst.BaseExpression] = {}
        kept: list[cst.BaseStatement] = []
        for stmt in body:
            stmt = transformed(stmt, _Substitute(values)) if values else stmt
            bound = assigned(stmt)
            if bound is not None:
                name, value = bound
                once = counts.get(name, 0) - 1 <= 1
                if _pure(value, mutable_ok=once):
                    values[name] = value
                    continue
                if counts.get(name, 0) == 1:  # bound, never read: keep the call, drop the name
                    stmt = cst.SimpleStatementLine([cst.Expr(value)])
            kept.append(stmt)
        return kept

    def _check_in_place(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """`r = obj.m(); assert r == 3` -> `assert obj.m() == 3` when nothing else reads `r`."""
        out: list[cst.BaseStatement] = []
        i = 0
        while i < len(body):
            bound = assigned(body[i])
            nxt = _small(body[i + 1]) if i + 1 < len(body) else None
            if bound is not None and isinstance(nxt, cst.Assert):
                name, value = bound
                rest = body[:i] + body[i + 2 :]
                if uses([nxt]).get(name, 0) == 1 and uses(rest).get(name, 0) == 0:
                    out.append(transformed(body[i + 1], _Substitute({name: value})))
                    i += 2
                    continue
            out.append(body[i])
            i += 1
        return out

    def _unittest_form(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        small = _small(stmt)
        if isinstance(small, cst.Assert):
            return cst.parse_statement(assert_call(small.test, self.class_name, self.bound, self.used) + "\n")
        if isinstance(stmt, cst.With):
            raised = stmt.items[0].item
            if not isinstance(raised, cst.Call) or not raised.args:
                raise ConversionFailed("pytest.raises without an exception type")
            suite = stmt.body
            assert isinstance(suite, cst.IndentedBlock)  # _check_supported refused a one-line `with` body
            inner = [self._unittest_form(s) for s in suite.body]
            block = "".join("    " + line + "\n" for s in inner for line in code(s).strip().splitlines())
            return cst.parse_statement(f"with self.assertRaises({code(raised.args[0].value)}):\n{block}")
        return stmt
