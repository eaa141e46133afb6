"""Datasets by name (`classeval`, `hf:ORG/NAME@REV`) through the Hugging Face cache, and by file.

The Hub is never contacted: each test builds a Hugging Face cache in tmp (the layout
huggingface_hub writes: datasets--ORG--NAME/refs/<rev> -> commit, snapshots/<commit>/...) and sets
offline mode, exactly as a user who downloaded once and then works without network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from release_taskgen import VERSION, make_tasks

from classforge_bench.pipeline.formats.hub import CLASSEVAL_REPO, parse_spec, resolve_dataset
from classforge_bench.pipeline.formats.loader import DatasetError, load_dataset

COMMIT = "0123456789abcdef0123456789abcdef01234567"
CLASSEVAL_JSON = Path("/work/shared/data/classeval/ClassEval_data.json")  # cross-check only, when present


def cached_dataset(
    cache: Path, repo_id: str, files: dict[str, Path | bytes], refs: tuple[str, ...] = ("main",)
) -> Path:
    """Put a dataset snapshot into a huggingface_hub cache folder; returns the snapshot folder."""
    org, name = repo_id.split("/")
    repo = cache / f"datasets--{org}--{name}"
    snap = repo / "snapshots" / COMMIT
    for rel, content in files.items():
        dest = snap / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, dest)
        else:
            dest.write_bytes(content)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    for ref in refs:
        (repo / "refs" / ref).write_text(COMMIT)
    return snap


def parquet_of(records: list[dict], path: Path) -> Path:
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)


def test_spec_parsing() -> None:
    assert parse_spec("classeval") == (CLASSEVAL_REPO, None) and parse_spec("ClassEval") == (CLASSEVAL_REPO, None)
    assert parse_spec("hf:acme/bench") == ("acme/bench", None)
    assert parse_spec("hf:acme/bench@2025.06.01") == ("acme/bench", "2025.06.01")
    assert parse_spec("data/tasks.json") is None and parse_spec("classeval.json") is None
    for bad in ("hf:bench", "hf:acme/bench@", "hf:/x", "hf:acme/bench@a@b"):
        with pytest.raises(DatasetError, match="expected hf:ORG/NAME"):
            parse_spec(bad)


def test_released_version_loads_from_the_cache_by_tag(release: Path, tmp_path: Path, offline: None) -> None:
    files = {str(p.relative_to(release)): p for p in release.rglob("*") if p.is_file()}
    cached_dataset(tmp_path / "hub", "acme/bench", files, refs=("main", VERSION))
    folder = resolve_dataset(f"hf:acme/bench@{VERSION}", cache_dir=tmp_path / "hub")
    loaded = load_dataset(folder)
    assert loaded.format == "classforge-release"
    assert [t.task_id for t in loaded.tasks] == [t["task_id"] for t in make_tasks()]
    with pytest.raises(DatasetError, match="not in the local Hugging Face cache") as err:
        resolve_dataset("hf:acme/bench@2099.01.01", cache_dir=tmp_path / "hub")
    assert "\n" not in str(err.value) and "--revision 2099.01.01" in str(err.value)


def test_classeval_by_name_needs_the_cache_when_offline(tmp_path: Path, offline: None) -> None:
    with pytest.raises(DatasetError) as err:
        resolve_dataset("classeval", cache_dir=tmp_path / "empty")
    message = str(err.value)
    assert "\n" not in message and "not in the local Hugging Face cache" in message
    assert f"hf download {CLASSEVAL_REPO} --repo-type dataset" in message and "--dataset PATH" in message


def test_a_snapshot_without_parquet_is_refused(tmp_path: Path, offline: None) -> None:
    cached_dataset(tmp_path / "hub", "acme/scripts", {"README.md": b"# a loading-script dataset\n"})
    with pytest.raises(DatasetError, match="no Parquet files under data/"):
        resolve_dataset("hf:acme/scripts", cache_dir=tmp_path / "hub")


def test_local_paths_pass_through_and_parquet_files_load(tmp_path: Path) -> None:
    records = make_tasks()
    file = parquet_of(records, tmp_path / "tasks.parquet")
    assert resolve_dataset(str(file)) == file
    loaded = load_dataset(file)
    jsonl = tmp_path / "tasks.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    from_jsonl = load_dataset(jsonl)
    assert loaded.format == from_jsonl.format and len(loaded.tasks) == len(records)
    assert [t.model_dump() for t in loaded.tasks] == [t.model_dump() for t in from_jsonl.tasks]
    (tmp_path / "tasks.csv").write_text("task_id\n")
    with pytest.raises(DatasetError, match=r"\.parquet"):
        load_dataset(tmp_path / "tasks.csv")


@pytest.mark.skipif(
    not CLASSEVAL_JSON.is_file(), reason="cross-check with the ClassEval release (not in every checkout)"
)
def test_classeval_published_parquet_loads_like_its_json(tmp_path: Path, offline: None) -> None:
    """ClassEval's Hub copy is its JSON pushed as Parquet (structs for methods_info): same tasks, same format."""
    from datasets import Dataset

    records = json.loads(CLASSEVAL_JSON.read_text(encoding="utf-8"))
    shard = tmp_path / "test-00000-of-00001.parquet"
    Dataset.from_list(records).to_parquet(str(shard))
    cached_dataset(tmp_path / "hub", CLASSEVAL_REPO, {"data/test-00000-of-00001.parquet": shard})
    by_name = load_dataset(resolve_dataset("classeval", cache_dir=tmp_path / "hub"))
    by_file = load_dataset(CLASSEVAL_JSON)
    assert by_name.format == "classeval" and len(by_name.tasks) == 100
    assert [t.model_dump() for t in by_name.tasks] == [t.model_dump() for t in by_file.tasks]


def _cli(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(home), HF_HUB_OFFLINE="1", COLUMNS="40")
    classforge = Path(sys.executable).with_name("classforge")
    return subprocess.run([str(classforge), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_cli_classeval_offline_without_cache_is_one_line(tmp_path: Path) -> None:
    proc = _cli(["evaluate", "--dataset", "classeval", "--model", "reference"], tmp_path / "hf-home", tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(
        "error: --dataset classeval (FudanSELab/ClassEval on the Hugging Face Hub): not in the local"
    )


def test_cli_evaluates_classeval_from_the_cache_offline(tmp_path: Path) -> None:
    """HF_HOME and HF_HUB_OFFLINE as a user sets them: the installed command finds the cached snapshot."""
    home = tmp_path / "hf-home"
    shard = parquet_of(make_tasks()[:1], tmp_path / "shard.parquet")
    cached_dataset(home / "hub", CLASSEVAL_REPO, {"data/test-00000-of-00001.parquet": shard})
    proc = _cli(
        ["evaluate", "--dataset", "classeval", "--model", "reference", "--n", "1", "--out", str(tmp_path / "results")],
        home,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / "results").iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    assert results["dataset"]["path"] == str(home / "hub" / f"datasets--FudanSELab--ClassEval/snapshots/{COMMIT}")
    samples = [json.loads((run_dir / name).read_text()) for name in results["sample_files"]]
    assert [s["score"]["bucket"] for s in samples] == ["completed"]


def test_decontamination_uses_classeval_only_when_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    """The build checks against ClassEval from the local cache when it is there, and says so when it is not."""
    from classforge_bench.pipeline.config import DedupConfig, HarvestConfig
    from classforge_bench.pipeline.core.funnel import KEEP
    from classforge_bench.pipeline.harvest.dedup import Origin
    from classforge_bench.pipeline.harvest.run import build_dedup_index

    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    cfg = HarvestConfig(output_root=tmp_path / "harvested", dedup=DedupConfig(reference_datasets=["classeval"]))
    absent = build_dedup_index(cfg)
    assert absent.corpora == {
        "checked": [],
        "not_checked": ["classeval (not in the local Hugging Face cache; download it once to check against it)"],
    }

    tasks = make_tasks()
    shard = parquet_of(tasks, tmp_path / "shard.parquet")
    cached_dataset(tmp_path / "hub", CLASSEVAL_REPO, {"data/test-00000-of-00001.parquet": shard})
    present = build_dedup_index(cfg)
    assert present.corpora == {"checked": ["classeval (3 classes, Hugging Face cache)"], "not_checked": []}
    copied = tasks[0]["solution_code"]
    assert present.check_and_add(copied, Origin("harvest", "someone/copied:stack.py::LinkedStack")) != KEEP
