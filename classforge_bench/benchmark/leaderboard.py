"""What a results page compares: one row per (run, model, strategy), read from results folders,
grouped by the dataset (and version) the runs scored: rows of different datasets never share a table.

Each row carries its pass@k estimates (class/method x full/partial, with bootstrap intervals) for
the base tests and for every other suite the run scored (plus-tier tests: a run's `plus_scores`
beside its `scores`, or a `MetricsReport` held by another field of a `GroupScores`), DEP, the error taxonomy, and per task how many of its
samples fully passed. Only the ks some row reports become columns: pass@5 of a run with one sample
per task does not exist, so it is not a column of dashes.

A task is *solved* by a row when at least one of its samples passes every test class (pass@n > 0);
the outcome grid says, within one dataset, which tasks no row solves and which every row solves (a
row that did not score a task, not selected or none of its samples scored, does not solve it).

A dataset is told apart by its file's sha256 and named by the last two parts of its path
(`releases/2026.11.28`, `classeval/ClassEval_data.json`): never the whole path, which would put the
machine's folders into a page meant to be shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from classforge_bench.benchmark.metrics import Estimate, MetricsReport
from classforge_bench.benchmark.results import (
    RESULTS_FILE,
    GroupScores,
    HashSeedCheck,
    ResultsError,
    RunResults,
    load_results,
)
from classforge_bench.benchmark.taxonomy import CATEGORIES

LEVELS = (("class_level", "Class"), ("method_level", "Method"))
KINDS = (("full", "full"), ("partial", "partial"))
BASE = "base"


@dataclass(frozen=True)
class TaskCell:
    """A row's outcome on one task: samples that fully passed, passed partly, and were scored."""

    status: str  # solved | partial | failed | broken | unscored
    full: int = 0
    partial: int = 0
    n: int = 0


@dataclass
class Row:
    run_id: str
    dataset: str
    model: str
    strategy: str
    tasks_scored: int
    samples_per_task: str
    suites: dict[str, MetricsReport]
    dep_m: Estimate | None
    dep_f: Estimate | None
    taxonomy: dict[str, int]
    tasks: dict[str, TaskCell] = field(default_factory=dict)
    dataset_sha256: str = ""
    evaluated: date | None = None
    bootstrap: tuple[int, int] = (1000, 0)  # the run's resamples and seed, for intervals computed here
    hash_seed_checks: list[HashSeedCheck] = field(default_factory=list)  # evaluate.hash_seeds, this row's

    @property
    def label(self) -> str:
        return f"{self.model} / {self.strategy}"

    def estimate(self, suite: str, level: str, kind: str, k: int) -> Estimate | None:
        report = self.suites.get(suite)
        return getattr(getattr(report, level), kind).get(k) if report is not None else None


@dataclass
class DatasetBoard:
    """The rows of the runs over one dataset (one file, by content): one ranked table."""

    label: str
    sha256: str
    rows: list[Row]
    task_ids: list[str]
    first_seen: dict[str, date | None]  # per task, its first-seen date (Task.first_seen)

    def solved_by_nobody(self) -> list[str]:
        return [
            t
            for t in self.task_ids
            if _scored_cells(self.rows, t) and not any(c.full for c in _scored_cells(self.rows, t))
        ]

    def solved_by_everybody(self) -> list[str]:
        return [
            t
            for t in self.task_ids
            if _scored_cells(self.rows, t)
            and len(_scored_cells(self.rows, t)) == len(self.rows)
            and all(c.full for c in _scored_cells(self.rows, t))
        ]


@dataclass
class Board:
    rows: list[Row]
    suites: list[str]
    ks: dict[str, list[int]]  # per suite, the ks some row reports
    task_ids: list[str]
    notes: list[str] = field(default_factory=list)
    datasets: list[DatasetBoard] = field(default_factory=list)
    suffix: str = ""  # tells the page's tables of one dataset from another's (their HTML ids)

    def solved_by_nobody(self) -> list[str]:
        """Per dataset, then listed together (a task id is the dataset's own)."""
        return [t for d in self.datasets for t in d.solved_by_nobody()]

    def solved_by_everybody(self) -> list[str]:
        return [t for d in self.datasets for t in d.solved_by_everybody()]


def _scored_cells(rows: list[Row], task_id: str) -> list[TaskCell]:
    return [r.tasks[task_id] for r in rows if task_id in r.tasks and r.tasks[task_id].n]


def short_path(path: str) -> str:
    """A path without the machine's folders, for what is shared (pages, summary.md, exports): its
    last two parts. A dataset's name on the page is this of its path."""
    parts = Path(path).parts
    return "/".join(p for p in parts[-2:] if p not in ("/", "\\")) or path


def run_folders(paths: list[Path]) -> list[Path]:
    """The run folders named, a folder of run folders standing for every run in it (sorted)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_file() or (path / RESULTS_FILE).is_file():
            found.append(path)
        elif path.is_dir() and (runs := sorted(p.parent for p in path.glob(f"*/{RESULTS_FILE}"))):
            found.extend(runs)
        else:
            raise ResultsError(f"{path}: no {RESULTS_FILE} in it or in the folders directly under it")
    return list(dict.fromkeys(found))


def suites_of(group: GroupScores) -> dict[str, MetricsReport]:
    """The base scores and any other suite a group carries, under its field (or key) name."""
    suites = {BASE: group.metrics} if group.metrics is not None else {}
    for name in type(group).model_fields:
        value = getattr(group, name)
        if name != "metrics" and isinstance(value, MetricsReport):
            suites[name] = value
        elif isinstance(value, dict) and value and all(isinstance(v, MetricsReport) for v in value.values()):
            suites.update({f"{name}:{key}" if name != "suites" else str(key): v for key, v in value.items()})
    return suites


def _task_cells(results: RunResults, group: GroupScores) -> dict[str, TaskCell]:
    cells = {r.task_id: TaskCell("broken") for r in results.reference if r.broken}
    cells |= {t: TaskCell("unscored") for t in group.tasks_unscored}
    for tc in group.metrics.per_task if group.metrics else []:
        status = "solved" if tc.class_level.full else "partial" if tc.class_level.partial else "failed"
        cells[tc.task_id] = TaskCell(status, tc.class_level.full, tc.class_level.partial, tc.n)
    return cells


def _samples_per_task(group: GroupScores) -> str:
    counts = sorted({tc.n for tc in group.metrics.per_task}) if group.metrics else []
    return "-" if not counts else str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"


def other_score_lists(results: RunResults) -> dict[str, dict[tuple[str, str], GroupScores]]:
    """Scores of the same samples against another suite, held by a run beside `scores` (a field
    `<suite>_scores`, e.g. `plus_scores`): per suite, the groups by (model, strategy)."""
    found = {}
    for name in type(results).model_fields:
        value = getattr(results, name)
        if name != "scores" and isinstance(value, list) and value and all(isinstance(g, GroupScores) for g in value):
            found[name.removesuffix("_scores")] = {(g.model, g.strategy): g for g in value}
    return found


def rows_of(results: RunResults) -> list[Row]:
    others = other_score_lists(results)
    rows = []
    for g in results.scores:
        suites = suites_of(g)
        for suite, groups in others.items():
            if (other := groups.get((g.model, g.strategy))) is not None and other.metrics is not None:
                suites[suite] = other.metrics
        rows.append(
            Row(
                run_id=results.run_id,
                dataset=short_path(results.dataset.path),
                model=g.model,
                strategy=g.strategy,
                tasks_scored=g.tasks_scored,
                samples_per_task=_samples_per_task(g),
                suites=suites,
                dep_m=g.dep.dep_m if g.dep else None,
                dep_f=g.dep.dep_f if g.dep else None,
                taxonomy={c: g.taxonomy.get(c, 0) for c in CATEGORIES},
                tasks=_task_cells(results, g),
                dataset_sha256=results.dataset.sha256,
                evaluated=results.created_at.date(),
                bootstrap=_bootstrap_of(g),
                hash_seed_checks=[
                    c for c in results.hash_seed_checks if (c.model, c.strategy) == (g.model, g.strategy)
                ],
            )
        )
    return rows


def _bootstrap_of(group: GroupScores) -> tuple[int, int]:
    boot = group.metrics.bootstrap if group.metrics else {}
    return int(boot.get("resamples", 1000)), int(boot.get("seed", 0))


def _dataset_board(runs: list[RunResults], rows: list[Row]) -> DatasetBoard:
    tasks = {t.task_id: t for results in runs for t in results.tasks}
    return DatasetBoard(
        label=short_path(runs[0].dataset.path),
        sha256=runs[0].dataset.sha256,
        rows=rows,
        task_ids=list(tasks),
        first_seen={task_id: task.first_seen for task_id, task in tasks.items()},
    )


def board_of(runs: list[RunResults]) -> Board:
    rows = [row for results in runs for row in rows_of(results)]
    suites = list(dict.fromkeys(s for r in rows for s in r.suites)) or [BASE]
    ks = {s: sorted({k for r in rows if s in r.suites for k in r.suites[s].ks}) for s in suites}
    task_ids = list(dict.fromkeys(t.task_id for results in runs for t in results.tasks))
    shas = list(dict.fromkeys(r.dataset.sha256 for r in runs))
    datasets = [
        _dataset_board([r for r in runs if r.dataset.sha256 == sha], [row for row in rows if row.dataset_sha256 == sha])
        for sha in shas
    ]
    notes = []
    if len(datasets) > 1:
        notes.append(
            f"the runs scored {len(datasets)} different datasets ("
            + "; ".join(f"{d.label} sha256 {d.sha256[:12]}" for d in datasets)
            + "): each has its own table, and a task id names a task of its own dataset only"
        )
    return Board(rows=rows, suites=suites, ks=ks, task_ids=task_ids, notes=notes, datasets=datasets)


def load_board(paths: list[Path]) -> Board:
    return board_of([load_results(p) for p in run_folders(paths)])
