"""Mutant outcomes cached by content, so a second run (or a resumed one) re-runs nothing.

One JSONL file per (solution, tests) pair under the cache root, one line per finished mutant,
appended as each finishes. The key of a line is the hash of everything that decides the outcome
(the mutant's source, the tests, the listed classes, the mode, the timeout policy and the engine
version); the measured limit is not in it, because the reference's time moves with the load.
A torn last line (a crash mid-write) is ignored: it only costs that mutant's re-run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.core.store import append_line

log = logging.getLogger(__name__)


class CachedOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    outcome: str = Field(description="killed | survived | timed_out")
    failing: list[str] = Field(default_factory=list, description="the first failing tests, class.method")
    wall_s: float = 0.0


def content_key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


class MutationCache:
    """Outcomes of one task's mutants; `root=None` keeps nothing."""

    def __init__(self, root: Path | None, task_key: str) -> None:
        self.path = None if root is None else Path(root) / task_key[:2] / f"{task_key}.jsonl"
        self._lock = threading.Lock()
        self._known: dict[str, CachedOutcome] = self._load()

    def _load(self) -> dict[str, CachedOutcome]:
        if self.path is None or not self.path.is_file():
            return {}
        known: dict[str, CachedOutcome] = {}
        with open(self.path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                try:
                    record = CachedOutcome.model_validate_json(line)
                except ValidationError:
                    log.warning(
                        "%s:%d: unreadable cached mutant outcome ignored (it will be re-run)", self.path, lineno
                    )
                    continue
                known[record.key] = record
        return known

    def get(self, key: str) -> CachedOutcome | None:
        return self._known.get(key)

    def put(self, record: CachedOutcome) -> None:
        with self._lock:
            self._known[record.key] = record
            if self.path is None:
                return
            append_line(self.path, record.model_dump_json())
