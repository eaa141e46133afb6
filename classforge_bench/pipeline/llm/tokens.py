"""Token counts the client makes itself, when a server sends no `usage` or before a prompt is sent.

No tokenizer ships with the project (tiktoken and the models' own tokenizers are not dependencies),
so the count is a stated estimate: ceil(characters / 4) per text, the usual rule of thumb for
English and code with BPE tokenizers, plus 4 tokens per chat message for the role and separators
(OpenAI's published accounting). It is what the budget cap is enforced on when `usage` is missing,
and every ledger entry made from it is counted in `estimated_requests`.
"""

from __future__ import annotations

import math
from typing import Any

ESTIMATE_RULE = "ceil(characters / 4) per text + 4 per message"
_PER_MESSAGE = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def estimate_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(estimate_tokens(message_text(m)) + _PER_MESSAGE for m in messages)
