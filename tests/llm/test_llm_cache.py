"""ResponseCache: key definition, first-write-wins, persistence, threads, JSONL export/import."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading

import pytest

from classforge_bench.pipeline.llm.cache import CacheEntry, CacheKeyMaterial, ResponseCache, canonical_json
from classforge_bench.pipeline.llm.errors import CacheCorrupt, CacheImportError


def material(**kw) -> CacheKeyMaterial:
    params = dict(
        role="solver",
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Write class Stack."}],
        temperature=0.2,
        max_tokens=4096,
        prompt_version="holistic@v1",
        sample_index=0,
    )
    params.update(kw)
    return CacheKeyMaterial(**params)


def entry(text: str = "class Stack: pass", **kw) -> CacheEntry:
    m = material(**kw)
    return CacheEntry(
        key=m.key(),
        request=m,
        text=text,
        finish_reason="stop",
        model=m.model,
        response_model=m.model,
        prompt_tokens=5,
        completion_tokens=4,
        task_id="t1",
    )


def test_key_definition_is_pinned():
    """Changing the key spelling silently invalidates every recorded cache; this golden value guards it."""
    m = material()
    expected_json = (
        '{"key_version":1,"max_tokens":4096,"messages":[{"content":"Write class Stack.","role":"user"}],'
        '"model":"gpt-4o-mini","prompt_version":"holistic@v1","response_format":null,"role":"solver",'
        '"sample_index":0,"temperature":0.2}'
    )
    assert canonical_json(m.model_dump(mode="json")) == expected_json
    assert m.key() == hashlib.sha256(expected_json.encode()).hexdigest()
    assert m.key() == "e4a09602927a441dd0fd2e914b75dd7330514183e382df6e12cf0adb7bd62cbd"


def test_key_ignores_dict_order_but_not_message_order():
    a = material(messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    b = material(messages=[{"content": "s", "role": "system"}, {"content": "u", "role": "user"}])
    c = material(messages=[{"role": "user", "content": "u"}, {"role": "system", "content": "s"}])
    assert a.key() == b.key() != c.key()
    assert material(temperature=1).key() == material(temperature=1.0).key()


def test_put_get_len_contains(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    e = entry()
    assert cache.get(e.key) is None and e.key not in cache and len(cache) == 0
    stored = cache.put(e.key, e)
    assert stored == e and cache.get(e.key) == e and e.key in cache and len(cache) == 1
    cache.close()


def test_first_write_wins_and_put_returns_the_winner(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    first, second = entry("first"), entry("second")
    assert first.key == second.key
    cache.put(first.key, first)
    assert cache.put(second.key, second).text == "first"
    assert len(cache) == 1
    cache.close()


def test_put_rejects_an_entry_under_a_foreign_key(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    e = entry()
    with pytest.raises(CacheCorrupt):
        cache.put("0" * 64, e)
    assert len(cache) == 0
    cache.close()


def test_persists_across_reopen_in_wal_mode(tmp_path):
    path = tmp_path / "sub" / "c.sqlite"
    with ResponseCache(path) as cache:
        e = cache.put(entry().key, entry())
    with ResponseCache(path) as cache:
        assert cache.get(e.key) == e
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unreadable_row_is_reported_not_returned(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        e = cache.put(entry().key, entry())
    conn = sqlite3.connect(path)
    conn.execute("UPDATE responses SET entry = '{\"text\": 1}'")
    conn.commit()
    conn.close()
    with ResponseCache(path) as cache, pytest.raises(CacheCorrupt, match=e.key):
        cache.get(e.key)


def test_concurrent_puts_from_threads(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    entries = [entry(f"answer {i}", sample_index=i) for i in range(200)]
    chunks = [entries[i::8] for i in range(8)]
    errors: list[BaseException] = []

    def work(chunk):
        try:
            for e in chunk:
                cache.put(e.key, e)
                assert cache.get(e.key).text == e.text
        except BaseException as exc:  # surfaced below; a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(cache) == 200
    cache.close()


def test_export_import_round_trip(tmp_path):
    src = ResponseCache(tmp_path / "a.sqlite")
    entries = [
        entry(f"answer {i}", sample_index=i, messages=[{"role": "user", "content": f"q é {i}"}]) for i in range(5)
    ]
    for e in entries:
        src.put(e.key, e)
    out = tmp_path / "recorded.jsonl"
    assert src.export_jsonl(out) == 5
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["key"] for line in lines] == sorted(e.key for e in entries)
    assert "q é 0" in out.read_text(encoding="utf-8")  # readable text, not \u escapes

    dst = ResponseCache(tmp_path / "b.sqlite")
    assert dst.import_jsonl(out) == 5
    assert dst.import_jsonl(out) == 0  # idempotent: safe to call on every start
    assert all(dst.get(e.key) == e for e in entries)
    second = tmp_path / "again.jsonl"
    dst.export_jsonl(second)
    assert second.read_bytes() == out.read_bytes()  # stable bytes: a shipped file never churns
    src.close()
    dst.close()


def test_import_rejects_tampered_or_malformed_files_atomically(tmp_path):
    src = ResponseCache(tmp_path / "a.sqlite")
    for i in range(3):
        e = entry(sample_index=i)
        src.put(e.key, e)
    out = tmp_path / "recorded.jsonl"
    src.export_jsonl(out)
    lines = out.read_text().splitlines()
    tampered = json.loads(lines[2])
    tampered["request"]["temperature"] = 0.9  # the answer no longer belongs to its key
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], lines[1], json.dumps(tampered)]) + "\n")
    dst = ResponseCache(tmp_path / "b.sqlite")
    with pytest.raises(CacheImportError, match=r"bad\.jsonl:3"):
        dst.import_jsonl(tmp_path / "bad.jsonl")
    (tmp_path / "junk.jsonl").write_text(lines[0] + "\nnot json\n")
    with pytest.raises(CacheImportError, match=r"junk\.jsonl:2"):
        dst.import_jsonl(tmp_path / "junk.jsonl")
    assert len(dst) == 0  # all or nothing
    src.close()
    dst.close()
