"""The release stage of a build: keep what no earlier release published, then write a new version.

A refresh deduplicates against every earlier release (task ids, source-class pairs, solutions);
re-running a build whose tasks are all published already writes nothing and says which version
holds them, so a resumed run never creates a duplicate version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from classforge_bench import __version__
from classforge_bench.pipeline.config import ReleaseConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.funnel import KEEP, Funnel, FunnelReport, RejectionList, Verdict
from classforge_bench.pipeline.core.records import Rejection
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.shipped_references import ShippedReferences
from classforge_bench.pipeline.release.history import ReleaseIndex, release_index, solution_digest
from classforge_bench.pipeline.release.versions import next_version
from classforge_bench.pipeline.release.writer import shown_path, write_release

STAGE = R.RELEASE


@dataclass
class PublishResult:
    path: Path | None  # the new release folder, or None when there was nothing new
    version: str | None
    published: int
    already_released: int
    funnel: FunnelReport
    note: str
    rejections: list[Rejection] = field(default_factory=list)  # the tasks left out, each with its reason


def _already(task: Task, index: ReleaseIndex) -> Verdict:
    if task.task_id in index.task_ids:
        return Verdict.drop(R.ALREADY_RELEASED, f"task id in release {index.task_ids[task.task_id]}")
    sources = sorted(task.source_class_ids or [])
    if sources and all(s in index.source_class_ids for s in sources):
        return Verdict.drop(R.ALREADY_RELEASED, f"source classes in release {index.source_class_ids[sources[0]]}")
    digest = solution_digest(task.solution_code)
    if digest in index.solution_sha256:
        return Verdict.drop(R.ALREADY_RELEASED, f"same solution in release {index.solution_sha256[digest]}")
    return KEEP


def publish(
    tasks: Sequence[Task],
    release: ReleaseConfig,
    funnel: FunnelReport,
    models: dict[str, str],
    *,
    config_record: Mapping[str, Any],
    decontamination: dict[str, list[str]] | None,
    version: str | None = None,
    references: Callable[[list[Task]], ShippedReferences | None] | None = None,
) -> PublishResult:
    """Dedup against every release, choose the next version and write it, holding the release
    folder's lock throughout: two builds finishing at once cannot pick the same version.

    `config_record` is the build's configuration as the manifest records it (`writer.config_record`);
    `decontamination` what the harvest's dedup checked (None when unrecorded); `references` the
    released tasks' verified reference results to ship (`write_release`)."""
    root = Path(release.output_root)
    with FolderLock(root, "publishing a release"):
        return _publish_locked(
            tasks, release, funnel, models, version, root, config_record, decontamination, references
        )


def _publish_locked(
    tasks: Sequence[Task],
    release: ReleaseConfig,
    funnel: FunnelReport,
    models: dict[str, str],
    version: str | None,
    root: Path,
    config_record: Mapping[str, Any],
    decontamination: dict[str, list[str]] | None,
    references: Callable[[list[Task]], ShippedReferences | None] | None = None,
) -> PublishResult:
    index = release_index(root) if root.is_dir() else ReleaseIndex()
    left_out = RejectionList()
    release_funnel: Funnel = Funnel(sink=left_out)
    fresh = [t for t in tasks if release_funnel.record(STAGE, t.task_id, _already(t, index))]
    full_funnel = funnel.merge(release_funnel.report())
    if not fresh:
        latest = index.versions[-1] if index.versions else None
        note = (
            f"nothing new to release: all {len(tasks)} task(s) are in release {latest}"
            if latest and tasks
            else "nothing to release: the build produced no tasks"
        )
        return PublishResult(None, None, 0, len(tasks), full_funnel, note, left_out.rejections)
    version = version or next_version(root, scheme=release.version_scheme)
    prompt_versions: dict[str, str] = {}
    for t in fresh:
        prompt_versions.update(t.prompt_versions or {})
    path = write_release(
        fresh,
        version=version,
        output_root=root,
        funnel=full_funnel,
        config=config_record,
        models=models,
        prompt_versions=prompt_versions,
        pipeline_version=__version__,
        license=release.license,
        hub_repo_id=release.hub_repo_id,
        decontamination=decontamination,
        earlier_releases=list(index.versions),
        references=references,
    )
    return PublishResult(
        path,
        version,
        len(fresh),
        len(tasks) - len(fresh),
        full_funnel,
        f"released {len(fresh)} task(s) as {version} at {shown_path(path)}",
        left_out.rejections,
    )
