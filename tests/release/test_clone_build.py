"""A fresh clone, with nothing beside it, builds the example offline.

The repository is cloned (its committed state, as a user gets it) under a 150-character directory
and the same `classforge build` that `make run` runs is started in it, with the network-facing
libraries in offline mode and a Hugging Face cache in tmp. COLUMNS=40 checks that no output line a
user or a log parser reads depends on the terminal's width.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from release_taskgen import make_tasks

REPO = Path(__file__).resolve().parents[2]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    root = tmp_path_factory.mktemp("fresh") / ("x" * 150)
    root.mkdir()
    _git("clone", "-q", str(REPO), str(root / "classforge"), cwd=root)
    assert sorted(p.name for p in root.iterdir()) == ["classforge"]   # nothing beside it
    return root / "classforge"


def _hf_cache_with_classeval(home: Path) -> None:
    """ClassEval as `hf download FudanSELab/ClassEval --repo-type dataset` leaves it (three stand-in tasks)."""
    commit = "f" * 40
    repo = home / "hub" / "datasets--FudanSELab--ClassEval"
    shard = repo / "snapshots" / commit / "data" / "test-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(make_tasks()), shard)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)


def test_example_config_names_nothing_outside_the_repository(clone: Path) -> None:
    from pipeline.config import load_config, map_paths

    text = (clone / "examples" / "classforge.toml").read_text(encoding="utf-8")
    assert "/work/" not in text and "shared/data" not in text
    # Relative paths resolve against the file's folder: every one must land inside the clone.
    config = load_config(clone / "examples" / "classforge.toml", env={})
    seen: list[Path] = []
    map_paths(config, lambda p: seen.append(p) or p, only_set=True)
    assert seen, "the example names its paths"
    outside = [p for p in seen if not p.resolve().is_relative_to(clone.resolve())]
    assert outside == []


def test_fresh_clone_builds_the_example_offline(clone: Path, tmp_path: Path) -> None:
    home = tmp_path / "hf-home"
    _hf_cache_with_classeval(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "PREFECT_", "CLASSFORGE_"))}
    env.update(HF_HOME=str(home), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", COLUMNS="40", NO_PROXY="*",
               PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="60", GIT_TERMINAL_PROMPT="0")
    # `python -m` from the clone imports the clone's code, not this checkout's installed copy.
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "--config", "examples/classforge.toml"],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout.splitlines()
    assert "decontamination checked: classeval (3 classes, Hugging Face cache)" in out
    assert any(line.startswith("release: released 3 task(s) as ") for line in out), proc.stdout[-2000:]
    (release,) = [p for p in (clone / "benchmark" / "releases").iterdir() if not p.name.startswith(".")]
    assert (release / "README.md").is_file() and list((release / "data").glob("*.parquet"))
    assert (clone / "harvested" / "example" / "decontamination.json").is_file()
    # The clone's tracked files are untouched; everything the build wrote is ignored or new.
    assert _git("diff", "--stat", cwd=clone) == ""
