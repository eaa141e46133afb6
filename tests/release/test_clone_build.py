"""A fresh clone, with nothing beside it, builds the example offline.

The repository is cloned (its committed state, as a user gets it) under a 150-character directory
and `make run` itself is started in it, with the network-facing libraries in offline mode and a
Hugging Face cache in tmp (and the plus generator's virtualenv reused from this checkout, as the
interpreter is: no download). COLUMNS=40 checks that no output line a
user or a log parser reads depends on the terminal's width.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from release_taskgen import make_tasks

REPO = Path(__file__).resolve().parents[2]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    root = tmp_path_factory.mktemp("fresh") / ("x" * 150)
    root.mkdir()
    _git("clone", "-q", str(REPO), str(root / "classforge"), cwd=root)
    assert sorted(p.name for p in root.iterdir()) == ["classforge"]  # nothing beside it
    return root / "classforge"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _fresh_clone(tmp_path_factory)


def _offline_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "hf-home"
    _hf_cache_with_classeval(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "PREFECT_", "CLASSFORGE_", "VIRTUAL_ENV"))}
    env.update(
        HF_HOME=str(home),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        COLUMNS="40",
        NO_PROXY="*",
        PREFECT_HOME=str(tmp_path / "prefect"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"],
        GIT_TERMINAL_PROMPT="0",
        PIP_NO_INDEX="1",
    )
    return env


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
    from classforge_bench.pipeline.config import load_config, map_paths

    text = (clone / "examples" / "classforge.toml").read_text(encoding="utf-8")
    assert "/work/" not in text and "shared/data" not in text
    # Relative paths resolve against the file's folder: every one must land inside the clone.
    config = load_config(clone / "examples" / "classforge.toml", env={})
    seen: list[Path] = []
    map_paths(config, lambda p: seen.append(p) or p, only_set=True)
    assert seen, "the example names its paths"
    outside = [p for p in seen if not p.resolve().is_relative_to(clone.resolve())]
    assert outside == []


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_on_a_fresh_clone_offline(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """`make run` itself, as a user types it, in a clone with nothing beside it. Setup reuses this
    interpreter's packages (CLASSFORGE_REUSE_PYTHON, no download or install); everything else is
    the clone's own Makefile, setup script, code and example. The real-source build beside it
    (`REAL_SOURCE=0` leaves it out here) is built end to end, at the real gate, by
    tests/flows/test_real_source_build.py: twice would cost CI half an hour of test generation."""
    plus_python = REPO / ".venv-plus" / "bin" / "python"
    if not plus_python.exists():
        pytest.skip(
            "the example's plus tier needs the plus generator's virtualenv (.venv-plus): scripts/setup.sh makes it"
        )
    fresh = _fresh_clone(tmp_path_factory)
    env = _offline_env(tmp_path) | {
        "CLASSFORGE_REUSE_PYTHON": sys.executable,
        "CLASSFORGE_REUSE_PLUS_PYTHON": str(plus_python),
        "REAL_SOURCE": "0",
    }
    started = time.monotonic()
    proc = subprocess.run(["make", "run"], cwd=fresh, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - started
    print(f"make run on a fresh clone: exit {proc.returncode} in {seconds:.1f} s")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "setup: creating .venv from" in proc.stdout
    (release,) = [p for p in (fresh / "benchmark" / "releases").iterdir() if not p.name.startswith(".")]
    tasks = [line for line in (release / "tasks.jsonl").read_text().splitlines() if line.strip()]
    assert len(tasks) == 3
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["version"] == release.name and manifest["row_count"] == 3
    funnel = json.loads((release / "funnel.json").read_text())
    assert funnel["stages"]["compose"]["seen"] == 3 and funnel["stages"]["dedup"]["kept"] > 0
    assert f"release: released 3 task(s) as {release.name}" in proc.stdout
    # Decontamination used what is on the machine (ClassEval from the Hugging Face cache) and said so.
    assert (
        "decontamination checked: classeval (3 classes, Hugging Face cache); earlier releases (none yet "
        "under benchmark/releases)"
    ) in proc.stdout.splitlines(), proc.stdout[-2000:]
    assert (release / "README.md").is_file() and list((release / "data").glob("*.parquet"))
    # The plus tier is on in the example: every released task carries a plus suite, and the card and
    # the report count its tests and the mutation score with and without them.
    suites = [json.loads(line).get("plus") for line in tasks]
    assert all(isinstance(s, dict) and s.get("generator", "").startswith("pynguin") for s in suites), suites
    reported = subprocess.run(
        [
            str(fresh / ".venv" / "bin" / "python"),
            "-m",
            "classforge_bench.pipeline.cli",
            "report",
            str(release),
            "--out",
            str(tmp_path / "report"),
        ],
        cwd=fresh,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert reported.returncode == 0, reported.stderr[-2000:]
    for page in (release / "README.md", tmp_path / "report" / "report.md"):
        text = page.read_text(encoding="utf-8")
        assert "Plus tests, hidden, no LLM (3 of 3 tasks)" in text and "Mutation score, % (3 of 3 tasks)" in text, page
    print(
        "plus tests per task:",
        [s["tests"] for s in suites],
        "mutation with plus:",
        [s.get("mutation_score") for s in suites],
    )
    assert (fresh / "harvested" / "example" / "decontamination.json").is_file()
    assert not (fresh / "built" / "real-source").exists()  # REAL_SOURCE=0 left it out
    # The clone's tracked files are untouched; everything the build wrote is ignored or new.
    assert _git("status", "--porcelain", "--untracked-files=no", cwd=fresh) == ""

    # Again: the harvest checks the new release and still keeps the classes it was built from.
    again = subprocess.run(["make", "run"], cwd=fresh, env=env, capture_output=True, text=True, timeout=1800)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    harvest_line = [line for line in proc.stdout.splitlines() if line.startswith("harvest: ")]
    assert harvest_line and harvest_line == [line for line in again.stdout.splitlines() if line.startswith("harvest: ")]
    assert f"release {release.name} (3 solution classes)" in again.stdout
    assert "release: nothing new to release: all 3 task(s) are in release" in again.stdout, again.stdout[-2000:]


def test_the_example_builds_do_not_see_each_others_snapshots() -> None:
    """`make run` builds both examples at once; a harvest dedups against every finished snapshot
    under its root, so a shared root would make one build's result depend on the other's timing."""
    from classforge_bench.pipeline.config import load_config

    configs = [load_config(REPO / "examples" / name, env={}) for name in ("classforge.toml", "real-source.toml")]
    snapshots = [Path(c.harvest.output_root).resolve() / c.harvest.snapshot for c in configs]
    assert len(set(snapshots)) == 2
    (example, real), (example_root, real_root) = snapshots, [s.parent for s in snapshots]
    assert real.parent != example_root and example.parent != real_root
