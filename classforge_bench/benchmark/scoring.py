"""Scoring: each sample's score part, then pass@k, taxonomy and DEP per (model, strategy).

`score_sample` fills a sample's score once, from what its generation and execution parts hold:
its bucket (the bucket generation ended it with, the sandbox's failure, or its outcome's status;
`task_broken` when its task's reference fails), why, and its error category. `score_run` then
scores every (model, strategy) from the records alone, for the run itself and for `--regrade`, so
both give the same numbers from the same records. Only scored samples of non-broken tasks count;
every other sample is counted in its bucket.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from classforge_bench.benchmark.metrics import DepCounts, Estimate, canonical_dependencies, compute_metrics, dep_counts
from classforge_bench.benchmark.outcomes import SampleOutcome
from classforge_bench.benchmark.passk import bootstrap_ratio_ci
from classforge_bench.benchmark.record import BUCKETS, SCORED_BUCKETS, UNSCORED_CAUSES, Bucket, SampleRecord, Score
from classforge_bench.benchmark.results import DepScores, GroupScores, ReferenceRecord, RunSettings
from classforge_bench.benchmark.taxonomy import Category, classify, summarise
from classforge_bench.pipeline.core.errors import IntegrityError
from classforge_bench.pipeline.core.task import Task


def score_sample(task: Task, record: SampleRecord, broken: ReferenceRecord | None = None) -> SampleRecord:
    """Fill the sample's score, once (module docstring); `broken`: its task's reference, when that
    fails and the sample is therefore not judged."""
    bucket, reason, cause = _verdict(record, broken)
    category, why = _category(task, bucket, record.found_outcome())
    repeats = UNSCORED_CAUSES[cause][1] if cause in UNSCORED_CAUSES else None
    return record.fill(
        Score(bucket=bucket, reason=reason, cause=cause, repeats=repeats, error_category=category, error_reason=why)
    )


def _verdict(record: SampleRecord, broken: ReferenceRecord | None) -> tuple[Bucket, str, str | None]:
    """(bucket, reason, cause): decided by the first of the broken task, generation, the sandbox, the outcome."""
    if broken is not None:
        cause = "sandbox-failed" if broken.infrastructure else "task-broken"
        return "task_broken", f"task {record.task_id} is broken: {broken.cause}", cause
    generation, run = record.generation, record.execution
    assert generation is not None, f"sample {record.key} is scored before it is generated"
    if generation.unrun is not None:
        return generation.unrun, generation.reason, generation.cause
    assert run is not None, f"sample {record.key} has a program and is scored before it is executed"
    if run.sandbox_failure is not None:
        return "sandbox_error", f"task {record.task_id}: the sandbox failed: {run.sandbox_failure}", "sandbox-failed"
    assert run.outcome is not None, f"sample {record.key}: a run the sandbox did not fail has an outcome"
    outcome = run.outcome
    reason = (
        ""
        if outcome.status == "completed" or outcome.error is None
        else f"{outcome.error.type}: {outcome.error.message}"
    )
    return outcome.status, reason[:500], None


def _category(task: Task, bucket: str, outcome: SampleOutcome | None) -> tuple[Category | None, str | None]:
    """The error category of a scored sample and why (None when it passes every test class)."""
    c = classify(task, outcome) if bucket in SCORED_BUCKETS and outcome is not None else None
    return (c.category, c.reason) if c else (None, None)


def recategorise(task: Task, record: SampleRecord) -> None:
    """`--regrade`: the error category again, from the stored outcome (the taxonomy may have
    changed since the run); nothing else of the score moves."""
    assert record.score is not None, f"sample {record.key} was never scored"
    record.score.error_category, record.score.error_reason = _category(task, record.score.bucket, record.outcome)


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
    outcome = record.outcome
    assert outcome is not None, f"scored sample {record.key} has no outcome"
    return outcome


def _scored_by_task(tasks: Sequence[Task], records: Sequence[SampleRecord]) -> dict[str, list[SampleRecord]]:
    """Each task's scored samples, grouped by the task their records name; a sample index twice is an error."""
    by_task: dict[str, list[SampleRecord]] = {t.task_id: [] for t in tasks}
    for r in records:
        if r.scored and r.task_id in by_task:
            by_task[r.task_id].append(r)
    for task_id, task_records in by_task.items():
        indices = [r.sample_index for r in task_records]
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
    buckets: Counter[str] = Counter(r.bucket for r in records if r.bucket is not None)
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
                sum((dep_counts(t, r.program or "", canonical) for r in by_task[t.task_id]), DepCounts())
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
        prompt_tokens=sum(r.generation.prompt_tokens for r in records if r.generation),
        completion_tokens=sum(r.generation.completion_tokens for r in records if r.generation),
    )


def score_run(
    tasks: Sequence[Task], broken: set[str], samples: Sequence[SampleRecord], settings: RunSettings
) -> list[GroupScores]:
    """Every (model, strategy) that has samples, in first-seen order."""
    groups: dict[tuple[str, str], list[SampleRecord]] = {}
    for r in samples:
        groups.setdefault(r.group, []).append(r)
    return [score_group(model, strategy, tasks, broken, recs, settings) for (model, strategy), recs in groups.items()]
