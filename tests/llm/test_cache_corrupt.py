"""A damaged LLM cache file: named, moved aside, what could be read is kept, the run goes on with
a fresh cache (issue 26: every later build failed with `database disk image is malformed`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from classforge_bench.pipeline.llm.cache import CacheEntry, CacheKeyMaterial, ResponseCache

PAGE = 4096


def _entry(i: int) -> CacheEntry:
    material = CacheKeyMaterial(
        role="composer",
        model="m",
        messages=[{"role": "user", "content": f"{'x' * 500} {i}"}],
        temperature=0.0,
        max_tokens=8,
        prompt_version="v1",
    )
    return CacheEntry(key=material.key(), request=material, text="y" * 300, finish_reason="stop", model="m")


def _filled(path: Path, n: int = 300) -> list[CacheEntry]:
    entries = [_entry(i) for i in range(n)]
    with ResponseCache(path) as cache:
        for e in entries:
            cache.put(e.key, e)
    return entries


def _aside(path: Path) -> list[Path]:
    return sorted(
        p
        for p in path.parent.iterdir()
        if p.name.startswith(f"{path.name}.corrupt-") and not p.name.endswith(("-wal", "-shm"))
    )


def test_a_cache_truncated_to_half_is_moved_aside_named_and_replaced(tmp_path, caplog):
    path = tmp_path / "llm.sqlite"
    _filled(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with caplog.at_level(logging.WARNING, logger="classforge_bench.pipeline.llm.cache"):
        cache = ResponseCache(path)
    try:
        (aside,) = _aside(path)
        assert aside.read_bytes() == data[: len(data) // 2]  # kept as it was, for whoever wants to look
        (line,) = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
        assert str(path) in line and str(aside) in line and "will be paid again" in line and "\n" not in line
        fresh = _entry(10_000)  # the run goes on: the fresh cache stores and serves
        cache.put(fresh.key, fresh)
        assert cache.get(fresh.key) == fresh
    finally:
        cache.close()
    with ResponseCache(path) as again:  # a later run opens it without complaint
        assert fresh.key in again


@pytest.mark.parametrize("folder", ["plain", "with#hash", "with?query"])  # characters a file: URI reads as syntax
def test_a_cache_with_one_damaged_page_keeps_every_readable_answer(tmp_path, caplog, folder):
    path = tmp_path / folder / "llm.sqlite"
    entries = _filled(path)
    data = bytearray(path.read_bytes())
    middle = (len(data) // PAGE // 2) * PAGE
    data[middle : middle + PAGE] = b"\xff" * PAGE
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="classforge_bench.pipeline.llm.cache"), ResponseCache(path) as cache:
        kept = [e for e in entries if cache.get(e.key) == e]
    assert 0 < len(kept) < len(entries)
    assert f"{len(kept)} answer(s) recovered" in caplog.text


def test_a_file_that_is_not_a_cache_is_set_aside_too(tmp_path, caplog):
    path = tmp_path / "llm.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with caplog.at_level(logging.WARNING, logger="classforge_bench.pipeline.llm.cache"), ResponseCache(path) as cache:
        assert len(cache) == 0
    assert _aside(path) and "damaged" in caplog.text
