"""A task's contract: what a correct implementation of its skeleton must do, derived once from the
skeleton (and the task's own base tests). Every test generator and screening rule obeys it: the
plus tier's screening (`suite.screen`), the walks (`walks.py`), the state observation
(`observe.py`) and, through them, the real-source track's generated tests.

A task can claim "a correct implementation of the skeleton passes" only if its tests stay inside:

* Inputs. Each parameter's domain comes from its `:param` type or annotation (contract.py), the
  literals its default, the skeleton's `>>>` examples and the base tests pass (examples.py), and
  its description's words: a number keeps the sign and range shown (0 only where a value shown or
  the text admits it), a `char` is one character, an int is never given a float.
* Observations. Return values of public methods; the public fields the skeleton declares (its
  constructor's assignments, as ClassEval's skeletons state them; on the real-source track, where
  the constructor is the author's code, only the fields its docstring documents); class-level names
  the skeleton declares; and exception types the description documents (`:raises X:`, "raises X",
  or a failure stated without a type: "if ... is invalid", then any exception). Nothing else: no
  undeclared field or constant, no message text, no state after an undocumented exception.
* Reference quirks. Where the reference raises an exception the description does not document on
  an in-contract input (an unstated precondition or a bug), the test is dropped
  (`plus-undocumented-exception`), also when that leaves the object unusable for the calls after it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from classforge_bench.pipeline.core import parsing, reasons
from classforge_bench.pipeline.core.ast_helpers import find_class
from classforge_bench.pipeline.quality.plus.contract import (
    Contract,
    declared_fields,
    declared_types,
    instances,
    off_contract,
)
from classforge_bench.pipeline.quality.plus.examples import (
    Evidence,
    method_docs,
    off_domain,
    shown_arguments,
    undescribed_effect,
    unshown_type,
)

_EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Exit|Warning|Interrupt))\b")
# A failure stated without naming its type: any exception is then the documented behaviour. A
# method that says it checks whether its parameters are legal or valid states one too (ClassEval's
# BitStatusUtil.add: "check the parameters wheather they are legal"; its `check` raises ValueError).
_STATED_FAILURE = re.compile(
    r"\b(raises?|raised|throws?|thrown)\b|\bif\b[^.\n]*\b(invalid|not valid|illegal)\b"
    r"|\bchecks?\b[^.\n]*\b(param\w*|arguments?|args|inputs?)\b[^.\n]*\b(legal|valid)\b",
    re.IGNORECASE,
)
ANY_EXCEPTION = "Exception"
_PROBE = "cf_contract_probe"  # the instance name of the one-call snippets `admits` checks


def documented_exceptions(doc: str) -> frozenset[str]:
    """The exception types a method's description documents; {"Exception"} when it states a
    failure without a type; empty when it states none."""
    named = set(_EXCEPTION_NAME.findall(doc))
    if named:
        return frozenset(named)
    return frozenset({ANY_EXCEPTION}) if _STATED_FAILURE.search(doc) else frozenset()


def _constructor(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)


def names_field(text: str, name: str) -> bool:
    """The docstring text documents `name` as a field: `self.name`, an `:ivar name:` (`:var`, `:attr`)
    entry, or a line starting `name:` / `name (type):` (Google and NumPy Attributes); a mere
    mention of the word ("a meter of readings") is not a declaration."""
    n = re.escape(name)
    return bool(re.search(rf"self\.{n}\b|:(ivar|var|attr|attribute)\s+{n}\s*:|^\s*{n}\s*(\(|:)", text, re.MULTILINE))


def documented_fields(cls: ast.ClassDef) -> frozenset[str]:
    """Public fields the constructor assigns that the class's or the constructor's docstring names."""
    init = _constructor(cls)
    if init is None:
        return frozenset()
    text = "\n".join([ast.get_docstring(cls) or "", ast.get_docstring(init) or ""])
    assigned = {
        n.attr
        for n in ast.walk(init)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
        if n.value.id == "self" and not n.attr.startswith("_")
    }
    return frozenset(f for f in assigned if names_field(text, f))


def class_constants(cls: ast.ClassDef) -> frozenset[str]:
    """Public names the class body itself binds (`CENT = Decimal('0.01')`), as the skeleton shows them."""
    found: set[str] = set()
    for node in cls.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and not n.id.startswith("_")}
    return frozenset(found)


@dataclass(frozen=True)
class TaskContract:
    """What the skeleton promises; each method is one rule and names what breaks it."""

    class_name: str
    declared: Contract
    evidence: Evidence
    docs: dict[str, str]
    fields: frozenset[str] | None  # None: the skeleton could not be read, no field rule applies
    constants: frozenset[str]
    methods: frozenset[str]
    raises: dict[str, frozenset[str]]

    # -- inputs ----------------------------------------------------------------------------------
    def argument_problem(self, body: str) -> tuple[str, str] | None:
        """(reason, detail) for the first argument outside its parameter's type, sign, range or shape."""
        order = {method: list(params) for method, params in self.evidence.items()}
        declared = self.with_shown_types()
        off = (off_contract(body, self.class_name, declared, order) if declared else None) or unshown_type(
            body, self.class_name, self.evidence, self.declared
        )
        if off is not None:
            return reasons.PLUS_OFF_CONTRACT, off
        outside = off_domain(body, self.class_name, self.evidence)
        return (reasons.PLUS_OFF_DOMAIN, outside) if outside else None

    def with_shown_types(self) -> Contract:
        """The declared types widened by the types the skeleton's examples and defaults and the
        task's own base tests pass (`>>> c.format(None)`, `transfer(other_account=account)`): a
        value the task itself passes is in its domain, whatever a loose `:param` line says."""
        widened: Contract = {}
        for method, params in self.declared.items():
            shown = self.evidence.get(method, {})
            widened[method] = {
                p: "|".join(dict.fromkeys(t.split("|") + sorted(shown[p].types | shown[p].passed))) if p in shown else t
                for p, t in params.items()
            }
        return widened

    def admits(self, method: str, param: str, source: str) -> bool:
        """Whether passing `source` (an argument's source text) to `param` stays in the contract."""
        call = (
            f"{self.class_name}({param}={source})" if method == "__init__" else f"{_PROBE}.{method}({param}={source})"
        )
        try:
            return self.argument_problem(call) is None
        except SyntaxError:
            return False

    # -- observations ----------------------------------------------------------------------------
    def observable(self, name: str) -> bool:
        """A public field or constant the skeleton declares, or one of its members (a property)."""
        return self.fields is None or name in self.fields or name in self.constants or name in self.methods

    def attribute_problem(self, body: str) -> str | None:
        """The first attribute of an instance, or of the class itself, that the skeleton does not declare."""
        if self.fields is None:
            return None
        tree = parsing.parse(body)
        bound = instances(tree, self.class_name) | {self.class_name}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and not self.observable(node.attr)
            ):
                return f"{node.value.id}.{node.attr}: not a field, constant or method the skeleton declares"
        return None

    def without_undeclared_checks(self, body: str) -> tuple[str, int]:
        """(the body without the assertions that read an undeclared field or constant, how many
        went): Pynguin checks every class attribute after the constructor (`CheckoutInvoice.CENT ==
        Decimal('0.01')`); the test's other checks stand. An undeclared read anywhere else (an
        argument) is `attribute_problem`'s: the test goes."""
        if self.fields is None:
            return body, 0
        tree = parsing.parse(body)
        lines = body.splitlines()
        bound = instances(tree, self.class_name) | {self.class_name}
        cut: set[int] = set()
        removed = 0
        for stmt in tree.body:
            call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
            is_check = call is not None and isinstance(call.func, ast.Attribute) and call.func.attr.startswith("assert")
            if is_check and any(
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id in bound
                and not self.observable(n.attr)
                for n in ast.walk(stmt)
            ):
                cut |= set(range(stmt.lineno - 1, (stmt.end_lineno or stmt.lineno)))
                removed += 1
        if not cut:
            return body, 0
        kept = [line for i, line in enumerate(lines) if i not in cut]
        return "\n".join(kept) + "\n", removed

    def effect_problem(self, body: str) -> str | None:
        return undescribed_effect(body, self.docs) if self.docs else None

    def exception_for(self, methods: list[str], raised: list[str]) -> str | None:
        """The exception type a test may assert when a call of `methods` raised (`raised`: the
        exception's class and its bases, most specific first): the first one the description
        documents, 'Exception' when it states a failure without a type; None: undocumented."""
        documented = frozenset().union(*(self.raises.get(m, frozenset()) for m in methods)) if methods else frozenset()
        found = next((name for name in raised if name in documented), None)
        if found is not None:
            return found
        return ANY_EXCEPTION if ANY_EXCEPTION in documented else None

    def raise_problem(self, body: str) -> tuple[str | None, str]:
        """(the body with every asserted exception one the description documents, '') or (None,
        what is undocumented). An exception stated without a type is asserted as `Exception`."""
        tree = parsing.parse(body)
        lines = body.splitlines()
        for node in ast.walk(tree):
            if not isinstance(node, ast.With):
                continue
            call = node.items[0].context_expr
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args):
                continue
            if call.func.attr != "assertRaises":
                continue
            asserted = ast.unparse(call.args[0])
            called = self.called(node)
            allowed = self.exception_for(called, [asserted])
            if allowed is None:
                return (
                    None,
                    f"{'/'.join(called) or 'the constructor'} raises {asserted}, which its description does not document",
                )
            if allowed != asserted:
                line = node.lineno - 1
                lines[line] = lines[line].replace(f"assertRaises({asserted})", f"assertRaises({allowed})", 1)
        return "\n".join(lines) + ("\n" if body.endswith("\n") else ""), ""

    def called(self, node: ast.AST | str) -> list[str]:
        """Methods of the class a statement calls (the constructor as `__init__`)."""
        found: list[str] = []
        tree = parsing.parse(node.strip()) if isinstance(node, str) else node
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            if isinstance(call.func, ast.Name) and call.func.id == self.class_name:
                found.append("__init__")
            elif isinstance(call.func, ast.Attribute) and call.func.attr in self.methods:
                found.append(call.func.attr)
        return list(dict.fromkeys(found))


def derive_contract(
    skeleton: str, class_name: str, base_tests: str = "", *, documented_fields_only: bool = False
) -> TaskContract:
    """The contract of a task from its skeleton and base tests. `documented_fields_only`: the
    constructor is the author's code, not a specification (the real-source track), so only the
    fields its docstrings name are observable."""
    try:
        cls = find_class(parsing.parse(skeleton), class_name)
    except SyntaxError:
        cls = None
    if cls is None:
        return TaskContract(class_name, {}, {}, {}, None, frozenset(), frozenset(), {})
    methods = frozenset(f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    docs = method_docs(skeleton, class_name)
    assigned = declared_fields(skeleton, class_name) or set()
    fields = (
        documented_fields(cls) if documented_fields_only else frozenset(f for f in assigned if not f.startswith("_"))
    )
    return TaskContract(
        class_name=class_name,
        declared=declared_types(skeleton, class_name),
        evidence=shown_arguments(skeleton, class_name, base_tests),
        docs=docs,
        fields=fields,
        constants=class_constants(cls),
        methods=methods,
        raises={m: documented_exceptions(d) for m, d in docs.items()},
    )
