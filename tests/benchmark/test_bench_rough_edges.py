"""Defects of issue 23 in the evaluator's outputs, each checked where a user meets it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from classforge_bench.benchmark.metrics import DepCounts
from classforge_bench.benchmark.results import load_results
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.scoring import _dep_scores
from classforge_bench.benchmark.summary import render_summary
from classforge_bench.pipeline.config import Config, EvaluateConfig

REPO = Path(__file__).resolve().parents[2]


def test_dep_interval_of_a_perfect_score_is_a_point_when_most_tasks_have_no_dependencies():
    # one task uses fields, nine use none: a resample of only the nine has no DEP(F) at all
    per_task = [DepCounts(field_hits=4, field_total=4, method_hits=2, method_total=2)] + [DepCounts()] * 9
    dep = _dep_scores(per_task, resamples=2000, seed=0)
    assert (dep.dep_f.value, dep.dep_f.ci_low, dep.dep_f.ci_high) == (1.0, 1.0, 1.0)
    assert (dep.dep_m.value, dep.dep_m.ci_low, dep.dep_m.ci_high) == (1.0, 1.0, 1.0)


def test_dep_interval_still_spreads_over_tasks_that_have_dependencies():
    per_task = [DepCounts(field_hits=0, field_total=2), DepCounts(field_hits=2, field_total=2), DepCounts()]
    dep = _dep_scores(per_task, resamples=2000, seed=0)
    assert dep.dep_f.value == 0.5 and dep.dep_f.ci_low == 0.0 and dep.dep_f.ci_high == 1.0
    assert dep.dep_m is None  # no task has method dependencies: no ratio, not 0


def test_summary_of_one_sample_per_task_has_no_pass_at_3_or_5_columns(classeval_path, tmp_path):
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=tmp_path, n_samples=1, ks=[1, 3, 5], bootstrap_resamples=100)
    out = evaluate(
        EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=["ClassEval_8"]), cfg, env={}
    )
    summary = render_summary(load_results(out.run_dir))
    table4 = summary.split("## Table 4")[1].split("##")[0]
    assert "pass@1" in table4 and "pass@3" not in table4 and "pass@5" not in table4
    assert "| - |" not in table4 and " - |" not in table4


def test_an_evaluate_error_is_the_only_output_with_no_blank_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "classforge_bench.pipeline.cli", "evaluate", "--regrade", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: {tmp_path / 'results.json'}: no results file\n"
