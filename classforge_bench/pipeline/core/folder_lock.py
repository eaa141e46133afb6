"""One writer per output folder: an advisory lock that names its holder.

Two builds writing one folder pay for the same calls twice and overwrite each other's ledger, so
the second one must stop before it spends anything. `flock` is released by the kernel when the
holder dies, so a crashed run never leaves a stale lock behind; the file's text only says who
holds it, for the error message.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.core.store import StoreWriteError

LOCK_NAME = ".classforge.lock"

# Re-entrant per thread (a publish that holds the release folder calls the writer, which takes it
# again); another thread or process is refused. Keyed by (lock file, thread id) -> depth.
_held: dict[tuple[str, int], int] = {}
_held_guard = threading.Lock()
# Lock files a holder lent to every thread of this process (`FolderLock.lend`): the CLI holds the
# build folder from its first check and runs the flow, which takes it again, in a worker thread.
_lent: set[str] = set()


class FolderBusy(InfrastructureError):
    """Another process holds the folder's lock; the message names it."""


class FolderLock:
    def __init__(self, folder: Path, purpose: str) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.purpose = purpose
        self._fd: int | None = None

    def _key(self) -> tuple[str, int]:
        return str(self.path.absolute()), threading.get_ident()

    def acquire(self) -> FolderLock:
        with _held_guard:
            if self._key() in _held or self._key()[0] in _lent:
                _held[self._key()] = _held.get(self._key(), 0) + 1
                return self
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreWriteError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe(self.path)
            os.close(fd)
            raise FolderBusy(
                f"{self.folder} is in use by {holder}; wait for that run to finish (or stop it) and run again"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(
                fd,
                json.dumps(
                    {
                        "pid": os.getpid(),
                        "host": socket.gethostname(),
                        "purpose": self.purpose,
                        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "command": " ".join(sys.argv)[:300],
                    }
                ).encode(),
            )
        except OSError as exc:  # a full disk: the lock goes with the fd, not held on for no run
            os.close(fd)
            raise StoreWriteError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self._fd = fd
        with _held_guard:
            _held[self._key()] = 1
        return self

    def release(self) -> None:
        with _held_guard:
            if self._fd is None:  # a nested hold: of a lock an outer FolderLock of this thread owns, or a lent one
                depth = _held.get(self._key(), 0)
                if depth > 1:
                    _held[self._key()] = depth - 1
                else:
                    _held.pop(self._key(), None)
                return
            _held.pop(self._key(), None)
            _lent.discard(self._key()[0])
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def lend(self) -> FolderLock:
        """Let any thread of this process take this held lock as a nested hold, until it is released."""
        with _held_guard:
            if self._fd is not None:
                _lent.add(self._key()[0])
        return self

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _describe(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another process (its lock file is unreadable)"
    if not info:
        return "another process"
    return (
        f"{info.get('purpose', 'a run')} (pid {info.get('pid')} on {info.get('host')} since {info.get('since')}: "
        f"{info.get('command', '')})"
    )
