"""Disk full while the LLM cache is written: no paid answer is lost or paid twice, and the run ends
with one line naming the cache and where the answers went."""

from __future__ import annotations

import random

import pytest

from llmkit import ENV, endpoint
from pipeline.config import LLMConfig
from pipeline.llm.client import LLMClient
from pipeline.llm.cache import ResponseCache
from pipeline.llm.ledger import UsageLedger
from pipeline.llm.errors import CacheWriteError

MSGS = [{"role": "user", "content": "Write class Stack."}]


def _fill(cache: ResponseCache) -> None:
    # SQLite's own "database or disk is full" (SQLITE_FULL), as on a full filesystem.
    pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
    cache._conn.execute(f"PRAGMA max_page_count={pages}")


def test_a_full_disk_keeps_paid_answers_in_memory_then_saves_them_elsewhere(server, tmp_path):
    server.default = "class Stack: pass" + " " * 5000
    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    _fill(cache)
    client = LLMClient(LLMConfig(cache_path=path), ENV, cache, UsageLedger(), sleep=lambda s: None, rng=random.Random(1))
    ep = endpoint(server.base_url)
    first = client.complete("solver", ep, MSGS, task_id="t1", prompt_version="v1")
    again = client.complete("solver", ep, MSGS, task_id="t2", prompt_version="v1")
    assert again.cached and again.text == first.text and len(server.chat_requests) == 1
    assert client.ledger.summary().total.requests == 1 and cache.unsaved == 1
    with pytest.raises(CacheWriteError) as info:
        cache.close()
    message = str(info.value)
    assert "\n" not in message and str(path) in message and "1 paid answer(s) could not be stored" in message
    assert "database or disk is full" in message
    # The spilled export brings the answer back: a replay of the same request pays nothing.
    replay = ResponseCache(tmp_path / "other.sqlite")
    assert replay.import_jsonl(info.value.spill) == 1
    assert replay.get(first.cache_key).text == first.text
    replay.close()
    info.value.spill.unlink()


def test_space_freed_before_the_end_stores_them_normally(server, tmp_path):
    server.default = "x" * 5000
    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    _fill(cache)
    client = LLMClient(LLMConfig(cache_path=path), ENV, cache, UsageLedger())
    out = client.complete("solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1")
    cache._conn.execute("PRAGMA max_page_count=1073741823")
    cache.close()
    with ResponseCache(path) as reopened:
        assert reopened.get(out.cache_key).text == out.text
