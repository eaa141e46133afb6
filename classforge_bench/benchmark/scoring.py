"""Scores of a run from its sample records alone: pass@k, taxonomy and DEP per (model, strategy).

Used by the run itself and by `--regrade`, so both give the same numbers from the same records.
Only scored samples of non-broken tasks count; every other sample is counted in its bucket.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from classforge_bench.benchmark.metrics import DepCounts, Estimate, canonical_dependencies, compute_metrics, dep_counts
from classforge_bench.benchmark.outcomes import SampleOutcome
from classforge_bench.benchmark.passk import bootstrap_ratio_ci
from classforge_bench.benchmark.results import BUCKETS, DepScores, GroupScores, RunSettings, SampleRecord
from classforge_bench.benchmark.taxonomy import classify, summarise
from classforge_bench.pipeline.core.errors import IntegrityError
from classforge_bench.pipeline.core.task import Task


def categorise(task: Task, record: SampleRecord) -> SampleRecord:
    """Fill in the error category of a scored sample (None when it passes every test class)."""
    result = record.result
    c = classify(task, result.outcome) if record.scored and result.outcome is not None else None
    return record.model_copy(
        update={
            "result": result.model_copy(
                update={"error_category": c.category if c else None, "error_reason": c.reason if c else None}
            )
        }
    )


def _ratio(parts: Sequence[tuple[int, int]]) -> float:
    return sum(h for h, _ in parts) / sum(t for _, t in parts)


def _dep_scores(per_task: list[DepCounts], resamples: int, seed: int) -> DepScores:
    """DEP(M)/DEP(F) with percentile-bootstrap intervals over tasks (the ratio of summed counts)."""
    total = sum(per_task, DepCounts())

    def estimate(parts: list[tuple[int, int]]) -> Estimate | None:
        # A task without dependencies adds nothing to either sum; left in, a resample drawing only
        # such tasks has no ratio at all (it used to count as 0 and pulled a perfect score's
        # interval down to [0, 100]). The ratio is the same over the tasks that have some.
        parts = [p for p in parts if p[1]]
        if not parts:
            return None
        low, high = bootstrap_ratio_ci([h for h, _ in parts], [t for _, t in parts], n_resamples=resamples, seed=seed)
        return Estimate(value=_ratio(parts), ci_low=low, ci_high=high)

    return DepScores(
        dep_m=estimate([(d.method_hits, d.method_total) for d in per_task]),
        dep_f=estimate([(d.field_hits, d.field_total) for d in per_task]),
        method_hits=total.method_hits,
        method_total=total.method_total,
        field_hits=total.field_hits,
        field_total=total.field_total,
    )


def _outcome(record: SampleRecord) -> SampleOutcome:
    """A scored sample's per-test outcomes, which every scored sample carries."""
    assert record.result.outcome is not None, f"scored sample {record.request.key} has no outcome"
    return record.result.outcome


def _scored_by_task(tasks: Sequence[Task], records: Sequence[SampleRecord]) -> dict[str, list[SampleRecord]]:
    """Each task's scored samples, grouped by the task their requests name; a sample index twice is an error."""
    by_task: dict[str, list[SampleRecord]] = {t.task_id: [] for t in tasks}
    for r in records:
        if r.scored and r.request.task_id in by_task:
            by_task[r.request.task_id].append(r)
    for task_id, task_records in by_task.items():
        indices = [r.request.sample_index for r in task_records]
        if len(set(indices)) != len(indices):
            raise IntegrityError(f"task {task_id}: duplicate sample indices {sorted(indices)}")
    return by_task


def score_group(
    model: str,
    strategy: str,
    tasks: Sequence[Task],
    broken: set[str],
    records: Sequence[SampleRecord],
    settings: RunSettings,
) -> GroupScores:
    """One (model, strategy); `tasks` are the selected tasks, `broken` those excluded."""
    buckets: Counter[str] = Counter(r.result.bucket for r in records)
    scorable = [t for t in tasks if t.task_id not in broken]
    by_task = _scored_by_task(scorable, records)
    scored_tasks = [t for t in scorable if by_task[t.task_id]]
    unscored = [t.task_id for t in scorable if not by_task[t.task_id]]
    metrics = None
    dep = None
    taxonomy = summarise([])
    if scored_tasks:
        outcomes = {t.task_id: [_outcome(r) for r in by_task[t.task_id]] for t in scored_tasks}
        usable = [k for k in settings.ks if k <= min(len(v) for v in outcomes.values())]
        if usable:
            metrics = compute_metrics(
                scored_tasks,
                outcomes,
                ks=usable,
                n_resamples=settings.bootstrap_resamples,
                seed=settings.bootstrap_seed,
            )
        taxonomy = summarise(classify(t, _outcome(r)) for t in scored_tasks for r in by_task[t.task_id])
        per_task_dep = []
        for t in scored_tasks:
            canonical = canonical_dependencies(t)
            per_task_dep.append(
                sum((dep_counts(t, r.request.program or "", canonical) for r in by_task[t.task_id]), DepCounts())
            )
        dep = _dep_scores(per_task_dep, settings.bootstrap_resamples, settings.bootstrap_seed)
    return GroupScores(
        model=model,
        strategy=strategy,
        buckets={b: buckets.get(b, 0) for b in BUCKETS},
        n_samples=len(records),
        n_scored=sum(len(v) for v in by_task.values()),
        tasks_scored=len(scored_tasks),
        tasks_unscored=unscored,
        metrics=metrics,
        taxonomy=dict(taxonomy),
        dep=dep,
        prompt_tokens=sum(r.result.prompt_tokens for r in records),
        completion_tokens=sum(r.result.completion_tokens for r in records),
    )


def score_run(
    tasks: Sequence[Task], broken: set[str], samples: Sequence[SampleRecord], settings: RunSettings
) -> list[GroupScores]:
    """Every (model, strategy) that has samples, in first-seen order."""
    groups: dict[tuple[str, str], list[SampleRecord]] = {}
    for r in samples:
        groups.setdefault(r.group, []).append(r)
    return [score_group(model, strategy, tasks, broken, recs, settings) for (model, strategy), recs in groups.items()]
