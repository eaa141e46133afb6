"""The configuration template at the project root, used as the README, prefect.yaml and the
missing-config error advise: copied to classforge.toml, it harvests into the project's own folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from classgen import make_class
from fakes.github_api import FakeGitHub, fake_repo
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app
from classforge_bench.pipeline.config import MISSING_CONFIG_HINT, ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "classforge.example.toml"
ADVICE = "cp classforge.example.toml classforge.toml"


def _project(tmp_path: Path) -> Path:
    """A project root holding the template copied as advised (the folder above it must stay empty)."""
    project = tmp_path / "clone"
    project.mkdir()
    shutil.copy(TEMPLATE, project / "classforge.toml")
    return project


def test_the_template_is_a_real_build_and_everyone_points_at_it(tmp_path: Path) -> None:
    cfg = load_config(_project(tmp_path) / "classforge.toml", env={})
    project = tmp_path / "clone"
    assert cfg.harvest.github.enabled and cfg.llm.mode == "live" and cfg.construction.pairing.pinned == []
    assert len({j.model for j in cfg.llm.judges}) == 3
    for path in (
        cfg.harvest.output_root,
        cfg.construction.output_root,
        cfg.release.output_root,
        cfg.evaluate.output_root,
        cfg.llm.cache_path,
        cfg.harvest.clone.workdir,
    ):
        assert path.is_relative_to(project), path
    assert ADVICE in MISSING_CONFIG_HINT
    assert ADVICE in (ROOT / "prefect.yaml").read_text(encoding="utf-8")
    assert ADVICE in (ROOT / "README.md").read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match=ADVICE):
        load_config(tmp_path / "nowhere" / "classforge.toml", env={})


def test_copied_as_advised_it_harvests_into_the_project(
    make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    repo = make_repo(
        "acme__ledger", [("2025-03-01", {"ledger/book.py": make_class("LedgerBook", methods=6)})], tmp_path / "remote"
    )
    catalogue = [fake_repo("acme/ledger", "2025-02-01", 300, "banking ledger", clone_url=repo.as_uri())]
    config = project / "classforge.toml"
    with FakeGitHub(catalogue, token="t") as api:
        # The one edit a test must make: GitHub is the loopback fake (tests never touch the network).
        config.write_text(
            config.read_text(encoding="utf-8").replace("https://api.github.com", api.base_url), encoding="utf-8"
        )
        monkeypatch.chdir(project)
        result = CliRunner().invoke(app, ["harvest", "-c", "classforge.toml"], env={"GITHUB_TOKEN": "t"})
    assert result.exit_code == 0, result.output
    classes = project / "harvested" / "default" / "classes.jsonl"
    assert [json.loads(line)["class_name"] for line in classes.read_text().splitlines()] == ["LedgerBook"]
    assert (project / ".cache" / "clones").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clone", "remote"]  # nothing above the project


def test_the_example_configuration_keeps_its_own_folder_relative_paths() -> None:
    """examples/classforge.toml is the offline example, relative to examples/; its comment sends a
    user who wants their own configuration to the template instead of copying it."""
    text = (ROOT / "examples" / "classforge.toml").read_text(encoding="utf-8")
    assert ADVICE in text and "Copy this file" not in text
