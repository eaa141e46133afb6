"""Disk full while the LLM cache is written: no paid answer is lost or paid twice, and the run ends
with one line naming the cache and where the answers went."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from llmkit import ENV, endpoint

from classforge_bench.pipeline.config import LLMConfig
from classforge_bench.pipeline.llm.cache import ResponseCache
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.errors import CacheWriteError
from classforge_bench.pipeline.llm.ledger import UsageLedger

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
    client = LLMClient(
        LLMConfig(cache_path=path), ENV, cache, UsageLedger(), sleep=lambda s: None, rng=random.Random(1)
    )
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
    client = LLMClient(
        LLMConfig(cache_path=path), ENV, cache, UsageLedger(), sleep=lambda s: None, rng=random.Random(1)
    )
    first = client.complete("solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1")
    with pytest.raises(CacheWriteError) as info:
        cache.close()
    assert "the next run stores them" in str(info.value) and info.value.spill.parent.parent == tmp_path / "tmp"
    # A spill of another cache is not this cache's business.
    stranger = ResponseCache(tmp_path / "other.sqlite")
    stranger.close()
    assert info.value.spill.is_file() and stranger.path.exists()
    # Space freed: the next open of the same cache stores the spilled answer and removes the spill,
    # so the re-run is served from the cache and pays nothing.
    with ResponseCache(path) as reopened:
        again = LLMClient(LLMConfig(cache_path=path), ENV, reopened, UsageLedger()).complete(
            "solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1"
        )
    assert again.cached and again.text == first.text and len(server.chat_requests) == 1
    assert not info.value.spill.exists()


def test_a_spill_that_still_cannot_be_stored_stays_where_it_is(server, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    path, spill = _spilled(server, tmp_path)
    real_insert = ResponseCache.import_jsonl

    def still_full(self, file):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(ResponseCache, "import_jsonl", still_full)
    ResponseCache(path).close()
    assert spill.is_file()
    monkeypatch.setattr(ResponseCache, "import_jsonl", real_insert)
    with ResponseCache(path) as reopened:
        assert len(reopened) == 1
    assert not spill.exists()


def test_a_stop_stores_the_answers_kept_in_memory_or_says_where_they_went(server, tmp_path, monkeypatch):
    """A stop signal ends the process with os._exit, which skips close(): the stop handler asks the
    caches (paid.store_kept) to store what they kept in memory, and says what it could not."""
    from classforge_bench.pipeline.llm import paid

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    server.default = "class Stack: pass" + " " * 5000
    full, freed = ResponseCache(tmp_path / "full.sqlite"), ResponseCache(tmp_path / "freed.sqlite")
    answers = {}
    for cache in (full, freed):
        _fill(cache)
        client = LLMClient(LLMConfig(cache_path=cache.path), ENV, cache, UsageLedger())
        answers[cache.path] = client.complete(
            "solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1"
        )
        assert cache.unsaved == 1
    freed._conn.execute("PRAGMA max_page_count=1073741823")
    (said,) = paid.store_kept()
    assert str(full.path) in said and "1 paid answer(s) could not be stored" in said
    assert freed.unsaved == 0 and freed.get(answers[freed.path].cache_key).text == answers[freed.path].text
    freed.close()
    full._conn.execute("PRAGMA max_page_count=1073741823")
    full.close()  # stored now, and no longer asked at a stop
    assert paid.store_kept() == []
    (spill,) = (tmp_path / "tmp").glob("*/*.jsonl")
    assert str(spill) in said


def _spilled(server, tmp_path, before_close=lambda: None) -> tuple[Path, Path]:
    """A cache whose answer was spilled; returns (cache path, spill file)."""
    server.default = "x" * 5000
    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    _fill(cache)
    LLMClient(LLMConfig(cache_path=path), ENV, cache, UsageLedger()).complete(
        "solver", endpoint(server.base_url), MSGS, task_id="t1", prompt_version="v1"
    )
    before_close()
    with pytest.raises(CacheWriteError) as info:
        cache.close()
    return path, info.value.spill


def test_spills_are_read_only_from_this_users_private_folder(server, tmp_path, monkeypatch):
    """The next open imports spills into the cache: on a shared machine another user must not be
    able to plant answers there (a folder others can write, or a symlink, is not read)."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    path, spill = _spilled(server, tmp_path)
    assert spill.parent.stat().st_mode & 0o777 == 0o700
    planted = spill.with_name(spill.name.replace(".jsonl", "-link.jsonl"))
    moved = tmp_path / "elsewhere.jsonl"
    spill.rename(moved)
    planted.symlink_to(moved)
    with ResponseCache(path) as reopened:
        assert len(reopened) == 0 and planted.is_symlink()  # a symlink is not imported
    planted.unlink()
    moved.rename(spill)
    spill.parent.chmod(0o777)
    with ResponseCache(path) as reopened:
        assert len(reopened) == 0 and spill.is_file()  # nor anything in a folder others can write
    spill.parent.chmod(0o700)
    with ResponseCache(path) as reopened:
        assert len(reopened) == 1 and not spill.exists()


def test_a_spill_the_disk_cannot_hold_whole_is_not_left_half_written(server, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    _path, spill = _spilled(
        server, tmp_path, lambda: monkeypatch.setattr("classforge_bench.pipeline.llm.cache.canonical_json", disk_full)
    )
    assert spill is None and list((tmp_path / "tmp").glob("*/*")) == []
