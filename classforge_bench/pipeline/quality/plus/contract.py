"""The argument types a task's description promises, and their two uses in the plus tier.

ClassEval-style docstrings state each parameter's type (`:param request: dict, the incoming
request`). Pynguin, given an unannotated class, tries every type it knows (`add_user(float)`), and
what the reference does with a float is behaviour no description fixes. So (1) the copy of the
class Pynguin searches on gets those types as annotations (the code under test is unchanged; the
tests still run against the real source), and (2) a converted test passing a literal of another
type is dropped as off-contract.
"""

from __future__ import annotations

import ast
import re

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class

_TYPE_WORDS = {
    "str": "str",
    "string": "str",
    "int": "int",
    "integer": "int",
    "float": "float",
    "number": "float",
    "bool": "bool",
    "boolean": "bool",
    "list": "list",
    "dict": "dict",
    "dictionary": "dict",
    "tuple": "tuple",
    "set": "set",
    "bytes": "bytes",
}
_PARAM = re.compile(r":param\s+(\w+)\s*:\s*([^\n]*)")
_WORD = re.compile(r"\b(" + "|".join(_TYPE_WORDS) + r")\b", re.IGNORECASE)

Contract = dict[str, dict[str, str]]  # method -> parameter -> builtin type names joined by "|"
OBJECT = "object"  # a class no literal is an instance of (`datetime.date`, `callable`, `Decimal`)
_NONE = "NoneType"
_CLASS_WORD = re.compile(r"^(callable|function|[A-Za-z_][\w]*\.[A-Za-z_][\w.]*|[A-Z]\w*)$")


def _type_segment(text: str) -> str | None:
    """The type a ClassEval-style `:param` line states in its last, short, comma-separated part
    ("invoice number, str"; "seconds, float or None"; "issue date, datetime.date"): the builtin
    names joined by "|" (NoneType when it says None), `object` for a class no literal is."""
    last = text.rsplit(",", 1)[-1].strip().rstrip(".")
    words = last.replace(" or ", " ").split()
    if not words or len(last.split()) > 3:
        return None
    found = [_TYPE_WORDS[w.lower()] for w in words if w.lower() in _TYPE_WORDS]
    if not found and any(_CLASS_WORD.match(w) for w in words if w != "None"):
        found = [OBJECT]
    if not found:
        return None
    return "|".join(dict.fromkeys(found + ([_NONE] if "None" in words else [])))


def _annotated(arg: ast.arg) -> str | None:
    """The builtin type a parameter's annotation names (`int`, `Optional[int]` is not one)."""
    name = arg.annotation.id if isinstance(arg.annotation, ast.Name) else None
    return name if name in set(_TYPE_WORDS.values()) else None


def declared_types(described: str, class_name: str) -> Contract:
    """Method -> parameter -> type, from the `:param` lines of the class's docstrings, else from
    the signature's annotation (`def push(self, n: int)`: no float for an int)."""
    try:
        cls = find_class(parsing.parse(described), class_name)
    except SyntaxError:
        return {}
    contract: Contract = {}
    for fn in cls.body if cls else []:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        for name, text in _PARAM.findall(ast.get_docstring(fn) or ""):
            word = _WORD.search(text)
            stated = _type_segment(text) or (_TYPE_WORDS[word.group(1).lower()] if word else None)
            if name in params and stated:
                contract.setdefault(fn.name, {})[name] = stated
        for arg in fn.args.args + fn.args.kwonlyargs:
            typed = _annotated(arg)
            if typed and arg.arg not in contract.get(fn.name, {}):
                contract.setdefault(fn.name, {})[arg.arg] = typed
    return contract


def annotated_source(solution: str, class_name: str, contract: Contract) -> str:
    """The solution with the contract's types as parameter annotations (where none is written)."""
    if not contract:
        return solution
    tree = parsing.parse(solution)
    cls = find_class(tree, class_name)
    if cls is None:
        return solution
    for fn in class_methods(cls):
        if fn.name in contract:
            for arg in fn.args.args + fn.args.kwonlyargs:
                typed = annotation_type(contract[fn.name].get(arg.arg, ""))
                if arg.annotation is None and typed:
                    arg.annotation = ast.Name(id=typed, ctx=ast.Load())
    return ast.unparse(tree)


def literal_type(node: ast.expr) -> str | None:
    """The builtin type a literal argument has; 'other' for a type, lambda or such; None: unknown."""
    if isinstance(node, ast.Constant):
        return type(node.value).__name__ if node.value is not None else "NoneType"
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return type(node.operand.value).__name__
    kinds = {ast.List: "list", ast.Dict: "dict", ast.Tuple: "tuple", ast.Set: "set", ast.Lambda: "function"}
    for kind, name in kinds.items():
        if isinstance(node, kind):
            return name
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "complex":
        return "complex"
    if isinstance(node, ast.Name) and node.id in (
        "int",
        "float",
        "str",
        "bool",
        "list",
        "dict",
        "tuple",
        "set",
        "bytes",
        "type",
        "object",
    ):
        return "type"
    return None


def fits(actual: str, declared: str) -> bool:
    """A literal (or the task's own instance) of type `actual` for a parameter declared `declared`
    ("int", "dict|NoneType", "object": a class no literal and no instance of the task's class is)."""
    parts = declared.split("|")
    return actual in parts or ("float" in parts and actual == "int")


def annotation_type(declared: str) -> str | None:
    """The one builtin type to annotate the search's copy with, if the declaration names one."""
    parts = [p for p in declared.split("|") if p not in (_NONE, OBJECT)]
    return parts[0] if len(parts) == 1 else None


def instances(tree: ast.AST, class_name: str) -> set[str]:
    return {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Name)
        and n.value.func.id == class_name
        for t in n.targets
        if isinstance(t, ast.Name)
    }


_ASSERTED = {"assertTrue": "bool", "assertFalse": "bool", "assertIsNone": "NoneType"}


def variable_types(tree: ast.AST, class_name: str) -> dict[str, str]:
    """The type a test's own assertions give a variable: `assertFalse(result)` makes `result` a bool
    (Pynguin feeds results back as arguments: `TicTacToe(N=result)`), `assertEqual(x, 3)` an int,
    `x = Class()` the class."""
    types = dict.fromkeys(instances(tree, class_name), class_name)
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        func = call.func
        name = call.args[0].id if call.args and isinstance(call.args[0], ast.Name) else None
        if name is None or name in types or not isinstance(func, ast.Attribute):
            continue
        if func.attr in _ASSERTED:
            types[name] = _ASSERTED[func.attr]
        elif func.attr == "assertEqual" and len(call.args) == 2:
            found = literal_type(call.args[1])
            if found is not None and found not in ("function", "type"):
                types[name] = found
    return types


def argument_type(node: ast.expr, variables: dict[str, str]) -> str | None:
    """A literal's type, or the type the test's assertions give the variable passed."""
    return variables.get(node.id) if isinstance(node, ast.Name) and node.id in variables else literal_type(node)


def off_contract(body: str, class_name: str, contract: Contract) -> str | None:
    """The first call in `body` passing a literal of a type its parameter does not promise."""
    tree = parsing.parse(body)
    variables = variable_types(tree, class_name)
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        func = call.func
        method = (
            "__init__"
            if isinstance(func, ast.Name) and func.id == class_name
            else (func.attr if isinstance(func, ast.Attribute) else None)
        )
        wanted = contract.get(method or "", {})
        for kw in call.keywords:
            # No ClassEval-style description promises complex numbers; Pynguin tries them everywhere
            # (GPT-4's AvgPartition and ChandrasekharSieve failed plus tests on complex arguments only).
            if method and literal_type(kw.value) == "complex" and (kw.arg is None or wanted.get(kw.arg) != "complex"):
                return f"{method}({kw.arg}=<complex>), which the description never promises"
            if kw.arg not in wanted:
                continue
            actual = (
                class_name
                if isinstance(kw.value, ast.Name) and kw.value.id == class_name
                else argument_type(kw.value, variables)
            )
            if actual is not None and not fits(actual, wanted[kw.arg]):
                return f"{method}({kw.arg}=<{actual}>) where the description says {wanted[kw.arg]}"
    return None


def declared_fields(described: str, class_name: str) -> set[str] | None:
    """`self.x` names the described class assigns (a skeleton's constructor declares its fields);
    None when it cannot be read."""
    try:
        cls = find_class(parsing.parse(described), class_name)
    except SyntaxError:
        return None
    if cls is None:
        return None
    targets = [
        t
        for node in ast.walk(cls)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]
    # `self.a, self.b = a, b` binds two fields: look inside tuple and list targets too.
    return {
        n.attr
        for t in targets
        for n in ast.walk(t)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }


def undeclared_attribute(body: str, class_name: str, fields: set[str], methods: set[str]) -> str | None:
    """The first attribute of an instance the test reads that the description does not declare."""
    tree = parsing.parse(body)
    bound = instances(tree, class_name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and node.attr not in fields
            and node.attr not in methods
        ):
            return f".{node.attr} is not a field the task's description declares"
    return None
