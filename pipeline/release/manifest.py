"""The manifest of a release: provenance of every source repository and the sha256 of every file.

Shared by the writer (which makes it) and `verify` (which checks a folder against it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.core.formats.release_rows import FORMAT
from pipeline.core.urls import public_clone_url

MANIFEST = "manifest.json"


class SourceRepo(BaseModel):
    """A repository the release's tasks derive from: the commits used and its licence."""

    model_config = ConfigDict(extra="forbid")

    repo: str = Field(min_length=1, description="owner/name (or a local name)")
    commits: list[str] = Field(default_factory=list)
    license: str | None = Field(None, description="SPDX id, None when the repository declares none")
    url: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_record_spellings(cls, data: Any) -> Any:
        # Accept the spellings of HarvestedClass / RepoRef so provenance can be passed as it is stored.
        if isinstance(data, Mapping):
            data = dict(data)
            if "repo" not in data and "full_name" in data:
                data["repo"] = data.pop("full_name")
            if "commit" in data:
                commit = data.pop("commit")
                data.setdefault("commits", [commit] if commit else [])
            if "license_spdx" in data:
                data.setdefault("license", data.pop("license_spdx"))
            if "clone_url" in data:
                data.setdefault("url", data.pop("clone_url"))
            data["url"] = public_clone_url(data.get("url"))
        return data


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
        None, description="the harvest's near-duplicate checks: corpora 'checked' and 'not_checked'")
    earlier_releases: list[str] | None = Field(None, description="releases this one was deduplicated against")
    derived_from: str | None = Field(
        None, description="the version this one copies with a plus suite added per task (`classforge strengthen`)")
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
