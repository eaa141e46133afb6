"""Disk full while the LLM cache is written: no paid answer is lost or paid twice, and the run ends
with one line naming the cache and where the answers went."""

from __future__ import annotations

import random
import sqlite3

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


def test_the_next_run_stores_the_spilled_answers_once_the_disk_has_room(server, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    server.default = "class Stack: pass" + " " * 5000
    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    _fill(cache)
    client = LLMClient(LLMConfig(cache_path=path), ENV, cache, UsageLedger(), sleep=lambda s: None, rng=random.Random(1))
    first = client.complete("solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1")
    with pytest.raises(CacheWriteError) as info:
        cache.close()
    assert "the next run stores them" in str(info.value) and info.value.spill.parent == tmp_path / "tmp"
    # A spill of another cache is not this cache's business.
    stranger = ResponseCache(tmp_path / "other.sqlite")
    stranger.close()
    assert info.value.spill.is_file() and stranger.path.exists()
    # Space freed: the next open of the same cache stores the spilled answer and removes the spill,
    # so the re-run is served from the cache and pays nothing.
    with ResponseCache(path) as reopened:
        again = LLMClient(LLMConfig(cache_path=path), ENV, reopened, UsageLedger()).complete(
            "solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1")
    assert again.cached and again.text == first.text and len(server.chat_requests) == 1
    assert not info.value.spill.exists()


def test_a_spill_that_still_cannot_be_stored_stays_where_it_is(server, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    server.default = "x" * 5000
    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    _fill(cache)
    LLMClient(LLMConfig(cache_path=path), ENV, cache, UsageLedger()).complete(
        "solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1")
    with pytest.raises(CacheWriteError) as info:
        cache.close()
    real_insert = ResponseCache.import_jsonl

    def still_full(self, spill):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(ResponseCache, "import_jsonl", still_full)
    ResponseCache(path).close()
    assert info.value.spill.is_file()
    monkeypatch.setattr(ResponseCache, "import_jsonl", real_insert)
    with ResponseCache(path) as reopened:
        assert len(reopened) == 1
    assert not info.value.spill.exists()
