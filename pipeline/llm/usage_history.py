"""A folder's usage across every run that wrote to it (a build folder, a results folder).

`usage.json` describes one run; a resumed or replayed run would overwrite what the paying run
spent. Each run appends its summary as one line to `usage-runs.jsonl` (appended, never rewritten,
so concurrent or crashed runs cannot erase each other's lines) and `usage-total.json` is the sum of
every line: requests, tokens and cost paid in that folder since it was first used.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from pipeline.llm.ledger import Usage, UsageSummary
from pipeline.core.store import write_json

log = logging.getLogger(__name__)

RUNS_FILE = "usage-runs.jsonl"
TOTAL_FILE = "usage-total.json"


class CumulativeUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    runs: int
    first_run_at: str | None
    total: Usage
    by_role: dict[str, Usage]
    by_model: dict[str, Usage]


def _add(a: Usage, b: Usage) -> Usage:
    data = {name: getattr(a, name) + getattr(b, name) for name in Usage.model_fields}
    data["cost_usd"] = round(a.cost_usd + b.cost_usd, 10)
    return Usage(**data)


def _fold(into: dict[str, Usage], more: dict[str, Usage]) -> None:
    for name, usage in more.items():
        into[name] = _add(into.get(name, Usage()), usage)


def cumulative(runs: Iterable[UsageSummary]) -> CumulativeUsage:
    total, by_role, by_model, n, first = Usage(), {}, {}, 0, None
    for run in runs:
        n += 1
        first = first or run.started_at.isoformat()
        total = _add(total, run.total)
        _fold(by_role, run.by_role)
        _fold(by_model, run.by_model)
    return CumulativeUsage(runs=n, first_run_at=first, total=total, by_role=by_role, by_model=by_model)


def read_runs(folder: Path) -> list[UsageSummary]:
    path = Path(folder) / RUNS_FILE
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    runs = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            runs.append(UsageSummary.model_validate_json(line))
        except ValidationError as exc:
            # A line cut by a run killed mid-write: every other run's spend still counts.
            log.warning("%s:%d: skipped, not a usage summary (%s)", path, lineno, exc.errors()[0]["msg"])
    return runs


def record_run(folder: Path, run: UsageSummary) -> CumulativeUsage:
    """Append this run's usage to the folder's history; write and return the folder's total."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(run.model_dump(mode="json"), sort_keys=True) + "\n").encode("utf-8")
    # One O_APPEND write per run: concurrent runs interleave whole lines, never overwrite them.
    fd = os.open(folder / RUNS_FILE, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # a killed run left half a line: start ours on a line of its own
        os.write(fd, line)
    finally:
        os.close(fd)
    total = cumulative(read_runs(folder))
    write_json(folder / TOTAL_FILE, total.model_dump(mode="json"))
    return total
