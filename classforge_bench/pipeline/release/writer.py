"""Write one versioned release folder, atomically and never over an earlier version.

Layout of `<output_root>/<version>/`:
    README.md                          dataset card (YAML front matter + prose)
    data/test-00000-of-00001.parquet   the tasks (split "test"); schema in `classforge_bench/pipeline/formats/release_rows.py`
    tasks.jsonl                        the same tasks, one JSON object per line, nested fields decoded
    funnel.json  stats.json            per-stage counts; Table 2/3 statistics
    plots/funnel.png domains.png loc.png methods.png
    manifest.json                      provenance + sha256 of every other file

The folder is built under a hidden temporary sibling (`.<version>.partial-*`) and renamed into
place only once complete and self-checked, so readers never see a partial version and a crash
leaves no `<version>` folder (at most a hidden partial one, which nothing lists or loads).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classforge_bench.pipeline.config import Config, map_paths
from classforge_bench.pipeline.core.errors import ReleaseFormatError
from classforge_bench.pipeline.core.extras import require
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.store import atomic_open, shared_mode, write_json, write_jsonl, write_text
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.release_rows import (
    DATA_FILE,
    DATA_GLOB,
    release_rows,
    short_type,
    to_arrow_table,
)
from classforge_bench.pipeline.formats.shipped_references import ShippedReferences, write_shipped
from classforge_bench.pipeline.release.card import card_data, dataset_card, render_card, track_of
from classforge_bench.pipeline.release.errors import ReleaseError, ReleaseExistsError
from classforge_bench.pipeline.release.manifest import MANIFEST, Manifest, SourceRepo, file_entries
from classforge_bench.pipeline.release.plots import write_plots
from classforge_bench.pipeline.release.real_card import real_source_section
from classforge_bench.pipeline.release.stats import DatasetStats, compute_stats
from classforge_bench.pipeline.release.validity import compute_validity
from classforge_bench.pipeline.release.versions import validate_version

if TYPE_CHECKING:  # pyarrow is imported where a table is made, not with this module
    import pyarrow as pa

PARTIAL_MARK = ".partial-"

log = logging.getLogger(__name__)
DEFAULT_ROOT = Path("benchmark/releases")
_SECRET_KEYS = {"token", "api_key", "password", "secret"}


def redact(value: Any) -> Any:
    """Drop secret values from a config dump (key names stay, so readers see a secret was set)."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            key = str(k).lower()
            secret = key in _SECRET_KEYS or key.endswith(("_token", "_secret", "_password"))
            out[k] = ("**********" if v is not None else None) if secret else redact(v)
        return out
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def config_record(config: Config) -> dict[str, Any]:
    """The configuration as a release's manifest records it: secrets redacted and paths portable
    (a release is published: it must not carry the builder's directory layout)."""
    config = config.model_copy(deep=True)
    map_paths(config, portable_path)
    return redact(config.model_dump(mode="json"))  # SecretStr already renders as '**********'


def _config_dict(config: Config | Mapping[str, Any]) -> dict[str, Any]:
    from pydantic_core import to_jsonable_python

    if isinstance(config, Config):
        return config_record(config)
    return redact(to_jsonable_python(dict(config)))


def shown_path(path: Path) -> str:
    """A path as a status line shows it: relative to the working directory when inside it, else
    absolute; one convention for every line a command prints."""
    absolute = path.absolute()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def portable_path(path: Path) -> Path:
    """A configured path as a release may show it: relative to the project (the working directory
    the build ran in) when inside it, else only its last component."""
    if not path.is_absolute():
        return path
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return Path("<local>") / path.name


def sources_from_tasks(tasks: Iterable[Task]) -> list[SourceRepo]:
    """Repositories named by the tasks' own provenance (`Task.sources`), merged per repository."""
    return SourceRepo.merged(ref for task in tasks for ref in task.sources or [])


def _installed_version() -> str:
    from classforge_bench import __version__

    return __version__


def _check_sources_cover_tasks(version: str, sources: list[SourceRepo], derived: list[SourceRepo]) -> None:
    listed = {s.repo for s in sources}
    missing = sorted(s.repo for s in derived if s.repo not in listed)
    if missing:
        raise ReleaseError(
            f"release {version}: tasks derive from repositories missing from `sources` "
            f"(their licences would go unlisted): {', '.join(missing)}"
        )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _release_sources(version: str, tasks: list[Task], sources: Iterable[SourceRepo] | None) -> list[SourceRepo]:
    """The repositories the manifest lists: from the tasks' provenance, or given and checked against it."""
    derived = sources_from_tasks(tasks)
    if sources is None:
        return derived
    given = list(sources)
    _check_sources_cover_tasks(version, given, derived)
    return given


def _typed(tasks: Iterable[Task]) -> list[Task]:
    items = list(tasks)
    for i, item in enumerate(items):
        if not isinstance(item, Task):
            raise ReleaseFormatError(
                f"task #{i}: a release is written from Task records, got {type(item).__name__} "
                "(a row read elsewhere becomes one with Task.from_row)"
            )
    return items


def write_release(
    tasks: Iterable[Task],
    *,
    version: str,
    output_root: Path = DEFAULT_ROOT,
    funnel: FunnelReport,
    config: Config | Mapping[str, Any],
    models: Mapping[str, Any],
    prompt_versions: Mapping[str, Any],
    sources: Iterable[SourceRepo] | None = None,
    pipeline_version: str | None = None,
    license: str | None = None,
    hub_repo_id: str | None = None,
    created_at: datetime | None = None,
    decontamination: Mapping[str, list[str]] | None = None,
    earlier_releases: list[str] | None = None,
    derived_from: str | None = None,
    references: Callable[[list[Task]], ShippedReferences | None] | None = None,
) -> Path:
    """Write `<output_root>/<version>/` and return its path.

    `sources=None` takes the repositories from the tasks' provenance (`Task.sources`);
    given explicitly, it must cover every repository the tasks name. `license=None` declares
    `other` with a pointer to the manifest, since each source repository keeps its own licence.
    `hub_repo_id` (ORG/NAME) only fills the card's loading example; `created_at` defaults to now.
    `decontamination` (the harvest's record of corpora checked) and `earlier_releases` (the
    versions deduplicated against) go into the manifest and the card's validity section.
    `derived_from`: the version this one copies with plus suites added (`classforge strengthen`).
    `references`: the tasks' references' verified results to ship (see `_Contents.references`)."""
    root, dest = _new_version_folder(version, output_root)
    typed = _typed(tasks)
    records = release_rows(typed)
    if not records:
        raise ReleaseError(f"release {version}: no tasks to publish")
    config_dict = _config_dict(config)
    source_list = _release_sources(version, typed, sources)
    stats = compute_stats(records)  # fails on an unparsable solution before anything is written
    table, json_columns = to_arrow_table(records)
    contents = _Contents(
        records=records,
        table=table,
        json_columns=json_columns,
        stats=stats,
        funnel=funnel,
        cutoff=_cutoff_of(config_dict),
        config=config_dict,
        models=_str_keys(models),
        prompt_versions=_str_keys(prompt_versions),
        sources=source_list,
        pipeline_version=pipeline_version or _installed_version(),
        license=license,
        hub_repo_id=hub_repo_id,
        created_at=created_at or datetime.now(UTC),
        decontamination=dict(decontamination) if decontamination is not None else None,
        earlier_releases=earlier_releases,
        derived_from=derived_from,
        references=references,
    )
    _write_atomically(root, version, dest, contents)
    return dest


@dataclass(frozen=True)
class _Contents:
    """Everything a release folder is written from: its rows and what the card and manifest say."""

    records: list[dict[str, Any]]
    table: pa.Table
    json_columns: list[str]
    stats: DatasetStats
    funnel: FunnelReport
    cutoff: str | None
    config: dict[str, Any]
    models: dict[str, Any]
    prompt_versions: dict[str, Any]
    sources: list[SourceRepo]
    pipeline_version: str
    license: str | None
    hub_repo_id: str | None
    created_at: datetime
    decontamination: dict[str, list[str]] | None
    earlier_releases: list[str] | None
    derived_from: str | None
    # Given the tasks as the release's rows give them back (what an evaluator loads), their
    # references' verified results to ship as references.json (classforge_bench.benchmark.
    # release_references), or None to ship none.
    references: Callable[[list[Task]], ShippedReferences | None] | None


def _new_version_folder(version: str, output_root: Path) -> tuple[Path, Path]:
    """(release root, the version's folder), refused when the version is malformed or written already."""
    validate_version(version)
    root = Path(output_root)
    dest = root / version
    if dest.exists():
        raise ReleaseExistsError(
            f"release {version} already exists at {dest}; a version is written once, "
            "choose a new one (see next_version)"
        )
    return root, dest


def _cutoff_of(config: dict[str, Any]) -> str | None:
    harvest = config.get("harvest")
    cutoff = harvest.get("cutoff") if isinstance(harvest, dict) else None
    return str(cutoff) if cutoff is not None else None


def _str_keys(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in dict(mapping).items()}


def _write_atomically(root: Path, version: str, dest: Path, contents: _Contents) -> None:
    """Write under a hidden partial folder, holding the release root's lock, then rename into place."""
    root.mkdir(parents=True, exist_ok=True)
    with FolderLock(root, f"writing release {version}"):
        remove_abandoned_partials(root)
        tmp = Path(tempfile.mkdtemp(prefix=f".{version}{PARTIAL_MARK}", dir=root))
        try:
            _write_contents(tmp, version, contents)
            _publish(tmp, dest, version)
        except BaseException:
            # Interrupted or failed (KeyboardInterrupt included): remove every trace of this attempt.
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def remove_abandoned_partials(root: Path) -> list[Path]:
    """Half-written versions a killed writer left behind (SIGKILL skips every cleanup). Only called
    with the release folder's lock held, so no live writer's folder can be among them."""
    removed = []
    for leftover in sorted(root.glob(f".*{PARTIAL_MARK}*")):
        if leftover.is_dir():
            shutil.rmtree(leftover)
            removed.append(leftover)
            log.info("removed %s, left behind by an interrupted release", leftover)
    return removed


def _write_contents(folder: Path, version: str, c: _Contents) -> None:
    import pyarrow.parquet as pq

    from classforge_bench.pipeline.release.verify import verify_release

    with atomic_open(folder / DATA_FILE, "wb") as fh:
        pq.write_table(c.table, fh, compression="zstd")
    # Record the schema as Parquet stores it (list items read back as `element`, not `item`).
    written = pq.read_schema(folder / DATA_FILE)
    write_jsonl(folder / "tasks.jsonl", c.records)
    if c.references is not None:
        shipped = c.references([Task.from_row(row, source="classforge-release") for row in c.records])
        if shipped is not None:
            write_shipped(folder, shipped)
    write_json(folder / "funnel.json", c.funnel.model_dump(mode="json"))
    write_json(folder / "stats.json", c.stats.model_dump(mode="json"))
    write_plots(c.stats, folder / "plots", c.funnel)
    _write_card(folder, version, c)
    manifest = Manifest(
        version=version,
        created_at=c.created_at,
        pipeline_version=c.pipeline_version,
        row_count=len(c.records),
        splits={"test": len(c.records)},
        columns={f.name: str(f.type) for f in written},
        json_columns=c.json_columns,
        cutoff=c.cutoff,
        config=c.config,
        models=c.models,
        prompt_versions=c.prompt_versions,
        sources=c.sources,
        decontamination=c.decontamination,
        earlier_releases=c.earlier_releases,
        derived_from=c.derived_from,
        files=file_entries(folder),
    )
    write_json(folder / MANIFEST, manifest.model_dump(mode="json"))
    # Self-check before the version becomes visible; the datasets load is left to verify/export.
    problems = verify_release(folder, load_with_datasets=False, expect_version=version)
    if problems:
        raise ReleaseError(f"release {version} failed its own check, nothing published: " + "; ".join(problems))


def _write_card(folder: Path, version: str, c: _Contents) -> None:
    """README.md: the dataset card, with the real-source section when the release has such tasks."""
    columns_short = {f.name: short_type(f.type) for f in c.table.schema}
    body = render_card(
        version=version,
        stats=c.stats,
        funnel=c.funnel,
        cutoff=c.cutoff,
        pipeline_version=c.pipeline_version,
        models=c.models,
        prompt_versions=c.prompt_versions,
        sources=c.sources,
        columns=columns_short,
        json_columns=c.json_columns,
        config=c.config,
        license=c.license,
        hub_repo_id=c.hub_repo_id,
        validity=compute_validity(
            c.records, cutoff=c.cutoff, decontamination=c.decontamination, earlier_releases=c.earlier_releases
        ),
        example=c.records[0] if c.records else None,
        year=c.created_at.year,
    )
    body += real_source_section(c.records, c.stats)
    data = card_data(
        version,
        len(c.records),
        c.license,
        track=track_of(c.config),
        features=_features(c.table),
        dataset_bytes=c.table.nbytes,
        download_bytes=sum(p.stat().st_size for p in folder.glob(DATA_GLOB)),
    )
    write_text(folder / "README.md", str(dataset_card(data, body)))


def _features(table: pa.Table) -> list[dict[str, Any]]:
    """The table's columns as `dataset_info.features` in the card (what `datasets` itself would write)."""
    require("datasets", "writing a release's card (its dataset_info features)")
    from datasets import Features

    return Features.from_arrow_schema(table.schema)._to_yaml_list()


def _make_readable(folder: Path) -> None:
    # mkdtemp creates an owner-only (0700) folder; a release gets the modes the user's umask gives.
    os.chmod(folder, shared_mode(directory=True))
    for path in folder.rglob("*"):
        os.chmod(path, shared_mode(directory=path.is_dir()))


def _publish(tmp: Path, dest: Path, version: str) -> None:
    _make_readable(tmp)
    if dest.exists():
        raise ReleaseExistsError(
            f"release {version} appeared at {dest} while this one was being written; the other writer's version is kept"
        )
    try:
        # rename(2) of a directory onto an existing non-empty directory fails: never an overwrite.
        os.rename(tmp, dest)
    except OSError as exc:
        if dest.exists():
            raise ReleaseExistsError(f"release {version} already exists at {dest}") from exc
        raise ReleaseError(f"release {version}: cannot move the finished folder into place at {dest}: {exc}") from exc
    _fsync_dir(dest.parent)
