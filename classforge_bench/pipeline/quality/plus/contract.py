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
from collections.abc import Iterator

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
    "complex": "complex",
}
_PARAM = re.compile(r":param\s+(\w+)\s*:\s*([^\n]*)")
_PART_END = re.compile(r",|;|\.\s")  # "dict. The data to be inserted"; not the dot of "datetime.date"
_NOUN = re.compile(r"\b(" + "|".join(w for w in _TYPE_WORDS if w != "number") + r")\b")

Contract = dict[str, dict[str, str]]  # method -> parameter -> builtin type names joined by "|"
OBJECT = "object"  # a class no literal is an instance of (`datetime.date`, `Decimal`)
FUNCTION = "function"  # "callable", "function", `Callable[...]`: a lambda is one (literal_type)
_NONE = "NoneType"
_BUILTIN = {*_TYPE_WORDS.values(), _NONE, FUNCTION}
_CLASS_WORD = re.compile(r"^([A-Za-z_][\w]*\.[A-Za-z_][\w.]*|[A-Z]\w*)$")
_CALLABLE_WORDS = {"callable", "function", "Callable"}
# Annotation names that stand for any value, or for several builtin containers (a tuple is a
# Sequence): no literal type is outside them.
_ANY_OF = {"Any", "object", "Sequence", "Iterable", "Iterator", "Mapping", "MutableMapping", "Collection", "Literal"}
_TYPING = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "set", "Optional": ""}


def _annotation_types(node: ast.expr) -> list[str] | None:
    """The builtin types an annotation-like expression names (`Optional[int]`, `int | None`,
    `list[str]`, `datetime.date`); None when it admits any value or is not a type expression."""
    if isinstance(node, ast.Constant) and node.value is None:
        return [_NONE]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation_types(node.left), _annotation_types(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).rsplit(".", 1)[-1]
        if head in ("Optional", "Union"):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            found = [_annotation_types(i) for i in items]
            if any(f is None for f in found):
                return None
            return [t for f in found if f for t in f] + ([_NONE] if head == "Optional" else [])
        return _annotation_types(node.value)
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    name = ast.unparse(node)
    if name.rsplit(".", 1)[-1] in _ANY_OF:
        return None
    if name.rsplit(".", 1)[-1] in _CALLABLE_WORDS:
        return [FUNCTION]
    if name.lower() in _TYPE_WORDS or _TYPING.get(name):
        return [_TYPING.get(name) or _TYPE_WORDS[name.lower()]]
    # a word that is no builtin reads as a class only in a class's spelling ("name" is no type)
    return [name] if _CLASS_WORD.match(name) else None


def _words_type(part: str) -> list[str] | None:
    """The types a part made of type words only states ("str", "float or None", "list of dict",
    "datetime.date", "BankAccount"); None when any other word is in it ("Total count value")."""
    words = part.replace(" or ", " ").split()
    if len(words) > 2 and words[0].lower() in ("list", "dict", "tuple", "set") and words[1] == "of":
        words = words[:1]  # "list of dict": a list
    if not words or len(words) > 3:
        return None
    found: list[str] = []
    for word in words:
        if word.lower() in _TYPE_WORDS:
            found.append(_TYPE_WORDS[word.lower()])
        elif word == "None":
            found.append(_NONE)
        elif word in _CALLABLE_WORDS:
            found.append(FUNCTION)
        elif _CLASS_WORD.match(word):
            found.append(word)
        else:
            return None
    return found


def _stated(part: str, class_name: str) -> str | None:
    part = part.strip().rstrip(".").strip()
    try:
        expression = parsing.parse_expression(part).body if part else None
    except SyntaxError:
        expression = None
    found = _annotation_types(expression) if expression is not None else None
    if found is None and not any(c in part for c in "[]|"):
        found = _words_type(part)
    if not found or found == [_NONE]:
        return None
    # another class is one no literal is; the task's own class admits its instances
    kinds = (t if t in _BUILTIN or t == class_name else OBJECT for t in found)
    return "|".join(dict.fromkeys(kinds))


def stated_type(text: str, class_name: str = "") -> str | None:
    """The type a `:param` line states, only where a part of it is nothing but a type: the whole
    line (`:param n: int`, an annotation `Optional[int]` the real-source skeleton writes), its first
    comma-separated part (ClassEval's "string, Regular expression pattern") or its last ("invoice
    number, str"; "issue date, datetime.date"). A capitalised word in a description is no type
    ("Total count value." states none): the parameter is then unconstrained by type."""
    parts = _PART_END.split(text)
    for candidate in (text, parts[0], parts[-1]) if len(parts) > 1 else (text,):
        found = _stated(candidate, class_name)
        if found is not None:
            return found
    # A type named in the phrase ("a list of strings", "a sentence str"); "number" is left out:
    # "Phone number to be verified", "Number of samples" state no type.
    word = _NOUN.search(text) if not any(c in text for c in "[]|") else None  # `Sequence[int]` admits any
    return _TYPE_WORDS[word.group(1).lower()] if word else None


def _annotated(arg: ast.arg) -> str | None:
    """The builtin types a parameter's annotation names (`int`, `Optional[int]`, `str | None`,
    `list[str]`); None when it names any other class: a type variable `T` is no class, and an
    object no literal is stays to the search (the copy it runs on keeps the annotation)."""
    found = _annotation_types(arg.annotation) if arg.annotation is not None else None
    if not found or found == [_NONE] or any(t not in _BUILTIN or t == FUNCTION for t in found):
        return None
    return "|".join(dict.fromkeys(found))


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
            stated = stated_type(text, class_name)
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
    # Python's numeric tower: an int is a float, an int or a float is a complex
    return (
        actual in parts or ("float" in parts and actual == "int") or ("complex" in parts and actual in ("int", "float"))
    )


def annotation_type(declared: str) -> str | None:
    """The one builtin type to annotate the search's copy with, if the declaration names one."""
    parts = [p for p in declared.split("|") if p != _NONE]
    # only a builtin name can annotate the copy (the class's own name is not bound yet at `def`)
    return parts[0] if len(parts) == 1 and parts[0] in _TYPE_WORDS.values() else None


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


def called_method(call: ast.Call, class_name: str) -> str | None:
    """The method a call names: `__init__` for the class itself, the attribute's name otherwise."""
    if isinstance(call.func, ast.Name) and call.func.id == class_name:
        return "__init__"
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def named_arguments(
    body: str, class_name: str, order: dict[str, list[str]] | None = None
) -> Iterator[tuple[str, ast.keyword]]:
    """(method, argument) of every call of the class or of an attribute in a test body, positional
    arguments named by the method's parameter order (`order`: method -> its parameters after
    `self`, as the description's signature lists them; a method not in it: keywords only);
    `**kwargs`, and a position past the named ones, as a keyword without a name."""
    for call in (n for n in ast.walk(parsing.parse(body)) if isinstance(n, ast.Call)):
        method = called_method(call, class_name)
        if method is None:
            continue
        # `self.assertEqual(x, complex(1, 2))`: positions are read for the task's methods only
        names = (order or {}).get(method)
        for i, value in enumerate(call.args if names is not None else []):
            if isinstance(value, ast.Starred):
                break  # the positions after `*args` are unknown
            yield method, ast.keyword(arg=names[i] if names and i < len(names) else None, value=value)
        yield from ((method, kw) for kw in call.keywords)


def off_contract(
    body: str, class_name: str, contract: Contract, order: dict[str, list[str]] | None = None
) -> str | None:
    """The first argument in `body`, passed by name or by position (`order`: the parameters of
    each method, as in `named_arguments`), of a type its parameter does not promise."""
    variables = variable_types(parsing.parse(body), class_name)
    for method, kw in named_arguments(body, class_name, order):
        wanted = contract.get(method, {})
        # No ClassEval-style description promises complex numbers unless it says so; Pynguin tries
        # them everywhere (GPT-4's AvgPartition and ChandrasekharSieve failed plus tests on complex
        # arguments only).
        if literal_type(kw.value) == "complex" and (kw.arg is None or "complex" not in wanted.get(kw.arg, "")):
            return f"{method}({kw.arg or '...'}=<complex>), which the description never promises"
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
