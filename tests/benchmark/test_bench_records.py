"""One record per evaluated sample, filled by generation, execution and scoring, in one file per sample
(issue 24 point 1, issue 30 point 2).

Uses the counter dataset of test_bench_resume: eight different programs and one answer without code.
"""

from __future__ import annotations

import json
import logging

import pytest
from bench_kit import Counting, config, dataset, sample_files, samples

from classforge_bench.benchmark.execution import environment_tag
from classforge_bench.benchmark.results import ResultsError, SampleRecord, load_results, read_sample, sample_file
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate, regrade
from classforge_bench.pipeline.sandbox import get_backend

NAME = ("model", "strategy", "task_id", "sample_index", "dataset_sha256")


def test_each_sample_has_one_file_holding_its_one_record(tmp_path):
    request = EvaluationRequest(dataset=dataset(tmp_path), samples_file=samples(tmp_path))
    cfg = config(tmp_path / "results")
    out = evaluate(request, cfg, env={})
    files = sample_files(out.run_dir)
    assert len(files) == len(out.results.samples) == 9
    assert sorted(out.run_dir / sample_file(r) for r in out.results.samples) == files
    limit = out.results.reference[0].limit_s
    for record in out.results.samples:
        path = out.run_dir / sample_file(record)
        assert set(json.loads(path.read_text(encoding="utf-8"))) == {*NAME, "generation", "execution", "score"}
        # the file, the typed record and its JSON round trip are the same sample
        assert read_sample(path) == record == SampleRecord.model_validate_json(record.model_dump_json())
        gen, run = record.generation, record.execution
        assert record.dataset_sha256 == out.results.dataset.sha256 and gen.source == "samples_file"
        if record.bucket == "no_code":
            assert gen.program is None and gen.unrun == "no_code" and run is None
            assert record.score.reason == gen.reason == "no code could be extracted from the answer"
            continue
        assert run.limit_s == limit and run.environment == environment_tag(cfg.sandbox)
        assert (out.run_dir / "executions" / run.key[:2] / f"{run.key}.json").is_file()
        assert run.suite_status in ("passed", "failed") and run.wall_s is not None and run.reused is None
        assert (
            record.bucket == "completed"
            and record.outcome is run.outcome is not None
            and set(run.outcome.test_classes) == {"CounterTestAdd", "CounterTestReset"}
        )
    assert sum(r.score.error_category == "logic" for r in out.results.samples) == 3  # samples 1, 4 and 7

    # a second evaluation redoes nothing; a sample whose file is gone comes back from its stored execution
    gone = next(r for r in out.results.samples if r.program is not None)
    (out.run_dir / sample_file(gone)).unlink()
    backend = Counting(get_backend(cfg.sandbox))
    again = evaluate(request, cfg, env={}, backend=backend)
    assert backend.programs == [] and again.results.stats.sandbox_runs == 0
    assert again.results.stats.samples_resumed == 8
    redone = next(r for r in again.results.samples if r.key == gone.key)
    assert redone.execution.reused == "store" and redone.generation == gone.generation
    assert redone.model_dump(exclude={"execution": {"reused"}}) == gone.model_dump(exclude={"execution": {"reused"}})
    assert again.results.scores == out.results.scores


def test_a_damaged_record_is_named_in_one_line_and_nothing_done_is_lost(tmp_path, caplog):
    request = EvaluationRequest(dataset=dataset(tmp_path), samples_file=samples(tmp_path))
    cfg = config(tmp_path / "results")
    out = evaluate(request, cfg, env={})
    files = sample_files(out.run_dir)
    cut, wrong = files[2], files[5]
    cut.write_text(cut.read_text(encoding="utf-8")[:150], encoding="utf-8")  # a disk that filled
    wrong.write_text(json.dumps({"model": "m", "generation": {}, "score": {}}), encoding="utf-8")  # a bad edit
    before = {p: p.read_bytes() for p in files if p not in (cut, wrong)}

    with pytest.raises(ResultsError) as raised:
        regrade(out.run_dir)
    message = str(raised.value)  # the first damaged file in the run's order
    assert message.startswith((f"{cut}: not valid JSON", f"{wrong}: not a sample record")) and "\n" not in message
    with pytest.raises(ResultsError) as raised:
        read_sample(cut)
    assert str(raised.value).startswith(f"{cut}: not valid JSON") and "\n" not in str(raised.value)
    with pytest.raises(ResultsError) as raised:
        read_sample(wrong)
    assert str(raised.value).startswith(f"{wrong}: not a sample record: strategy") and "\n" not in str(raised.value)

    backend = Counting(get_backend(cfg.sandbox))
    with caplog.at_level(logging.WARNING, logger="classforge_bench.benchmark.results"):
        again = evaluate(request, cfg, env={}, backend=backend)
    warnings = [r.getMessage() for r in caplog.records if r.name == "classforge_bench.benchmark.results"]
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert warnings[0].startswith(f"{cut}: not valid JSON") and warnings[1].startswith(f"{wrong}: not a sample record")
    # the two damaged samples are done again from the execution store, nothing runs, nothing else is touched
    assert backend.programs == [] and again.results.stats.samples_resumed == 7
    assert {p: p.read_bytes() for p in before} == before
    assert load_results(again.run_dir).scores == again.results.scores == out.results.scores
