"""Datasets by name: `--dataset classeval`, `--dataset hf:ORG/NAME[@REVISION]`, or a local path.

A name is fetched with `huggingface_hub.snapshot_download`, so the Hub's own cache (HF_HOME,
HF_HUB_CACHE), token and offline mode (HF_HUB_OFFLINE=1) apply as for any Hugging Face user: a
dataset downloaded once loads offline afterwards. Only the Parquet shards under `data/` and the card
are fetched; the folder they land in is read like a local release folder by `classforge_bench.pipeline.formats.loader`.

A name that cannot be resolved raises `DatasetError` with one line saying how to get the data.
"""

from __future__ import annotations

import re
from pathlib import Path

from classforge_bench.pipeline.formats.loader import DatasetError

CLASSEVAL_REPO = "FudanSELab/ClassEval"
"""ClassEval's published dataset (MIT; Parquet under data/, split `test`, the same 100 tasks as ClassEval_data.json)."""

NAMES = {"classeval": CLASSEVAL_REPO}
_HF_SPEC = re.compile(r"^hf:(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<rev>[^\s@]+))?$")
# What an evaluation reads; the rest of a dataset repository (scripts, loose JSON) is never fetched.
PATTERNS = ["data/*", "data/**/*", "README.md", "manifest.json"]


def parse_spec(spec: str) -> tuple[str, str | None] | None:
    """(repo id, revision) for a by-name spec, None for a local path; DatasetError for a malformed `hf:` spec."""
    if spec.lower() in NAMES:
        return NAMES[spec.lower()], None
    if not spec.startswith("hf:"):
        return None
    match = _HF_SPEC.match(spec)
    if match is None:
        raise DatasetError(f"{spec!r}: expected hf:ORG/NAME or hf:ORG/NAME@REVISION (a tag, branch or commit)")
    return match["repo"], match["rev"]


def resolve_dataset(spec: str | Path, *, cache_dir: Path | None = None) -> Path:
    """A local path to load: the path itself, or the Hub snapshot (cached, or downloaded once)."""
    parsed = parse_spec(str(spec)) if isinstance(spec, str) else None
    if parsed is None:
        return Path(spec)
    repo_id, revision = parsed
    return _snapshot(str(spec), repo_id, revision, cache_dir)


def _how_to_get(spec: str, repo_id: str, revision: str | None) -> str:
    from huggingface_hub import constants

    rev = f" --revision {revision}" if revision else ""
    offline = ", or run this command without HF_HUB_OFFLINE" if constants.HF_HUB_OFFLINE else ""
    return (
        f"download it once while online (hf download {repo_id} --repo-type dataset{rev}{offline}), "
        f"or pass a local file or folder: --dataset PATH (ClassEval_data.json, .jsonl, .parquet or a release folder)"
    )


def _snapshot(spec: str, repo_id: str, revision: str | None, cache_dir: Path | None) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"--dataset {spec} ({repo_id}{'@' + revision if revision else ''} on the Hugging Face Hub)"
    try:
        folder = snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=revision,
            allow_patterns=PATTERNS,
            cache_dir=str(cache_dir) if cache_dir else None,
        )
    except (LocalEntryNotFoundError, OfflineModeIsEnabled) as exc:
        raise DatasetError(
            f"{where}: not in the local Hugging Face cache and the Hub cannot be reached; "
            f"{_how_to_get(spec, repo_id, revision)}"
        ) from exc
    except GatedRepoError as exc:
        raise DatasetError(
            f"{where}: the dataset is gated; accept its terms on the Hub and log in (hf auth login)"
        ) from exc
    except RepositoryNotFoundError as exc:
        raise DatasetError(
            f"{where}: no such dataset repository (or it is private: log in with hf auth login)"
        ) from exc
    except RevisionNotFoundError as exc:
        raise DatasetError(
            f"{where}: no revision {revision!r} (use a tag such as a release version, a branch or a commit)"
        ) from exc
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        raise DatasetError(
            f"{where}: the Hub answered HTTP {status}; try again, or {_how_to_get(spec, repo_id, revision)}"
        ) from exc
    path = Path(folder)
    if not any((path / "data").rglob("*.parquet")):
        raise DatasetError(f"{where}: the snapshot has no Parquet files under data/ (is it a ClassEval-style dataset?)")
    return path


def cached_dataset(spec: str, *, cache_dir: Path | None = None) -> Path | None:
    """The snapshot of a by-name dataset if it is already in the local cache, else None; never downloads.

    For decontamination during a build: it uses what is there and says what it could not check,
    rather than reaching for the network in the middle of an unattended run.
    """
    parsed = parse_spec(spec)
    if parsed is None:
        raise DatasetError(f"{spec!r}: not a dataset name (expected classeval or hf:ORG/NAME[@REVISION])")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    repo_id, revision = parsed
    try:
        folder = Path(
            snapshot_download(
                repo_id,
                repo_type="dataset",
                revision=revision,
                allow_patterns=PATTERNS,
                cache_dir=str(cache_dir) if cache_dir else None,
                local_files_only=True,
            )
        )
    except LocalEntryNotFoundError:
        return None
    return folder if any((folder / "data").rglob("*.parquet")) else None
