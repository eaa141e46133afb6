"""A sample's identity is held once: its request names the task and index, its bucket is the outcome's
status (schema 5). Files written by schema 4, whose outcome repeats all three, are still read and
resumed from; a file whose copies disagree is refused by name, never resolved by picking one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_kit import Counting, config, dataset, sample_files, samples
from metrics_kit import _task
from pydantic import ValidationError
from samples_kit import as_schema_4

from classforge_bench.benchmark.outcomes import SampleOutcome
from classforge_bench.benchmark.results import (
    ResultsError,
    RunSettings,
    SampleRecord,
    SampleRequest,
    SampleResult,
    load_results,
    read_sample,
)
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.scoring import score_group
from classforge_bench.pipeline.core.errors import IntegrityError
from classforge_bench.pipeline.sandbox import get_backend

# one sample file exactly as schema 4 wrote it (a timeout: the outcome repeats task, index and bucket)
SCHEMA_4_SAMPLE = {
    "request": {
        "model": "m",
        "strategy": "external",
        "task_id": "T1",
        "sample_index": 2,
        "dataset_sha256": "e4051c13",
        "source": "samples_file",
        "levels": None,
        "steps": [
            {
                "index": 0,
                "kind": "completion",
                "targets": [],
                "level": None,
                "prompt_version": None,
                "prompt_sha256": None,
                "raw": "```python\nclass Counter: ...\n```",
                "extracted": "class Counter: ...\n",
                "extraction_how": "fenced",
                "method_how": None,
                "finish_reason": None,
                "truncated": False,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "cached": False,
                "attempts": 0,
                "cache_key": None,
            }
        ],
        "program": "class Counter: ...\n",
        "limit_s": 2.0,
        "environment": "882127fdc24d5baa",
        "execution_key": "2b363118",
    },
    "result": {
        "bucket": "timeout",
        "reason": "TimeoutError: exceeded the 2.0s limit",
        "cause": None,
        "repeats": None,
        "outcome": {
            "task_id": "T1",
            "sample_index": 2,
            "status": "timeout",
            "error": {"type": "TimeoutError", "message": "exceeded the 2.0s limit", "traceback": ""},
            "test_classes": {
                "CounterTestAdd": {
                    "tests_run": 1,
                    "failures": 0,
                    "errors": 0,
                    "skipped": 0,
                    "timed_out": True,
                    "problems": [],
                }
            },
        },
        "error_category": "timeout_resource",
        "error_reason": "TimeoutError",
        "suite_status": "timeout",
        "detail": "exceeded the 2.0s limit",
        "wall_s": 3.1,
        "runs_wall_s": 3.1,
        "cpu_s": 2.0,
        "peak_memory_mb": 13.5,
        "isolation": "bwrap",
        "per_class": False,
        "reruns": 0,
        "reused": None,
        "prompt_tokens": 0,
        "completion_tokens": 0,
    },
}


def _write(path: Path, record: dict) -> Path:
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def test_a_schema_4_sample_file_is_read_and_written_back_with_its_identity_once(tmp_path):
    record = read_sample(_write(tmp_path / "old.json", SCHEMA_4_SAMPLE))
    assert record.key == ("m", "external", "T1", 2)
    assert record.result.bucket == record.result.outcome.status == "timeout"
    assert record.result.outcome.test_class_status("CounterTestAdd") == "error"  # timed out: never a pass
    written = record.model_dump(mode="json")
    assert set(written["result"]["outcome"]) == {"error", "test_classes"}
    expected = json.loads(json.dumps(SCHEMA_4_SAMPLE))
    for field in ("task_id", "sample_index", "status"):
        del expected["result"]["outcome"][field]
    assert written == expected  # nothing else changed on the way
    assert read_sample(_write(tmp_path / "new.json", written)) == record


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("task_id", "T9", "the request's task_id is 'T1' but its outcome's is 'T9'"),
        ("sample_index", 0, "the request's sample_index is 2 but its outcome's is 0"),
        ("status", "completed", "the outcome's status 'completed' is not the bucket 'timeout'"),
    ],
)
def test_an_old_file_whose_copies_disagree_is_an_error_naming_it(tmp_path, field, value, message):
    bad = json.loads(json.dumps(SCHEMA_4_SAMPLE))
    bad["result"]["outcome"][field] = value
    path = _write(tmp_path / "disagrees.json", bad)
    with pytest.raises(ResultsError) as caught:
        read_sample(path)
    assert str(caught.value).startswith(f"{path}: not a sample record: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_result_whose_outcome_is_another_bucket_is_refused():
    with pytest.raises(ValidationError, match="the outcome's status 'completed' is not the bucket 'timeout'"):
        SampleResult(bucket="timeout", outcome=SampleOutcome(status="completed"))


def test_a_run_folder_written_by_schema_4_is_read_and_resumed_without_redoing_anything(tmp_path):
    request = EvaluationRequest(dataset=dataset(tmp_path), samples_file=samples(tmp_path))
    cfg = config(tmp_path / "results")
    out = evaluate(request, cfg, env={})
    assert {r.result.bucket for r in out.results.samples} == {"completed", "no_code"}
    # the folder as schema 4 would have left it
    summary = json.loads((out.run_dir / "results.json").read_text(encoding="utf-8"))
    _write(out.run_dir / "results.json", summary | {"schema_version": 4})
    for path in sample_files(out.run_dir):
        old = as_schema_4(json.loads(path.read_text(encoding="utf-8")))
        _write(path, old)
    assert any("task_id" in (json.loads(p.read_text())["result"]["outcome"] or {}) for p in sample_files(out.run_dir))
    assert load_results(out.run_dir).samples == out.results.samples

    backend = Counting(get_backend(cfg.sandbox))
    again = evaluate(request, cfg, env={}, backend=backend)
    assert backend.programs == [] and again.results.stats.sandbox_runs == 0
    assert again.results.stats.samples_resumed == len(out.results.samples) == 9
    assert again.results.samples == out.results.samples
    assert again.results.scores == out.results.scores


def test_scoring_groups_samples_by_their_requests_and_refuses_an_index_twice():
    settings = RunSettings.model_validate(
        {
            "models": ["m"],
            "strategies": ["external"],
            "n_samples": None,
            "ks": [1],
            "levels_source": "labels",
            "temperature": 0.0,
            "max_tokens": 10,
            "base_url": None,
            "bootstrap_resamples": 20,
            "bootstrap_seed": 0,
            "scale_floor_s": 1.0,
            "scale_factor": 1.0,
            "reference_limit_s": 1.0,
        }
    )

    def record(task_id: str, index: int, status: str) -> SampleRecord:
        outcome = SampleOutcome(status=status)
        return SampleRecord(
            request=SampleRequest(model="m", strategy="external", task_id=task_id, sample_index=index),
            result=SampleResult(bucket=outcome.status, outcome=outcome),
        )

    records = [record("A", 0, "compile_error"), record("B", 0, "compile_error"), record("A", 1, "no_code")]
    scores = score_group("m", "external", [_task("A"), _task("B")], set(), records, settings)
    assert scores.metrics is not None and [(t.task_id, t.n) for t in scores.metrics.per_task] == [("A", 2), ("B", 1)]
    with pytest.raises(IntegrityError, match=r"task A: duplicate sample indices \[0, 0\]"):
        score_group("m", "external", [_task("A")], set(), [record("A", 0, "no_code"), records[0]], settings)
