"""Usage recorded in one ledger (a worker process's) moves exactly into another."""

import pickle

from classforge_bench.pipeline.config import CostConfig
from classforge_bench.pipeline.llm.ledger import UsageLedger


def test_entries_of_a_task_absorb_into_another_ledger_exactly():
    costs = {"m": CostConfig(prompt_per_mtok=1.5, completion_per_mtok=6.0)}
    worker = UsageLedger(costs)
    worker.record(
        role="composer", task_id="cand-1", model="m", prompt_tokens=1000, completion_tokens=200, cached=False, retries=1
    )
    worker.record(role="solver", task_id="cand-1", model="m", prompt_tokens=10, completion_tokens=5, cached=True)
    worker.record(role="composer", task_id="cand-2", model="m", prompt_tokens=7, completion_tokens=7, cached=False)
    entries = pickle.loads(pickle.dumps(worker.entries("cand-1")))
    assert [(e.role, e.task_id) for e in entries] == [("composer", "cand-1"), ("solver", "cand-1")]

    flow = UsageLedger(costs)
    flow.absorb(entries)
    summary = flow.summary()
    assert summary.total.requests == 1 and summary.total.cached_hits == 1 and summary.total.retries == 1
    assert summary.total.prompt_tokens == 1000 and summary.total.cached_prompt_tokens == 10
    assert summary.total.cost_usd == 0.0027  # 1000 * 1.5e-6 + 200 * 6e-6
    assert flow.spent_usd == 0.0027
    assert set(summary.by_task) == {"cand-1"}
