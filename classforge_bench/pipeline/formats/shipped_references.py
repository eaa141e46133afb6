"""A release's verified reference results, `references.json`: the format the release stage writes,
`verify-release` checks and the evaluator reads.

The release stage runs every released task's reference once, as the evaluator's reference pre-run
does (the same job, so the same execution key), and ships what it found with the environment it
was found in (`environment`: the interpreter, the task libraries' versions, the harness, the sandbox
settings that can change an outcome; `machine`: the machine class, which CPU times depend on). An
evaluator whose environment is the same trusts them instead of running the references again
(`classforge_bench.benchmark.shipped` decides; docs/evaluate.md gives the rule). This module only
knows the file's shape and its integrity: the stored executions are opaque JSON here (the
evaluator's `StoredExecution`), and the fingerprint is a mapping compared key by key.

The file is listed in the release's manifest like every other file, so a copy edited after the
release no longer matches its sha256 there: `verify-release` reports it and the evaluator refuses it,
each naming the file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.core.errors import ReleaseFormatError
from classforge_bench.pipeline.core.store import write_json

SHIPPED_FILE = "references.json"

_MANIFEST = "manifest.json"  # the release's manifest (classforge_bench.pipeline.release.manifest.MANIFEST)


class ShippedReferencesError(ReleaseFormatError):
    """A release's references.json that cannot be trusted as it is; the message names the release and the file."""


class ShippedReference(BaseModel):
    """One task's reference run, as the release stage's evaluator pre-run stored it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    execution_key: str = Field(
        description="the evaluator's key of the reference's job (program, tests, limit, sandbox)"
    )
    passed: bool
    cpu_s: float | None = Field(description="the reference runner's CPU time, which sets its task's limits")
    solution_sha256: str = Field(description="sha256 of the task's solution_code, to tie the run to the row")
    tests_sha256: str = Field(description="sha256 of the task's test source")
    execution: dict[str, Any] = Field(description="the stored execution (classforge_bench.benchmark.execution)")


class ShippedReferences(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["classforge-references/1"] = "classforge-references/1"
    environment: dict[str, Any] = Field(description="what a verdict depends on (classforge_bench.benchmark.shipped)")
    machine: dict[str, str] = Field(description="the machine class the CPU times were measured on")
    references: list[ShippedReference]

    def by_task(self) -> dict[str, ShippedReference]:
        return {r.task_id: r for r in self.references}


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_shipped(folder: Path, shipped: ShippedReferences) -> Path:
    """`<folder>/references.json`, before the manifest is made (so it is listed there)."""
    path = Path(folder) / SHIPPED_FILE
    write_json(path, shipped.model_dump(mode="json"))
    return path


def read_shipped(folder: Path, *, check_manifest: bool = True) -> ShippedReferences | None:
    """The release's shipped reference results; None when it ships none. Refused, naming the file,
    when it does not parse or (`check_manifest`) its bytes are not those the manifest lists."""
    folder = Path(folder)
    path = folder / SHIPPED_FILE
    if not path.is_file():
        return None
    raw = path.read_bytes()
    if check_manifest:
        _check_listed(folder, raw)
    try:
        return ShippedReferences.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise ShippedReferencesError(
            f"release {folder.name}: {SHIPPED_FILE} is not a valid reference-results file: {str(exc).splitlines()[0]}"
        ) from exc


def _check_listed(folder: Path, raw: bytes) -> None:
    """The file's sha256 against the manifest's entry for it (the manifest's own checks are verify-release's)."""
    try:
        files = json.loads((folder / _MANIFEST).read_text(encoding="utf-8")).get("files") or []
    except (OSError, ValueError, AttributeError) as exc:
        raise ShippedReferencesError(
            f"release {folder.name}: {SHIPPED_FILE} cannot be checked: {_MANIFEST} is unreadable ({exc})"
        ) from exc
    listed = next((f for f in files if isinstance(f, dict) and f.get("path") == SHIPPED_FILE), None)
    if listed is None:
        raise ShippedReferencesError(f"release {folder.name}: {SHIPPED_FILE} is not listed in {_MANIFEST}")
    if listed.get("sha256") != hashlib.sha256(raw).hexdigest():
        raise ShippedReferencesError(
            f"release {folder.name}: {SHIPPED_FILE} sha256 does not match the manifest (modified after release?)"
        )


def shipped_problems(shipped: ShippedReferences, rows: list[dict[str, Any]]) -> list[str]:
    """What makes the shipped results not this release's (each naming the file and the task): a
    result without a task, a result for another solution or other tests, a reference that did not
    pass (only passed runs are shipped). A task without a result is none of these: the release
    stage leaves out a reference that did not pass there, and the evaluator runs it."""
    by_task = shipped.by_task()
    problems = []
    if len(by_task) != len(shipped.references):
        problems.append(f"{SHIPPED_FILE}: a task has more than one result")
    for row in rows:
        tid = str(row.get("task_id"))
        ref = by_task.pop(tid, None)
        if ref is None:
            continue
        if ref.solution_sha256 != text_sha256(str(row.get("solution_code") or "")):
            problems.append(f"{SHIPPED_FILE}: task {tid}'s result is of another solution than the release's")
        elif ref.tests_sha256 != text_sha256(str(row.get("test") or "")):
            problems.append(f"{SHIPPED_FILE}: task {tid}'s result is of other tests than the release's")
        elif not ref.passed:
            problems.append(f"{SHIPPED_FILE}: task {tid}'s reference did not pass")
    problems += [f"{SHIPPED_FILE}: a result for task {tid}, which the release does not hold" for tid in sorted(by_task)]
    return problems
