"""Mutants of a reference solution, made with libcst (it keeps comments and layout, so a mutant's
diff shows the one change and nothing else).

    found = generate_mutants(source, max_per_method=12, seed=0)
    found.mutants      # to run; found.equivalent: provably equivalent, excluded from the score

Operators (the `operator` field of a mutant):
  arith      + -> -, - -> +, * -> /, / -> *, // -> /, % -> /, ** -> * (also in `x += ...`)
  compare    == <-> !=, < -> >=, <= -> >, > -> <=, >= -> <, is <-> is not, in <-> not in
  boundary   < <-> <=, > <-> >=
  boolean    and <-> or, `not x` -> `x`, `if c:` / `while c:` -> `if not (c):`
  constant   int 0 -> 1, 1 -> 0, n -> n+1 and n-1; True <-> False; a non-empty string -> ""
  return     `return x` -> `return None` (x not None, True or False: those are the constant operator's)
  statement  an expression statement (a call), assignment, raise or del replaced by `pass`
  arguments  two adjacent positional arguments of a call swapped

Only code inside functions is mutated (methods, with nested functions counted as their
method); docstrings, annotations and decorators are left alone. Sites are enumerated in source
order; a method with more than `max_per_method` sites gets a seeded sample of them (the seed and
the method's name decide it), so the same source always yields the same mutants.

Equivalence: a mutant whose module compiles (`classforge_bench.pipeline.core.parsing.compile_code`) to the same
bytecode as the original, compared recursively over every code object (instructions, constants
with their types, names, flags, exception tables; line numbers and positions ignored), cannot
behave differently and is excluded (`return None` where the value already was None, a constant
folded away, a string that is an unused expression). A mutant that does not compile is dropped
and counted as `invalid`.
"""

from __future__ import annotations

import difflib
import dis
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, fields
from types import CodeType

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.parsing import compile_code

OPERATORS = ("arith", "compare", "boundary", "boolean", "constant", "return", "statement", "arguments")


class MutantError(InputError):
    """The source cannot be mutated (it does not parse); the message names the item."""


class Mutant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mutant_id: str = Field(description="from the mutant's source: the same change always has the same id")
    method: str = Field(description="Class.method, or the function's name")
    operator: str
    line: int = Field(description="line of the changed code in the original source")
    description: str = Field(description="old -> new, shortened")
    diff: str = Field(description="unified diff against the original")
    source: str = Field(repr=False)


class MutantSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mutants: list[Mutant] = Field(description="to run against the tests")
    equivalent: list[Mutant] = Field(default_factory=list, description="same bytecode as the original")
    invalid: int = Field(0, description="mutants that did not compile (not counted anywhere else)")
    sites: int = Field(0, description="mutation sites found, before the per-method cap")


_ARITH = {
    cst.Add: cst.Subtract,
    cst.Subtract: cst.Add,
    cst.Multiply: cst.Divide,
    cst.Divide: cst.Multiply,
    cst.FloorDivide: cst.Divide,
    cst.Modulo: cst.Divide,
    cst.Power: cst.Multiply,
}
_AUG = {
    cst.AddAssign: cst.SubtractAssign,
    cst.SubtractAssign: cst.AddAssign,
    cst.MultiplyAssign: cst.DivideAssign,
    cst.DivideAssign: cst.MultiplyAssign,
    cst.FloorDivideAssign: cst.DivideAssign,
    cst.ModuloAssign: cst.DivideAssign,
}
_NEGATE = {
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.LessThan: cst.GreaterThanEqual,
    cst.LessThanEqual: cst.GreaterThan,
    cst.GreaterThan: cst.LessThanEqual,
    cst.GreaterThanEqual: cst.LessThan,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}
_BOUNDARY = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}
_REMOVABLE = (cst.Expr, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Raise, cst.Del)


def _same_spacing(old: cst.CSTNode, new_type: type) -> cst.CSTNode:
    """`new_type` with the old operator's whitespace, so the diff shows only the operator."""
    kwargs = {}
    for attr in ("whitespace_before", "whitespace_after"):
        if hasattr(old, attr) and attr in {f.name for f in fields(new_type)}:
            kwargs[attr] = getattr(old, attr)
    return new_type(**kwargs)


def _int_variants(text: str) -> list[int]:
    try:
        value = int(text, 0)
    except ValueError:
        return []  # a literal Python accepts but int() does not (e.g. "00"); left alone
    if value == 0:
        return [1]
    if value == 1:
        return [0]
    return [value + 1, value - 1]


@dataclass(frozen=True)
class _Site:
    method: str
    operator: str
    old: cst.CSTNode
    new: cst.CSTNode
    line: int


class _Sites(cst.CSTVisitor):
    """Every mutation site inside a function, in source order."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.sites: list[_Site] = []
        self._scope: list[tuple[str, str]] = []  # ("class" | "def", name)
        self._skip_depth = 0  # inside an annotation or a decorator
        self._docstrings: set[int] = set()

    # -- scope -------------------------------------------------------------------------------
    def _method(self) -> str | None:
        names = []
        for kind, name in self._scope:
            names.append(name)
            if kind == "def":
                return ".".join(names)  # anything nested in a method belongs to it
        return None

    def _mark_docstring(self, body: cst.BaseSuite) -> None:
        if isinstance(body, cst.IndentedBlock) and body.body:
            first = body.body[0]
            if (
                isinstance(first, cst.SimpleStatementLine)
                and len(first.body) == 1
                and isinstance(first.body[0], cst.Expr)
            ):
                value = first.body[0].value
                if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
                    self._docstrings.add(id(first.body[0]))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scope.append(("class", node.name.value))
        self._mark_docstring(node.body)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope.append(("def", node.name.value))
        self._mark_docstring(node.body)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope.pop()

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._skip_depth += 1

    def leave_Annotation(self, original_node: cst.Annotation) -> None:
        self._skip_depth -= 1

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._skip_depth += 1

    def leave_Decorator(self, original_node: cst.Decorator) -> None:
        self._skip_depth -= 1

    def visit_Expr(self, node: cst.Expr) -> bool:
        return id(node) not in self._docstrings  # nothing inside a docstring is mutated

    def _add(self, operator: str, old: cst.CSTNode, new: cst.CSTNode) -> None:
        method = self._method()
        if method is None or self._skip_depth:
            return
        line = self.get_metadata(PositionProvider, old).start.line
        self.sites.append(_Site(method=method, operator=operator, old=old, new=new, line=line))

    # -- operators ---------------------------------------------------------------------------
    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        new = _ARITH.get(type(node.operator))
        if new is not None:
            self._add("arith", node, node.with_changes(operator=_same_spacing(node.operator, new)))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        new = _AUG.get(type(node.operator))
        if new is not None:
            self._add("arith", node, node.with_changes(operator=_same_spacing(node.operator, new)))
        self._remove(node)

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        for operator, table in (("compare", _NEGATE), ("boundary", _BOUNDARY)):
            new = table.get(type(node.operator))
            if new is not None:
                self._add(operator, node, node.with_changes(operator=_same_spacing(node.operator, new)))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        new = cst.Or if isinstance(node.operator, cst.And) else cst.And
        self._add("boolean", node, node.with_changes(operator=_same_spacing(node.operator, new)))

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            inner = node.expression
            if node.lpar and not inner.lpar:
                inner = inner.with_changes(lpar=node.lpar, rpar=node.rpar)
            self._add("boolean", node, inner)

    def _negate_test(self, test: cst.BaseExpression) -> None:
        wrapped = test if test.lpar else test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self._add("boolean", test, cst.UnaryOperation(operator=cst.Not(), expression=wrapped))

    def visit_If(self, node: cst.If) -> None:
        self._negate_test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._negate_test(node.test)

    def visit_Integer(self, node: cst.Integer) -> None:
        for value in _int_variants(node.value):
            self._add("constant", node, node.with_changes(value=str(value)))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("True", "False"):
            self._add("constant", node, node.with_changes(value="False" if node.value == "True" else "True"))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if node.raw_value:
            self._add("constant", node, node.with_changes(value=f"{node.prefix}{node.quote}{node.quote}"))

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        # `return True/False` is left to the constant operator (it flips the value); None in place
        # of False would test only `is False`, which almost no test asks.
        if value is not None and not (isinstance(value, cst.Name) and value.value in ("None", "True", "False")):
            self._add("return", node, node.with_changes(value=cst.Name("None")))

    def _remove(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.AnnAssign) and node.value is None:
            return  # a bare annotation does nothing to remove
        if isinstance(node, cst.Expr) and isinstance(
            node.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)
        ):
            return
        self._add("statement", node, cst.Pass())

    def visit_Assign(self, node: cst.Assign) -> None:
        self._remove(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._remove(node)

    def visit_Raise(self, node: cst.Raise) -> None:
        self._remove(node)

    def visit_Del(self, node: cst.Del) -> None:
        self._remove(node)

    def leave_Expr(self, original_node: cst.Expr) -> None:
        if id(original_node) not in self._docstrings:
            self._remove(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        args = node.args
        for i in range(len(args) - 1):
            a, b = args[i], args[i + 1]
            if a.keyword or b.keyword or a.star or b.star:
                continue
            if cst.Module([]).code_for_node(a.value) == cst.Module([]).code_for_node(b.value):
                continue
            swapped = list(args)
            swapped[i], swapped[i + 1] = a.with_changes(value=b.value), b.with_changes(value=a.value)
            self._add("arguments", node, node.with_changes(args=swapped))


def _code_fingerprint(code: CodeType) -> tuple:
    # Instructions with their resolved arguments, not the raw tables: dead code that the compiler
    # removed still leaves its constants and names in co_consts / co_names.
    ops = []
    for ins in dis.get_instructions(code):
        arg = ins.argval
        # with the type: 1 == True, yet they differ
        ops.append(
            (
                ins.opname,
                ("code", _code_fingerprint(arg)) if isinstance(arg, CodeType) else (type(arg).__name__, repr(arg)),
            )
        )
    return (
        tuple(ops),
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_exceptiontable,
        code.co_name,
    )


def bytecode_fingerprint(source: str) -> tuple:
    """Everything about the compiled module that can affect behaviour; positions left out."""
    return _code_fingerprint(compile_code(source, "solution.py"))


def _short(module: cst.Module, node: cst.CSTNode, width: int = 60) -> str:
    text = " ".join(module.code_for_node(node).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _sample(sites: list[_Site], cap: int, seed: int) -> list[_Site]:
    by_method: dict[str, list[_Site]] = {}
    for site in sites:
        by_method.setdefault(site.method, []).append(site)
    chosen: list[_Site] = []
    for method, group in by_method.items():
        if len(group) > cap:
            # A string seed: random.Random hashes it with sha512, independent of PYTHONHASHSEED.
            picks = sorted(random.Random(f"{seed}:{method}").sample(range(len(group)), cap))
            group = [group[i] for i in picks]
        chosen.extend(group)
    return sorted(chosen, key=lambda s: (s.line, s.method))


def _materialise(module: cst.Module, site: _Site, original: str) -> Mutant | None:
    replaced = module.deep_replace(site.old, site.new)
    assert isinstance(replaced, cst.Module)  # replacing a node inside a module gives a module
    source = replaced.code
    if source == original:
        return None
    diff = "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True),
            source.splitlines(keepends=True),
            "original",
            "mutant",
            n=2,
        )
    )
    return Mutant(
        mutant_id="m" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:12],
        method=site.method,
        operator=site.operator,
        line=site.line,
        description=f"{_short(module, site.old)} -> {_short(module, site.new)}",
        diff=diff,
        source=source,
    )


def generate_mutants(
    source: str,
    *,
    max_per_method: int,
    seed: int,
    item_id: str = "",
    operators: tuple[str, ...] = OPERATORS,
    equivalent_check: Callable[[str], tuple] = bytecode_fingerprint,
) -> MutantSet:
    """The mutants of `source` (see the module docstring). Raises `MutantError` if it does not parse."""
    try:
        module = cst.parse_module(source)
        original_bytecode = equivalent_check(source)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        raise MutantError(f"{item_id or 'solution'}: cannot mutate a solution that does not parse: {exc}") from exc
    # unsafe_skip_copy: the sites must be the module's own nodes, so deep_replace finds them.
    visitor = _Sites()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
    sites = [s for s in visitor.sites if s.operator in operators]
    found = MutantSet(mutants=[], sites=len(sites))
    seen: set[str] = set()
    for site in _sample(sites, max_per_method, seed):
        mutant = _materialise(module, site, source)
        if mutant is None or mutant.mutant_id in seen:
            continue
        seen.add(mutant.mutant_id)
        try:
            same = equivalent_check(mutant.source) == original_bytecode
        except (SyntaxError, ValueError):
            found.invalid += 1
            continue
        (found.equivalent if same else found.mutants).append(mutant)
    return found
