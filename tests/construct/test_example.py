"""The offline example: harvest the bundled corpus, replay the shipped response cache, get the three
hand-written tasks through the real sandbox gate, with no model and no network."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from classforge_bench.pipeline.construct.run import run_build
from classforge_bench.pipeline.core import reasons as R

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "record_example_cache.py"
CACHE = ROOT / "examples" / "llm_cache.jsonl"


def _script():
    spec = importlib.util.spec_from_file_location("record_example_cache", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # its dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_recording_script_says_the_responses_are_hand_written():
    doc = _script().__doc__
    assert "PREPARED BY HAND" in doc and "NO LANGUAGE MODEL PRODUCED THEM" in doc
    assert "Pointing the build at a real endpoint" in doc


@pytest.mark.slow
def test_example_build_replays_offline(tmp_path, monkeypatch):
    if not CACHE.exists():
        pytest.skip("examples/llm_cache.jsonl not recorded yet (run examples/record_example_cache.py)")
    monkeypatch.chdir(tmp_path)  # paths resolve against the configuration file, not the working directory
    from classforge_bench.pipeline.harvest.run import run_harvest

    config = _script().load_example_config(ROOT / "examples" / "classforge.toml")
    config.harvest.output_root = tmp_path / "harvested"
    config.harvest.clone.workdir = tmp_path / "clones"
    config.llm.cache_path = tmp_path / "llm.sqlite"
    config.llm.cache_imports = [CACHE]
    config.construction.output_root = tmp_path / "built"
    config.plus.enabled = False  # on in the example; tests/construct/test_example_plus.py builds it with plus
    assert config.llm.mode == "replay"
    run_harvest(config.harvest)

    result = run_build(config, {})
    assert not result.incomplete and result.usage.total.requests == 0
    assert [r for r in result.rejections if r.stage != R.PAIRING] == []
    names = {t.class_name: t for t in result.tasks}
    assert set(names) == {"CheckoutInvoice", "LibraryLoanJournal", "CachingRouter"}
    assert result.funnel.stages[R.PAIRING].kept == 6
    for task in result.tasks:
        assert task.coverage >= 90 and sum(s == 10 for s in task.judge_scores) >= 2
        assert all(s.license_spdx and s.first_seen_date and len(s.commit) == 40 for s in task.sources)
        assert all(m.test_class for m in task.methods_info) and task.metrics.method_count >= 10
        assert set(task.models.values()) == {m for m in task.models.values() if m.startswith("example-handwritten-")}
        # The mutation gate ran on every task in the real sandbox, and none needed strengthening.
        report = task.mutation
        assert report is not None and report.mutants - report.equivalent >= 50
        assert task.mutation_score == pytest.approx(report.score, abs=1e-4)
        assert task.mutation_score >= config.construction.mutation.min_score
    assert R.STRENGTHEN not in result.funnel.stages and result.funnel.stages[R.MUTATION].kept == 3
    assert names["CheckoutInvoice"].composition_type == "intra-domain"
    assert (names["CachingRouter"].domain1, names["CachingRouter"].domain2) == ("Network & Web", "Database Operations")
    assert names["CachingRouter"].judge_scores == [10, 10, 9]

    datasets = pytest.importorskip("classforge_bench.pipeline.formats.loader")
    loaded = datasets.load_dataset(result.out_dir / "tasks.jsonl")
    assert sorted(t.class_name for t in loaded.tasks) == sorted(names)
