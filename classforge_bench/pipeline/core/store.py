"""Atomic files and JSONL streams. A reader never sees a half-written file."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel

from classforge_bench.pipeline.core.errors import InfrastructureError

M = TypeVar("M", bound=BaseModel)


class StoreWriteError(InfrastructureError, OSError):
    """A file could not be written (disk full, read-only, permissions); the message names it."""

    def __str__(self) -> str:
        return str(self.strerror)


def current_umask() -> int:
    """The process's umask, read without changing it (os.umask can only set it, which races with
    other threads creating files); the set-and-restore is the fallback where /proc has no Umask line."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def shared_mode(directory: bool = False) -> int:
    """The mode an ordinary new file (0666) or folder (0777) gets under the umask: mkstemp and mkdtemp
    create owner-only entries, which would hide outputs from the user's group against their umask."""
    return (0o777 if directory else 0o666) & ~current_umask()


@contextmanager
def atomic_open(path: Path, mode: str = "w") -> Iterator[IO]:
    """Write to a temporary sibling and rename over `path` only when the block succeeds.

    An operating-system failure becomes one `StoreWriteError` naming the file and the cause; the
    previous content of `path`, if any, is untouched."""
    path = Path(path)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, shared_mode())
        binary = "b" in mode
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, StoreWriteError):
            raise StoreWriteError(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from exc
        raise


def remove_partial_writes(folder: Path) -> int:
    """Remove the temporary siblings `atomic_open` leaves only when its process is killed mid-write
    (kill -9, power loss; any other failure removes its own). Call it only while holding the
    folder's lock (`folder_lock.FolderLock`): another writer's file in progress would go too."""
    removed = 0
    for tmp in Path(folder).rglob(".*.tmp"):
        tmp.unlink(missing_ok=True)
        removed += 1
    return removed


def unwritable(folder: Path) -> str | None:
    """Why nothing could be written in `folder` (created later if missing), or None: a real write
    test in its nearest existing ancestor, so root on a read-only mount is caught too. Leaves nothing."""
    existing = Path(folder).absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:
        fd, name = tempfile.mkstemp(prefix=".classforge-write-test-", dir=existing)
    except OSError as exc:
        return f"{existing} is not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(name)
    return None


def append_line(path: Path, line: str) -> None:
    """Append one line whole or not at all: on a failed write (a full disk) the file is cut back
    to where it was, so a reader never meets a torn line, and one `StoreWriteError` names the file.
    Only while nothing but our part came after: a line another process appended meanwhile is kept
    whole (the torn part before it costs its reader one unreadable line, not that one)."""
    path = Path(path)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = written = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                done = os.write(fd, view)
                written, view = written + done, view[done:]
        except OSError:
            if os.fstat(fd).st_size == written:
                os.ftruncate(fd, size)
            raise
    except OSError as exc:
        if isinstance(exc, StoreWriteError):
            raise
        raise StoreWriteError(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if fd is not None:
            os.close(fd)


def write_text(path: Path, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def write_json(path: Path, data: object) -> None:
    with atomic_open(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")


def write_jsonl(path: Path, records: Iterable[BaseModel | dict]) -> int:
    """Stream records into `path` atomically; returns how many were written."""
    n = 0
    with atomic_open(path) as fh:
        for rec in records:
            fh.write(
                rec.model_dump_json() if isinstance(rec, BaseModel) else json.dumps(rec, sort_keys=True, default=str)
            )
            fh.write("\n")
            n += 1
    return n


def read_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Stream typed records; a malformed line is an error naming file and line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{lineno}: not a valid {model.__name__}: {exc}") from exc
