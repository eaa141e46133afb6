"""What every LLM stage shares: the stage outcome record, the prompt set, and one guarded call.

A stage answers with a `StageOutcome` (keep, or drop with a reason code), the persisted form of
the funnel's `Verdict`. Errors that are not about the candidate (budget reached, replay miss)
are not turned into outcomes here: they propagate so the build can stop or retry the candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.config import ConstructConfig, EndpointConfig, LLMConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Verdict
from classforge_bench.pipeline.llm.client import Completion, LLMClient
from classforge_bench.pipeline.llm.errors import LLMCallFailed, PromptTooLong
from classforge_bench.pipeline.llm.prompts import PromptTemplate, load_prompt

PROMPT_NAMES = (
    "compose",
    "compose_repair",
    "compose_reask",
    "tests_writer",
    "judge",
    "judge_retry",
    "solve",
    "solve_repair",
    "tests_strengthen",
)


class StageOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: str
    keep: bool
    reason: str = ""
    detail: str = ""

    @property
    def infrastructure(self) -> bool:
        """A drop caused by the endpoint, not the content: retry it on the next run."""
        return not self.keep and self.reason in R.INFRASTRUCTURE

    @classmethod
    def of(cls, stage: str, verdict: Verdict) -> StageOutcome:
        return cls(stage=stage, keep=verdict.keep, reason=verdict.reason, detail=verdict.detail)

    @classmethod
    def kept(cls, stage: str) -> StageOutcome:
        return cls(stage=stage, keep=True)

    @classmethod
    def drop(cls, stage: str, reason: str, detail: str = "") -> StageOutcome:
        return cls.of(stage, Verdict.drop(reason, detail))

    def verdict(self) -> Verdict:
        return Verdict.kept() if self.keep else Verdict.drop(self.reason, self.detail)


class Prompts:
    """The construction prompts, loaded once per build (versions pinned by the config if asked)."""

    def __init__(self, config: ConstructConfig, directory: Path | None = None) -> None:
        self.templates: dict[str, PromptTemplate] = {
            name: load_prompt(name, config.prompt_versions.get(name), directory) for name in PROMPT_NAMES
        }

    def __getitem__(self, name: str) -> PromptTemplate:
        return self.templates[name]

    def versions(self) -> dict[str, str]:
        return {name: t.version for name, t in self.templates.items()}

    def fingerprint(self) -> dict[str, str]:
        """Version and content hash of each template: a changed file invalidates finished candidates."""
        return {name: f"{t.version}:{t.sha256}" for name, t in self.templates.items()}


@dataclass(frozen=True)
class StageContext:
    """What a stage needs to call a model for one candidate."""

    client: LLMClient
    llm: LLMConfig
    construct: ConstructConfig
    prompts: Prompts
    candidate_id: str


def ask(
    ctx: StageContext,
    role: str,
    endpoint: EndpointConfig,
    messages: list[dict[str, Any]],
    prompt_version: str,
    *,
    sample_index: int = 0,
    response_format: dict[str, Any] | None = None,
) -> Completion | Verdict:
    """One model call; a call that failed for good becomes a drop verdict naming role and reason:
    `llm-call-failed` for infrastructure faults (a later run may pass: see `R.INFRASTRUCTURE`),
    `llm-request-rejected` for a request the server refuses every time, `prompt-too-long` with
    the token counts for a prompt that cannot fit the role's context window.

    BudgetExceeded, CacheMiss and UnpricedModel are deliberately not caught: they say nothing about
    the candidate, and the build decides what to do with them.
    """
    try:
        return ctx.client.complete(
            role,
            endpoint,
            messages,
            task_id=ctx.candidate_id,
            prompt_version=prompt_version,
            sample_index=sample_index,
            response_format=response_format,
        )
    except PromptTooLong as exc:
        return Verdict.drop(R.PROMPT_TOO_LONG, f"{role}: {exc.reason}")
    except LLMCallFailed as exc:
        status = f" (HTTP {exc.status})" if exc.status else ""
        reason = R.LLM_CALL_FAILED if exc.transient else R.LLM_REQUEST_REJECTED
        return Verdict.drop(reason, f"{role}: {exc.reason}{status} after {exc.attempts} attempt(s)")


def cut_detail(who: str, reply: Completion) -> str:
    """Why an answer counts as truncated: which limit cut it, and whether it already had a retry."""
    retried = " after one retry with more room" if reply.length_retried else ""
    return f"{who} reply cut by {reply.cut_by}{retried}"


def conversation(messages: list[dict[str, Any]], reply: str, follow_up: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The earlier exchange plus the model's reply and a follow-up user turn (repairs, retries)."""
    user_turns = [m for m in follow_up if m.get("role") == "user"]
    return [*messages, {"role": "assistant", "content": reply}, *user_turns]
