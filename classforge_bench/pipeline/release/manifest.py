"""The manifest of a release: provenance of every source repository and the sha256 of every file.

Shared by the writer (which makes it) and `verify` (which checks a folder against it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from classforge_bench.pipeline.core.task import SourceRef
from classforge_bench.pipeline.core.urls import public_clone_url
from classforge_bench.pipeline.formats.release_rows import FORMAT

MANIFEST = "manifest.json"


class SourceRepo(BaseModel):
    """A repository the release's tasks derive from: the commits used and its licence.

    The tasks' `SourceRef`s merged per repository, spelled like them in code; the manifest keeps
    the keys it has always published (`license`, `url`), so every release written so far reads back.
    """

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    repo: str = Field(min_length=1, description="owner/name (or a local name)")
    commits: list[str] = Field(default_factory=list)
    license_spdx: str | None = Field(
        None, alias="license", description="SPDX id, None when the repository declares none"
    )
    clone_url: str | None = Field(None, alias="url", description="a public URL; None for a local source")

    @field_validator("clone_url", mode="before")
    @classmethod
    def _publishable(cls, v: str | None) -> str | None:
        return public_clone_url(v)

    @classmethod
    def merged(cls, refs: Iterable[SourceRef]) -> list[SourceRepo]:
        """The repositories `refs` name, one entry each (commits in first-seen order), sorted by name."""
        found: dict[str, SourceRepo] = {}
        for ref in refs:
            have = found.setdefault(
                ref.repo, cls(repo=ref.repo, license_spdx=ref.license_spdx, clone_url=ref.clone_url)
            )
            if ref.commit and ref.commit not in have.commits:
                have.commits.append(ref.commit)
            have.license_spdx = have.license_spdx or ref.license_spdx
            have.clone_url = have.clone_url or ref.clone_url
        return [found[name] for name in sorted(found)]


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    bytes: int
    sha256: str


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    version: str
    created_at: datetime
    pipeline_version: str
    row_count: int
    splits: dict[str, int]
    columns: dict[str, str] = Field(description="column -> Arrow type")
    json_columns: list[str] = Field(description="columns holding JSON text; decode with json.loads")
    cutoff: str | None
    config: dict[str, Any]
    models: dict[str, Any]
    prompt_versions: dict[str, Any]
    sources: list[SourceRepo]
    decontamination: dict[str, list[str]] | None = Field(
        None, description="the harvest's near-duplicate checks: corpora 'checked' and 'not_checked'"
    )
    earlier_releases: list[str] | None = Field(None, description="releases this one was deduplicated against")
    derived_from: str | None = Field(
        None, description="the version this one copies with a plus suite added per task (`classforge strengthen`)"
    )
    files: list[FileEntry] = Field(description="every file of the folder except manifest.json")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_entries(folder: Path, *, exclude: tuple[str, ...] = (MANIFEST,)) -> list[FileEntry]:
    """Every regular file under `folder` (POSIX relative paths, sorted), with size and sha256."""
    entries = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel not in exclude:
            entries.append(FileEntry(path=rel, bytes=path.stat().st_size, sha256=sha256_file(path)))
    return entries
