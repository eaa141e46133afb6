"""Check a release folder end to end; return every problem found (an empty list means OK).

Checks: the manifest parses and names this version; every file matches its manifest size and
sha256 and no file is unlisted; the card's YAML parses and declares the test split; the Parquet
schema has the required columns with the published types; row counts agree across manifest,
Parquet and tasks.jsonl; the shipped reference results (references.json, when there) are of this
release's tasks and passed; and (optionally, ~1 s) `datasets.load_dataset(folder)` loads the split.
Problems are collected rather than raised so a user sees all of them at once.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from classforge_bench.pipeline.core.extras import require
from classforge_bench.pipeline.core.task import CORE_COLUMNS
from classforge_bench.pipeline.formats.release_rows import DATA_GLOB, SPLIT, core_arrow_schema
from classforge_bench.pipeline.formats.shipped_references import (
    ShippedReferencesError,
    read_shipped,
    shipped_problems,
)
from classforge_bench.pipeline.release.manifest import MANIFEST, Manifest, file_entries, sha256_file


def read_front_matter(text: str) -> dict[str, Any]:
    """The YAML mapping between the leading `---` lines of a card; ValueError says what is wrong."""
    import yaml

    if not text.startswith("---\n"):
        raise ValueError("does not start with a '---' YAML front-matter line")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("YAML front matter is not closed by a '---' line")
    try:
        meta = yaml.safe_load(text[4 : end + 1])
    except yaml.YAMLError as exc:
        raise ValueError(f"YAML front matter does not parse: {exc}") from exc
    if not isinstance(meta, dict):
        raise ValueError("YAML front matter is not a mapping")
    return meta


def _check_card(folder: Path, label: str, track: str | None, rows: int | None) -> list[str]:
    """The card parses as the Hub's DatasetCard, its metadata passes the Hub's checks (`card_check`),
    and its one config is the release's track with this folder's split and row count."""
    from classforge_bench.pipeline.release.card_check import card_problems, parse_card

    path = folder / "README.md"
    if not path.is_file():
        return [f"{label}: README.md (dataset card) is missing"]
    try:
        card = parse_card(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return [f"{label}: README.md {exc}"]
    meta = card.data.to_dict()
    problems = [f"{label}: README.md {p}" for p in card_problems(card)]
    for key in ("license", "task_categories", "configs", "dataset_info"):
        if not meta.get(key):
            problems.append(f"{label}: README.md front matter lacks {key!r}")
    configs = [c for c in meta.get("configs") or [] if isinstance(c, dict)]
    names = [c.get("config_name") for c in configs]
    if track is not None and names != [track]:
        problems.append(f"{label}: README.md configs are {names}, not the one config {track!r} (its track)")
    for config in configs[:1]:
        files = config.get("data_files") or []
        split = next((f for f in files if isinstance(f, dict) and f.get("split") == SPLIT), None)
        if split is None:
            problems.append(f"{label}: README.md config declares no {SPLIT!r} split")
        elif not list(folder.glob(str(split.get("path", "")))):
            problems.append(f"{label}: README.md {SPLIT!r} split path {split.get('path')!r} matches no file")
    info = meta.get("dataset_info") if isinstance(meta.get("dataset_info"), dict) else {}
    declared = {s.get("name"): s.get("num_examples") for s in info.get("splits") or [] if isinstance(s, dict)}
    if rows is not None and declared.get(SPLIT) != rows:
        problems.append(f"{label}: README.md dataset_info gives {declared.get(SPLIT)} {SPLIT!r} rows, not {rows}")
    return problems


def _task_ids(folder: Path) -> list[str] | None:
    jsonl = folder / "tasks.jsonl"
    if not jsonl.is_file():
        return None
    with open(jsonl, encoding="utf-8") as fh:
        return [json.loads(line)["task_id"] for line in fh if line.strip()]


def _check_shipped(folder: Path, label: str) -> list[str]:
    """The shipped reference results (references.json, when there) are this release's: of its tasks'
    solutions and tests, each a pass. Their bytes against the manifest are `_check_files`'s."""
    try:
        shipped = read_shipped(folder, check_manifest=False)
    except ShippedReferencesError as exc:
        return [str(exc)]
    if shipped is None:
        return []
    jsonl = folder / "tasks.jsonl"
    if not jsonl.is_file():
        return []  # reported by the Parquet check
    with open(jsonl, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [f"{label}: {p}" for p in shipped_problems(shipped, rows)]


def _load_manifest(folder: Path, label: str) -> tuple[Manifest | None, list[str]]:
    path = folder / MANIFEST
    if not path.is_file():
        return None, [f"{label}: {MANIFEST} is missing"]
    try:
        return Manifest.model_validate(json.loads(path.read_text(encoding="utf-8"))), []
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, [f"{label}: {MANIFEST} is not valid JSON: {exc}"]
    except ValidationError as exc:
        return None, [
            f"{label}: {MANIFEST} does not match the manifest schema: {exc.error_count()} errors, "
            f"first: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
        ]


def _check_files(folder: Path, manifest: Manifest, label: str) -> list[str]:
    problems = []
    listed = set()
    for entry in manifest.files:
        rel = PurePosixPath(entry.path)
        if rel.is_absolute() or ".." in rel.parts:
            problems.append(f"{label}: {MANIFEST} lists a path outside the folder: {entry.path!r}")
            continue
        listed.add(entry.path)
        path = folder / rel
        if not path.is_file():
            problems.append(f"{label}: {entry.path} is listed in the manifest but missing")
        elif path.stat().st_size != entry.bytes:
            problems.append(f"{label}: {entry.path} has {path.stat().st_size} bytes, the manifest says {entry.bytes}")
        elif sha256_file(path) != entry.sha256:
            problems.append(f"{label}: {entry.path} sha256 does not match the manifest (modified after release?)")
    for entry in file_entries(folder):
        if entry.path not in listed:
            problems.append(f"{label}: {entry.path} is not listed in the manifest")
    return problems


def _check_parquet(folder: Path, manifest: Manifest | None, label: str) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(folder.glob(DATA_GLOB))
    if not files:
        return [f"{label}: no {DATA_GLOB} file"]
    problems = []
    expected = core_arrow_schema()
    rows = 0
    ids: list[str] = []
    for file in files:
        rel = file.relative_to(folder).as_posix()
        try:
            schema = pq.read_schema(file)
            rows += pq.read_metadata(file).num_rows
            ids += (
                pq.read_table(file, columns=["task_id"]).column("task_id").to_pylist()
                if "task_id" in schema.names
                else []
            )
        except (pa.ArrowException, OSError) as exc:
            problems.append(f"{label}: {rel} is not readable Parquet: {exc}")
            continue
        for name in CORE_COLUMNS:
            if name not in schema.names:
                problems.append(f"{label}: {rel} lacks required column {name!r}")
            elif not schema.field(name).type.equals(expected.field(name).type):
                problems.append(
                    f"{label}: {rel} column {name!r} has type {schema.field(name).type}, "
                    f"expected {expected.field(name).type}"
                )
        if manifest is not None:
            actual = {f.name: str(f.type) for f in schema}
            if actual != manifest.columns:
                problems.append(f"{label}: {rel} columns differ from the manifest's")
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"{label}: duplicate task ids: {', '.join(map(str, dupes))}")
    if manifest is not None:
        if rows != manifest.row_count or manifest.splits.get(SPLIT) != manifest.row_count:
            problems.append(
                f"{label}: Parquet has {rows} rows, the manifest says {manifest.row_count} "
                f"(split {SPLIT!r}: {manifest.splits.get(SPLIT)})"
            )
        jsonl = folder / "tasks.jsonl"
        if jsonl.is_file():
            with open(jsonl, encoding="utf-8") as fh:
                lines = sum(1 for line in fh if line.strip())
            if lines != manifest.row_count:
                problems.append(f"{label}: tasks.jsonl has {lines} tasks, the manifest says {manifest.row_count}")
        else:
            problems.append(f"{label}: tasks.jsonl is missing")
    return problems


def _check_datasets_load(folder: Path, label: str, cache_dir: Path | None) -> list[str]:
    """The card's own local snippet, `load_dataset(folder, split=...)`, twice into one cache: each
    time the rows must be this release's (`tasks.jsonl`), so a cached copy of another folder with the
    same name would show here as rows that are not ours."""
    require("datasets", "verify-release (it loads the folder with datasets.load_dataset)")
    import datasets

    bars_were_on = not datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    expected = _task_ids(folder)
    try:
        with tempfile.TemporaryDirectory(prefix="classforge-verify-", dir=cache_dir) as cache:
            ds = datasets.load_dataset(str(folder), cache_dir=cache)
            if SPLIT not in ds:
                return [f"{label}: datasets.load_dataset found splits {sorted(ds)}, not {SPLIT!r}"]
            ids = ds[SPLIT]["task_id"]
    except Exception as exc:  # noqa: BLE001 - any loader failure is exactly what this check reports
        return [f"{label}: datasets.load_dataset({str(folder)!r}) failed: {type(exc).__name__}: {exc}"]
    finally:
        if bars_were_on:
            datasets.enable_progress_bars()
    if expected is not None and list(ids) != expected:
        return [
            f"{label}: datasets.load_dataset gives {len(ids)} rows in {SPLIT!r} that are not this release's "
            f"{len(expected)} tasks.jsonl rows"
        ]
    return []


def release_track(folder: Path) -> str | None:
    """The track a release was built on, as its manifest's configuration records it (None: unreadable)."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    construction = (manifest.get("config") or {}).get("construction") or {}
    return str(construction.get("track") or "composition")


def verify_release(
    folder: Path, *, load_with_datasets: bool = True, expect_version: str | None = None, cache_dir: Path | None = None
) -> list[str]:
    """Every problem of the release folder as a message naming the release, its track and the file; [] = OK.

    `expect_version` defaults to the folder's name (the writer passes it while building under a
    temporary name). `cache_dir` is where the temporary `datasets` cache goes (default: system temp).
    """
    folder = Path(folder)
    version = expect_version or folder.name
    if not folder.is_dir():
        return [f"release {version}: {folder} is not a directory"]
    track = release_track(folder)
    label = f"release {version} ({track} track)" if track else f"release {version}"
    manifest, problems = _load_manifest(folder, label)
    if manifest is not None:
        if manifest.version != version:
            problems.append(f"{label}: {MANIFEST} names version {manifest.version!r}")
        problems += _check_files(folder, manifest, label)
    problems += _check_card(folder, label, track, manifest.row_count if manifest else None)
    problems += _check_parquet(folder, manifest, label)
    problems += _check_shipped(folder, label)
    if load_with_datasets:
        problems += _check_datasets_load(folder, label, cache_dir)
    return problems
