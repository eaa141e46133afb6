"""A fresh, private work dir per run: created, filled, read back safely, and always removed.

Output files are read without following symlinks at any path component, and only if they are
regular files: the sandboxed code owns the directory and could plant a link to a host file or a
FIFO that would block the reader.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from classforge_bench.pipeline.core.stop_hooks import at_stop
from classforge_bench.pipeline.sandbox.base import check_relative_path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


class WorkDir:
    def __init__(self, path: str, owner: int | None) -> None:
        self.path = path
        self.owner = owner
        self._removed = False
        # From creation to removal a stop (Ctrl-C on a build, which ends with os._exit and skips
        # every `finally`) removes the folder: a probe's folder or a run's, whoever made it.
        self._stop_hook: AbstractContextManager[None] = at_stop(f"removing sandbox folder {path}", self.remove)
        self._stop_hook.__enter__()

    @classmethod
    def create(cls, root: str | None, owner: int | None) -> WorkDir:
        if root is not None:
            os.makedirs(root, exist_ok=True)
        path = tempfile.mkdtemp(prefix="cf-sbx-", dir=root)
        os.chmod(path, 0o700)
        return cls(path, owner)

    def write(self, files: Mapping[str, str | bytes]) -> None:
        for name, content in files.items():
            rel = check_relative_path(name)
            target = os.path.join(self.path, *rel.parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            with open(target, "wb") as fh:
                fh.write(data)
        if self.owner is not None:
            self._chown_tree(self.owner)

    def _chown_tree(self, owner: int) -> None:
        for dirpath, _dirnames, filenames in os.walk(self.path):
            os.chown(dirpath, owner, owner)
            for name in filenames:
                os.chown(os.path.join(dirpath, name), owner, owner)

    def read_outputs(self, names: Sequence[str], cap: int) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for name in names:
            data = self._read_one(name, cap)
            if data is not None:
                found[name] = data
        return found

    def _read_one(self, name: str, cap: int) -> bytes | None:
        parts = check_relative_path(name).parts
        fds: list[int] = []
        try:
            fds.append(os.open(self.path, _DIR_FLAGS))
            for part in parts[:-1]:
                fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fds[-1])
            fds.append(fd)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > cap:
                return None
            os.set_blocking(fd, True)
            chunks, total = [], 0
            while total <= cap:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
            return b"".join(chunks) if total <= cap else None
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            # ELOOP (a planted symlink) and friends: the file is not a trustworthy output.
            if exc.errno in (errno.ELOOP, errno.ENXIO):
                return None
            raise
        finally:
            for fd in reversed(fds):
                os.close(fd)

    def remove(self) -> None:
        """Remove the folder (once: a stop and the run's own `finally` may both ask)."""
        if self._removed:
            return
        self._removed = True
        self._stop_hook.__exit__(None, None, None)

        root = os.path.abspath(self.path)

        def unlock_and_retry(func, path, _exc_info) -> None:
            # Code under test may have removed permissions on its own files; we own the tree or
            # are root, so restore them and retry once. Never above the work folder: when the folder
            # itself is already gone (a stop removed it first), its parent is the system's temp
            # folder, and a chmod to 0700 there took it from every other user.
            path = os.path.abspath(path)
            if not (path == root or path.startswith(root + os.sep)):
                return
            try:
                if path != root:
                    os.chmod(os.path.dirname(path), 0o700)
                if os.path.isdir(path) and not os.path.islink(path):
                    os.chmod(path, 0o700)
                func(path)
            except FileNotFoundError:
                pass

        shutil.rmtree(self.path, onerror=unlock_and_retry)
