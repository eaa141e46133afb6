"""The funnel's one order (`reasons.PIPELINE_ORDER`) is the order the stages run in."""

from __future__ import annotations

from classgen import make_class
from scan_kit import scan

from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Funnel


def _is_subsequence(part: tuple[str, ...] | list[str], whole: tuple[str, ...]) -> bool:
    it = iter(whole)
    return all(stage in it for stage in part)


def test_a_scan_asks_its_stages_in_pipeline_order(make_repo, tmp_path, monkeypatch):
    """A kept class passes every stage of the scan; the order they are first asked in is the funnel's."""
    asked: list[str] = []
    record = Funnel.record

    def watched(self, stage, item_id, verdict):
        if stage not in asked:
            asked.append(stage)
        return record(self, stage, item_id, verdict)

    monkeypatch.setattr(Funnel, "record", watched)
    repo = make_repo("acme__order", [("2025-02-03T10:00:00", {"shop/cart.py": make_class("Cart", methods=6)})])
    shard = scan(repo, tmp_path)
    assert [c.class_name for c in shard.classes] == ["Cart"]
    assert R.STRUCTURE in asked and R.IMPORTS in asked and R.PROVENANCE in asked
    assert asked == [s for s in R.PIPELINE_ORDER if s in asked]
    assert list(shard.funnel.stages) == asked


def test_each_tracks_declared_order_is_the_pipeline_order():
    assert _is_subsequence(R.HARVEST_STAGES, R.PIPELINE_ORDER)
    assert _is_subsequence(R.STAGES, R.PIPELINE_ORDER)
    assert _is_subsequence(R.REAL_SOURCE_STAGES, R.PIPELINE_ORDER)
    assert len(set(R.PIPELINE_ORDER)) == len(R.PIPELINE_ORDER)
