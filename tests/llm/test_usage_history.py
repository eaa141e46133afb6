"""A folder's cumulative usage survives resumed, replayed and killed runs: one mechanism for build
and results folders."""

from __future__ import annotations

import json

from classforge_bench.pipeline.config import CostConfig
from classforge_bench.pipeline.llm.ledger import UsageLedger
from classforge_bench.pipeline.llm.usage_history import (
    ALL_RUNS_FILE,
    LAST_RUN_FILE,
    USAGE_DIR,
    new_run_id,
    recorded_usage,
    save_usage,
    write_usage_files,
)

COSTS = {"m": CostConfig(prompt_per_mtok=1.0, completion_per_mtok=2.0)}


def _paid(requests: int, tokens: int, task: str = "t"):
    ledger = UsageLedger(COSTS)
    for i in range(requests):
        ledger.record(
            role="solver", task_id=f"{task}{i}", model="m", prompt_tokens=tokens, completion_tokens=tokens, cached=False
        )
    ledger.record(role="solver", task_id=f"{task}0", model="m", prompt_tokens=5, completion_tokens=5, cached=True)
    return ledger.entries()


def _finish(folder, run_id):
    this_run, all_runs = recorded_usage(folder, COSTS, run_id)
    write_usage_files(folder, this_run, all_runs)
    return this_run, all_runs


def test_a_replay_after_the_paying_run_keeps_its_spend(tmp_path):
    paying, replay = new_run_id(), new_run_id()
    assert paying != replay
    save_usage(tmp_path, paying, "generation", _paid(3, 1000))
    _finish(tmp_path, paying)
    save_usage(tmp_path, replay, "generation", _paid(0, 0))  # cache hits only
    this_run, all_runs = _finish(tmp_path, replay)
    assert this_run.total.requests == 0 and this_run.total.cached_hits == 1
    assert all_runs.total.requests == 3 and all_runs.total.cached_hits == 2
    assert all_runs.total.cost_usd == 0.009 and all_runs.by_model["m"].prompt_tokens == 3000
    assert json.loads((tmp_path / ALL_RUNS_FILE).read_text())["total"]["requests"] == 3
    assert json.loads((tmp_path / LAST_RUN_FILE).read_text())["total"]["requests"] == 0


def test_a_killed_run_counts_in_the_next_runs_total(tmp_path):
    killed, resumed = new_run_id(), new_run_id()
    # The killed run stored what it paid for (a candidate, or generation's `finally`) but never wrote usage.json.
    save_usage(tmp_path, killed, "cand-a", _paid(2, 100, "a"))
    save_usage(tmp_path, resumed, "cand-b", _paid(1, 100, "b"))
    this_run, all_runs = _finish(tmp_path, resumed)
    assert this_run.total.requests == 1 and all_runs.total.requests == 3
    assert set(all_runs.by_task) == {"a0", "a1", "b0"}
    assert sorted(p.parent.name for p in (tmp_path / USAGE_DIR).glob("*/*.jsonl")) == sorted([killed, resumed])


def test_nothing_paid_writes_no_file(tmp_path):
    save_usage(tmp_path, new_run_id(), "generation", [])
    assert not (tmp_path / USAGE_DIR).exists()
