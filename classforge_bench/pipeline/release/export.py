"""Publish a release folder to the Hugging Face Hub as a dataset repository, tagged with its version.

Sequence of a real export (each step only after the previous succeeded):
    verify_release (refuse on any problem)
    create_repo(repo_id, repo_type="dataset", exist_ok=True, private=...)
    list_repo_refs(...)            refuse if the version's tag exists: a version is published once,
                                   and checking before the upload avoids an orphan commit on main
    upload_folder(folder_path, repo_id, repo_type="dataset", commit_message, delete_patterns="*")
                                   delete_patterns="*" makes the commit hold exactly this release:
                                   files an earlier version had and this one lacks (an old data shard
                                   matching data/test-*.parquet!) would otherwise stay and be loaded.
                                   The Hub never deletes .gitattributes this way.
    create_tag(repo_id, tag=version, revision=<commit oid from upload_folder>, repo_type="dataset")
                                   push_to_hub's `revision` is a branch, so tagging is a separate call.

A dry run verifies and returns the exact file list (path, size, sha256) without touching the
network. The token is passed in by the caller (the CLI reads HF_TOKEN); nothing here reads the
environment except huggingface_hub's own HF_HUB_OFFLINE constant.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.release.errors import ExportError
from classforge_bench.pipeline.release.manifest import MANIFEST, FileEntry, file_entries
from classforge_bench.pipeline.release.privacy import is_private
from classforge_bench.pipeline.release.verify import verify_release
from classforge_bench.pipeline.release.versions import is_version

REPO_TYPE: Final = "dataset"
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
T = TypeVar("T")


class HubApi(Protocol):
    """The part of `huggingface_hub.HfApi` an export uses (tests pass a fake)."""

    # The keywords an export passes, spelled as HfApi spells them (`**kwargs` here would demand
    # that HfApi accept any keyword, which it does not).
    def create_repo(
        self, repo_id: str, *, private: bool | None = None, repo_type: str | None = None, exist_ok: bool = False
    ) -> Any: ...
    def list_repo_refs(self, repo_id: str, *, repo_type: str | None = None) -> Any: ...
    def upload_folder(
        self,
        *,
        repo_id: str,
        folder_path: str,
        commit_message: str | None = None,
        repo_type: str | None = None,
        delete_patterns: list[str] | str | None = None,
    ) -> Any: ...
    def create_tag(
        self, repo_id: str, *, tag: str, revision: str | None = None, repo_type: str | None = None
    ) -> Any: ...


class ExportPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    folder: str
    repo_id: str
    repo_type: Literal["dataset"] = REPO_TYPE
    version: str
    tag: str
    private: bool
    commit_message: str
    files: list[FileEntry]
    total_bytes: int


class ExportResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: ExportPlan
    dry_run: bool
    commit_oid: str | None = None
    commit_url: str | None = None


def commit_message(version: str) -> str:
    return f"classforge release {version}"


def plan_export(
    folder: Path, repo_id: str, *, private: bool = False, load_with_datasets: bool = True, staging: Path | None = None
) -> ExportPlan:
    """Verify the release and list exactly what would be uploaded; ExportError on any problem.

    With `staging` (an empty folder), a card that does not yet name `repo_id` in its loading and
    evaluation examples is rewritten there (see `stage_for_repo`) and the plan uploads that copy.
    """
    folder = Path(folder)
    version = folder.name
    if not _REPO_ID.match(repo_id or ""):
        raise ExportError(f"release {version}: --repo must be ORG/NAME, got {repo_id!r}")
    if not is_version(version):
        raise ExportError(f"{folder}: the folder name {version!r} is not a release version")
    problems = verify_release(folder, load_with_datasets=load_with_datasets)
    if not problems and is_private(_release_config(folder)):
        raise ExportError(
            f"release {version} is a private benchmark (built with construction.real_source.admit_unlicensed: "
            "it may hold code whose repository declares no licence): not uploaded"
        )
    if problems:
        raise ExportError(f"release {version} failed verification, nothing uploaded:\n  - " + "\n  - ".join(problems))
    if staging is not None:
        folder = stage_for_repo(folder, repo_id, staging)
    files = file_entries(folder, exclude=())  # everything upload_folder sends, manifest.json included
    return ExportPlan(
        folder=str(folder),
        repo_id=repo_id,
        version=version,
        tag=version,
        private=private,
        commit_message=commit_message(version),
        files=files,
        total_bytes=sum(f.bytes for f in files),
    )


def _release_config(folder: Path) -> dict:
    """The build's config as the release's manifest records it ({} when unreadable: verification said why)."""
    import json

    try:
        config = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("config")
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def stage_for_repo(folder: Path, repo_id: str, staging: Path) -> Path:
    """The release as it should be uploaded to `repo_id`: the folder itself when its card already names
    the repository, else a copy under `staging` whose card does (manifest hash of README.md updated).

    A card names the repository in its examples only when `release.hub_repo_id` was set at build
    time; otherwise it says ORG/NAME, which no user can load. The release folder itself is never
    modified: a version's files are immutable once written.
    """
    import json
    import shutil

    from classforge_bench.pipeline.core.store import write_json, write_text
    from classforge_bench.pipeline.release.card import REPO_PLACEHOLDER
    from classforge_bench.pipeline.release.manifest import sha256_file

    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    named = ((manifest.get("config") or {}).get("release") or {}).get("hub_repo_id") or REPO_PLACEHOLDER
    card = (folder / "README.md").read_text(encoding="utf-8")
    filled = (
        card.replace(f'load_dataset("{named}"', f'load_dataset("{repo_id}"')
        .replace(f"hf:{named}@", f"hf:{repo_id}@")
        .replace(f"huggingface.co/datasets/{named}}}", f"huggingface.co/datasets/{repo_id}}}")
    )
    if filled == card:
        return folder
    dest = Path(staging) / folder.name
    shutil.copytree(folder, dest)
    write_text(dest / "README.md", filled)
    for entry in manifest["files"]:
        if entry["path"] == "README.md":
            entry.update(bytes=(dest / "README.md").stat().st_size, sha256=sha256_file(dest / "README.md"))
    write_json(dest / MANIFEST, manifest)
    return dest


def _hub_offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _network_errors() -> tuple[type[BaseException], ...]:
    """Exceptions meaning 'could not talk to the Hub' across huggingface_hub's HTTP backends."""
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, names in (
        ("httpx2", ("TransportError",)),
        ("httpx", ("TransportError",)),
        ("requests", ("ConnectionError", "Timeout")),
    ):
        try:
            mod = __import__(module)
        except ImportError:
            continue
        errors += [getattr(mod, n) for n in names if isinstance(getattr(mod, n, None), type)]
    return tuple(errors)


def _offline_message(plan_or_version: str, repo_id: str) -> str:
    return (
        f"cannot export release {plan_or_version} to {repo_id}: HF_HUB_OFFLINE is set, so the Hugging Face Hub "
        "cannot be reached. Nothing was uploaded and the release folder is unchanged. Unset HF_HUB_OFFLINE "
        "(and check network access) to publish, or use --dry-run to check what would be uploaded."
    )


class _Exporter:
    """One real export; `_call` turns every Hub failure into an ExportError saying what state is left."""

    def __init__(self, api: HubApi, plan: ExportPlan) -> None:
        self.api = api
        self.plan = plan
        self.oid: str | None = None

    def _state(self) -> str:
        if self.oid is None:
            return "Nothing was uploaded; the release folder is unchanged."
        return (
            f"The files were uploaded as commit {self.oid} but not tagged; once the cause is fixed, tag it with "
            f"HfApi().create_tag({self.plan.repo_id!r}, tag={self.plan.tag!r}, revision={self.oid!r}, "
            f"repo_type='dataset')."
        )

    def _call(self, step: str, fn: Callable[[], T]) -> T:
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

        where = f"release {self.plan.version} -> {self.plan.repo_id}"
        try:
            return fn()
        except OfflineModeIsEnabled as exc:
            raise ExportError(
                _offline_message(self.plan.version, self.plan.repo_id)
                if self.oid is None
                else f"{where}: offline mode during {step}. {self._state()}"
            ) from exc
        except HfHubHTTPError as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if step == "create_tag" and status == 409:
                raise ExportError(
                    f"{where}: tag {self.plan.tag!r} already exists (created concurrently?); a version "
                    f"is published once. {self._state()}"
                ) from exc
            hint = " Check the token (HF_TOKEN) and its write access." if status in (401, 403) else ""
            raise ExportError(f"{where}: the Hub refused {step} (HTTP {status}): {exc}.{hint} {self._state()}") from exc
        except _network_errors() as exc:
            raise ExportError(
                f"{where}: cannot reach the Hugging Face Hub during {step} ({type(exc).__name__}: {exc}). "
                f"Check network access or proxy settings and run the export again. {self._state()}"
            ) from exc

    def run(self) -> ExportResult:
        plan, api = self.plan, self.api
        self._call(
            "create_repo",
            lambda: api.create_repo(plan.repo_id, repo_type=REPO_TYPE, exist_ok=True, private=plan.private),
        )
        refs = self._call("list_repo_refs", lambda: api.list_repo_refs(plan.repo_id, repo_type=REPO_TYPE))
        tags = {getattr(t, "name", None) for t in (getattr(refs, "tags", None) or [])}
        if plan.tag in tags:
            raise ExportError(
                f"release {plan.version} -> {plan.repo_id}: tag {plan.tag!r} already exists; a version "
                "is published once. Write a new version instead. Nothing was uploaded."
            )
        info = self._call(
            "upload_folder",
            lambda: api.upload_folder(
                folder_path=plan.folder,
                repo_id=plan.repo_id,
                repo_type=REPO_TYPE,
                commit_message=plan.commit_message,
                delete_patterns="*",
            ),
        )
        oid = getattr(info, "oid", None)
        if not oid:
            raise ExportError(
                f"release {plan.version} -> {plan.repo_id}: upload_folder returned no commit id "
                f"({info!r}); the upload may have happened but cannot be tagged safely"
            )
        self.oid = oid
        self._call("create_tag", lambda: api.create_tag(plan.repo_id, tag=plan.tag, revision=oid, repo_type=REPO_TYPE))
        return ExportResult(plan=plan, dry_run=False, commit_oid=oid, commit_url=getattr(info, "commit_url", None))


def export_release(
    folder: Path,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool = False,
    dry_run: bool = True,
    api: HubApi | None = None,
    offline: bool | None = None,
    load_with_datasets: bool = True,
) -> ExportResult:
    """Dry run (default): verify and return the plan. Otherwise publish and tag; see the module docstring.

    `offline` defaults to huggingface_hub's HF_HUB_OFFLINE; `api` defaults to `HfApi(token=token)`.
    """
    import tempfile

    folder = Path(folder)
    if not dry_run and (offline if offline is not None else _hub_offline()):
        raise ExportError(_offline_message(folder.name, repo_id))  # before any work: fail fast
    with tempfile.TemporaryDirectory(prefix="classforge-export-") as staging:
        plan = plan_export(
            folder, repo_id, private=private, load_with_datasets=load_with_datasets, staging=Path(staging)
        )
        if dry_run:
            return ExportResult(plan=plan.model_copy(update={"folder": str(folder)}), dry_run=True)
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        result = _Exporter(api, plan).run()
    return result.model_copy(update={"plan": plan.model_copy(update={"folder": str(folder)})})
