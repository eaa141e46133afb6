"""A write that fails (disk full, a path that cannot be a folder) is one error naming the file;
what was there before is untouched and no temporary file is left behind."""

from __future__ import annotations

import errno
import os

import pytest

from classforge_bench.pipeline.core import store
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.store import StoreWriteError, write_json


def test_disk_full_names_the_file_and_keeps_the_old_content(tmp_path, monkeypatch):
    target = tmp_path / "usage.json"
    write_json(target, {"paid": 90})

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store.os, "fsync", full)
    with pytest.raises(StoreWriteError) as err:
        write_json(target, {"paid": 91})
    assert str(err.value) == f"cannot write {target}: No space left on device"
    assert err.value.errno == errno.ENOSPC and "\n" not in str(err.value)
    assert target.read_text() == '{\n  "paid": 90\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["usage.json"]


def test_a_folder_that_cannot_exist_is_a_write_error(tmp_path):
    blocker = tmp_path / "built"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(StoreWriteError, match=f"cannot write {blocker}/example"):
        write_json(blocker / "example" / "build.json", {})
    with pytest.raises(StoreWriteError, match=f"cannot write {blocker}/example/.classforge.lock"):
        FolderLock(blocker / "example", "build").acquire()


def test_an_append_on_a_full_disk_leaves_no_torn_line(tmp_path, monkeypatch):
    """The mutation cache's appends (issue 26: left a torn, unreadable line on a full disk)."""
    from classforge_bench.pipeline.quality.cache import CachedOutcome, MutationCache

    cache = MutationCache(tmp_path, "ab" + "0" * 62)
    cache.put(CachedOutcome(key="kept", outcome="killed"))
    before = cache.path.read_bytes()
    real_write = os.write

    def half_then_full(fd: int, data) -> int:  # the disk fills in the middle of the line
        if len(data) > 8:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store.os, "write", half_then_full)
    with pytest.raises(StoreWriteError) as err:
        cache.put(CachedOutcome(key="lost", outcome="survived", failing=["A.test_a"] * 20))
    monkeypatch.undo()
    assert str(err.value) == f"cannot write {cache.path}: No space left on device"
    assert cache.path.read_bytes() == before  # cut back to the last whole line
    reread = MutationCache(tmp_path, "ab" + "0" * 62)
    assert reread.get("kept") is not None and reread.get("lost") is None  # "lost" is re-run, nothing is corrupt
