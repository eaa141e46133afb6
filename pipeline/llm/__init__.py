"""The LLM layer shared by the construction stages and the evaluator.

    cache = ResponseCache(config.llm.cache_path)
    ledger = UsageLedger(config.llm.costs)
    client = LLMClient(config.llm, env, cache, ledger)
    prompt = load_prompt("holistic")
    reply = client.complete("solver", config.llm.solver, prompt.messages(skeleton=...),
                            task_id="t1", prompt_version=prompt.version, sample_index=0)

Use one role name per judge (judge_0, judge_1, judge_2): the role is part of the cache key.
Tests script answers with `FakeOpenAIServer` (pipeline.llm.fake_server); its `ServerProfile` makes
it behave like real local servers. `pipeline.llm.preflight` checks endpoints before a run.
"""

from pipeline.llm.cache import KEY_VERSION, CacheEntry, CacheKeyMaterial, ResponseCache, canonical_json
from pipeline.llm.client import Completion, LLMClient
from pipeline.llm.errors import (
    BudgetExceeded,
    CacheCorrupt,
    CacheImportError,
    CacheMiss,
    CacheWriteError,
    LLMCallFailed,
    LLMError,
    PromptError,
    PromptTooLong,
    UnpricedModel,
)
from pipeline.llm.ledger import LedgerEntry, Usage, UsageLedger, UsageSummary
from pipeline.core.pool import Outcome, map_concurrently
from pipeline.llm.prompts import PromptTemplate, default_prompt_dir, list_prompts, load_prompt

__all__ = [
    "KEY_VERSION",
    "BudgetExceeded",
    "CacheCorrupt",
    "CacheEntry",
    "CacheImportError",
    "CacheKeyMaterial",
    "CacheMiss",
    "CacheWriteError",
    "Completion",
    "LLMCallFailed",
    "LLMClient",
    "LLMError",
    "Outcome",
    "PromptError",
    "PromptTooLong",
    "PromptTemplate",
    "ResponseCache",
    "UnpricedModel",
    "Usage",
    "UsageLedger",
    "UsageSummary",
    "LedgerEntry",
    "canonical_json",
    "default_prompt_dir",
    "list_prompts",
    "load_prompt",
    "map_concurrently",
]
