"""Seeded call sequences for the state observer (`observe.py`), made only of what the search found,
inside the task's contract (`task_contract.py`).

A walk builds an instance with a constructor call a generated test made, then calls 2-8 public
methods. Arguments come from the generated tests too: a method's own argument lists, or, by
parameter name, values the tests passed to a parameter of that name anywhere in the class
(`ip='7_:Y?v'` given to `check` is given to `reset(ip=...)` as well), only when the contract
admits them for that parameter (its type, sign, range and shape). Within a walk a value already
used for a parameter is reused more often than not, so calls meet on the same key (a counter per
IP grows, a reset clears it). A parameter annotated `int` that the tests passed values to may also
get 1 or 2: small counts are where thresholds and limits turn, and a search seldom tries them. A
number may get 0 only where the contract admits it (a value shown or the text allows 0: a duration
of 0 elapses at once, a capacity of 0 shown nowhere is not asked for). Methods that may block
(`blocking.py`) are never called.
Everything is drawn from `random.Random(f"{seed}:{class}")`: the same tests give the same walks.
"""

from __future__ import annotations

import ast
import builtins
import random
from collections.abc import Callable, Collection

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.quality.plus.contract import instances
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.names import snake
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract

_MAX_ARGUMENT = 60  # characters: Pynguin also passes the module's docstrings as strings
_REUSE = 0.8  # chance a walk passes a parameter the value it passed it before
# Small counts a search rarely tries but thresholds and limits turn on (`> threshold` against `>=`).
_SMALL_INTS = ("1", "2")
_ZERO = "0"  # the edge of a non-negative domain, where the contract admits it (module docstring)
_NUMBERS = ("int", "float")
_SIMPLE = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}


class Parameter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    required: bool
    annotation: str = ""


def class_node(source: str, class_name: str) -> ast.ClassDef | None:
    return next((n for n in parsing.parse(source).body if isinstance(n, ast.ClassDef) and n.name == class_name), None)


def _parameters(fn: ast.FunctionDef, static: bool) -> list[Parameter]:
    positional = fn.args.posonlyargs + fn.args.args
    positional = positional if static else positional[1:]
    first_default = len(positional) - len(fn.args.defaults)
    params = [
        Parameter(name=a.arg, required=i < first_default, annotation=ast.unparse(a.annotation) if a.annotation else "")
        for i, a in enumerate(positional)
    ]
    params += [
        Parameter(name=a.arg, required=d is None, annotation=ast.unparse(a.annotation) if a.annotation else "")
        for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults)
    ]
    return params


def signatures(cls: ast.ClassDef) -> dict[str, list[Parameter]]:
    """Public methods a walk may call, and `__init__` -> their parameters (properties, async and
    private methods left out)."""
    found: dict[str, list[Parameter]] = {}
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef) or (fn.name.startswith("_") and fn.name != "__init__"):
            continue
        decorators = [ast.unparse(d) for d in fn.decorator_list]
        if any(d.endswith(("property", ".setter", ".deleter")) for d in decorators):
            continue
        found[fn.name] = _parameters(fn, "staticmethod" in decorators)
    return found


def _module_names(solution: str) -> set[str]:
    names = set(dir(builtins))
    for node in parsing.parse(solution).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _self_contained(node: ast.AST, known: set[str]) -> bool:
    return all(n.id in known for n in ast.walk(node) if isinstance(n, ast.Name))


def _arguments(call: ast.Call) -> str:
    return ", ".join(
        [ast.unparse(a) for a in call.args]
        + [f"{k.arg}={ast.unparse(k.value)}" if k.arg else f"**{ast.unparse(k.value)}" for k in call.keywords]
    )


def fits(source: str, annotation: str) -> bool:
    """An argument fits a parameter annotated with a builtin scalar type when it is a literal of
    that type (Pynguin also passes `int` itself, or a class, where an int is promised); any other
    annotation or none: yes."""
    wanted = _SIMPLE.get(annotation.replace("Optional[", "").rstrip("]"))
    if wanted is None:
        return True
    try:
        value = parsing.literal_eval(source)
    except (ValueError, SyntaxError):
        return False
    if value is None:
        return annotation.startswith("Optional[")
    return isinstance(value, wanted) and not (isinstance(value, bool) and bool not in wanted)


class Pool(BaseModel):
    """What the generated tests passed: whole argument lists per callee, values per parameter name;
    `admits(method, parameter, source)`: the task contract's input rule (None: every value)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    signatures: dict[str, list[Parameter]]
    calls: dict[str, list[str]]
    values: dict[str, list[str]]
    admits: Callable[[str, str, str], bool] | None = None

    def allowed(self, method: str, param: str, source: str) -> bool:
        return self.admits is None or self.admits(method, param, source)


def _collect(call: ast.Call, callee: str, pool: Pool) -> None:
    """The call's arguments into the pool, unless one is too long to read or does not fit its
    parameter's annotation (a walk asserts behaviour on inputs the signature promises to take)."""
    params = {p.name: p for p in pool.signatures.get(callee, [])}
    order = list(params)
    named = [
        (order[i], ast.unparse(a)) for i, a in enumerate(call.args) if i < len(order) and not isinstance(a, ast.Starred)
    ]
    named += [(k.arg, ast.unparse(k.value)) for k in call.keywords if k.arg]
    if any(
        len(source) > _MAX_ARGUMENT
        or (name in params and not fits(source, params[name].annotation))
        or not pool.allowed(callee, name, source)
        for name, source in named
    ):
        return
    pool.calls.setdefault(callee, []).append(_arguments(call))
    for name, source in named:
        pool.values.setdefault(name, []).append(source)


def call_pool(
    tests: list[PlusTest],
    solution: str,
    class_name: str,
    admits: Callable[[str, str, str], bool] | None = None,
    exclude: Collection[str] = (),
) -> Pool:
    """Every call of the class's constructor and public methods (but `exclude`) in the tests with
    self-contained arguments (literals and the module's own names) the contract admits, in order,
    duplicates dropped."""
    cls = class_node(solution, class_name)
    found = signatures(cls) if cls is not None else {}
    pool = Pool(signatures={m: p for m, p in found.items() if m not in exclude}, calls={}, values={}, admits=admits)
    known = _module_names(solution)
    for test in tests:
        tree = parsing.parse(test.body)
        bound = instances(tree, class_name)
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _self_contained(n, known | bound)):
            if isinstance(call.func, ast.Name) and call.func.id == class_name and _self_contained(call, known):
                _collect(call, "__init__", pool)
            elif (
                isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id in bound
                and call.func.attr in pool.signatures
                and all(_self_contained(a, known) for a in [*call.args, *call.keywords])
            ):
                _collect(call, call.func.attr, pool)
    pool.calls = {k: list(dict.fromkeys(v)) for k, v in pool.calls.items()}
    pool.values = {k: list(dict.fromkeys(v)) for k, v in pool.values.items()}
    return pool


def _options(param: Parameter, pool: Pool, method: str) -> list[str]:
    """Values a call of `method` may pass `param`: what the tests passed parameters of that name, if
    it fits; small counts and 0 for a number (module docstring); all within the contract."""
    options = [v for v in pool.values.get(param.name, []) if fits(v, param.annotation)]
    if param.annotation == "int" and options:
        options += [v for v in _SMALL_INTS if v not in options]
    if param.annotation in _NUMBERS and _ZERO not in options:
        options.append(_ZERO)
    return [v for v in options if pool.allowed(method, param.name, v)]


def _compose(method: str, params: list[Parameter], pool: Pool, used: dict[str, str], rng: random.Random) -> str | None:
    """Keyword arguments from the values other calls passed to parameters of the same names."""
    parts: list[str] = []
    for param in params:
        options = _options(param, pool, method)
        if not options or (not param.required and rng.random() < 0.5):
            if param.required:
                return None
            continue
        keep = used.get(param.name)
        value = keep if keep in options and rng.random() < _REUSE else rng.choice(options)
        used[param.name] = value
        parts.append(f"{param.name}={value}")
    return ", ".join(parts)


def _arguments_for(callee: str, pool: Pool, used: dict[str, str], rng: random.Random) -> str | None:
    composed = _compose(callee, pool.signatures.get(callee, []), pool, used, rng)
    observed = pool.calls.get(callee, [])
    if composed is not None and (not observed or rng.random() < 0.7):
        return composed
    return rng.choice(observed) if observed else None


def constructor_rows(pool: Pool, rng: random.Random, limit: int) -> list[str]:
    """Constructor argument lists: the tests' own, then rows covering every pair of parameter values
    (an optional parameter may also be left out), greedily, as all-pairs testing does. Settings
    matter together (a negative window *and* a cleanup on every call), and a search seldom
    pairs them."""
    params = [p for p in pool.signatures.get("__init__", []) if _options(p, pool, "__init__")]
    if any(p.required and not _options(p, pool, "__init__") for p in pool.signatures.get("__init__", [])):
        return pool.calls.get("__init__", [])[:limit]
    choices = {p.name: _options(p, pool, "__init__") + ([] if p.required else [""]) for p in params}
    names = list(choices)
    uncovered = {
        ((a, va), (b, vb))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        for va in choices[a]
        for vb in choices[b]
    }
    rows: list[str] = []
    while uncovered and len(rows) < limit:
        (a, va), (b, vb) = min(uncovered)  # every row covers at least one pair still missing
        row: dict[str, str] = {a: va, b: vb}
        for name in (n for n in names if n not in row):
            gain = {v: sum(((n, row[n]), (name, v)) in uncovered for n in row) for v in choices[name]}
            best = max(gain.values())
            row[name] = rng.choice([v for v in choices[name] if gain[v] == best])
        uncovered -= {((a, row[a]), (b, row[b])) for i, a in enumerate(names) for b in names[i + 1 :]}
        rows.append(", ".join(f"{n}={row[n]}" for n in names if row[n] != ""))
    return list(dict.fromkeys(rows + pool.calls.get("__init__", [])))[:limit]


def call_script(pool: Pool, methods: list[str], rng: random.Random) -> list[str]:
    """8-12 calls, every callable method at least twice, a call repeated now and then (counters),
    arguments reused across calls (keys meet)."""
    used: dict[str, str] = {}
    calls: list[str] = []
    order = methods * 2 + [rng.choice(methods) for _ in range(rng.randint(8, 12) - 2 * len(methods))]
    rng.shuffle(order)
    for method in order:
        if calls and rng.random() < 0.3:
            calls.append(calls[-1])
        arguments = _arguments_for(method, pool, used, rng)
        if arguments is not None:
            calls.append(f"{method}({arguments})")
    return calls


def walks(
    tests: list[PlusTest],
    solution: str,
    class_name: str,
    count: int,
    seed: int,
    *,
    contract: TaskContract | None = None,
    exclude: Collection[str] | None = None,
) -> list[PlusTest]:
    """Up to `count` walks: each constructor row (`constructor_rows`) with the first call script,
    then with the next, and so on; distinct bodies only; every argument one `contract` admits, no
    method of `exclude` (blocking calls) called."""
    pool = call_pool(tests, solution, class_name, contract.admits if contract else None, exclude or ())
    methods = sorted(
        m
        for m in pool.signatures
        if m != "__init__"
        and (m in pool.calls or all(_options(p, pool, m) or not p.required for p in pool.signatures[m]))
    )
    if count <= 0 or not methods:
        return []
    rng = random.Random(f"{seed}:{class_name}")
    rows = constructor_rows(pool, rng, count)
    scripts = [call_script(pool, methods, rng) for _ in range(-(-count // max(len(rows), 1)))]
    imports = sorted({line for t in tests for line in t.imports})
    name = snake(class_name)
    out: dict[str, PlusTest] = {}
    for i in range(min(count, len(rows) * len(scripts))):
        calls = scripts[i // len(rows)]
        body = "\n".join([f"{name} = {class_name}({rows[i % len(rows)]})"] + [f"{name}.{c}" for c in calls]) + "\n"
        called = list(dict.fromkeys(c.split("(", 1)[0] for c in calls))
        if calls and body not in out:
            out[body] = PlusTest(origin=f"walk_{i + 1}", methods=called, body=body, imports=imports)
    return list(out.values())
