"""Real-source track, docstring stage: thin docstrings written by an LLM and checked for leaks.

A method whose docstring cannot state its contract (`DerivedSkeleton.thin`) gets one written from
its code by the configured role (`construction.real_source.docstring_role`), as JSON (description,
one line per parameter, the return), which is then composed into the checks' form. The first judge
endpoint reads the method and the written docstring and says whether the docstring gives the
implementation away; a leak drops the class. Without a role configured the class is dropped with
`docstring-needs-llm`: nothing is shipped that a person or a model did not describe.
Every call goes through the build's client (cached by content, budgeted, replayable).
"""

from __future__ import annotations

import ast
import json

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import EndpointConfig, LLMConfig
from classforge_bench.pipeline.construct.common import StageContext, StageOutcome, ask, cut_detail
from classforge_bench.pipeline.construct.real_skeleton import (
    DerivedSkeleton,
    normalise_docstring,
    param_names,
    returns_value,
)
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class
from classforge_bench.pipeline.core.funnel import Verdict
from classforge_bench.pipeline.llm.client import Completion
from classforge_bench.pipeline.llm.prompts import PromptTemplate, load_prompt

WRITER_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["description", "params", "returns"],
    "properties": {
        "description": {"type": "string"},
        "params": {"type": "object", "additionalProperties": {"type": "string"}},
        "returns": {"type": "string"},
    },
}
JUDGE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["leaks", "reason"],
    "properties": {"leaks": {"type": "boolean"}, "reason": {"type": "string"}},
}


def _format(name: str, schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


class WrittenDocstring(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str
    docstring: str
    judge_reason: str = ""


class DocstringsResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: StageOutcome
    written: list[WrittenDocstring] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)


def writer_endpoint(llm: LLMConfig, role: str) -> EndpointConfig | None:
    if role == "none":
        return None
    return llm.judges[0] if role == "judge" else getattr(llm, role)


def _json(reply: Completion) -> dict:
    text = reply.text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    return data


def _method(solution: str, class_name: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    cls = find_class(parsing.parse(solution), class_name, top_level_only=True)
    assert cls is not None, f"{class_name} is not in its own reference solution"  # the solution is the class
    return next(n for n in class_methods(cls) if n.name == name)


def _compose(data: dict, params: list[str], returns: bool, constructor: bool) -> tuple[str, str]:
    """The written JSON as a docstring in the checks' form, and what it still lacks."""
    params_written = data.get("params")
    described = params_written if isinstance(params_written, dict) else {}
    lines = [
        str(data.get("description", "")).strip(),
        "",
        *(f"{name}: {str(described.get(name, '')).strip()}" for name in params),
    ]
    google = "\n".join([lines[0], "", "Args:", *(f"    {x}" for x in lines[2:])] if params else [lines[0]])
    ret = str(data.get("returns", "")).strip()
    if ret and not constructor:
        google += f"\n\nReturns:\n    {ret}"
    return normalise_docstring(google, params, returns=returns, constructor=constructor)


def _write_one(
    ctx: StageContext,
    endpoint: EndpointConfig,
    writer: PromptTemplate,
    derived: DerivedSkeleton,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    params: list[str],
) -> str | Verdict:
    messages = writer.messages(
        schema=json.dumps(WRITER_SCHEMA, indent=2),
        class_name=derived.class_name,
        method_name=fn.name,
        parameters=", ".join(params) or "none",
        method_source=ast.get_source_segment(derived.solution, fn) or "",
    )
    reply = ask(
        ctx, "docstring_writer", endpoint, messages, writer.version, response_format=_format("docstring", WRITER_SCHEMA)
    )
    if isinstance(reply, Verdict):
        return reply
    if reply.truncated:
        return Verdict.drop(R.DOCSTRING_INVALID, cut_detail(f"docstring writer ({fn.name})", reply))
    try:
        data = _json(reply)
    except ValueError as exc:
        return Verdict.drop(R.DOCSTRING_INVALID, f"{fn.name}: not a JSON object: {exc}"[:500])
    text, lacking = _compose(data, params, returns_value(fn), fn.name == "__init__")
    if lacking:
        return Verdict.drop(R.DOCSTRING_INVALID, f"{fn.name}: the written docstring lacks {lacking}")
    return text


def _judge_one(
    ctx: StageContext,
    endpoint: EndpointConfig,
    judge: PromptTemplate,
    derived: DerivedSkeleton,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    docstring: str,
) -> str | Verdict:
    """'' when the docstring does not leak, else a drop verdict."""
    messages = judge.messages(
        schema=json.dumps(JUDGE_SCHEMA, indent=2),
        class_name=derived.class_name,
        method_name=fn.name,
        method_source=ast.get_source_segment(derived.solution, fn) or "",
        docstring=docstring,
    )
    reply = ask(
        ctx, "docstring_judge", endpoint, messages, judge.version, response_format=_format("leak", JUDGE_SCHEMA)
    )
    if isinstance(reply, Verdict):
        return reply
    try:
        data = _json(reply)
        leaks = data["leaks"]
    except (ValueError, KeyError) as exc:
        return Verdict.drop(R.DOCSTRING_INVALID, f"{fn.name}: the leak judge's answer is unusable: {exc}"[:500])
    if leaks is not False:
        return Verdict.drop(R.DOCSTRING_LEAKS, f"{fn.name}: {data.get('reason', '')}"[:500])
    return str(data.get("reason", ""))


def write_docstrings(
    ctx: StageContext, derived: DerivedSkeleton, role: str, prompt_versions: dict[str, int] | None = None
) -> DocstringsResult:
    """Stage `docstrings`: every thin docstring written and judged, or the class dropped."""
    if not derived.thin:
        return DocstringsResult(outcome=StageOutcome.kept(R.DOCSTRINGS))
    endpoint = writer_endpoint(ctx.llm, role)
    lacking = "; ".join(f"{m}: {why}" for m, why in derived.thin.items())
    if endpoint is None:
        return DocstringsResult(outcome=StageOutcome.drop(R.DOCSTRINGS, R.DOCSTRING_NEEDS_LLM, lacking[:2000]))
    pins = prompt_versions or {}
    writer = load_prompt("docstring_writer", pins.get("docstring_writer"))
    judge = load_prompt("docstring_judge", pins.get("docstring_judge"))
    result = DocstringsResult(
        outcome=StageOutcome.kept(R.DOCSTRINGS),
        versions={"docstring_writer": writer.version, "docstring_judge": judge.version},
    )
    for name in derived.thin:
        fn = _method(derived.solution, derived.class_name, name)
        params = param_names(fn)
        text = _write_one(ctx, endpoint, writer, derived, fn, params)
        if isinstance(text, Verdict):
            result.outcome = StageOutcome.of(R.DOCSTRINGS, text)
            return result
        reason = _judge_one(ctx, ctx.llm.judges[0], judge, derived, fn, text)
        if isinstance(reason, Verdict):
            result.outcome = StageOutcome.of(R.DOCSTRINGS, reason)
            return result
        result.written.append(WrittenDocstring(method=name, docstring=text, judge_reason=reason))
    return result
