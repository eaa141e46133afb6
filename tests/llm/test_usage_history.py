"""A folder's cumulative usage survives resumed runs and a run killed mid-write."""

from __future__ import annotations

import json

from pipeline.config import CostConfig
from pipeline.llm.ledger import UsageLedger
from pipeline.llm.usage_history import RUNS_FILE, TOTAL_FILE, record_run


def _run(requests: int, tokens: int):
    ledger = UsageLedger({"m": CostConfig(prompt_per_mtok=1.0, completion_per_mtok=2.0)})
    for i in range(requests):
        ledger.record(role="solver", task_id=f"t{i}", model="m", prompt_tokens=tokens, completion_tokens=tokens, cached=False)
    ledger.record(role="solver", task_id="t0", model="m", prompt_tokens=5, completion_tokens=5, cached=True)
    return ledger.summary()


def test_runs_add_up_and_a_cut_last_line_is_skipped(tmp_path):
    record_run(tmp_path, _run(3, 1000))
    total = record_run(tmp_path, _run(0, 0))  # a replay: cache hits only
    assert total.runs == 2 and total.total.requests == 3 and total.total.cached_hits == 2
    assert total.total.cost_usd == 0.009 and total.by_model["m"].prompt_tokens == 3000
    with open(tmp_path / RUNS_FILE, "a", encoding="utf-8") as fh:
        fh.write('{"started_at": "2026-')  # killed mid-write
    after = record_run(tmp_path, _run(1, 10))
    assert after.runs == 3 and after.total.requests == 4
    assert json.loads((tmp_path / TOTAL_FILE).read_text())["total"]["requests"] == 4
