"""A sample is one record, its identity held once: the record names the task and index, its score's
bucket is the outcome's status, its steps hold the tokens (schema 6). Files written by schema 5
(request and result, the tokens twice) and schema 4 (whose outcome also repeats task, index and
status) are still read, losing nothing, and resumed from; a file whose copies disagree is refused
by name, never resolved by picking one. Each part of a record is filled once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_kit import Counting, config, dataset, sample_files, samples
from metrics_kit import _task
from pydantic import ValidationError
from samples_kit import as_schema_4, as_schema_5

from classforge_bench.benchmark.outcomes import SampleOutcome
from classforge_bench.benchmark.record import Execution, Generation, SampleRecord, Score
from classforge_bench.benchmark.results import ReferenceRecord, ResultsError, RunSettings, load_results, read_sample
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.scoring import score_group, score_sample
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
    assert record.bucket == record.outcome.status == "timeout"
    assert record.outcome.test_class_status("CounterTestAdd") == "error"  # timed out: never a pass
    assert record.execution.key == "2b363118" and record.execution.limit_s == 2.0
    written = record.model_dump(mode="json")
    assert set(written) == {"model", "strategy", "task_id", "sample_index", "dataset_sha256"} | PARTS
    assert set(written["execution"]["outcome"]) == {"error", "test_classes"}
    assert "prompt_tokens" not in written["score"]
    expected = json.loads(json.dumps(SCHEMA_4_SAMPLE))
    for field in ("task_id", "sample_index", "status"):
        del expected["result"]["outcome"][field]
    assert as_schema_5(written) == expected  # nothing else changed on the way
    assert read_sample(_write(tmp_path / "new.json", written)) == record


PARTS = {"generation", "execution", "score"}


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


def test_a_record_whose_outcome_is_another_bucket_is_refused():
    with pytest.raises(ValidationError, match="the outcome's status 'completed' is not the bucket 'timeout'"):
        SampleRecord(
            model="m",
            strategy="s",
            task_id="T1",
            sample_index=0,
            generation=Generation(source="llm", program="x = 1\n"),
            execution=Execution(outcome=SampleOutcome(status="completed")),
            score=Score(bucket="timeout"),
        )


def test_each_part_is_filled_once():
    record = SampleRecord(model="m", strategy="s", task_id="T1", sample_index=0)
    assert record.fill(Generation(source="empty", program="x = 1\n")) is record and record.program == "x = 1\n"
    with pytest.raises(IntegrityError, match=r"task T1: sample \('m', 's', 'T1', 0\): its generation is filled twice"):
        record.fill(Generation(source="empty", program="y = 2\n"))
    assert record.program == "x = 1\n"  # the first is kept, and the run stops
    record.fill(Score(bucket="no_code"))
    with pytest.raises(IntegrityError, match="its score is filled twice"):
        record.fill(Score(bucket="completed"))


def test_a_schema_5_file_whose_tokens_are_not_its_steps_is_refused(tmp_path):
    old = json.loads(json.dumps(SCHEMA_4_SAMPLE))
    old["request"]["steps"][0] |= {"prompt_tokens": 12, "completion_tokens": 5}
    old["result"] |= {"prompt_tokens": 12, "completion_tokens": 5}
    assert read_sample(_write(tmp_path / "agrees.json", old)).generation.prompt_tokens == 12
    old["result"]["completion_tokens"] = 6
    path = _write(tmp_path / "disagrees.json", old)
    with pytest.raises(ResultsError, match="the result's completion_tokens is 6 but its steps' are 5"):
        read_sample(path)


@pytest.mark.parametrize(("version", "old_shape"), [(4, as_schema_4), (5, as_schema_5)])
def test_a_run_folder_written_by_an_older_schema_is_read_and_resumed_without_redoing_anything(
    tmp_path, version, old_shape
):
    request = EvaluationRequest(dataset=dataset(tmp_path), samples_file=samples(tmp_path))
    cfg = config(tmp_path / "results")
    out = evaluate(request, cfg, env={})
    assert {r.bucket for r in out.results.samples} == {"completed", "no_code"}
    # the folder as that schema would have left it
    summary = json.loads((out.run_dir / "results.json").read_text(encoding="utf-8"))
    assert summary["schema_version"] == 6
    _write(out.run_dir / "results.json", summary | {"schema_version": version})
    for path in sample_files(out.run_dir):
        old = old_shape(json.loads(path.read_text(encoding="utf-8")))
        _write(path, old)
    outcomes = [json.loads(p.read_text())["result"]["outcome"] or {} for p in sample_files(out.run_dir)]
    assert any("task_id" in o for o in outcomes) == (version == 4)
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
        return SampleRecord(
            model="m",
            strategy="external",
            task_id=task_id,
            sample_index=index,
            generation=Generation(source="samples_file", program="x = (\n"),
            execution=Execution(outcome=SampleOutcome(status=status)),
            score=Score(bucket=status),
        )

    records = [record("A", 0, "compile_error"), record("B", 0, "compile_error"), record("A", 1, "no_code")]
    scores = score_group("m", "external", [_task("A"), _task("B")], set(), records, settings)
    assert scores.metrics is not None and [(t.task_id, t.n) for t in scores.metrics.per_task] == [("A", 2), ("B", 1)]
    with pytest.raises(IntegrityError, match=r"task A: duplicate sample indices \[0, 0\]"):
        score_group("m", "external", [_task("A")], set(), [record("A", 0, "no_code"), records[0]], settings)


def _schema_5(kind: str) -> dict:
    """One sample file of each kind exactly as schema 5 wrote it (its runner's `_final`, `_unexecuted`
    and `_executed`): the bucket, reason and cause in `result`, the run's limit, environment and
    key in `request`, the outcome of an unexecuted sample stored beside them."""
    record = json.loads(json.dumps(SCHEMA_4_SAMPLE))
    for field in ("task_id", "sample_index", "status"):
        del record["result"]["outcome"][field]
    request, result = record["request"], record["result"]
    unrun = {"limit_s": None, "environment": None, "execution_key": None}
    not_run = {"suite_status": None, "detail": "", "wall_s": None, "runs_wall_s": None, "cpu_s": None}
    not_run |= {"peak_memory_mb": None, "isolation": ""}
    unscored = {"outcome": None, "error_category": None, "error_reason": None}
    if kind == "timeout":
        return record
    if kind == "no_code":
        request |= unrun | {"program": None}
        result |= not_run | {"bucket": "no_code", "reason": "the answer defines no class Counter"}
        result |= {"outcome": {"error": None, "test_classes": {}}, "error_category": "other"}
        result["error_reason"] = "no code extracted from the output"
    elif kind == "surrogate":
        reason = "task T1: the code is not valid source text: a lone surrogate '\\ud800' at offset 3"
        request |= unrun | {"program": None}
        error = {"type": "UnicodeEncodeError", "message": reason, "traceback": ""}
        result |= not_run | {
            "bucket": "compile_error",
            "reason": reason,
            "outcome": {"error": error, "test_classes": {}},
        }
        result |= {"error_category": "syntax", "error_reason": "UnicodeEncodeError"}
    elif kind == "syntax":
        request |= unrun | {"program": "class Counter(:\n"}
        error = {"type": "SyntaxError", "message": "invalid syntax (line 1)", "traceback": ""}
        result |= not_run | {"bucket": "compile_error", "reason": "SyntaxError: invalid syntax (line 1)"}
        result |= {"outcome": {"error": error, "test_classes": {}}, "error_category": "syntax"}
        result["error_reason"] = "SyntaxError"
    elif kind == "generation_error":
        request |= unrun | {"program": None, "source": "llm", "steps": []}
        result |= not_run | unscored | {"bucket": "generation_error", "cause": "llm-unavailable", "repeats": False}
        result["reason"] = "task T1: step 1 failed: endpoint http://127.0.0.1:9/v1 unreachable"
    elif kind == "sandbox_error":
        result |= unscored | {"bucket": "sandbox_error", "cause": "sandbox-failed", "repeats": False}
        result |= {"suite_status": "sandbox_error", "detail": "bwrap: setting up uid map: Permission denied"}
        result["reason"] = "task T1: the sandbox failed: bwrap: setting up uid map: Permission denied"
    elif kind == "task_broken":
        request |= unrun
        result |= not_run | unscored | {"bucket": "task_broken", "cause": "task-broken", "repeats": True}
        result["reason"] = "task T1 is broken: failed: 1 failed; first: CounterTestAdd.test_add"
    return record


KINDS = ("timeout", "no_code", "surrogate", "syntax", "generation_error", "sandbox_error", "task_broken")


@pytest.mark.parametrize("kind", KINDS)
def test_a_schema_5_file_of_every_kind_is_read_into_the_parts_that_decided_it_losing_nothing(tmp_path, kind):
    old = _schema_5(kind)
    record = read_sample(_write(tmp_path / f"{kind}.json", old))
    ended_by_generation = kind in ("no_code", "surrogate", "generation_error")
    assert (record.generation.unrun is not None) == ended_by_generation
    assert (record.execution is None) == (ended_by_generation or kind == "task_broken")
    assert (record.execution is not None and record.execution.sandbox_failure is not None) == (kind == "sandbox_error")
    assert record.outcome == (
        SampleOutcome.model_validate(old["result"]["outcome"] | {"status": record.bucket})
        if old["result"]["outcome"]
        else None
    )
    assert as_schema_5(record.model_dump(mode="json")) == old  # every field kept

    # what scoring decides from the parts is what schema 5 stored
    again = record.model_copy(update={"score": None})  # the same parts, not yet scored
    broken = ReferenceRecord(
        task_id="T1",
        broken=True,
        cause=old["result"]["reason"].split(" is broken: ")[-1],
        suite_status="failed",
        wall_s=0.1,
        limit_s=2.0,
        execution_key="k",
    )
    score_sample(_task("T1"), again, broken if kind == "task_broken" else None)
    verdict = ("bucket", "reason", "cause", "repeats")
    assert again.score.model_dump(include=set(verdict)) == {k: old["result"][k] for k in verdict}
