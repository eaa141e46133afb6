"""export_release against a fake HfApi: call sequence, dry run, offline, existing tags, failures."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from classforge_bench.pipeline.release import export as export_mod
from classforge_bench.pipeline.release.errors import ExportError
from classforge_bench.pipeline.release.export import export_release
from classforge_bench.pipeline.release.verify import verify_release

REPO = "classforge/bench"
OID = "0123456789abcdef0123456789abcdef01234567"


class FakeHfApi:
    """Records every call; `tags` are the existing tags; `fail` maps a method name to an exception."""

    def __init__(self, tags: list[str] | None = None, fail: dict[str, BaseException] | None = None) -> None:
        self.calls: list[tuple[str, tuple, dict[str, Any]]] = []
        self.tags = tags or []
        self.fail = fail or {}

    def _record(self, name: str, args: tuple, kwargs: dict[str, Any]) -> None:
        self.calls.append((name, args, kwargs))
        if name in self.fail:
            raise self.fail[name]

    def create_repo(self, *args: Any, **kwargs: Any) -> Any:
        self._record("create_repo", args, kwargs)
        return f"https://huggingface.co/datasets/{args[0]}"

    def list_repo_refs(self, *args: Any, **kwargs: Any) -> Any:
        self._record("list_repo_refs", args, kwargs)
        return SimpleNamespace(
            branches=[SimpleNamespace(name="main")], tags=[SimpleNamespace(name=t) for t in self.tags]
        )

    def upload_folder(self, *args: Any, **kwargs: Any) -> Any:
        self._record("upload_folder", args, kwargs)
        # What the Hub would receive, read while the folder exists (a staged copy is removed afterwards).
        sent = Path(kwargs["folder_path"])
        self.uploaded = {p.relative_to(sent).as_posix(): p.read_bytes() for p in sent.rglob("*") if p.is_file()}
        self.problems = verify_release(sent, load_with_datasets=False)
        return SimpleNamespace(oid=OID, commit_url=f"https://huggingface.co/datasets/{REPO}/commit/{OID}")

    def create_tag(self, *args: Any, **kwargs: Any) -> Any:
        self._record("create_tag", args, kwargs)

    @property
    def names(self) -> list[str]:
        return [c[0] for c in self.calls]


def test_real_export_call_sequence(release: Path) -> None:
    api = FakeHfApi()
    result = export_release(release, REPO, token="hf_x", private=True, dry_run=False, api=api, offline=False)
    staged = api.calls[2][2]["folder_path"]
    assert api.calls == [
        ("create_repo", (REPO,), {"repo_type": "dataset", "exist_ok": True, "private": True}),
        ("list_repo_refs", (REPO,), {"repo_type": "dataset"}),
        (
            "upload_folder",
            (),
            {
                "folder_path": staged,
                "repo_id": REPO,
                "repo_type": "dataset",
                "commit_message": "classforge release 2025.06.01",
                "delete_patterns": "*",
            },
        ),
        ("create_tag", (REPO,), {"tag": "2025.06.01", "revision": OID, "repo_type": "dataset"}),
    ]
    assert result.dry_run is False and result.commit_oid == OID
    assert result.plan.tag == "2025.06.01" and result.plan.private is True and result.plan.folder == str(release)
    # The card was written without a repository (ORG/NAME); the upload names --repo, and still verifies.
    card = api.uploaded["README.md"].decode()
    assert f'load_dataset("{REPO}", revision="2025.06.01"' in card and f"hf:{REPO}@2025.06.01" in card
    assert "ORG/NAME" not in card and api.problems == []
    assert "ORG/NAME" in (release / "README.md").read_text() and not Path(staged).exists()  # release untouched
    assert verify_release(release, load_with_datasets=False) == []


def test_card_naming_the_repository_is_uploaded_as_written(write: Any) -> None:
    from classforge_bench.pipeline.config import Config

    cfg = Config()
    cfg.release.hub_repo_id = REPO
    release = write(config=cfg, hub_repo_id=REPO)
    api = FakeHfApi()
    export_release(release, REPO, token="hf_x", dry_run=False, api=api, offline=False, load_with_datasets=False)
    assert api.calls[2][2]["folder_path"] == str(release)
    other = FakeHfApi()
    export_release(
        release, "acme/mirror", token="hf_x", dry_run=False, api=other, offline=False, load_with_datasets=False
    )
    card = other.uploaded["README.md"].decode()
    assert 'load_dataset("acme/mirror"' in card and REPO not in card and other.problems == []


def test_dry_run_calls_nothing_and_lists_every_file(release: Path) -> None:
    api = FakeHfApi()
    result = export_release(release, REPO, dry_run=True, api=api)
    assert api.calls == []
    assert result.dry_run is True and result.commit_oid is None
    listed = {f.path: f for f in result.plan.files}
    on_disk = {p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file()}
    assert set(listed) == on_disk and "manifest.json" in listed
    manifest = json.loads((release / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] != "README.md":  # the card is listed as uploaded: with --repo filled in
            assert listed[entry["path"]].sha256 == entry["sha256"] and listed[entry["path"]].bytes == entry["bytes"]
    replaced = 5  # two load_dataset examples, two `classforge evaluate --dataset hf:` lines, the citation URL
    assert listed["README.md"].bytes == entry_bytes(manifest, "README.md") + replaced * (len(REPO) - len("ORG/NAME"))
    assert result.plan.total_bytes == sum(f.bytes for f in result.plan.files)


def entry_bytes(manifest: dict, path: str) -> int:
    return next(e["bytes"] for e in manifest["files"] if e["path"] == path)


def test_offline_fails_fast_without_touching_anything(release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeHfApi()
    verified: list[Path] = []
    monkeypatch.setattr(export_mod, "verify_release", lambda folder, **kw: verified.append(folder) or [])
    # default: huggingface_hub's own constant, which the test session sets through HF_HUB_OFFLINE=1
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(ExportError, match="HF_HUB_OFFLINE is set.*Nothing was uploaded.*--dry-run"):
        export_release(release, REPO, token="hf_x", dry_run=False, api=api)
    assert api.calls == [] and verified == []


def test_offline_mode_raised_by_the_hub_client_is_explained(release: Path) -> None:
    from huggingface_hub.errors import OfflineModeIsEnabled

    api = FakeHfApi(fail={"create_repo": OfflineModeIsEnabled("offline mode is enabled")})
    with pytest.raises(ExportError, match="HF_HUB_OFFLINE is set"):
        export_release(release, REPO, dry_run=False, api=api, offline=False)
    assert api.names == ["create_repo"]


def test_existing_tag_is_refused_before_upload(release: Path) -> None:
    api = FakeHfApi(tags=["2025.05.01", "2025.06.01"])
    with pytest.raises(
        ExportError, match="tag '2025.06.01' already exists; a version is published once.*Nothing was uploaded"
    ):
        export_release(release, REPO, dry_run=False, api=api, offline=False)
    assert api.names == ["create_repo", "list_repo_refs"]


def test_tag_conflict_after_upload_reports_the_commit(release: Path) -> None:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    response = httpx2.Response(409, request=httpx2.Request("POST", "https://huggingface.co/api/x/tag/main"))
    api = FakeHfApi(fail={"create_tag": HfHubHTTPError("Conflict: tag exists", response=response)})
    with pytest.raises(ExportError, match=f"already exists.*uploaded as commit {OID} but not tagged") as err:
        export_release(release, REPO, dry_run=False, api=api, offline=False)
    assert f"revision='{OID}'" in str(err.value)
    assert api.names == ["create_repo", "list_repo_refs", "upload_folder", "create_tag"]


def test_network_failure_is_a_clear_error(release: Path) -> None:
    import httpx2

    api = FakeHfApi(fail={"create_repo": httpx2.ConnectError("Name or service not known")})
    with pytest.raises(ExportError, match="cannot reach the Hugging Face Hub during create_repo.*Nothing was uploaded"):
        export_release(release, REPO, dry_run=False, api=api, offline=False)
    api = FakeHfApi(fail={"upload_folder": ConnectionError("reset by peer")})
    with pytest.raises(ExportError, match="during upload_folder"):
        export_release(release, REPO, dry_run=False, api=api, offline=False)


def test_auth_failure_hints_at_the_token(release: Path) -> None:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    response = httpx2.Response(401, request=httpx2.Request("POST", "https://huggingface.co/api/repos/create"))
    api = FakeHfApi(fail={"create_repo": HfHubHTTPError("Unauthorized", response=response)})
    with pytest.raises(ExportError, match=r"refused create_repo \(HTTP 401\).*HF_TOKEN"):
        export_release(release, REPO, dry_run=False, api=api, offline=False)


def test_a_broken_release_is_never_uploaded(release_copy: Path) -> None:
    (release_copy / "stats.json").write_text("{}")
    api = FakeHfApi()
    for dry_run in (True, False):
        with pytest.raises(ExportError, match="(?s)release 2025.06.01 failed verification.*stats.json"):
            export_release(release_copy, REPO, dry_run=dry_run, api=api, offline=False, load_with_datasets=False)
    assert api.calls == []


def test_bad_repo_id_and_folder_name(release: Path, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="ORG/NAME"):
        export_release(release, "no-slash", dry_run=True)
    (tmp_path / "notes").mkdir()
    with pytest.raises(ExportError, match="not a release version"):
        export_release(tmp_path / "notes", REPO, dry_run=True)


def test_cli_defaults_to_dry_run_without_token(release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from classforge_bench.pipeline.cli import app

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(tmp_path / "no-saved-token"))

    def no_api(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a dry run must not create an HfApi")

    monkeypatch.setattr("huggingface_hub.HfApi", no_api)
    plan = tmp_path / "plan.json"
    result = CliRunner().invoke(app, ["export", str(release), "--repo", REPO, "--plan-out", str(plan)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # rich wraps long lines
    assert "dry run (no Hugging Face token: set HF_TOKEN or run hf auth login): nothing was uploaded" in output
    assert "data/test-00000-of-00001.parquet" in output
    saved = json.loads(plan.read_text())
    assert saved["dry_run"] is True and saved["plan"]["repo_id"] == REPO


def test_cli_real_export_offline_fails_fast(release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from classforge_bench.pipeline.cli import app

    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    result = CliRunner().invoke(app, ["export", str(release), "--repo", REPO])  # token -> real export
    assert result.exit_code == 1
    output = " ".join(result.output.split())  # rich wraps long lines
    assert "cannot export release 2025.06.01 to classforge/bench: HF_HUB_OFFLINE is set" in output
    assert "hf_not_a_real_token" not in output


def test_cli_export_uses_the_token_hf_auth_login_saved(release: Path, tmp_path: Path) -> None:
    """No HF_TOKEN, but a token saved where `hf auth login` saves it (HF_HOME/token): a real export starts.

    Offline mode makes that real export stop before any network call, with the offline message; without
    the saved token the same command would be a dry run that exits 0.
    """
    import os
    import subprocess
    import sys

    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "token").write_text("hf_saved_by_login\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(home), HF_HUB_OFFLINE="1")
    classforge = Path(sys.executable).with_name("classforge")
    proc = subprocess.run(
        [str(classforge), "export", str(release), "--repo", REPO], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: cannot export release 2025.06.01 to {REPO}: HF_HUB_OFFLINE is set")
    assert "hf_saved_by_login" not in proc.stdout + proc.stderr
    (home / "token").unlink()
    dry = subprocess.run(
        [str(classforge), "export", str(release), "--repo", REPO], env=env, capture_output=True, text=True, timeout=600
    )
    assert dry.returncode == 0 and "dry run (no Hugging Face token" in dry.stdout


def _private_config():
    from classforge_bench.pipeline.config import Config

    config = Config()
    config.construction.track = "real-source"
    config.construction.real_source.admit_unlicensed = True
    return config


def test_a_private_release_is_marked_on_its_card_and_refused_by_export(write) -> None:
    from classforge_bench.pipeline.release.privacy import PRIVATE_NOTE

    private = write(config=_private_config())
    card = (private / "README.md").read_text(encoding="utf-8")
    assert PRIVATE_NOTE in card
    api = FakeHfApi()
    for dry_run in (True, False):
        with pytest.raises(ExportError, match="private benchmark"):
            export_release(
                private, REPO, token="hf_x", dry_run=dry_run, api=api, offline=False, load_with_datasets=False
            )
    assert api.calls == []  # refused before any call to the Hub


def test_the_default_release_is_not_private(write) -> None:
    from classforge_bench.pipeline.release.privacy import PRIVATE_NOTE

    public = write()
    assert PRIVATE_NOTE not in (public / "README.md").read_text(encoding="utf-8")
    result = export_release(public, REPO, dry_run=True, load_with_datasets=False)
    assert result.plan.repo_id == REPO
