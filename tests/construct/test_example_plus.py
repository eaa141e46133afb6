"""The offline example built with the plus tier on: every task carries a hidden plus suite made by
the real generator in the sandbox, validated on its reference, with the mutation score base + plus
reach; the release statistics show both. Needs .venv-plus (scripts/setup.sh)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from classforge_bench.pipeline.construct.run import run_build
from classforge_bench.pipeline.quality.plus.generate import DEFAULT_PYTHON
from classforge_bench.pipeline.release.stats import compute_stats
from classforge_bench.pipeline.release.tables import size_table
from tests.fairness_kit import unfair_verdicts

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "examples" / "llm_cache.jsonl"


def _load_example_config():
    spec = importlib.util.spec_from_file_location(
        "record_example_cache_plus", ROOT / "examples" / "record_example_cache.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.load_example_config(ROOT / "examples" / "classforge.toml")


@pytest.mark.slow
@pytest.mark.skipif(not DEFAULT_PYTHON.exists(), reason="the plus generator is not set up (scripts/setup.sh)")
def test_example_build_with_the_plus_tier(tmp_path, monkeypatch):
    if not CACHE.exists():
        pytest.skip("examples/llm_cache.jsonl not recorded")
    monkeypatch.chdir(tmp_path)
    from classforge_bench.pipeline.harvest.run import run_harvest

    config = _load_example_config()
    config.harvest.output_root = tmp_path / "harvested"
    config.harvest.clone.workdir = tmp_path / "clones"
    config.llm.cache_path = tmp_path / "llm.sqlite"
    config.llm.cache_imports = [CACHE]
    config.construction.output_root = tmp_path / "built"
    config.plus.enabled = True
    run_harvest(config.harvest)
    result = run_build(config, {})
    assert not result.incomplete and len(result.tasks) == 3
    for task in result.tasks:
        plus = task.plus
        assert plus is not None and plus.generated > 0, plus
        assert plus.tests + sum(plus.dropped.values()) == plus.generated
        if plus.tests:
            assert plus.failure is None
            assert plus.mutation_score is not None and plus.mutation_score >= task.mutation_score - 1e-9
        else:  # every generated test broke the skeleton's contract: said so, with the per-rule counts
            assert plus.failure and plus.failure_reason == "plus-converted-all-dropped", plus
    with_plus = sum(1 for t in result.tasks if t.plus.tests)
    assert with_plus >= 2
    table = size_table(compute_stats([t.to_row() for t in result.tasks]))
    assert "Plus tests, hidden, no LLM (3 of 3 tasks)" in table
    assert f"Mutation score with plus tests, % ({with_plus} of 3 tasks)" in table
    # A correct implementation of each skeleton passes base and plus: two blind ones per task.
    assert unfair_verdicts("example", result.tasks) == {}
