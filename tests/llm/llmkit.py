"""Helpers for the LLM-layer tests: endpoints with small timeouts and a client harness (fixtures in conftest)."""

from __future__ import annotations

import random
import socket
from pathlib import Path

from classforge_bench.pipeline.config import CostConfig, EndpointConfig, LLMConfig
from classforge_bench.pipeline.llm.cache import ResponseCache
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.ledger import UsageLedger

API_KEY = "sk-test-key"
ENV = {"OPENAI_API_KEY": API_KEY}
PROMPTS = Path(__file__).parent / "prompts"


def endpoint(base_url: str, model: str = "model-a", **kw: object) -> EndpointConfig:
    """Sleeps are injected. The timeout is for a busy machine (a quick answer can take seconds
    there); a test provoking a timeout sets its own and delays the answer far beyond it."""
    params: dict[str, object] = {
        "base_url": base_url,
        "model": model,
        "timeout_s": 30.0,
        "max_retries": 2,
        "backoff_base_s": 0.5,
        "backoff_max_s": 4.0,
        "temperature": 0.2,
        "max_tokens": 256,
    }
    params.update(kw)
    return EndpointConfig(**params)


class Harness:
    """A client plus what tests inspect: recorded sleeps, cache and ledger."""

    def __init__(
        self,
        tmp_path: Path,
        *,
        mode: str = "live",
        budget_usd: float | None = None,
        costs: dict[str, CostConfig] | None = None,
        concurrency: int = 4,
        cache_name: str = "llm.sqlite",
    ) -> None:
        self.config = LLMConfig(
            mode=mode,
            cache_path=tmp_path / cache_name,
            budget_usd=budget_usd,
            costs=costs or {},
            concurrency=concurrency,
        )
        self.sleeps: list[float] = []
        self.cache = ResponseCache(self.config.cache_path)
        self.ledger = UsageLedger(self.config.costs)
        self.client = LLMClient(
            self.config, ENV, self.cache, self.ledger, sleep=self.sleeps.append, rng=random.Random(7)
        )

    def close(self) -> None:
        self.client.close()
        self.cache.close()


def dead_url() -> str:
    """An OpenAI-style base URL on a loopback port nothing listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"
