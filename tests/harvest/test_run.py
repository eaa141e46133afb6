"""The harvest stage end to end over local repositories: snapshot files, dedup, resume, failures."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from classgen import make_class

from classforge_bench.pipeline.config import CloneConfig, DedupConfig, HarvestConfig
from classforge_bench.pipeline.core.records import HarvestedClass, Rejection, RepoRef
from classforge_bench.pipeline.core.store import read_jsonl
from classforge_bench.pipeline.harvest import run as run_mod
from classforge_bench.pipeline.harvest.local_source import SourceError
from classforge_bench.pipeline.harvest.run import run_harvest

CLASSEVAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "classeval" / "ClassEval_data.json"


def config(tmp_path: Path, sources: list[Path], workers: int = 1, **dedup) -> HarvestConfig:
    # One worker (in this process) unless a test asks for more: monkeypatches reach no other process.
    return HarvestConfig(
        cutoff=date(2025, 1, 1),
        snapshot="snap",
        output_root=tmp_path / "harvested",
        local_sources=[str(p) for p in sources],
        clone=CloneConfig(workdir=tmp_path / "clones"),
        dedup=DedupConfig(**dedup),
        workers=workers,
    )


def outputs(cfg: HarvestConfig):
    snap = cfg.output_root / cfg.snapshot
    classes = list(read_jsonl(snap / "classes.jsonl", HarvestedClass))
    rejects = list(read_jsonl(snap / "rejects.jsonl", Rejection))
    repos = list(read_jsonl(snap / "repos.jsonl", RepoRef))
    funnel = json.loads((snap / "funnel.json").read_text())
    return classes, rejects, repos, funnel


def test_snapshot_files_dedup_and_funnel(make_repo, tmp_path):
    base = make_class("InventoryBook", methods=7)
    # a near copy: two renamed identifiers and an extra field
    near = (
        base.replace("self.total = 0", "self.total = 0\n        self.label = 'copy'")
        .replace("value", "amount")
        .replace("self.items", "self.entries")
    )
    root = tmp_path / "repos"
    make_repo("alpha__one", [("2025-02-01", {"inv.py": base})], root)
    make_repo(
        "beta__two",
        [
            (
                "2025-02-02",
                {
                    "inv_copy.py": base.replace("    def __init__", "    # reformatted copy\n    def __init__"),
                    "other.py": near,
                },
            )
        ],
        root,
    )
    cfg = config(tmp_path, [root])
    summary = run_harvest(cfg)
    classes, rejects, repos, funnel = outputs(cfg)
    assert [c.repo for c in classes] == ["alpha/one"]
    assert {r.reason for r in rejects if r.stage == "dedup"} == {"exact-duplicate", "near-duplicate"}
    assert [r.full_name for r in repos] == ["alpha/one", "beta/two"]
    assert funnel["stages"]["dedup"] == {"seen": 3, "kept": 1, "dropped": {"exact-duplicate": 1, "near-duplicate": 1}}
    assert funnel["stages"]["clone"]["kept"] == 2
    assert summary.classes == 1 and summary.rejects == len(rejects)
    assert classes[0].domains, "every kept class gets a first domain label"


def test_refresh_dedups_against_earlier_snapshot(make_repo, tmp_path):
    root = tmp_path / "repos"
    make_repo("alpha__one", [("2025-02-01", {"inv.py": make_class("Stock", methods=6)})], root)
    first = config(tmp_path, [root])
    assert run_harvest(first).classes == 1
    second = first.model_copy(update={"snapshot": "snap2"})
    summary = run_harvest(second)
    assert summary.classes == 0
    _, rejects, _, _ = outputs(second)
    assert [r.reason for r in rejects] == ["earlier-harvest"]


@pytest.mark.skipif(not CLASSEVAL.exists(), reason="ClassEval data not beside the project")
def test_classeval_copy_is_dropped_as_reference_corpus(make_repo, tmp_path):
    task = json.loads(CLASSEVAL.read_text())[0]
    lightly_edited = task["solution_code"].replace("    def ", "    # adapted\n    def ", 1)
    root = tmp_path / "repos"
    make_repo("gamma__three", [("2025-03-01", {"copied.py": lightly_edited})], root)
    cfg = config(tmp_path, [root], reference_corpora=[CLASSEVAL])
    run_harvest(cfg)
    classes, rejects, _, _ = outputs(cfg)
    assert classes == []
    assert [r.reason for r in rejects if r.stage == "dedup"] == ["reference-corpus"]
    assert task["task_id"] in next(r.detail for r in rejects if r.stage == "dedup")


def test_second_run_redoes_nothing_and_writes_identical_files(make_repo, tmp_path, monkeypatch):
    root = tmp_path / "repos"
    make_repo("alpha__one", [("2025-02-01", {"a.py": make_class("Alpha", methods=6)})], root)
    make_repo("beta__two", [("2025-02-01", {"b.py": make_class("Beta", methods=6, imports="import math\n")})], root)
    cfg = config(tmp_path, [root])
    run_harvest(cfg)
    snap = cfg.output_root / cfg.snapshot
    before = {p.name: p.read_bytes() for p in snap.glob("*.json*")}

    def no_clone(*a, **k):
        raise AssertionError("a finished repository was cloned again")

    monkeypatch.setattr(run_mod, "clone_for_scan", no_clone)
    summary = run_harvest(cfg)
    assert summary.reused_shards == 2
    assert {p.name: p.read_bytes() for p in snap.glob("*.json*")} == before


def test_new_commit_makes_only_that_repository_rescan(make_repo, tmp_path):
    root = tmp_path / "repos"
    make_repo("alpha__one", [("2025-02-01", {"a.py": make_class("Alpha", methods=6)})], root)
    make_repo("beta__two", [("2025-02-01", {"b.py": make_class("Beta", methods=6)})], root)
    cfg = config(tmp_path, [root])
    run_harvest(cfg)
    make_repo(
        "beta__two",
        [
            ("2025-02-01", {"b.py": make_class("Beta", methods=6)}),
            ("2025-04-01", {"c.py": make_class("Gamma", methods=6, imports="import math\n")}),
        ],
        root,
    )
    summary = run_harvest(cfg)
    assert summary.reused_shards == 1
    assert sorted(c.class_name for c in outputs(cfg)[0]) == ["Alpha", "Beta", "Gamma"]


def test_unreachable_and_empty_repositories_are_recorded_not_fatal(make_repo, tmp_path):
    import subprocess

    root = tmp_path / "repos"
    make_repo("alpha__one", [("2025-02-01", {"a.py": make_class("Alpha", methods=6)})], root)
    empty = root / "empty__repo"
    empty.mkdir()
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    gone = make_repo("gone__repo", [("2025-02-01", {"g.py": "x = 1\n"})], tmp_path / "elsewhere")
    cfg = config(tmp_path, [root, gone])
    refs = run_mod.gather_repos(cfg)
    import shutil

    shutil.rmtree(gone)
    snap = cfg.output_root / cfg.snapshot
    for ref in refs:
        run_mod.harvest_repo(ref, cfg, snap)
    run_mod.assemble_snapshot(cfg, refs, run_mod.build_dedup_index(cfg), snap)
    classes, rejects, _, funnel = outputs(cfg)
    assert [c.class_name for c in classes] == ["Alpha"]
    assert {r.item_id: r.reason for r in rejects if r.stage == "clone"} == {
        "empty/repo": "empty-repository",
        "gone/repo": "unreachable",
    }
    assert funnel["stages"]["clone"]["dropped"] == {"empty-repository": 1, "unreachable": 1}


def test_interrupted_assembly_leaves_no_half_written_file(make_repo, tmp_path, monkeypatch):
    root = tmp_path / "repos"
    make_repo("alpha__one", [("2025-02-01", {"a.py": make_class("Alpha", methods=6)})], root)
    make_repo("beta__two", [("2025-02-01", {"b.py": make_class("Beta", methods=6, imports="import math\n")})], root)
    cfg = config(tmp_path, [root])
    run_harvest(cfg)
    snap = cfg.output_root / cfg.snapshot
    before = (snap / "classes.jsonl").read_bytes()
    calls = {"n": 0}
    real_check = run_mod.DedupIndex.check_and_add

    def crash_on_second(self, source, origin, class_id=None):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real_check(self, source, origin, class_id)

    monkeypatch.setattr(run_mod.DedupIndex, "check_and_add", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        run_harvest(cfg)
    assert (snap / "classes.jsonl").read_bytes() == before
    assert not list(snap.glob(".*.tmp"))


def test_missing_local_source_is_a_clear_error(tmp_path):
    cfg = config(tmp_path, [tmp_path / "nope"])
    with pytest.raises(SourceError, match="does not exist"):
        run_harvest(cfg)


def test_github_search_feeds_the_harvest_end_to_end(make_repo, tmp_path):
    """Search a loopback GitHub, clone what it returns (local fixtures), record queries and domains."""
    from fakes.github_api import FakeGitHub, fake_repo

    from classforge_bench.pipeline.config import GitHubConfig
    from classforge_bench.pipeline.harvest.clone import clone_url_for
    from classforge_bench.pipeline.harvest.github_source import search_github

    repo = make_repo("acme__cartkit", [("2025-03-01", {"cart.py": make_class("ShoppingCart", methods=6)})])
    catalogue = [
        fake_repo(
            "acme/cartkit",
            "2025-02-01",
            250,
            description="a shopping cart and payment toolkit",
            clone_url=clone_url_for(str(repo)),
        )
    ]
    with FakeGitHub(catalogue) as api:
        cfg = config(tmp_path, []).model_copy(update={"github": GitHubConfig(enabled=True, base_url=api.base_url)})
        calls = []

        def search():
            calls.append(1)
            return search_github(cfg.github, cfg.cutoff, sleep=lambda s: None, today=date(2025, 6, 1))

        summary = run_harvest(cfg, github_search=search, today=date(2025, 6, 1))
        again = run_harvest(cfg, github_search=search, today=date(2025, 6, 1))
    assert calls == [1], "the same day's search is reused on resume"
    classes, _, repos, funnel = outputs(cfg)
    assert summary.classes == again.classes == 1
    assert [r.full_name for r in repos] == ["acme/cartkit"] and repos[0].stars == 250
    assert "Finance & E-commerce" in repos[0].domains
    assert classes[0].domains[0] == "Finance & E-commerce"
    assert funnel["stages"]["github-search"]["kept"] == 1
    queries = (cfg.output_root / cfg.snapshot / "github_queries.jsonl").read_text().splitlines()
    assert len(queries) >= 33 and all("created:" in json.loads(q)["query"] for q in queries)


def test_oversized_clone_is_rejected_and_removed(make_repo, tmp_path):
    root = tmp_path / "repos"
    make_repo(
        "big__repo",
        [("2025-02-01", {"a.py": make_class("Big", methods=6), "blob.bin": bytes(range(256)) * 8000})],
        root,
    )
    cfg = config(tmp_path, [root]).model_copy(
        update={"clone": CloneConfig(workdir=tmp_path / "clones", max_size_mb=0.5)}
    )
    summary = run_harvest(cfg)
    _, rejects, _, funnel = outputs(cfg)
    assert summary.classes == 0
    assert [(r.item_id, r.reason) for r in rejects] == [("big/repo", "too-large")]
    assert funnel["stages"]["clone"]["dropped"] == {"too-large": 1}
    assert not any((tmp_path / "clones").iterdir()), "the oversized clone is not left on disk"


def test_submodules_are_not_followed(make_repo, tmp_path):
    import subprocess

    inner = make_repo(
        "inner__lib", [("2025-02-01", {"lib.py": make_class("InnerThing", methods=6)})], tmp_path / "elsewhere"
    )
    outer = make_repo(
        "outer__app",
        [("2025-02-01", {"app.py": make_class("OuterThing", methods=6, imports="import math\n")})],
        tmp_path / "repos",
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_AUTHOR_DATE": "2025-03-01T00:00:00+00:00",
        "GIT_COMMITTER_DATE": "2025-03-01T00:00:00+00:00",
    }
    subprocess.run(
        ["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "vendor_lib"],
        cwd=outer,
        check=True,
        env=env,
        capture_output=True,
    )
    subprocess.run(["git", "commit", "-qm", "add submodule"], cwd=outer, check=True, env=env)
    cfg = config(tmp_path, [tmp_path / "repos"])
    run_harvest(cfg)
    classes, _, _, _ = outputs(cfg)
    assert [c.class_name for c in classes] == ["OuterThing"], "submodule code belongs to another repository"


def test_two_worker_processes_write_what_one_writes(make_repo, tmp_path):
    root = tmp_path / "repos"
    for i in range(4):
        make_repo(
            f"team{i}__lib",
            [
                ("2025-02-01", {f"lib/m{i}.py": make_class(f"Thing{i}", methods=6 + i)}),
                ("2025-03-01", {f"lib/n{i}.py": make_class(f"Other{i}", methods=3)}),
            ],
            root,
        )
    written = {}
    for workers in (1, 2):
        cfg = config(tmp_path / f"w{workers}", [root], workers=workers)
        summary = run_harvest(cfg)
        snap = cfg.output_root / cfg.snapshot
        written[workers] = {p.name: p.read_bytes() for p in snap.glob("*.json*")}
        assert summary.classes == 4 and summary.repos == 4
    assert written[1] == written[2]
