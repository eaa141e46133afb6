"""Token and cost accounting for one run, per role, per task and per model.

Costs are computed with `Decimal` from per-(role, task, model) token totals, so the totals are
exact and do not depend on the order in which concurrent calls finished. Cache hits are counted
separately and cost nothing: a resumed or replayed run pays only for what it really sent.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import CostConfig

_MTOK = Decimal(1_000_000)


class Usage(BaseModel):
    """Counts for one bucket (a role, a task, a model, or the whole run)."""

    model_config = ConfigDict(extra="forbid")

    requests: int = Field(0, description="live calls that returned a response")
    failed_requests: int = Field(0, description="live calls that failed for good (after retries)")
    retries: int = Field(0, description="extra attempts spent on retryable errors")
    cached_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = Field(0, description="tokens served from the cache; not paid")
    cached_completion_tokens: int = 0
    estimated_requests: int = Field(0, description="live calls whose tokens were estimated locally (no usage sent)")
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    started_at: datetime
    total: Usage
    by_role: dict[str, Usage]
    by_task: dict[str, Usage]
    by_model: dict[str, Usage]
    unpriced_models: list[str] = Field(description="models used live with no cost entry (counted as free)")


class LedgerEntry(BaseModel):
    """One (role, task, model) cell of a ledger, to move usage between processes."""

    model_config = ConfigDict(extra="forbid")

    role: str
    task_id: str
    model: str
    counts: dict[str, int] = Field(description="the cell's counters by name (see _Cell)")


@dataclass
class _Cell:
    requests: int = 0
    failed_requests: int = 0
    retries: int = 0
    cached_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    estimated_requests: int = 0


class UsageLedger:
    """Thread-safe accumulator. One ledger per run; `spent_usd` is what the budget cap compares."""

    def __init__(self, costs: Mapping[str, CostConfig] | None = None) -> None:
        self._costs = dict(costs or {})
        self._lock = threading.Lock()
        self._cells: dict[tuple[str, str, str], _Cell] = defaultdict(_Cell)
        self._spent = Decimal(0)
        self.started_at = datetime.now(UTC)

    def is_priced(self, model: str) -> bool:
        return model in self._costs

    def cost_of(self, model: str, prompt_tokens: int, completion_tokens: int) -> Decimal:
        """US$ for the given tokens; an unpriced model costs 0 (and is listed in the summary)."""
        cost = self._costs.get(model)
        if cost is None:
            return Decimal(0)
        # Decimal(str(x)) keeps the price exactly as written in the config (0.15, not 0.1499...).
        return (
            Decimal(prompt_tokens) * Decimal(str(cost.prompt_per_mtok))
            + Decimal(completion_tokens) * Decimal(str(cost.completion_per_mtok))
        ) / _MTOK

    def record(
        self,
        *,
        role: str,
        task_id: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        cached: bool,
        retries: int = 0,
        estimated: bool = False,
    ) -> None:
        with self._lock:
            cell = self._cells[(role, task_id, model)]
            if cached:
                cell.cached_hits += 1
                cell.cached_prompt_tokens += prompt_tokens
                cell.cached_completion_tokens += completion_tokens
                return
            cell.requests += 1
            cell.estimated_requests += estimated
            cell.retries += retries
            cell.prompt_tokens += prompt_tokens
            cell.completion_tokens += completion_tokens
            self._spent += self.cost_of(model, prompt_tokens, completion_tokens)

    def record_failure(self, *, role: str, task_id: str, model: str, retries: int = 0) -> None:
        """A call that failed for good. Failed HTTP attempts return no usage, so no tokens are added."""
        with self._lock:
            cell = self._cells[(role, task_id, model)]
            cell.failed_requests += 1
            cell.retries += retries

    def entries(self, task_id: str | None = None) -> list[LedgerEntry]:
        """Everything recorded for one task (every task when None), e.g. to store it or to report
        it from a worker process."""
        with self._lock:
            return [
                LedgerEntry(role=r, task_id=t, model=m, counts=dict(vars(c)))
                for (r, t, m), c in sorted(self._cells.items())
                if task_id is None or t == task_id
            ]

    def absorb(self, entries: list[LedgerEntry]) -> None:
        """Add usage recorded by another ledger (another process's) to this one."""
        with self._lock:
            for e in entries:
                cell = self._cells[(e.role, e.task_id, e.model)]
                unknown = set(e.counts) - set(vars(cell))
                if unknown:
                    raise ValueError(f"ledger entry for task {e.task_id}: unknown counters {sorted(unknown)}")
                for name, value in e.counts.items():
                    setattr(cell, name, getattr(cell, name) + value)
                self._spent += self.cost_of(
                    e.model, e.counts.get("prompt_tokens", 0), e.counts.get("completion_tokens", 0)
                )

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return float(self._spent)

    def summary(self) -> UsageSummary:
        with self._lock:
            cells = {k: _Cell(**vars(c)) for k, c in self._cells.items()}
        total: _Acc = _Acc()
        by_role: dict[str, _Acc] = defaultdict(_Acc)
        by_task: dict[str, _Acc] = defaultdict(_Acc)
        by_model: dict[str, _Acc] = defaultdict(_Acc)
        unpriced: set[str] = set()
        for (role, task_id, model), cell in sorted(cells.items()):
            cost = self.cost_of(model, cell.prompt_tokens, cell.completion_tokens)
            if cell.requests and not self.is_priced(model):
                unpriced.add(model)
            for acc in (total, by_role[role], by_task[task_id], by_model[model]):
                acc.add(cell, cost)
        return UsageSummary(
            started_at=self.started_at,
            total=total.usage(),
            by_role={k: v.usage() for k, v in by_role.items()},
            by_task={k: v.usage() for k, v in by_task.items()},
            by_model={k: v.usage() for k, v in by_model.items()},
            unpriced_models=sorted(unpriced),
        )


class _Acc:
    """Sums cells and their exact Decimal costs; converted to a `Usage` once at the end."""

    def __init__(self) -> None:
        self.cell = _Cell()
        self.cost = Decimal(0)

    def add(self, cell: _Cell, cost: Decimal) -> None:
        for name, value in vars(cell).items():
            setattr(self.cell, name, getattr(self.cell, name) + value)
        self.cost += cost

    def usage(self) -> Usage:
        return Usage(**vars(self.cell), cost_usd=float(self.cost))
