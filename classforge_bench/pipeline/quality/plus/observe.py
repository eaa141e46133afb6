"""State assertions for generated tests: what the reference's objects hold after each call.

Pynguin's SIMPLE assertions check what a call returns and the public fields after the
constructor; a method that returns nothing and changes the object (a counter, a state machine's
state read through a property) goes unchecked, so mutants of it survive. This step:

1. instruments each converted test: after every statement that calls a method of an instance of
   the class under test, a hook records the instance's *public* state (public attributes and
   properties, `observe_script.py`); a bare call's return value or raised exception is recorded;
2. adds `plus.observe_walks` seeded call sequences of its own, built only from constructors and
   arguments Pynguin's tests already used (so every value is one the search found valid);
3. runs the programs on the reference in the sandbox twice (two processes, two hash seeds, the
   second with its wall clock a day, an hour, a minute and a second ahead) and asserts only what
   both runs agree on; a value that differs between them (a timestamp) is asserted not to be None,
   nothing more;
4. writes the assertions into the tests: every observed value at the first and last hook of an
   instance, values that changed in between.

Only public names are read: nothing a correct reimplementation may name differently, no identity,
no addresses, no message text. The validation that follows (`validate.py`: three runs, the
environment perturbations) still drops any test whose verdict moves.
"""

from __future__ import annotations

import ast
import importlib.resources
import json
import logging
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import parsing, reasons
from classforge_bench.pipeline.core.task import PlusDrop
from classforge_bench.pipeline.quality.plus.contract import instances
from classforge_bench.pipeline.quality.plus.convert import PlusTest
from classforge_bench.pipeline.quality.plus.generate import GeneratorUnavailable
from classforge_bench.pipeline.quality.plus.rules import violation
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract, derive_contract
from classforge_bench.pipeline.quality.plus.walks import walks
from classforge_bench.pipeline.sandbox.base import RunLimits, SandboxError
from classforge_bench.pipeline.sandbox.registry import get_backend

log = logging.getLogger(__name__)

_SCRIPT, _PROGRAMS, _OUT = "cf_observe.py", "cf_programs.json", "cf_observed.json"
_HOLDER = "observed"
OBSERVE_VERSION = 6  # 6: both of 5's changes together; 5: datetime, date, time, timedelta, Decimal, Fraction, Path and UUID values asserted (branch yield2), and each program runs in a folder of its own, the second recording's clock a day ahead (branch seeds); 4: the task contract decides the fields asserted and the exceptions allowed; bump when what the step asserts changes (2: non-literal arguments do not fit scalar annotations; 3: walks may pass 0 to numbers)


class Statement(BaseModel):
    """One top-level statement of a test body and what its hooks record."""

    model_config = ConfigDict(extra="forbid")
    source: str
    step: str | None = Field(None, description="the bare call on an instance, when the statement is one")
    observe: list[str] = Field(default_factory=list, description="instances to observe after it")
    target: str | None = Field(None, description="the variable the step's value is assigned to (`r = x.m()`)")
    none_checked: bool = Field(
        False, description="a None the step returns is asserted (its description shows it returns nothing)"
    )


def touched(node: ast.stmt, bound: set[str], class_name: str) -> list[str]:
    """Instances the statement builds or calls a method of, in order of appearance."""
    names = [
        n.func.value.id
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id in bound
    ]
    if (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == class_name
    ):
        names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return list(dict.fromkeys(names))


def statements(body: str, class_name: str) -> list[Statement]:
    tree = parsing.parse(body)
    lines = body.splitlines()
    bound = instances(tree, class_name)
    out: list[Statement] = []
    for node in tree.body:
        source = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
        step = (
            source
            if call is not None
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in bound
            else None
        )
        out.append(Statement(source=source, step=step, observe=touched(node, bound, class_name)))
    return out


def program(parts: list[Statement]) -> str:
    """The test body with its hooks, for the recorder."""
    lines: list[str] = []
    for k, part in enumerate(parts):
        hooked = f"__cf_step__({k}, lambda: (\n{part.step}\n))"
        if part.step and part.target:
            lines.append(f"{part.target} = {hooked}")
        else:
            lines.append(hooked if part.step else part.source)
        lines += [f"__cf_observe__('{k}:{name}', {name})" for name in part.observe]
    return "\n".join(lines) + "\n"


# The second recording's wall clock runs this far ahead (a day, an hour, a minute and a second: every
# field of a date and a time differs), so a value read from the clock never agrees between the two
# recordings and is never asserted, whether or not both happened to fall within the same second.
CLOCK_SHIFT_S = 90_061


def record(
    programs: dict[str, tuple[str, list[str]]],
    solution: str,
    sandbox: SandboxConfig,
    hash_seed: int,
    item_id: str = "",
    clock_shift_s: int = 0,
) -> dict[str, dict]:
    """Program id -> what its hooks saw, from one sandbox run of the recorder on the reference
    (its wall clock `clock_shift_s` ahead)."""
    script = (
        importlib.resources.files("classforge_bench.pipeline.quality.plus")
        .joinpath("observe_script.py")
        .read_text(encoding="utf-8")
    )
    payload = [{"id": pid, "source": source, "imports": imports} for pid, (source, imports) in programs.items()]
    backend = get_backend(sandbox)
    try:
        run = backend.run(
            {"under_test.py": solution, _SCRIPT: script, _PROGRAMS: json.dumps(payload)},
            [backend.python, "-s", "-B", _SCRIPT, _PROGRAMS, _OUT, str(clock_shift_s)],
            RunLimits.from_config(sandbox),
            outputs=[_OUT],
            env={"PYTHONHASHSEED": str(hash_seed)},
        )
    except SandboxError as exc:
        raise GeneratorUnavailable(f"the sandbox could not run the state recorder: {exc}", item_id) from exc
    raw = run.outputs.get(_OUT)
    if run.timed_out or not raw:
        # Counted per test by observe_tests (plus-state-unrecorded, plus-walk-unrecorded).
        log.warning(
            "plus: %s: the state recorder produced nothing (exit %s): %s",
            item_id or "<unnamed>",
            run.exit_code,
            run.stderr[-400:],
        )
        return {}
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError:
        log.warning("plus: %s: the state recorder's output is not JSON", item_id or "<unnamed>")
        return {}


def _agree(a: dict | None, b: dict | None) -> dict | None:
    """What two runs' encodings of one value let a test assert: the value, 'not None', or nothing."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if a["kind"] == "via" and b["kind"] == "via" and a["via"] == b["via"]:
        of = _agree(a["of"], b["of"])
        return (
            {"kind": "via", "via": a["via"], "of": of}
            if of is not None and of["kind"] != "notnone"
            else {"kind": "notnone"}
        )
    if a["kind"] == "fields" and b["kind"] == "fields":
        fields = {n: v for n in a["fields"] if (v := _agree(a["fields"][n], b["fields"].get(n))) is not None}
        return {"kind": "fields", "fields": fields} if fields else None
    return {"kind": "notnone"} if "none" not in (a["kind"], b["kind"]) else None


def agreed(first: dict, second: dict) -> dict:
    """The two recordings of one program merged: observations and steps both runs agree on."""
    if not (first.get("ok") and second.get("ok")):
        return {}
    observed = {
        k: {n: v for n, enc in state.items() if (v := _agree(enc, second["observed"].get(k, {}).get(n)))}
        for k, state in first["observed"].items()
    }
    steps = {
        k: s
        for k, s in first["steps"].items()
        if s == second["steps"].get(k) or ("returns" in s and "returns" in second["steps"].get(k, {}))
    }
    for k, s in steps.items():
        if "returns" in s:
            other = second["steps"][k]
            handled = {"handled": s["handled"]} if s.get("handled") and s.get("handled") == other.get("handled") else {}
            steps[k] = {"returns": _agree(s["returns"], other["returns"])} | handled
    return {"observed": observed, "steps": steps}


def check(expr: str, enc: dict) -> list[str]:
    """Assertion lines that `expr` has the recorded value."""
    kind = enc["kind"]
    if kind == "none":
        return [f"self.assertIsNone({expr})"]
    if kind == "notnone":
        return [f"self.assertIsNotNone({expr})"]
    if kind == "float":
        return [f"self.assertAlmostEqual({expr}, {enc['value']!r})"]
    if kind == "lit":
        return [f"self.assertEqual({expr}, {enc['src']})"]
    if kind == "via":  # a datetime by its isoformat(), a Decimal as a float (observe_script._VALUE_TYPES)
        return check(enc["via"].format(expr), enc["of"])
    lines = [f"{_HOLDER} = {expr}"]
    for name, field in enc["fields"].items():
        lines += check(f"{_HOLDER}.{name}", field)
    return lines


@dataclass(frozen=True)
class Undocumented:
    """A step raised an exception the task's contract does not document: the test is dropped."""

    detail: str


def _step(part: Statement, k: int, rec: dict, contract: TaskContract) -> list[str] | Undocumented:
    """The statement as the test states it: its return or the documented exception it raises
    asserted; Undocumented when it raises one the description does not document."""
    seen = rec["steps"].get(str(k))
    if part.step is None or seen is None:
        return [part.source]
    if "raises" in seen:
        raised = [seen["raises"], *seen.get("bases", [])] if seen["raises"] else seen.get("bases", [])
        allowed = contract.exception_for(contract.called(part.step), raised)
        if allowed is None:
            return Undocumented(f"{part.step.strip()[:80]} raises {seen['raises'] or 'an exception of its own'}")
        return [f"with self.assertRaises({allowed}):"] + ["    " + line for line in part.source.splitlines()]
    enc = seen["returns"]
    if enc is None or (enc["kind"] == "none" and not part.none_checked):
        return [part.source]
    # an assigned value is asserted through its variable, after the assignment
    return [part.source, *check(part.target, enc)] if part.target else check(part.step, enc)


def with_state_checks(parts: list[Statement], rec: dict, contract: TaskContract) -> str | Undocumented:
    """The body with every agreed observation of a field the contract declares asserted: all at an
    instance's first and last hook, what changed in between (other fields: no assertion)."""
    keys = [f"{k}:{name}" for k, part in enumerate(parts) for name in part.observe if f"{k}:{name}" in rec["observed"]]
    final = {key.split(":", 1)[1]: key for key in keys}
    last: dict[str, dict] = {}
    lines: list[str] = []
    for k, part in enumerate(parts):
        stated = _step(part, k, rec, contract)
        if isinstance(stated, Undocumented):
            return stated
        lines += stated
        for name in part.observe:
            key = f"{k}:{name}"
            state = rec["observed"].get(key)
            if state is None:
                continue
            before = last.get(name)
            for attr, enc in state.items():
                if not contract.observable(attr):
                    continue
                if before is None or before.get(attr) != enc or final[name] == key:
                    lines += check(f"{name}.{attr}", enc)
            last[name] = state
    return "\n".join(lines) + "\n"


class Observed(BaseModel):
    """What the observation step gives the suite: the tests to validate, how many walks it made,
    the walks it left out and the generated tests it left unchecked, each with its reason."""

    model_config = ConfigDict(extra="forbid")
    tests: list[PlusTest]
    walks: int = 0
    dropped: list[PlusDrop] = Field(default_factory=list, description="walks left out")
    unchecked: list[PlusDrop] = Field(default_factory=list, description="generated tests kept without state checks")


def _checked_body(parts: list[Statement], rec: dict, contract: TaskContract) -> tuple[str | None, str]:
    """The body with its state checks, or None and the reason it has none."""
    if not rec:
        return None, "unrecorded"
    body = with_state_checks(parts, rec, contract)
    if isinstance(body, Undocumented):
        return None, body.detail
    if violation(body) or contract.attribute_problem(body) or "self.assert" not in body:
        return None, "breaks-rule"
    return body, ""


def observe_tests(
    tests: list[PlusTest],
    solution: str,
    class_name: str,
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str = "",
    *,
    contract: TaskContract | None = None,
    blocked: set[str] | None = None,
) -> Observed:
    """The tests with their state asserted, then the walks; a test the recorder could not run, or
    whose checks break a rule, stays as it was (a walk is left out): both counted with a reason.
    A test or walk in which the reference raises an exception the contract does not document is
    dropped. `contract`: the task's (default: derived from the solution); `blocked`: methods no
    walk calls (blocking.py)."""
    contract = contract or derive_contract(solution, class_name)
    made = walks(tests, solution, class_name, plus.observe_walks, plus.seed, contract=contract, exclude=blocked)
    candidates = tests + made
    parts = {f"t{i}": statements(t.body, class_name) for i, t in enumerate(candidates)}
    programs = {pid: (program(p), candidates[int(pid[1:])].imports) for pid, p in parts.items()}
    first = record(programs, solution, sandbox, plus.hash_seed, item_id)
    second = (
        record(programs, solution, sandbox, (plus.hash_seed + 1) % 4294967296, item_id, CLOCK_SHIFT_S) if first else {}
    )
    out = Observed(tests=[], walks=len(made))
    for i, test in enumerate(candidates):
        rec = agreed(first.get(f"t{i}", {}), second.get(f"t{i}", {}))
        body, why = _checked_body(parts[f"t{i}"], rec, contract)
        if body is not None:
            out.tests.append(test.model_copy(update={"body": body}))
        elif why not in ("unrecorded", "breaks-rule"):
            out.dropped.append(PlusDrop(origin=test.origin, reason=reasons.PLUS_UNDOCUMENTED_EXCEPTION, detail=why))
        elif i < len(tests):
            out.tests.append(test)
            unrecorded = why == "unrecorded"
            reason = reasons.PLUS_STATE_UNRECORDED if unrecorded else reasons.PLUS_STATE_BREAKS_RULE
            out.unchecked.append(PlusDrop(origin=test.origin, reason=reason))
        else:
            reason = reasons.PLUS_WALK_UNRECORDED if why == "unrecorded" else reasons.PLUS_WALK_BREAKS_RULE
            out.dropped.append(PlusDrop(origin=test.origin, reason=reason))
    return out
