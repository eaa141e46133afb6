"""A folder's LLM usage across every run that wrote to it: a build folder, a results folder.

Each run stores what it paid for as ledger entries under `usage/<run id>/<name>.jsonl` as soon as
a unit of work is over (a build candidate, an evaluation's generation, the endpoint pre-flight),
whatever happened to it, and never touches another run's files. So a resumed, replayed, concurrent
or killed run cannot hide what an earlier run spent. `usage.json` sums every run's files and
`usage-last-run.json` the latest run's; both are rewritten from the files, never added to.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from classforge_bench.pipeline.config import CostConfig
from classforge_bench.pipeline.core.store import read_jsonl, write_json, write_jsonl
from classforge_bench.pipeline.llm.ledger import LedgerEntry, UsageLedger, UsageSummary

USAGE_DIR = "usage"
ALL_RUNS_FILE = "usage.json"
LAST_RUN_FILE = "usage-last-run.json"


def new_run_id() -> str:
    """Names one run's usage folder: sortable by start time, unique across concurrent runs."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def save_usage(folder: Path, run_id: str, name: str, entries: list[LedgerEntry]) -> None:
    """Store entries paid for in run `run_id` under `name` (a candidate id, `generation`, the
    pre-flight's role); a later save under the same name in the same run replaces it."""
    if entries:
        write_jsonl(Path(folder) / USAGE_DIR / run_id / f"{name}.jsonl", entries)


def recorded_usage(folder: Path, costs: Mapping[str, CostConfig], run_id: str) -> tuple[UsageSummary, UsageSummary]:
    """The usage stored under `folder`: (run `run_id`'s, every run's), from one read of the files."""
    this_run, all_runs = UsageLedger(costs), UsageLedger(costs)
    root = Path(folder) / USAGE_DIR
    for path in sorted(root.glob("*/*.jsonl")) if root.is_dir() else []:
        entries = list(read_jsonl(path, LedgerEntry))
        all_runs.absorb(entries)
        if path.parent.name == run_id:
            this_run.absorb(entries)
    return this_run.summary(), all_runs.summary()


def write_usage_files(folder: Path, this_run: UsageSummary, all_runs: UsageSummary) -> None:
    write_json(Path(folder) / ALL_RUNS_FILE, all_runs.model_dump(mode="json"))
    write_json(Path(folder) / LAST_RUN_FILE, this_run.model_dump(mode="json"))
