"""Stage 5, solution: a separate model writes the class; the verification gate decides.

The solver sees the skeleton and the tests. Its code is extracted, checked statically (it parses,
defines the class, keeps every method with the skeleton's signature, imports only the standard
library, implements at least one method: a solver that repeats the skeleton is
`solution-is-skeleton`) and then run by the gate: every test passes, every listed test class runs, line
coverage >= the configured minimum, within the time limit, and a second run agrees (else `flaky`).
With `solver_repair` on, a failing solution gets one more turn with the gate's report (off by
default, as in ClassEval-Pro). The gate's reason codes are used unchanged as drop reasons.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.construct.common import StageContext, StageOutcome, ask, conversation, cut_detail
from classforge_bench.pipeline.construct.gate import Gate, GateOutcome
from classforge_bench.pipeline.construct.interface import ClassInterface, interface_from_source
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of
from classforge_bench.pipeline.core.class_analysis import is_stdlib_module
from classforge_bench.pipeline.core.funnel import Verdict
from classforge_bench.pipeline.core.source import is_placeholder_body
from classforge_bench.pipeline.llm.client import Completion
from classforge_bench.pipeline.llm.extraction import extract_code

ROLE = "solver"


class SolveAttempt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reply: str
    finish_reason: str | None
    cache_key: str
    code: str
    outcome: StageOutcome
    gate: GateOutcome | None = None


class SolveResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: StageOutcome
    solution: str | None = None
    gate: GateOutcome | None = None
    attempts: list[SolveAttempt] = Field(default_factory=list)
    prompt_version: str


def _signature_key(iface: ClassInterface, name: str) -> tuple:
    s = iface.methods[name]
    return (s.kind, s.positional, s.keyword_only, s.var_positional, s.var_keyword)


def static_check(code: str, skeleton: ClassInterface) -> Verdict:
    """The solution keeps the skeleton's interface and imports only the standard library."""
    try:
        module = parsing.parse(code)
    except SyntaxError as exc:
        return Verdict.drop(R.SOLUTION_SYNTAX, f"does not parse: {exc.msg} (line {exc.lineno})")
    bad = []
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if not is_stdlib_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and (node.level or not is_stdlib_module(node.module or "")):
            bad.append("." * node.level + (node.module or ""))
    if bad:
        return Verdict.drop(R.NON_STDLIB_IMPORT, "not standard library: " + ", ".join(bad))
    iface = interface_from_source(code, skeleton.class_name)
    if iface is None:
        return Verdict.drop(R.SOLUTION_MISSING_CLASS, f"no top-level class {skeleton.class_name}")
    missing = [m for m in skeleton.methods if m not in iface.methods]
    if missing:
        return Verdict.drop(R.SOLUTION_MISSING_METHOD, "missing: " + ", ".join(missing))
    changed = [m for m in skeleton.methods if _signature_key(skeleton, m) != _signature_key(iface, m)]
    if changed:
        detail = "; ".join(f"{m}({skeleton.methods[m].text}) became {m}({iface.methods[m].text})" for m in changed)
        return Verdict.drop(R.SOLUTION_SIGNATURE_CHANGED, detail)
    # Small solvers answer with the skeleton itself; running its suite would only say "N failed".
    # Only when no method has a body: a single no-op method can be a correct implementation.
    cls = find_class(module, skeleton.class_name)
    bodies = (
        [fn for name, fn in methods_of(cls).items() if name in skeleton.methods and name != "__init__"] if cls else []
    )
    if bodies and all(is_placeholder_body(fn) for fn in bodies):
        return Verdict.drop(
            R.SOLUTION_IS_SKELETON,
            f"none of the {len(bodies)} methods besides __init__ is "
            "implemented (docstring, pass, ... or NotImplementedError only)",
        )
    return Verdict.kept()


def solve_messages(ctx: StageContext, skeleton: str, tests: str, class_name: str) -> list[dict[str, str]]:
    return ctx.prompts["solve"].messages(
        class_name=class_name, skeleton=skeleton.rstrip("\n"), tests=tests.rstrip("\n")
    )


def _gate_report(gate: GateOutcome | None, verdict: Verdict) -> str:
    if gate is None:
        return f"[{verdict.reason}] {verdict.detail}"
    lines = [f"[{gate.reason}] {gate.detail}".rstrip()]
    if gate.line_coverage is not None:
        lines.append(f"line coverage: {gate.line_coverage:.1f}%")
    lines += [f"- {f}" for f in gate.failures[:20]]
    return "\n".join(lines)


def _check_answer(
    ctx: StageContext, reply: Completion, iface: ClassInterface, tests: str, test_classes: list[str], gate: Gate
) -> tuple[str, Verdict, GateOutcome | None]:
    """(the solution's code, its verdict, the gate's outcome when it got that far) for one answer:
    cut off, no code, failing the static checks, or failing the gate each drop it."""
    if reply.truncated:
        return "", Verdict.drop(R.TRUNCATED, cut_detail("solver", reply)), None
    code = extract_code(reply.text, class_name=iface.class_name).source_file
    verdict = static_check(code, iface) if code.strip() else Verdict.drop(R.NO_CODE, "the reply holds no Python code")
    if not verdict.keep:
        return code, verdict, None
    gate_result = gate(code, tests, test_classes, item_id=ctx.candidate_id)
    if not gate_result.passed:
        verdict = Verdict.drop(gate_result.reason or R.GATE_ERROR, gate_result.detail or "gate failed without a reason")
    return code, verdict, gate_result


def solve(
    ctx: StageContext,
    skeleton: str,
    iface: ClassInterface,
    tests: str,
    test_classes: list[str],
    gate: Gate,
) -> SolveResult:
    stage = R.SOLUTION
    template = ctx.prompts["solve"]
    version = template.version
    endpoint = ctx.llm.solver
    messages = solve_messages(ctx, skeleton, tests, iface.class_name)
    attempts: list[SolveAttempt] = []
    rounds = 2 if ctx.construct.solver_repair else 1
    for round_ in range(rounds):
        reply = ask(ctx, ROLE, endpoint, messages, version)
        if not isinstance(reply, Completion):
            return SolveResult(outcome=StageOutcome.of(stage, reply), attempts=attempts, prompt_version=version)
        code, verdict, gate_result = _check_answer(ctx, reply, iface, tests, test_classes, gate)
        outcome = StageOutcome.of(stage, verdict)
        attempts.append(
            SolveAttempt(
                reply=reply.text,
                finish_reason=reply.finish_reason,
                cache_key=reply.cache_key,
                code=code,
                outcome=outcome,
                gate=gate_result,
            )
        )
        if verdict.keep:
            return SolveResult(
                outcome=outcome, solution=code, gate=gate_result, attempts=attempts, prompt_version=version
            )
        if round_ + 1 < rounds and verdict.reason != R.TRUNCATED:
            repair = ctx.prompts["solve_repair"]
            messages = conversation(messages, reply.text, repair.messages(report=_gate_report(gate_result, verdict)))
            version = f"{template.version}+{repair.version}"
            continue
        detail = f"after {round_ + 1} attempt(s): {verdict.detail}" if rounds > 1 else verdict.detail
        return SolveResult(
            outcome=StageOutcome.drop(stage, verdict.reason, detail),
            gate=gate_result,
            attempts=attempts,
            prompt_version=version,
        )
    raise AssertionError("unreachable: the loop returns on its last round")
