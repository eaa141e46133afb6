"""Dependency levels for bottom-up/top-down from the model under test (as ClassEval-Pro does).

One call per (model, task), shared by both strategies and every sample, so the two orders come
from the same plan. The answer must be a JSON object `{"levels": {method: level}}` covering every
target method with a non-negative integer; anything else is unusable, and the dataset's labels
are used instead, with the reason recorded next to the sample (`LevelsRecord.note`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from classforge_bench.benchmark.record import LevelsRecord
from classforge_bench.benchmark.strategies import levels_from_labels
from classforge_bench.pipeline.config import EndpointConfig
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.llm.extraction import fenced_blocks, strip_reasoning
from classforge_bench.pipeline.llm.prompts import load_prompt

LEVELS_PROMPT = "eval_levels"
LEVELS_ROLE = "eval_levels"

if TYPE_CHECKING:  # the OpenAI SDK under the client is loaded only when a model is asked
    from classforge_bench.pipeline.llm.client import LLMClient


def levels_schema(task: Task) -> dict:
    """Structured-output schema (OpenAI `json_schema`, strict): one integer per target method."""
    props = {name: {"type": "integer"} for name in task.method_names}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "method_levels",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "levels": {
                        "type": "object",
                        "properties": props,
                        "required": list(props),
                        "additionalProperties": False,
                    }
                },
                "required": ["levels"],
                "additionalProperties": False,
            },
        },
    }


def parse_levels(task: Task, text: str) -> tuple[dict[str, int] | None, str]:
    """(levels, note): levels None with the reason when the answer is unusable."""
    body, _ = strip_reasoning(text or "")
    blocks = fenced_blocks(body)
    candidates = [body.strip()] + [b.code for b in blocks]
    data = None
    for candidate in candidates:
        try:
            data = json.loads(candidate)
            break
        except json.JSONDecodeError:
            continue
    if data is None:
        return None, "the answer is not JSON"
    levels = data.get("levels") if isinstance(data, dict) else None
    if not isinstance(levels, dict):
        return None, 'the answer has no "levels" object'
    missing = [m for m in task.method_names if m not in levels]
    if missing:
        return None, f"no level for {', '.join(missing)}"
    bad = [
        m for m in task.method_names if isinstance(levels[m], bool) or not isinstance(levels[m], int) or levels[m] < 0
    ]
    if bad:
        return None, f"not a non-negative integer level: {', '.join(f'{m}={levels[m]!r}' for m in bad)}"
    extra = sorted(set(levels) - set(task.method_names))
    note = f"ignored levels of unknown methods: {', '.join(extra)}" if extra else ""
    return {m: levels[m] for m in task.method_names}, note


def model_levels(client: LLMClient, endpoint: EndpointConfig, task: Task) -> LevelsRecord:
    """Ask the model; fall back to the labels (recorded) if the answer is unusable. Call errors
    (`LLMError`) propagate: a failed call is not an answer."""
    template = load_prompt(LEVELS_PROMPT)
    messages = template.messages(
        class_name=task.class_name, method_names=", ".join(task.method_names), skeleton=task.skeleton.strip("\n")
    )
    reply = client.complete(
        LEVELS_ROLE,
        endpoint,
        messages,
        task_id=task.task_id,
        prompt_version=template.version,
        sample_index=0,
        response_format=levels_schema(task),
    )
    levels, note = parse_levels(task, reply.text)
    common = {
        "prompt_version": template.version,
        "raw": reply.text,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
    }
    if levels is None:
        return LevelsRecord(
            source="labels_fallback",
            levels=levels_from_labels(task),
            note=f"model levels unusable ({note}); dataset labels used",
            **common,
        )
    return LevelsRecord(source="model", levels=levels, note=note, **common)
