"""What a task's description shows of each parameter, where no `:param` line types it, and the
values it shows: the evidence for two screening rules beyond the declared types (contract.py).

Many descriptions type some parameters and leave others to their examples (`>>> FitnessTracker(1.8,
70, 20, "male")`) or to a default (`def __init__(self, N=3)`). Pynguin passes whatever it likes
there (`sex=(-1297, True)`, `N=False`), and what the reference does with that is behaviour no
description fixes; a correct solution may differ. Likewise a negative number where every example
is non-negative and the text never says "negative" (`decimal_to_octal(-916)`: the reference's
`oct(n)[2:]` gives 'o1624'). Both kinds of test are dropped, the first as off-contract, the second
as off-domain.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.quality.plus.contract import (
    argument_type,
    fits,
    instances,
    literal_type,
    named_arguments,
    variable_types,
)


@dataclass
class Shown:
    """One parameter as the description (and the task's base tests) shows it."""

    types: set[str] = field(default_factory=set)
    numbers: list[float] = field(default_factory=list)
    says_negative: bool = False
    says_zero: bool = False  # "zero", "0", "non-negative", ">= 0" in the method's description
    char: bool = False  # named or described as one character (`char`, ":param c: a single character")
    strings: list[str] = field(default_factory=list)
    # what the task passes that no literal rule reads: None, a type (`arg_type=int`), an instance
    # of the task's class; in the domain (TaskContract.with_shown_types), never a domain by itself
    passed: set[str] = field(default_factory=set)
    sources: list[str] = field(default_factory=list)  # the literals shown, as written: repair.py's in-contract values

    def only_numeric_strings(self) -> bool:
        """Every string shown is a number written in digits ("12345678901234567890", "-3", "0.5"):
        the parameter is a number passed as text, and "" or "#:FIV" is outside what it shows."""
        return bool(self.strings) and all(_NUMERIC_TEXT.fullmatch(s) for s in self.strings)

    def only_non_negative(self) -> bool:
        return bool(self.numbers) and min(self.numbers) >= 0 and not self.says_negative

    def only_positive(self) -> bool:
        """Every number shown is above 0 and the text never admits 0 or a negative: 0 is out of range."""
        return self.only_non_negative() and min(self.numbers) > 0 and not self.says_zero


_NUMERIC_TEXT = re.compile(r"[-+]?\d+(\.\d+)?")

Evidence = dict[str, dict[str, Shown]]  # method -> parameter -> what the description shows


def literal_value(node: ast.expr) -> tuple[str, object] | None:
    """(builtin type name, value) of a literal argument (a signed number included); None otherwise."""
    try:
        value = parsing.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return type(value).__name__, value


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    return names if static or not names else names[1:]


# Zero admitted: by the parameter's own line ("0 or more", "zero"), or by the method's text for
# every parameter only in words that speak of a domain ("non-negative", ">= 0"): a `0` elsewhere
# (an example's output, a field's "initially 0") says nothing of what a parameter may be.
_ZERO_WORDS = re.compile(r"non-?negative|>=\s*0|\bzero\b|\b0\b", re.IGNORECASE)
_ZERO_DOMAIN = re.compile(r"non-?negative|>=\s*0", re.IGNORECASE)
_CHAR_NAMES = {"char", "ch", "character", "letter"}
_CHAR_TEXT = re.compile(r"\b(char|character|letter)\b", re.IGNORECASE)
_PARAM_LINE = re.compile(r":param\s+(\w+)\s*:\s*([^\n]*)")


def _describe(shown: dict[str, Shown], doc: str) -> None:
    """What the method's text says of its parameters' domains: negatives, zero, one character."""
    says_negative, says_zero = "negative" in doc.lower().replace("non-negative", ""), bool(_ZERO_DOMAIN.search(doc))
    texts = dict(_PARAM_LINE.findall(doc))
    for name, one in shown.items():
        one.says_negative = says_negative
        one.says_zero = says_zero or bool(_ZERO_WORDS.search(texts.get(name, "")))
        one.char = name.lower() in _CHAR_NAMES or bool(_CHAR_TEXT.search(texts.get(name, "")))


def _example_calls(doc: str) -> list[ast.Call]:
    lines = [line.strip()[4:] for line in doc.splitlines() if line.strip().startswith((">>> ", "... "))]
    calls = []
    for line in lines:
        try:
            calls += [n for n in ast.walk(parsing.parse(line)) if isinstance(n, ast.Call)]
        except SyntaxError:
            continue
    return calls


def _record(shown: Shown, node: ast.expr, bound: tuple[str, set[str]] = ("", set())) -> None:
    """`bound`: the task's class and the names its base tests bind to instances of it."""
    if isinstance(node, ast.Name) and node.id in bound[1]:
        shown.passed.add(bound[0])
        return
    literal = literal_value(node)
    if literal is None or literal[1] is None:
        kind = literal_type(node)
        if kind in ("NoneType", "type"):
            shown.passed.add(kind)
        return
    kind, value = literal
    shown.sources.append(ast.unparse(node))
    # An example's 70 does not make 70.5 off-contract: an int shown stands for a number.
    shown.types.add("float" if kind == "int" else kind)
    if kind in ("int", "float") and isinstance(value, int | float):
        shown.numbers.append(float(value))
    if kind == "str" and isinstance(value, str):
        shown.strings.append(value)


def _called_method(call: ast.Call, class_name: str, methods: set[str]) -> str | None:
    if isinstance(call.func, ast.Name) and call.func.id == class_name:
        return "__init__"
    if isinstance(call.func, ast.Attribute) and call.func.attr in methods:
        return call.func.attr
    return None


def _test_calls(base_tests: str) -> list[ast.Call]:
    """Every call in the task's own (base) tests: the values they pass are in the contract too."""
    try:
        return [n for n in ast.walk(parsing.parse(base_tests)) if isinstance(n, ast.Call)] if base_tests else []
    except SyntaxError:
        return []


def shown_arguments(described: str, class_name: str, base_tests: str = "") -> Evidence:
    """Per method and parameter: the literal types and numbers its examples, default and the
    task's base tests show."""
    try:
        tree = parsing.parse(described)
    except SyntaxError:
        return {}
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        return {}
    fns = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    params = {name: _parameters(fn) for name, fn in fns.items()}
    evidence: Evidence = {name: {p: Shown() for p in ps} for name, ps in params.items()}
    for name, fn in fns.items():
        _describe(evidence[name], ast.get_docstring(fn) or "")
        positional = fn.args.posonlyargs + fn.args.args
        for arg, default in zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults):
            if arg.arg in evidence[name]:
                _record(evidence[name][arg.arg], default)
    # Examples of one method often sit in another's docstring (the constructor's in every method's).
    docs = [ast.get_docstring(cls) or ""] + [ast.get_docstring(fn) or "" for fn in fns.values()]
    calls = _test_calls(base_tests)
    bound = (class_name, instances(parsing.parse(base_tests), class_name) if calls else set())
    for call in [c for doc in docs for c in _example_calls(doc)] + calls:
        method = _called_method(call, class_name, set(fns))
        if method not in params:  # not a call of the class, or of a constructor it inherits
            continue
        for param, node in zip(params[method], call.args):
            _record(evidence[method][param], node, bound)
        for kw in call.keywords:
            if kw.arg in evidence[method]:
                _record(evidence[method][kw.arg], kw.value, bound)
    return evidence


def _keyword_arguments(
    body: str, class_name: str, evidence: Evidence | None = None
) -> Iterator[tuple[str, ast.keyword]]:
    """(method, named argument) of every call in a test body, positional arguments named by the
    parameter order `evidence` records (the description's signature)."""
    order = {method: list(params) for method, params in (evidence or {}).items()}
    return ((m, kw) for m, kw in named_arguments(body, class_name, order) if kw.arg)


def unshown_type(body: str, class_name: str, evidence: Evidence, declared: dict[str, dict[str, str]]) -> str | None:
    """The first argument of a type the description's examples and defaults never show, for a
    parameter no `:param` line types (those are contract.off_contract's)."""
    variables = variable_types(parsing.parse(body), class_name)
    for method, kw in _keyword_arguments(body, class_name, evidence):
        shown = evidence.get(method, {}).get(kw.arg or "")
        if shown is None or not shown.types or kw.arg in declared.get(method, {}):
            continue
        actual = argument_type(kw.value, variables)
        if actual is not None and not any(fits(actual, wanted) for wanted in shown.types | shown.passed):
            named = sorted("number" if t == "float" else t for t in shown.types)
            return f"{method}({kw.arg}=<{actual}>) where the description's examples and defaults show {'/'.join(named)}"
    return None


def _out_of_range(shown: Shown, node: ast.expr) -> str | None:
    """Why a literal is outside the domain a parameter's description shows, or None."""
    literal = literal_value(node)
    if literal is None:
        return None
    kind, value = literal
    if kind in ("int", "float") and isinstance(value, int | float):
        if value < 0 and shown.only_non_negative():
            return "the description shows only values >= 0"
        if value == 0 and shown.only_positive():
            return "the description shows only values > 0 and never admits 0"
    # "the character's name" is no char where the task itself passes 'John'
    one_char = shown.char and all(len(s) == 1 for s in shown.strings)
    if kind == "str" and isinstance(value, str) and one_char and len(value) != 1:
        return "the description says one character"
    if kind == "str" and isinstance(value, str) and shown.only_numeric_strings() and not _NUMERIC_TEXT.fullmatch(value):
        return "every string the description and base tests show is a number in digits"
    return None


def off_domain(body: str, class_name: str, evidence: Evidence) -> str | None:
    """The first number or string passed outside the sign, range or shape the description shows:
    a negative where every value shown is >= 0 and the text never says 'negative'; 0 where every
    value shown is > 0 and the text never admits zero; a string of another length for a character;
    a string that is not a number where every string shown is one."""
    for method, kw in _keyword_arguments(body, class_name, evidence):
        shown = evidence.get(method, {}).get(kw.arg or "")
        why = _out_of_range(shown, kw.value) if shown is not None else None
        if why is not None:
            return f"{method}({kw.arg}={ast.unparse(kw.value)[:40]}) where {why}"
    return None


def method_docs(described: str, class_name: str) -> dict[str, str]:
    """Method -> its docstring in the description ('' when it has none)."""
    try:
        tree = parsing.parse(described)
    except SyntaxError:
        return {}
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    return {
        f.name: ast.get_docstring(f) or ""
        for f in (cls.body if cls else [])
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _names_field(doc: str, field_name: str) -> bool:
    """The docstring names the field: each of its words (`current_player`: current, player), a
    plural allowed, as a whole word; 'expression' does not name `expr`."""
    words = [w for w in field_name.lower().split("_") if w]
    text = doc.lower().replace("_", " ")  # `>>> market.job_listings` in an example names it too
    return bool(words) and all(re.search(rf"\b{re.escape(w.rstrip('s'))}s?\b", text) for w in words)


def _field_check(stmt: ast.stmt) -> tuple[str, str, str] | None:
    """(variable, field, expected) of `self.assertEqual(x.f, <value>)` / `assertTrue(x.f)` / ..."""
    call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
    if call is None or not isinstance(call.func, ast.Attribute) or not call.args:
        return None
    target = call.args[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return None
    if call.func.attr == "assertEqual" and len(call.args) == 2:
        return target.value.id, target.attr, ast.dump(call.args[1])
    if call.func.attr in ("assertTrue", "assertFalse", "assertIsNone", "assertIsNotNone"):
        return target.value.id, target.attr, call.func.attr
    return None


def undescribed_effect(body: str, docs: dict[str, str]) -> str | None:
    """The first field a test sees change across calls of methods none of whose descriptions name
    it (`check_balanced_brackets()` leaves `expr` cleared in the reference, and says nothing of it)."""
    seen: dict[tuple[str, str], str] = {}
    since: dict[tuple[str, str], list[str]] = {}
    for stmt in parsing.parse(body).body:
        check = _field_check(stmt)
        if check is not None:
            var, name, expected = check
            before, between = seen.get((var, name)), since.get((var, name), [])
            if (
                before is not None
                and before != expected
                and not any(_names_field(docs.get(m, ""), name) for m in between)
            ):
                return f".{name} changes across {', '.join(dict.fromkeys(between)) or 'no call'}(), whose description never names it"
            seen[(var, name)], since[(var, name)] = expected, []
            continue
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in docs:
                for key in (k for k in since if k[0] == func.value.id):
                    since[key].append(func.attr)
    return None
