"""`classforge strengthen` on a release folder: the strengthened copy is a new release version.

A published version is a promise that its name identifies its files (the Hub tag, the manifest's
sha256 lines, every score reported against it). Adding plus suites changes the files, so the copy
is written as a version of its own, through the same writer as a build (card, stats with plus
counts, report, manifest), with `derived_from` naming the version it copies. The original is never
touched, and `classforge verify-release` accepts the copy like any release.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from classforge_bench.pipeline.config import PlusConfig
from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.shipped_references import ShippedReferences, ShippedReferencesError, read_shipped
from classforge_bench.pipeline.release.errors import ReleaseError
from classforge_bench.pipeline.release.manifest import MANIFEST, Manifest
from classforge_bench.pipeline.release.verify import read_front_matter
from classforge_bench.pipeline.release.versions import validate_version
from classforge_bench.pipeline.release.writer import write_release

log = logging.getLogger(__name__)


def is_release_folder(path: Path) -> bool:
    return Path(path).is_dir() and (Path(path) / MANIFEST).is_file()


def _manifest(release: Path) -> Manifest:
    try:
        return Manifest.model_validate_json((release / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"release {release.name}: {MANIFEST} cannot be read: {str(exc).splitlines()[0]}") from exc


def check_new_version(release: Path, out: Path) -> str:
    """The version the strengthened copy gets (the name of `out`); refused before any work when it
    is not a version, is the original's, or exists already."""
    version = Path(out).name
    original = _manifest(release).version
    try:
        validate_version(version)
    except ReleaseError as exc:
        raise ReleaseError(
            f"--out {out}: a strengthened release is a new version, so its folder is named as one "
            f"(e.g. {original}-plus is not; {exc})"
        ) from exc
    if version == original:
        raise ReleaseError(f"--out {out}: version {version} is the release it copies; name a new version")
    if Path(out).exists():
        raise ReleaseError(f"--out {out}: release {version} already exists; a version is written once")
    return version


def _license(release: Path) -> str | None:
    try:
        meta = read_front_matter((release / "README.md").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = meta.get("license")
    return None if value in (None, "other") else str(value)


def write_plus_release(release: Path, out: Path, suites: dict[str, dict[str, Any]], plus: PlusConfig) -> Path:
    """Write `out` (a new version) = `release` with each task's `plus` suite; returns its path."""
    release, out = Path(release), Path(out)
    version = check_new_version(release, out)
    manifest = _manifest(release)
    with open(release / "tasks.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    records = [Task.from_row(dict(r, plus=suites[r["task_id"]]) if r.get("task_id") in suites else r) for r in rows]
    funnel = FunnelReport.model_validate_json((release / "funnel.json").read_text(encoding="utf-8"))
    config = dict(manifest.config, plus=plus.model_dump(mode="json"))
    return write_release(
        records,
        version=version,
        output_root=out.parent,
        funnel=funnel,
        config=config,
        models=manifest.models,
        prompt_versions=manifest.prompt_versions,
        sources=manifest.sources,
        pipeline_version=manifest.pipeline_version,
        license=_license(release),
        hub_repo_id=(manifest.config.get("release") or {}).get("hub_repo_id"),
        decontamination=manifest.decontamination,
        earlier_releases=manifest.earlier_releases,
        derived_from=manifest.version,
        references=_carried_references(release),
    )


def _carried_references(release: Path):
    """The original's shipped reference results, which hold for the copy: its tasks keep their
    solutions and base tests, so their references' jobs and keys (plus suites are not part of them)."""
    try:
        shipped = read_shipped(release)
    except ShippedReferencesError as exc:
        log.warning("%s; the strengthened copy ships no reference results", exc)
        return None
    if shipped is None:
        return None

    def carried(_tasks: list[Task]) -> ShippedReferences:
        return shipped

    return carried
