"""write_release: layout, Parquet round trip, datasets loading, manifest hashes, atomicity."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
from release_taskgen import VERSION, as_tasks, make_tasks, release_kwargs

from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.core.errors import ReleaseFormatError
from classforge_bench.pipeline.core.folder_lock import LOCK_NAME
from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.task import CORE_COLUMNS, Task
from classforge_bench.pipeline.formats.release_rows import JSON_COLUMNS_KEY
from classforge_bench.pipeline.formats.release_rows import read_release_rows as read_release_tasks
from classforge_bench.pipeline.formats.release_rows import release_rows as normalize_tasks
from classforge_bench.pipeline.release import writer as writer_mod
from classforge_bench.pipeline.release.errors import ReleaseError, ReleaseExistsError
from classforge_bench.pipeline.release.manifest import SourceRepo
from classforge_bench.pipeline.release.verify import read_front_matter, verify_release
from classforge_bench.pipeline.release.writer import write_release

EXPECTED_FILES = {
    "README.md",
    "manifest.json",
    "tasks.jsonl",
    "funnel.json",
    "stats.json",
    "data/test-00000-of-00001.parquet",
    "plots/funnel.png",
    "plots/domains.png",
    "plots/loc.png",
    "plots/methods.png",
}


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_layout_and_manifest(release: Path) -> None:
    assert release.name == VERSION
    assert _files(release) == EXPECTED_FILES
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["version"] == VERSION
    assert manifest["row_count"] == 3 and manifest["splits"] == {"test": 3}
    assert manifest["pipeline_version"] == "0.1.0-test"
    assert manifest["cutoff"] == "2025-01-01"
    assert manifest["models"]["judges"] == ["j1", "j2", "j3"]
    assert manifest["prompt_versions"] == {"compose": "v1", "tests": "v2"}
    assert manifest["config"]["harvest"]["filters"]["min_methods"] == 5
    # every file but the manifest is hashed, and nothing else is listed
    assert {f["path"] for f in manifest["files"]} == EXPECTED_FILES - {"manifest.json"}
    # sources come from the tasks' own provenance, merged per repository
    sources = {s["repo"]: s for s in manifest["sources"]}
    assert set(sources) == {"alice/repo1", "alice/repo2", "alice/repo3", "bob/tools"}
    assert sources["bob/tools"]["license"] == "Apache-2.0" and sources["bob/tools"]["commits"] == ["b" * 40]
    assert sources["alice/repo2"]["url"] == "https://github.com/alice/repo2.git"
    assert set(manifest["json_columns"]) == {"judge_votes", "metrics", "models", "prompt_versions", "sources"}


def test_card_front_matter(release: Path) -> None:
    text = (release / "README.md").read_text()
    meta = read_front_matter(text)
    assert meta["license"] == "other" and meta["license_link"] == "manifest.json"
    assert meta["task_categories"] == ["text-generation"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["pretty_name"] == f"classforge {VERSION} (composition)"
    assert "code-generation" in meta["tags"]
    assert meta["configs"] == [
        {"config_name": "composition", "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}
    ]
    assert meta["dataset_info"]["config_name"] == "composition"
    assert meta["dataset_info"]["splits"][0]["num_examples"] == 3
    body = text.split("\n---\n", 1)[1]
    for needle in (
        "2025-01-01",
        "3 tasks",
        "1 intra-domain and 2 cross-domain",
        "too_few_methods x20",
        "load_dataset(",
        "4 public repositories",
        "MIT (3), Apache-2.0 (1)",
        "manifest.json",
        "| LOC | 23.33 | 23 | 19 | 28 |",
        "3 of 6 candidate pairs (50.0%); 12 of 40 items (30.0%)",
    ):
        assert needle in body, needle


def test_parquet_round_trip_equals_input(release: Path) -> None:
    expected = normalize_tasks(as_tasks(make_tasks()))
    assert read_release_tasks(release) == expected
    # the JSON Lines copy holds the same records
    lines = [json.loads(line) for line in (release / "tasks.jsonl").read_text().splitlines()]
    assert lines == expected


def test_plain_pyarrow_reader_sees_native_nested_columns(release: Path) -> None:
    table = pq.read_table(release / "data/test-00000-of-00001.parquet")
    assert table.column_names[: len(CORE_COLUMNS)] == list(CORE_COLUMNS)
    row = table.to_pylist()[1]
    method = row["methods_info"][3]
    assert method["method_name"] == "report"
    assert method["dependencies"] == {
        "Standalone": False,
        "lib_dependencies": ["json"],
        "field_dependencies": ["self.items"],
        "method_dependencies": ["total_value"],
    }
    assert row["judge_scores"] == [10, 10, None]  # list<int64>, nulls kept
    assert row["source_class_ids"] == ["cls-2a", "cls-2b"]
    assert row["coverage"] == 98.0
    assert json.loads(row["sources"])[0]["license_spdx"] == "MIT"  # irregular: JSON text
    assert json.loads(table.schema.metadata[JSON_COLUMNS_KEY]) == [
        "judge_votes",
        "metrics",
        "models",
        "prompt_versions",
        "sources",
    ]


def test_datasets_load_dataset_reads_the_folder(release: Path, tmp_path: Path) -> None:
    import datasets

    ds = datasets.load_dataset(str(release), cache_dir=str(tmp_path / "hf"))
    assert list(ds) == ["test"]
    split = ds["test"]
    assert split.num_rows == 3
    expected = normalize_tasks(as_tasks(make_tasks()))
    for got, want in zip(split, expected, strict=True):
        for key in CORE_COLUMNS:
            assert got[key] == want[key], key
        assert got["judge_scores"] == want["judge_scores"]


def test_evaluator_loads_the_release(release: Path) -> None:
    from classforge_bench.pipeline.formats.loader import load_dataset

    loaded = load_dataset(release)
    assert loaded.format == "classforge-release"
    assert [t.task_id for t in loaded.tasks] == ["cf-0001", "cf-0002", "cf-0003"]
    assert loaded.fixes_applied == []
    task = loaded.by_id()["cf-0002"]
    assert task.method("report").dependencies.method_dependencies == ["total_value"]
    assert task.domain2 == "Game Development"


def test_only_task_records_are_written(tmp_path: Path) -> None:
    rows = make_tasks()
    with pytest.raises(ReleaseFormatError, match="task #0: a release is written from Task records, got dict"):
        write_release(rows, output_root=tmp_path / "releases", **release_kwargs())
    with pytest.raises(ReleaseFormatError, match="task #1: .* got SimpleNamespace"):
        write_release(
            [Task.from_row(rows[0]), SimpleNamespace(**rows[1])], output_root=tmp_path / "releases", **release_kwargs()
        )
    assert not (tmp_path / "releases" / VERSION).exists()


def test_core_tasks_publish_one_composition_spelling(write) -> None:
    tasks = make_tasks()
    tasks[1]["composition_type"] += "-domain"  # either published spelling is read ...
    folder = write([Task.from_row(t) for t in tasks])
    rows = read_release_tasks(folder)
    # ... and one is written
    assert [r["composition_type"] for r in rows] == ["intra-domain", "cross-domain", "cross-domain"]
    assert rows[0]["methods_info"][0]["dependencies"]["Standalone"] is False
    stats = json.loads((folder / "stats.json").read_text())
    assert (stats["intra"], stats["cross"]) == (1, 2)


def test_verify_passes_and_detects_tampering(release: Path, release_copy: Path) -> None:
    assert verify_release(release) == []
    data = release_copy / "data/test-00000-of-00001.parquet"
    data.write_bytes(data.read_bytes()[:-1] + b"\0")
    (release_copy / "extra.txt").write_text("not released")
    problems = verify_release(release_copy, load_with_datasets=False)
    assert any("data/test-00000-of-00001.parquet sha256 does not match" in p for p in problems), problems
    assert any("extra.txt is not listed in the manifest" in p for p in problems), problems
    assert all(p.startswith(f"release {VERSION} (composition track):") for p in problems)


def test_verify_detects_row_count_and_card_problems(release_copy: Path) -> None:
    manifest_path = release_copy / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["row_count"] = 4
    manifest_path.write_text(json.dumps(manifest))
    card = release_copy / "README.md"
    card.write_text(card.read_text().replace("split: test", "split: train"))
    problems = verify_release(release_copy)
    assert any("Parquet has 3 rows, the manifest says 4" in p for p in problems), problems
    assert any("tasks.jsonl has 3 tasks, the manifest says 4" in p for p in problems), problems
    assert any("declares no 'test' split" in p for p in problems), problems
    assert any("README.md has" in p and "the manifest says" in p for p in problems), problems  # size differs
    assert any("datasets.load_dataset" in p for p in problems), problems


def test_second_write_of_a_version_is_refused_and_first_kept(write) -> None:
    first = write()
    before = {p: (first / p).read_bytes() for p in _files(first)}
    with pytest.raises(ReleaseExistsError, match=f"release {VERSION} already exists"):
        write(funnel=FunnelReport(stages={}))
    assert {p: (first / p).read_bytes() for p in _files(first)} == before
    assert [p.name for p in first.parent.iterdir() if p.name != LOCK_NAME] == [VERSION]  # no partial folder left


@pytest.mark.parametrize("exc", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_interrupted_write_leaves_nothing(
    write, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exc: BaseException
) -> None:
    def boom(*args, **kwargs):
        raise exc

    # plots come after the Parquet, JSONL and JSON files: the folder is half written when this fires
    monkeypatch.setattr(writer_mod, "write_plots", boom)
    with pytest.raises(type(exc)):
        write()
    root = tmp_path / "releases"
    assert [p for p in root.iterdir() if p.name != LOCK_NAME] == []


def test_a_killed_writers_partial_folder_is_removed_by_the_next_write(write, tmp_path: Path) -> None:
    """SIGKILL skips every cleanup; the next writer, holding the folder's lock, removes the leftover."""
    root = tmp_path / "releases"
    leftover = root / f".2025.05.01{writer_mod.PARTIAL_MARK}abc123"
    (leftover / "data").mkdir(parents=True)
    (leftover / "data" / "test.parquet").write_bytes(b"half")
    unrelated = root / ".notes"
    unrelated.mkdir()
    write()
    assert not leftover.exists() and unrelated.exists()


def test_task_errors_name_the_task(write) -> None:
    tasks = make_tasks()
    tasks[2]["task_id"] = "cf-0001"
    with pytest.raises(ReleaseError, match="task id 'cf-0001' appears twice"):
        write(tasks)
    tasks = make_tasks()
    tasks[0]["solution_code"] = "class Other:\n    pass\n"
    with pytest.raises(ReleaseError, match="task 'cf-0001': solution_code defines no top-level class 'LinkedStack'"):
        write(tasks)
    with pytest.raises(ReleaseError, match="no tasks to publish"):
        write([])


def test_explicit_sources_must_cover_task_provenance(write) -> None:
    with pytest.raises(ReleaseError, match="missing from `sources`.*bob/tools"):
        write(sources=[SourceRepo(repo=f"alice/repo{n}", commits=["x"], license_spdx="MIT") for n in (1, 2, 3)])
    folder = write(
        sources=[
            SourceRepo(repo=r, commits=["abc"], license_spdx="MIT", clone_url="/home/me/src/x")
            for r in ("alice/repo1", "alice/repo2", "alice/repo3", "bob/tools")
        ]
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sources"][0] == {"repo": "alice/repo1", "commits": ["abc"], "license": "MIT", "url": None}


def test_secrets_never_reach_the_manifest(write) -> None:
    from pydantic import SecretStr

    config = Config()
    config.harvest.github.token = SecretStr("ghp_secret")
    folder = write(config=config)
    folder2 = write(
        config={"harvest": {"cutoff": "2025-03-01"}, "hub": {"token": "hf_secret", "api_key_env": "X"}},
        version="2025.06.02",
    )
    text = (folder / "manifest.json").read_text() + (folder2 / "manifest.json").read_text()
    assert "ghp_secret" not in text and "hf_secret" not in text
    manifest2 = json.loads((folder2 / "manifest.json").read_text())
    assert manifest2["config"]["hub"] == {"token": "**********", "api_key_env": "X"}
    assert manifest2["cutoff"] == "2025-03-01"


def test_invalid_version_is_refused_before_anything_is_written(write, tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="not valid"):
        write(version="latest")
    assert not (tmp_path / "releases").exists()


def test_release_files_are_world_readable(release: Path) -> None:
    for path in [release, *release.rglob("*")]:
        assert path.stat().st_mode & 0o004, path


def test_card_options_license_and_hub_repo(write) -> None:
    folder = write(license="mit", hub_repo_id="acme/classforge-bench")
    text = (folder / "README.md").read_text()
    meta = read_front_matter(text)
    assert meta["license"] == "mit" and "license_name" not in meta
    assert 'load_dataset("acme/classforge-bench", revision="2025.06.01", split="test")' in text
    assert verify_release(folder, load_with_datasets=False) == []


def test_release_index_for_refreshes(write, tmp_path: Path) -> None:
    from classforge_bench.pipeline.release.history import release_index, solution_digest

    write(version="2025.06.01")
    newer = make_tasks()[:1]
    newer[0]["task_id"] = "cf-0100"
    newer[0]["source_class_ids"] = ["cls-1a", "cls-new"]
    write(newer, version="2025.06.08")
    index = release_index(tmp_path / "releases")
    assert index.versions == ["2025.06.01", "2025.06.08"]
    assert index.task_ids["cf-0003"] == "2025.06.01" and index.task_ids["cf-0100"] == "2025.06.08"
    assert index.source_class_ids["cls-1a"] == "2025.06.01" and index.source_class_ids["cls-new"] == "2025.06.08"
    assert "cls-2b" in index.source_class_ids and "cls-x" not in index.source_class_ids
    assert index.solution_sha256[solution_digest(make_tasks()[0]["solution_code"])] == "2025.06.01"
    assert release_index(tmp_path / "releases", before="2025.06.08").versions == ["2025.06.01"]


def test_verify_release_cli(release: Path, release_copy: Path) -> None:
    from typer.testing import CliRunner

    from classforge_bench.pipeline.cli import app

    ok = CliRunner().invoke(app, ["verify-release", str(release), "--no-load"])
    assert ok.exit_code == 0 and "release 2025.06.01 (composition track): OK" in ok.output
    (release_copy / "funnel.json").write_text("{}\n")
    bad = CliRunner().invoke(app, ["verify-release", str(release_copy), "--no-load"])
    assert bad.exit_code == 1 and "funnel.json" in bad.output


def test_sources_merge_per_repository_and_keep_the_published_keys(release: Path) -> None:
    from classforge_bench.pipeline.core.task import SourceRef
    from classforge_bench.pipeline.release.manifest import Manifest

    def ref(repo: str, commit: str, lic: str | None, url: str | None) -> SourceRef:
        return SourceRef(
            class_id=f"{repo}-{commit}",
            class_name="C",
            domain="Utils",
            repo=repo,
            clone_url=url,
            path="c.py",
            commit=commit,
            license_spdx=lic,
        )

    merged = SourceRepo.merged(
        [
            ref("z/b", "c2", None, None),
            ref("a/a", "c1", "MIT", None),
            ref("z/b", "c1", "BSD-3-Clause", "https://github.com/z/b.git"),
            ref("z/b", "c2", None, None),
        ]
    )
    assert [(s.repo, s.commits, s.license_spdx, s.clone_url) for s in merged] == [
        ("a/a", ["c1"], "MIT", None),
        ("z/b", ["c2", "c1"], "BSD-3-Clause", "https://github.com/z/b.git"),
    ]
    # A manifest as every release so far wrote it (keys license/url) reads back and dumps unchanged.
    published = json.loads((release / "manifest.json").read_text())
    assert set(published["sources"][0]) == {"repo", "commits", "license", "url"}
    manifest = Manifest.model_validate(published)
    assert {s.repo: s.license_spdx for s in manifest.sources}["bob/tools"] == "Apache-2.0"
    assert manifest.model_dump(mode="json")["sources"] == published["sources"]


def test_status_lines_show_paths_one_way(tmp_path, monkeypatch):
    """Relative to the working directory when inside it, absolute otherwise (make run printed one
    build's release relative and the other's absolute)."""
    from classforge_bench.pipeline.release.writer import shown_path

    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path / "benchmark" / "releases" / "v") == "benchmark/releases/v"
    assert shown_path(Path("built") / "example") == "built/example"
    outside = tmp_path.parent / "elsewhere"
    assert shown_path(outside) == str(outside)
