"""Samples run in batches (`evaluate.batch_size`: one sandbox start, one isolated runner forked per
sample, `classforge_bench.pipeline.sandbox.batch`) score exactly as one sandbox run per sample does, in fewer
sandbox starts, samples of several tasks in one batch."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples_kit import BANK, fence, write_samples

from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.sandbox import get_backend
from classforge_bench.pipeline.sandbox.batch import can_batch

OTHER = "ClassEval_0"


def config(root: Path, batch_size: int) -> Config:
    cfg = Config()
    # both folders beside each other share the reference cache: the same limits, so the same runs
    cfg.evaluate = EvaluateConfig(output_root=root, bootstrap_resamples=200, batch_size=batch_size)
    cfg.sandbox.scale_floor_s, cfg.sandbox.scale_factor = 2.0, 4.0
    return cfg


def verdicts(results) -> list[tuple]:
    return [
        (
            s.task_id,
            s.strategy,
            s.sample_index,
            s.bucket,
            s.score.error_category,
            s.score.error_reason,
            s.execution.suite_status if s.execution else None,
            {tc: s.outcome.test_class_status(tc) for tc in s.outcome.test_classes} if s.outcome else None,
        )
        for s in results.samples
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_batched_samples_of_several_tasks_score_as_one_run_each(classeval, classeval_path, lines, tmp_path):  # noqa: F811
    other = classeval.by_id()[OTHER].solution_code
    mixed = [line for line in lines if line["task_id"] == BANK] + [
        {"task_id": OTHER, "completion": fence(other), "model": "m1"},
        {"task_id": OTHER, "completion": fence(other.replace("return ", "return None or ", 1)), "model": "m1"},
    ]
    samples = write_samples(tmp_path / "samples.jsonl", mixed)
    request = EvaluationRequest(dataset=classeval_path, samples_file=samples, task_ids=[BANK, OTHER])
    alone = evaluate(request, config(tmp_path / "alone", 0), env={}).results
    batched = evaluate(request, config(tmp_path / "batched", 16), env={}).results
    assert verdicts(batched) == verdicts(alone)
    assert [s.bucket for s in batched.samples].count("timeout") == 1 and "completed" in [
        s.bucket for s in batched.samples
    ]
    assert batched.scores[0].metrics == alone.scores[0].metrics
    runs = sum(
        1
        for s in alone.samples
        if s.execution is not None
        and s.execution.suite_status is not None
        and s.execution.key not in {r.execution_key for r in alone.reference}
    )
    assert alone.stats.sandbox_runs >= runs >= 5  # one start per distinct sample (the references come from the cache)
    if can_batch(get_backend(config(tmp_path, 16).sandbox)):
        # the two workers' batches, and the runaway's classes run again alone
        assert batched.stats.sandbox_runs < alone.stats.sandbox_runs
