"""Stage 4, judges: independent LLM judges score how well the tests match the skeleton.

Each judge (config.llm.judges, meant to be different models) answers with JSON following
`JUDGE_RESPONSE_FORMAT` (a score 0-10, reasons and a list of problems). An answer that is not
valid JSON of that shape, or is cut off, gets `judge_retries` re-asks (default one) that quote the
parse error; after that the judge's vote counts as failed. A failed call is a failed vote too: one
unreachable judge must not decide alone, the threshold does.

The pair advances when at least `judge_min_full_marks` judges give `judge_full_mark`. Every vote,
with its score, reasons and status, is kept for the task record.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.construct.common import StageContext, StageOutcome, ask, conversation, cut_detail
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.task import JudgeVote
from classforge_bench.pipeline.llm.client import Completion

JUDGE_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "description": "0-10; 10 = the tests match the skeleton exactly"},
        "reasons": {"type": "string", "description": "why this score, referring to the rubric"},
        "problems": {
            "type": "array",
            "items": {"type": "string"},
            "description": "each concrete mismatch: test, assertion and what the skeleton says",
        },
    },
    "required": ["score", "reasons", "problems"],
    "additionalProperties": False,
}
# OpenAI structured outputs; servers without them still get the schema in the prompt.
JUDGE_RESPONSE_FORMAT: dict = {
    "type": "json_schema",
    "json_schema": {"name": "test_alignment_verdict", "strict": True, "schema": JUDGE_SCHEMA},
}

_JSON_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*?)\n\s*```\s*$", re.DOTALL)


class JudgeAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: int = Field(ge=0, le=10)
    reasons: str
    problems: list[str] = Field(default_factory=list)


class JudgesResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: StageOutcome
    votes: list[JudgeVote]
    full_marks: int
    prompt_version: str


def parse_answer(text: str) -> JudgeAnswer:
    """The judge's JSON; a ```json fence around it is tolerated. Raises ValueError with the cause."""
    m = _JSON_FENCE.match(text)
    body = m["body"] if m else text.strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return JudgeAnswer.model_validate(data, strict=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(object)"
        raise ValueError(f"does not match the schema: {where}: {first['msg']}") from exc


def judge_messages(ctx: StageContext, skeleton: str, tests: str, class_name: str) -> list[dict[str, str]]:
    return ctx.prompts["judge"].messages(
        class_name=class_name,
        skeleton=skeleton.rstrip("\n"),
        tests=tests.rstrip("\n"),
        full_mark=ctx.construct.judge_full_mark,
        schema=json.dumps(JUDGE_SCHEMA, indent=2),
    )


def _one_judge(ctx: StageContext, index: int, messages: list[dict[str, str]]) -> JudgeVote:
    endpoint = ctx.llm.judges[index]
    role = f"judge-{index + 1}"
    vote = JudgeVote(judge=index + 1, role=role, model=endpoint.model, status="malformed")
    base_version = ctx.prompts["judge"].version
    version = base_version
    for attempt in range(ctx.construct.judge_retries + 1):
        reply = ask(ctx, role, endpoint, messages, version, response_format=JUDGE_RESPONSE_FORMAT)
        vote.attempts = attempt + 1
        if not isinstance(reply, Completion):
            vote.status = "call-failed"
            vote.errors.append(f"[{reply.reason}] {reply.detail}")
            vote.infrastructure = reply.reason in R.INFRASTRUCTURE
            return vote
        if reply.truncated:
            error = cut_detail("judge", reply)
        else:
            try:
                answer = parse_answer(reply.text)
            except ValueError as exc:
                error = str(exc)
            else:
                vote.status, vote.score, vote.reasons, vote.problems = (
                    "scored",
                    answer.score,
                    answer.reasons,
                    answer.problems,
                )
                return vote
        vote.errors.append(error)
        retry = ctx.prompts["judge_retry"]
        messages = conversation(messages, reply.text, retry.messages(error=error))
        version = f"{base_version}+{retry.version}"
    return vote


def judge(ctx: StageContext, skeleton: str, tests: str, class_name: str) -> JudgesResult:
    stage = R.JUDGES
    messages = judge_messages(ctx, skeleton, tests, class_name)
    votes = [_one_judge(ctx, i, messages) for i in range(len(ctx.llm.judges))]
    need = ctx.construct.judge_min_full_marks
    full = sum(1 for v in votes if v.valid and v.score is not None and v.score >= ctx.construct.judge_full_mark)
    summary = ", ".join(f"{v.role}={v.score if v.valid else v.status}" for v in votes)
    version = ctx.prompts["judge"].version
    if full >= need:
        return JudgesResult(outcome=StageOutcome.kept(stage), votes=votes, full_marks=full, prompt_version=version)
    valid = sum(1 for v in votes if v.valid)
    reason = R.JUDGE_VOTES_FAILED if valid < need else R.INSUFFICIENT_FULL_MARKS
    unreachable = sum(1 for v in votes if v.infrastructure)
    if unreachable and full + unreachable >= need:
        # An outage took votes that could have changed the verdict: not a verdict, the next run asks
        # again. Votes that could not have changed it (two malformed answers beside one outage,
        # with two full marks needed) leave the verdict final.
        reason = R.LLM_CALL_FAILED
    detail = f"{full} of {len(votes)} judges gave full marks, {need} needed ({summary})"
    return JudgesResult(
        outcome=StageOutcome.drop(stage, reason, detail), votes=votes, full_marks=full, prompt_version=version
    )
