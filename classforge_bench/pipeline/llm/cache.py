"""Content-addressed response cache in SQLite, with a JSONL export for shipping recorded runs.

The key is the SHA-256 of the canonical JSON of everything that changes a model's output
(`CacheKeyMaterial`). What is deliberately NOT in the key:

- retries, timeouts, API keys: they change whether a call succeeds, not what it answers;
- `base_url`: the same model behind a different host (a proxy, a gateway, a local vLLM, or a
  loopback fake on an ephemeral port) answers the same request the same way. Keying on it would
  make a recorded cache useless as soon as someone points the build at another URL, and would
  break record-then-replay in tests whose fake server gets a new port each run. The model name is
  what identifies the answering model, so it is in the key.

The role IS in the key: give each judge its own role name (`judge_0`, `judge_1`, `judge_2`).
Three judges sharing one role, model and prompt would otherwise share one cached answer.

Each entry stores its key material next to the response, so an entry can be re-hashed and checked
on import, and anyone reading the cache can see which prompt produced which answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import stat
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.core.store import atomic_open
from classforge_bench.pipeline.llm import paid
from classforge_bench.pipeline.llm.errors import CacheCorrupt, CacheImportError, CacheWriteError

log = logging.getLogger(__name__)

KEY_VERSION = 1  # bump when the key material changes shape; old entries then simply stop matching


def canonical_json(data: Any) -> str:
    """One byte-exact spelling of a JSON value: sorted keys, no whitespace, UTF-8 kept as is."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class CacheKeyMaterial(BaseModel):
    """Everything that changes what a model answers. Its canonical JSON hashes to the cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key_version: int = KEY_VERSION
    role: str
    model: str
    messages: list[dict[str, Any]]
    temperature: float
    max_tokens: int
    response_format: dict[str, Any] | None = None
    prompt_version: str
    sample_index: int = Field(0, ge=0)

    def key(self) -> str:
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode("utf-8")).hexdigest()


class CacheEntry(BaseModel):
    """A recorded response and the request that produced it."""

    model_config = ConfigDict(extra="forbid")

    key: str
    request: CacheKeyMaterial
    text: str
    finish_reason: str | None
    model: str = Field(description="the model name that was requested (the one costs are keyed by)")
    response_model: str | None = Field(None, description="the model name the server reported")
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    usage_estimated: bool = Field(False, description="the server sent no usage; the tokens are the client's estimate")
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    task_id: str | None = Field(None, description="the task that recorded it first; informational, not in the key")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key     TEXT PRIMARY KEY,
    role    TEXT NOT NULL,
    model   TEXT NOT NULL,
    created TEXT NOT NULL,
    entry   TEXT NOT NULL
) WITHOUT ROWID
"""


def _enable_wal(conn: sqlite3.Connection, timeout_s: float = 30.0) -> None:
    """Switch the file to WAL. The switch needs an exclusive lock, and SQLite refuses it at once
    ("database is locked"), without its busy handler, while another connection is switching the
    same new file (seen: two builds starting together on one cache). WAL is a property of the
    file, so a retry finds it already set."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class ResponseCache:
    """SQLite-backed, thread-safe, first-write-wins store of `CacheEntry` by key.

    One connection guarded by a lock: LLM calls take seconds, a cache lookup microseconds, so
    serialising lookups costs nothing measurable and keeps the code obviously correct. WAL mode
    plus a busy timeout lets several processes share one cache file. Each write is one SQLite
    transaction, so a crash leaves either the whole entry or none of it.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = path if str(path) == ":memory:" else Path(path)
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._conn = _connect(self.path)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) or not isinstance(self.path, Path):
                raise  # locked, read-only, no such folder: not a damaged file
            self._conn = _replace_corrupt(self.path, exc)
        # Paid answers the database could not take (disk full, I/O error): kept here and served
        # from here, so nothing is paid twice in this run; `close` reports them.
        self._unsaved: dict[str, CacheEntry] = {}
        self.write_error: str | None = None
        paid.keeps_unsaved(self._store_before_exit)
        if isinstance(self.path, Path):
            self._reclaim_spills(self.path)

    # -- basic access -------------------------------------------------------------------------
    def get(self, key: str) -> CacheEntry | None:
        with self._lock:
            if key in self._unsaved:
                return self._unsaved[key]
            row = self._conn.execute("SELECT entry FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return CacheEntry.model_validate_json(row[0])
        except ValidationError as exc:
            raise CacheCorrupt(f"cache {self.path}: entry {key} cannot be read: {exc}") from exc

    def put(self, key: str, entry: CacheEntry) -> CacheEntry:
        """Store `entry` unless `key` is already present; return the entry that is stored.

        First write wins, and the caller gets the winner back: when two processes race on one
        key, both continue with the same answer, so a later replay reproduces what both used.
        """
        _check_entry(key, entry)
        with self._lock:
            try:
                self._insert([entry])
            except sqlite3.Error as exc:
                if not self._unsaved:
                    log.error(
                        "cache %s: cannot store answers (%s); keeping them in memory for this run", self.path, exc
                    )
                self.write_error = str(exc)
                return self._unsaved.setdefault(key, entry)
        stored = self.get(key)
        assert stored is not None  # just written or already there; rows are never deleted
        return stored

    def _insert(self, entries: list[CacheEntry]) -> None:
        _insert_entries(self._conn, entries)

    @property
    def unsaved(self) -> int:
        with self._lock:
            return len(self._unsaved)

    def flush_unsaved(self) -> None:
        """Store the answers kept in memory; if the database still cannot take them, write them to
        a JSONL export elsewhere (the temp dir) and raise `CacheWriteError` naming both paths."""
        with self._lock:
            pending = list(self._unsaved.values())
            if not pending:
                return
            try:
                self._insert(pending)
            except sqlite3.Error as exc:
                self.write_error = str(exc)
            else:
                self._unsaved.clear()
                return
        spill = _spill(pending, self.path if isinstance(self.path, Path) else None)
        raise CacheWriteError(self.path, len(pending), self.write_error or "unknown error", spill)

    def _store_before_exit(self) -> str | None:
        """The process is being stopped: store what is kept in memory, or say where it was spilled."""
        try:
            self.flush_unsaved()
        except CacheWriteError as exc:
            return str(exc)
        return None

    def _reclaim_spills(self, path: Path) -> None:
        """Store what an earlier run of this cache had to spill to the temp dir (its disk was full),
        so a re-run after freeing space pays for none of those answers again. A spill stays where it
        is while it cannot be stored (the disk is still full) and is removed once it is."""
        folder = _spill_folder(create=False)
        if folder is None:
            return
        for spill in sorted(folder.glob(f"{_spill_prefix(path)}*.jsonl")):
            if not _ours(spill):
                continue
            try:
                added = self.import_jsonl(spill)
            except (CacheImportError, sqlite3.Error, OSError) as exc:
                log.warning(
                    "LLM cache %s: answers spilled to %s earlier are not stored yet (%s); they are kept there",
                    self.path,
                    spill,
                    exc,
                )
                continue
            spill.unlink(missing_ok=True)
            log.warning(
                "LLM cache %s: stored %d answer(s) an earlier run had to spill to %s (its disk was full)",
                self.path,
                added,
                spill,
            )

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    # -- shipping a recorded cache as text ----------------------------------------------------
    def export_jsonl(self, path: Path) -> int:
        """Write every entry, one JSON object per line, sorted by key (stable diffs); atomic."""
        with self._lock:
            rows = self._conn.execute("SELECT entry FROM responses ORDER BY key").fetchall()
        with atomic_open(Path(path)) as fh:
            for (entry_json,) in rows:
                # Re-serialise canonically so the file does not depend on how rows were written.
                fh.write(canonical_json(json.loads(entry_json)))
                fh.write("\n")
        return len(rows)

    def import_exports(self, paths: list[Path]) -> int:
        """Load shipped exports (`llm.cache_imports`, how the offline example replays); idempotent."""
        added = 0
        for path in paths:
            if not Path(path).exists():
                raise CacheImportError(f"llm.cache_imports: {path} does not exist")
            added += self.import_jsonl(Path(path))
        if added:
            log.info("loaded %d recorded response(s) into %s", added, self.path)
        return added

    def import_jsonl(self, path: Path) -> int:
        """Load an export; returns how many entries were new. Idempotent, all-or-nothing.

        Every line is validated and re-hashed before anything is written, so a malformed or
        tampered file changes nothing and the error names the file and line.
        """
        path = Path(path)
        entries: list[CacheEntry] = []
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    entry = CacheEntry.model_validate_json(line)
                    _check_entry(entry.key, entry)
                except (ValidationError, CacheCorrupt) as exc:
                    raise CacheImportError(f"{path}:{lineno}: {exc}") from exc
                entries.append(entry)
        with self._lock:
            before = self._conn.total_changes
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                _insert_entries(self._conn, entries)
            except sqlite3.Error:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return self._conn.total_changes - before

    def close(self) -> None:
        """Close the database; raises `CacheWriteError` (after closing) if paid answers could not be stored."""
        paid.forget(self._store_before_exit)
        try:
            self.flush_unsaved()
        finally:
            with self._lock:
                self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _connect(path: Path | str) -> sqlite3.Connection:
    """Open the cache; a damaged file raises sqlite3.DatabaseError here, not mid-build."""
    # isolation_level=None: autocommit; multi-statement work opens its own transaction.
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30.0)
    try:
        if isinstance(path, Path):
            _enable_wal(conn)
            # NORMAL in WAL mode survives application crashes; only a power loss can drop the last commit.
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        if isinstance(path, Path):
            (verdict,) = conn.execute("PRAGMA quick_check").fetchone()
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {verdict}")
    except BaseException:
        conn.close()
        raise
    return conn


def _salvage(path: Path) -> list[CacheEntry]:
    """The entries of a damaged cache that can still be read and verified (the rest is lost)."""
    found: dict[str, CacheEntry] = {}
    try:
        conn = sqlite3.connect(Path(path).absolute().as_uri() + "?mode=ro", uri=True)  # "#", "?" escaped
    except sqlite3.Error:
        return []
    try:
        for order in ("ASC", "DESC"):  # from both ends, each up to the damage
            try:
                for (entry_json,) in conn.execute(f"SELECT entry FROM responses ORDER BY key {order}"):
                    try:
                        entry = CacheEntry.model_validate_json(entry_json)
                        _check_entry(entry.key, entry)
                    except (ValidationError, CacheCorrupt):
                        continue
                    found[entry.key] = entry
            except sqlite3.Error:
                continue
    finally:
        conn.close()
    return list(found.values())


def _insert_entries(conn: sqlite3.Connection, entries: list[CacheEntry]) -> None:
    """Store answers; a key already there keeps its first answer (the same request was paid once)."""
    conn.executemany(
        "INSERT OR IGNORE INTO responses (key, role, model, created, entry) VALUES (?, ?, ?, ?, ?)",
        [(e.key, e.request.role, e.model, e.created.isoformat(), e.model_dump_json()) for e in entries],
    )


def _replace_corrupt(path: Path, exc: sqlite3.DatabaseError) -> sqlite3.Connection:
    """Move a damaged cache file aside (with its WAL), start a fresh one holding what could be
    salvaged, and say in one warning line what happened and what will be paid again."""
    salvaged = _salvage(path)
    aside = path.with_name(f"{path.name}.corrupt-{datetime.now(UTC):%Y%m%dT%H%M%S}")
    for suffix in ("", "-wal", "-shm"):
        try:
            Path(f"{path}{suffix}").replace(f"{aside}{suffix}")
        except FileNotFoundError:
            pass  # no WAL, or another process moved it first
    conn = _connect(path)
    _insert_entries(conn, salvaged)
    log.warning(
        "LLM cache %s was damaged (%s): moved aside to %s; %d answer(s) recovered into a fresh cache, "
        "any other answer it held will be paid again",
        path,
        " ".join(str(exc).split()),
        aside,
        len(salvaged),
    )
    return conn


def _spill_prefix(cache_path: Path) -> str:
    """Spill files are named after the cache they belong to, so the next open of it finds them."""
    digest = hashlib.sha256(str(cache_path.resolve()).encode()).hexdigest()[:16]
    return f"classforge-unsaved-llm-{digest}-"


def _spill_folder(create: bool) -> Path | None:
    """This user's private folder in the temp dir for spills. The next open imports what is there
    into the cache, so on a shared machine no other user may be able to put or swap a file there:
    the folder must be ours and closed to others, or it is not used."""
    folder = Path(tempfile.gettempdir()) / f"classforge-spill-{os.getuid()}"
    try:
        if create:
            folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        log.warning("LLM cache: %s is not a private folder of this user; spills are not written or read there", folder)
        return None
    return folder


def _ours(spill: Path) -> bool:
    try:
        info = spill.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()


def _spill(entries: list[CacheEntry], cache_path: Path | None) -> Path | None:
    """The unsaved answers as a cache export in the temp dir (often another filesystem), or None.
    A spill the disk cannot hold whole is removed: half an export would fail every later import."""
    prefix = _spill_prefix(cache_path) if cache_path is not None else "classforge-unsaved-llm-"
    folder = _spill_folder(create=True)
    if folder is None:
        return None
    try:
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".jsonl", dir=folder)
    except OSError:
        return None
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            for e in entries:
                fh.write(canonical_json(e.model_dump(mode="json")) + "\n")
    except OSError:
        Path(name).unlink(missing_ok=True)
        return None
    return Path(name)


def _check_entry(key: str, entry: CacheEntry) -> None:
    """A key must be the hash of the entry's own request: the cache stays content-addressed."""
    expected = entry.request.key()
    if key != expected or entry.key != expected:
        raise CacheCorrupt(
            f"entry key {entry.key} (stored under {key}) does not match the hash of its request ({expected})"
        )
