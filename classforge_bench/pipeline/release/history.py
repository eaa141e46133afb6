"""What earlier releases already published, so a scheduled refresh can leave it out.

`publish` drops built tasks an earlier release already has (same task id, same source classes,
or an identical solution) before writing a new version. It runs after construction, so a refresh
still pays for candidates whose pair an earlier release used; the harvest's decontamination against
earlier releases is what keeps such classes from being paired at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from classforge_bench.pipeline.release.errors import ReleaseError
from classforge_bench.pipeline.release.versions import list_releases


class ReleaseIndex(BaseModel):
    versions: list[str] = Field(default_factory=list)
    task_ids: dict[str, str] = Field(default_factory=dict, description="task id -> first version with it")
    source_class_ids: dict[str, str] = Field(default_factory=dict)
    solution_sha256: dict[str, str] = Field(default_factory=dict)


def solution_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def release_solutions(root: Path) -> Iterator[tuple[str, str, str, frozenset[str]]]:
    """(version, task id, solution code, source class ids) of every task of every release under
    `root`, oldest first; the harvest's decontamination checks new classes against them."""
    for version in list_releases(root):
        for task in _tasks(Path(root), version):
            yield (
                version,
                task["task_id"],
                task.get("solution_code") or "",
                frozenset(task.get("source_class_ids") or []),
            )


def _tasks(root: Path, version: str) -> Iterator[dict]:
    path = root / version / "tasks.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReleaseError(f"release {version}: cannot read {path}: {exc}") from exc
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReleaseError(f"release {version}: tasks.jsonl line {lineno} is not JSON: {exc}") from exc


def release_index(root: Path, *, before: str | None = None) -> ReleaseIndex:
    """Index every release under `root` (only those listed before `before`, if given), oldest first."""
    index = ReleaseIndex()
    for version in list_releases(root):
        if before is not None and version == before:
            break
        tasks = list(_tasks(Path(root), version))
        index.versions.append(version)
        for task in tasks:
            index.task_ids.setdefault(task["task_id"], version)
            for cid in task.get("source_class_ids") or []:
                index.source_class_ids.setdefault(cid, version)
            index.solution_sha256.setdefault(solution_digest(task["solution_code"]), version)
    return index
