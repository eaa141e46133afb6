"""The per-folder lock (held across processes, named in the refusal, gone with its holder) and
what of a clone URL a release may publish."""

from __future__ import annotations

import subprocess
import sys

import pytest

from classforge_bench.pipeline.core.folder_lock import FolderBusy, FolderLock
from classforge_bench.pipeline.core.urls import public_clone_url

HOLDER = """
import sys, time
from pathlib import Path
from classforge_bench.pipeline.core.folder_lock import FolderLock
FolderLock(Path(sys.argv[1]), "nightly build").acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_another_process_is_refused_by_name_and_the_lock_dies_with_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusy, match=rf"nightly build \(pid {holder.pid} on "):
            FolderLock(tmp_path, "second").acquire()
    finally:
        holder.kill()  # SIGKILL: no cleanup ran, yet the kernel released the lock
        holder.wait()
    with FolderLock(tmp_path, "after the holder died"):
        pass


def test_reentrant_in_one_thread_released_by_the_outermost(tmp_path):
    with FolderLock(tmp_path, "outer"):
        with FolderLock(tmp_path, "inner"):
            pass
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; from classforge_bench.pipeline.core.folder_lock import FolderLock;"
                "FolderLock(Path(sys.argv[1]), 'probe').acquire()",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
        )
        assert probe.returncode != 0 and "FolderBusy" in probe.stderr, "still held after the inner release"
    FolderLock(tmp_path, "free again").acquire().release()


def test_a_lent_lock_is_a_nested_hold_in_another_thread_and_an_unlent_one_is_refused(tmp_path):
    """The CLI holds the build folder from its first check and runs the flow in a worker thread."""
    import threading

    from classforge_bench.pipeline.core.folder_lock import FolderBusy

    def in_a_thread(purpose: str) -> list[BaseException]:
        errors: list[BaseException] = []

        def take() -> None:
            try:
                with FolderLock(tmp_path, purpose):
                    pass
            except FolderBusy as exc:
                errors.append(exc)

        thread = threading.Thread(target=take)
        thread.start()
        thread.join()
        return errors

    outer = FolderLock(tmp_path, "cli").acquire()
    assert len(in_a_thread("not lent")) == 1  # a thread is as foreign as a process unless lent
    outer.lend()
    assert in_a_thread("the flow") == []
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from classforge_bench.pipeline.core.folder_lock import FolderLock;"
            "FolderLock(Path(sys.argv[1]), 'probe').acquire()",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0 and "FolderBusy" in probe.stderr, "the thread's release freed the lender's lock"
    outer.release()
    assert len(in_a_thread("after")) == 0  # released: not lent any more, and free
    other = FolderLock(tmp_path, "again").acquire()
    try:
        assert len(in_a_thread("not lent again")) == 1
    finally:
        other.release()


@pytest.mark.parametrize(
    "url, public",
    [
        ("https://github.com/acme/tools.git", "https://github.com/acme/tools.git"),
        ("https://x-access-token:ghs_secret@github.com/acme/tools.git", "https://github.com/acme/tools.git"),
        ("ssh://git@example.org:2222/acme/tools", "ssh://example.org:2222/acme/tools"),
        ("file:///home/builder/work/.cache/example-repos/acme__tools", None),
        ("/home/builder/repos/tools", None),
        ("", None),
        (None, None),
    ],
)
def test_public_clone_url(url, public):
    assert public_clone_url(url) == public


def test_a_full_disk_while_naming_the_holder_is_a_store_error_and_leaves_the_lock_free(tmp_path, monkeypatch):
    import errno

    from classforge_bench.pipeline.core import folder_lock
    from classforge_bench.pipeline.core.store import StoreWriteError

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(folder_lock.os, "write", full)
    with pytest.raises(StoreWriteError, match="cannot write .*No space left"):
        FolderLock(tmp_path, "nightly build").acquire()
    monkeypatch.undo()
    FolderLock(tmp_path, "nightly build").acquire().release()  # the failed attempt holds nothing
