"""`append_line` on a full disk: its own torn part is cut back, another process's line never."""

from __future__ import annotations

import errno
import os

import pytest

from classforge_bench.pipeline.core import store
from classforge_bench.pipeline.core.store import StoreWriteError, append_line


def _disk_fills_after_half(monkeypatch, meanwhile=None):
    """The first write lands half the line, then `meanwhile` (another writer) runs, then the disk is full."""
    real_write, calls = os.write, []

    def write(fd, data):
        calls.append(fd)
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        if meanwhile is not None:
            meanwhile()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "write", write)


def test_a_failed_append_is_cut_back_to_where_the_file_was(tmp_path, monkeypatch):
    path = tmp_path / "cache.jsonl"
    path.write_text('{"first": 1}\n')
    _disk_fills_after_half(monkeypatch)
    with pytest.raises(StoreWriteError, match="cache.jsonl"):
        append_line(path, '{"ours": "a line long enough to be torn in half"}')
    assert path.read_text() == '{"first": 1}\n'


def test_a_line_another_process_appended_meanwhile_is_kept_whole(tmp_path, monkeypatch):
    path = tmp_path / "cache.jsonl"
    path.write_text('{"first": 1}\n')

    def another_process_appends():
        with open(path, "ab") as fh:  # its own descriptor, as another process's
            fh.write(b'{"theirs": 2}\n')

    _disk_fills_after_half(monkeypatch, another_process_appends)
    with pytest.raises(StoreWriteError, match="cache.jsonl"):
        append_line(path, '{"ours": "a line long enough to be torn in half"}')
    lines = path.read_text().splitlines(keepends=True)
    assert lines[0] == '{"first": 1}\n' and lines[-1].endswith('{"theirs": 2}\n')
