"""Decontamination against the project's own earlier releases: a class that an earlier release
already published, renamed and reformatted inside a composed solution, is dropped by the next
harvest as `earlier-release`, and the snapshot says which releases it checked (issue 13)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from classgen import make_class

from classforge_bench.pipeline.config import CloneConfig, DedupConfig, HarvestConfig
from classforge_bench.pipeline.core.records import HarvestedClass, Rejection
from classforge_bench.pipeline.core.store import read_jsonl
from classforge_bench.pipeline.harvest.run import run_harvest
from classforge_bench.pipeline.release.history import release_solutions

VERSION = "2025.06.01"


def _config(tmp_path: Path, sources: list[Path]) -> HarvestConfig:
    return HarvestConfig(
        cutoff=date(2025, 1, 1),
        snapshot="snap",
        output_root=tmp_path / "harvested",
        local_sources=[str(p) for p in sources],
        clone=CloneConfig(workdir=tmp_path / "clones"),
        dedup=DedupConfig(),
        workers=1,
    )


def _composed(first: str, second: str) -> str:
    """What a release's solution looks like: `first` renamed and reformatted, `second`'s methods
    merged into the same class."""
    renamed = (
        first.replace("class Stock:", "class StockLedger:")
        .replace("self.items", "self.records")
        .replace("value", "amount")
        .replace("key", "ident")
        .replace("    def ", "\n    # merged step\n    def ")
    )
    second_methods = second.split("        self.total = 0\n", 1)[1]
    return renamed.rstrip() + "\n\n" + second_methods


def _release(root: Path, solution: str, task_id: str = "classforge_0001", built_from: list[str] = ()) -> None:
    folder = root / VERSION
    folder.mkdir(parents=True)
    task = {"task_id": task_id, "solution_code": solution, "source_class_ids": list(built_from)}
    (folder / "tasks.jsonl").write_text(json.dumps(task) + "\n")


def _releases(root: Path) -> dict:
    return {str(root): release_solutions(root)}


def _harvest(tmp_path: Path, make_repo, releases: Path):
    root = tmp_path / "repos"
    make_repo(
        "alpha__one",
        [("2025-07-01", {"stock.py": make_class("Stock", methods=7), "fresh.py": make_class("Unrelated", methods=6)})],
        root,
    )
    cfg = _config(tmp_path, [root])
    summary = run_harvest(cfg, releases=_releases(releases))
    snap = cfg.output_root / cfg.snapshot
    classes = [c.class_name for c in read_jsonl(snap / "classes.jsonl", HarvestedClass)]
    rejects = [r for r in read_jsonl(snap / "rejects.jsonl", Rejection) if r.stage == "dedup"]
    corpora = json.loads((snap / "decontamination.json").read_text())
    return summary, classes, rejects, corpora


def test_a_near_copy_inside_a_released_solution_is_dropped_as_earlier_release(make_repo, tmp_path):
    releases = tmp_path / "releases"
    _release(releases, _composed(make_class("Stock", methods=7), make_class("Partner", methods=6)))
    summary, classes, rejects, corpora = _harvest(tmp_path, make_repo, releases)
    assert classes == ["Unrelated"]
    (reject,) = rejects
    assert reject.reason == "earlier-release" and reject.item_id.endswith("::Stock")
    assert f"release {VERSION} task classforge_0001 (StockLedger)" in reject.detail, reject.detail
    assert summary.funnel.stages["dedup"].dropped == {"earlier-release": 1}
    assert f"release {VERSION} (1 solution classes)" in corpora["checked"]


def test_an_exact_copy_is_dropped_and_no_release_means_nothing_dropped(make_repo, tmp_path):
    releases = tmp_path / "releases"
    _release(releases, make_class("Stock", methods=7))
    _, classes, rejects, _ = _harvest(tmp_path, make_repo, releases)
    assert classes == ["Unrelated"] and [r.reason for r in rejects] == ["earlier-release"]

    empty = tmp_path / "again"
    empty.mkdir()
    _, classes, rejects, corpora = _harvest(empty, make_repo, empty / "releases")
    assert sorted(classes) == ["Stock", "Unrelated"] and rejects == []
    assert f"earlier releases (none yet under {empty / 'releases'})" in corpora["checked"]


def test_an_unrelated_released_solution_drops_nothing(make_repo, tmp_path):
    releases = tmp_path / "releases"
    _release(
        releases,
        _composed(make_class("Stock", methods=7), make_class("Partner", methods=6)).replace(
            "class StockLedger", "class Elsewhere"
        ),
    )
    root = tmp_path / "repos"
    make_repo(
        "beta__two",
        [("2025-07-01", {"a.py": make_class("Ledger", methods=7), "b.py": make_class("Partner2", methods=6)})],
        root,
    )
    cfg = _config(tmp_path, [root])
    assert run_harvest(cfg, releases=_releases(releases)).classes == 2


def test_the_snapshot_a_release_was_built_from_harvests_the_same_again(make_repo, tmp_path):
    """A re-run of the same harvest keeps the classes its own release used (publishing leaves that
    release's tasks out, as it does for any class with the same normalised source); a renamed copy
    elsewhere is still an earlier-release copy."""
    empty = tmp_path / "releases"
    _harvest(tmp_path, make_repo, empty)
    snap = tmp_path / "harvested" / "snap"
    stock_id = next(c.id for c in read_jsonl(snap / "classes.jsonl", HarvestedClass) if c.class_name == "Stock")
    _release(empty, _composed(make_class("Stock", methods=7), make_class("Partner", methods=6)), built_from=[stock_id])
    cfg = _config(tmp_path, [tmp_path / "repos"])
    assert run_harvest(cfg, releases=_releases(empty)).classes == 2

    other = tmp_path / "elsewhere"
    other.mkdir()
    make_repo(
        "gamma__three",
        [("2025-08-01", {"copy.py": make_class("Stock", methods=7).replace("self.items", "self.stash")})],
        other / "repos",
    )
    again = _config(other, [other / "repos"])
    run_harvest(again, releases=_releases(empty))
    rejects = list(read_jsonl(again.output_root / again.snapshot / "rejects.jsonl", Rejection))
    assert [r.reason for r in rejects if r.stage == "dedup"] == ["earlier-release"]
