"""The ranked table of one dataset, computed once: the results page, and its CSV, JSON and LaTeX
exports all render these values, so the numbers in every one of them are the same.

Per row (run x model x strategy): class- and method-level full pass@1 on the base tests and on the
plus tier side by side (EvalPlus's layout), and a time window (LiveCodeBench's idea, at class
level): class-level pass@1 on the tasks first seen *after* the model's training cutoff, beside the
score on all tasks. A score on all tasks that includes tasks first seen on or before the cutoff is
marked possibly contaminated; tasks with no first-seen date (ClassEval's) are counted as such and
never as unseen.

Rows are ranked by class-level pass@1 on the base tests, then method-level; equal scores share a rank.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from classforge_bench.benchmark.leaderboard import BASE, DatasetBoard, Row
from classforge_bench.benchmark.metrics import Estimate
from classforge_bench.benchmark.model_meta import ModelMeta
from classforge_bench.benchmark.passk import bootstrap_ci

PLUS = "plus"
CONTAMINATED = "possibly contaminated"
UNDATED = "task dates unknown"
NO_CUTOFF = "cutoff unknown"


@dataclass(frozen=True)
class Score:
    """A percentage as every output shows it: one decimal, with its 95% interval."""

    value: float
    low: float
    high: float

    @classmethod
    def of(cls, e: Estimate | None) -> Score | None:
        return None if e is None else cls(_pct(e.value), _pct(e.ci_low), _pct(e.ci_high))

    @property
    def text(self) -> str:
        return f"{self.value:.1f}"


def _pct(fraction: float) -> float:
    return float(f"{100 * fraction:.1f}")


@dataclass(frozen=True)
class Standing:
    rank: int
    model: str  # the label the run used
    name: str  # the metadata's display name, else the label
    strategy: str
    run_id: str
    size: str | None
    open: bool | None
    cutoff: date | None
    evaluated: date | None
    tasks: int
    class_base: Score | None
    class_plus: Score | None
    method_base: Score | None
    method_plus: Score | None
    window: Score | None  # class-level pass@1 on the tasks first seen after the cutoff
    window_tasks: int | None  # how many; None when there is no cutoff
    older_tasks: int  # scored tasks first seen on or before the cutoff
    undated_tasks: int  # scored tasks without a first-seen date
    flag: str  # "", CONTAMINATED, UNDATED or NO_CUTOFF: how far the score on all tasks can be trusted

    @property
    def openness(self) -> str:
        return "-" if self.open is None else "open" if self.open else "closed"


def _window(
    row: Row, first_seen: dict[str, date | None], cutoff: date | None
) -> tuple[Score | None, int | None, int, int]:
    scored = {t: c for t, c in row.tasks.items() if c.n}
    undated = sum(1 for t in scored if first_seen.get(t) is None)
    if cutoff is None:
        return None, None, 0, undated
    after = [c.full / c.n for t, c in scored.items() if (d := first_seen.get(t)) is not None and d > cutoff]
    older = sum(1 for t in scored if (d := first_seen.get(t)) is not None and d <= cutoff)
    if not after:
        return None, 0, older, undated
    resamples, seed = row.bootstrap
    low, high = bootstrap_ci(after, n_resamples=resamples, seed=seed)
    return Score.of(Estimate(value=sum(after) / len(after), ci_low=low, ci_high=high)), len(after), older, undated


def _flag(cutoff: date | None, older: int, undated: int) -> str:
    if cutoff is None:
        return NO_CUTOFF
    return CONTAMINATED if older else UNDATED if undated else ""


def _standing(row: Row, board: DatasetBoard, meta: ModelMeta) -> Standing:
    window, window_tasks, older, undated = _window(row, board.first_seen, meta.cutoff)
    return Standing(
        rank=0,
        model=row.model,
        name=meta.name or row.model,
        strategy=row.strategy,
        run_id=row.run_id,
        size=meta.size,
        open=meta.open,
        cutoff=meta.cutoff,
        evaluated=meta.evaluated or row.evaluated,
        tasks=row.tasks_scored,
        class_base=Score.of(row.estimate(BASE, "class_level", "full", 1)),
        class_plus=Score.of(row.estimate(PLUS, "class_level", "full", 1)),
        method_base=Score.of(row.estimate(BASE, "method_level", "full", 1)),
        method_plus=Score.of(row.estimate(PLUS, "method_level", "full", 1)),
        window=window,
        window_tasks=window_tasks,
        older_tasks=older,
        undated_tasks=undated,
        flag=_flag(meta.cutoff, older, undated),
    )


def _key(s: Standing) -> tuple[float, float]:
    return (
        -(s.class_base.value if s.class_base else -1.0),
        -(s.method_base.value if s.method_base else -1.0),
    )


def standings(board: DatasetBoard, meta: dict[str, ModelMeta] | None = None) -> list[Standing]:
    """The dataset's rows, ranked (competition ranking: 1, 2, 2, 4)."""
    meta = meta or {}
    rows = sorted(
        (_standing(r, board, meta.get(r.model, ModelMeta())) for r in board.rows), key=lambda s: (_key(s), s.name)
    )
    ranked: list[Standing] = []
    for i, s in enumerate(rows):
        rank = ranked[-1].rank if ranked and _key(ranked[-1]) == _key(s) else i + 1
        ranked.append(replace(s, rank=rank))
    return ranked


def dated_range(board: DatasetBoard) -> tuple[date, date] | None:
    """The earliest and latest first-seen date of the dataset's tasks; None when none is dated."""
    dates = [d for d in board.first_seen.values() if d is not None]
    return (min(dates), max(dates)) if dates else None
