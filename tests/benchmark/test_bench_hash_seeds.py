"""A pass that depends on PYTHONHASHSEED is reported as such (`evaluate.hash_seeds`,
classforge_bench/benchmark/hash_seeds.py): GPT-4's ClassEval_22 answer passes ClassEval's tests
only under hash seeds 0 and 14 of 0-19 (its get_all_major returns `list(set(...))`)."""

from __future__ import annotations

import json
from pathlib import Path

from classforge_bench.benchmark.hash_seeds import other_seeds
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig

ANSWER = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "classeval_hash_seed_answer.json").read_text(encoding="utf-8")
)


def test_the_other_seeds_are_fixed_and_never_the_runs_own():
    assert other_seeds(0, 3) == [1, 2, 3]
    assert other_seeds(2, 3) == [1, 3, 4]
    assert other_seeds(0, 0) == []


def test_a_pass_that_holds_under_two_of_fifteen_seeds_is_reported_in_the_results_summary_and_page(
    classeval_path, tmp_path
):
    task_id = ANSWER["task_id"]
    reference = next(r for r in json.loads(classeval_path.read_text()) if r["task_id"] == task_id)["solution_code"]
    samples = tmp_path / "samples.jsonl"
    answers = (("GPT-4", ANSWER["class_code"]), ("steady", "# the reference, as another model wrote it\n" + reference))
    samples.write_text(
        "".join(
            json.dumps({"task_id": task_id, "completion": f"```python\n{code}\n```", "model": model}) + "\n"
            for model, code in answers
        )
    )
    config = Config(
        evaluate=EvaluateConfig(output_root=tmp_path / "results", ks=[1], bootstrap_resamples=10, hash_seeds=14)
    )
    outcome = evaluate(EvaluationRequest(dataset=classeval_path, samples_file=samples), config)
    checks = {c.model: c for c in outcome.results.hash_seed_checks}
    assert set(checks) == {"GPT-4", "steady"}  # both pass under the run's seed, 0
    gpt4 = checks["GPT-4"]
    assert gpt4.seeds == list(range(15)) and gpt4.dependent and gpt4.holds == 2
    assert [s for s, ok in zip(gpt4.seeds, gpt4.passes, strict=True) if ok] == [0, 14]
    assert not checks["steady"].dependent and checks["steady"].holds == 15
    # the score is the run's seed's, as before; the check says which pass to read with care
    gpt4_score = next(g for g in outcome.results.scores if g.model == "GPT-4")
    assert gpt4_score.metrics.class_level.full[1].value == 1.0
    verdict = "passes under 2 of 15 hash seeds (0, 14)"
    assert "## Verdicts that depend on PYTHONHASHSEED" in outcome.summary and verdict in outcome.summary
    page = (outcome.run_dir / "results.html").read_text(encoding="utf-8")
    assert "Verdicts that depend on PYTHONHASHSEED" in page and verdict in page and "ClassEval_22" in page
    stored = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    assert {c["model"]: c["passes"].count(True) for c in stored["hash_seed_checks"]} == {"GPT-4": 2, "steady": 15}


def test_without_the_option_nothing_is_run_again(classeval_path, tmp_path):
    task_id = ANSWER["task_id"]
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": task_id, "completion": ANSWER["class_code"], "model": "GPT-4"}) + "\n")
    config = Config(evaluate=EvaluateConfig(output_root=tmp_path / "results", ks=[1], bootstrap_resamples=10))
    outcome = evaluate(EvaluationRequest(dataset=classeval_path, samples_file=samples), config)
    assert outcome.results.hash_seed_checks == []
    assert "## Verdicts that depend on PYTHONHASHSEED" not in outcome.summary
