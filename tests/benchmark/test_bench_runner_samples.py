"""Pre-generated samples (`--samples`): scored without any LLM, every sample in one bucket; a runaway
test class is stopped at its share of the sample's limit so it cannot mask the others, and the
sample costs no more than its limit; regrading reproduces the scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples_kit import _V3_EXECUTION, BANK, BROKEN, as_schema_4, write_samples

from classforge_bench.benchmark.execution import ExecutionStore
from classforge_bench.benchmark.results import ResultsError, load_results
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate, regrade
from classforge_bench.pipeline.config import Config, EvaluateConfig


def config(tmp_path: Path) -> Config:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=tmp_path / "results", bootstrap_resamples=300)
    # a short evaluation limit keeps the runaway samples quick: max(2 s, 4 x reference time)
    cfg.sandbox.scale_floor_s = 2.0
    cfg.sandbox.scale_factor = 4.0
    return cfg


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_pregenerated_samples_land_in_one_bucket_each_and_regrade_reproduces(classeval_path, lines, tmp_path):
    samples = write_samples(tmp_path / "samples.jsonl", lines)
    request = EvaluationRequest(dataset=classeval_path, samples_file=samples, task_ids=[BANK, BROKEN])
    out = evaluate(request, config(tmp_path), env={})
    r = out.results
    assert r.broken_task_ids == [BROKEN]
    assert "LAPTOP-2CS86KUM" in r.reference[1].cause
    by_index = {(s.strategy, s.sample_index): s for s in r.samples if s.task_id == BANK}
    ext = {i: by_index[("external", i)] for i in range(6)}
    assert [ext[i].bucket for i in range(6)] == [
        "completed",
        "no_code",
        "compile_error",
        "completed",
        "timeout",
        "load_error",
    ]
    assert all(s.generation.source == "samples_file" and s.generation.steps[0].kind == "completion" for s in r.samples)

    assert ext[0].score.error_category is None
    assert ext[1].score.error_category == "other" and ext[1].execution is None
    assert (
        ext[2].score.error_category == "syntax"
        and ext[2].execution.suite_status is None
        and ext[2].execution.key is None
    )

    # the runaway withdraw: it is stopped at its share of the limit, and the classes after it run
    # again with what is left, so only it and the ones calling it (transfer, the class-level
    # test) time out; all of it within the sample's one limit
    loop = ext[3]
    assert loop.execution.suite_status == "timeout" and loop.execution.per_class and loop.execution.reruns >= 1
    # the limit is the one the reference run set (the floor, or more if the machine was busy then)
    assert loop.execution.limit_s == r.reference[0].limit_s >= config(tmp_path).sandbox.scale_floor_s
    assert (
        f"BankAccountTestWithdraw ran past its share of the {loop.execution.limit_s:.1f}s of CPU limit"
        in loop.execution.detail
    )
    statuses = {tc: loop.outcome.test_class_status(tc) for tc in loop.outcome.test_classes}
    assert statuses["BankAccountTestDeposit"] == statuses["BankAccountTestViewBalance"] == "success"
    for runaway in ("BankAccountTestWithdraw", "BankAccountTestTransfer", "BankAccountTest"):
        assert loop.outcome.test_classes[runaway].timed_out and statuses[runaway] == "error"
    assert loop.outcome.test_classes["BankAccountTestWithdraw"].problems[0].exception.type != "NotRun"
    assert loop.score.error_category == "timeout_resource"

    hang = ext[4]
    assert hang.execution.suite_status == "timeout" and not hang.execution.per_class
    assert hang.score.error_category == "timeout_resource"
    assert ext[5].outcome.error.type == "NameError" and ext[5].score.error_category == "dependency"

    field = by_index[("holistic", 0)]  # its own strategy label, numbered on its own
    assert field.bucket == "completed" and field.score.error_category == "dependency"
    assert field.score.error_reason.startswith("wrong field, method or library attribute in BankAccountTestWithdraw.")

    broken = next(s for s in r.samples if s.task_id == BROKEN)
    assert broken.bucket == "task_broken" and not broken.scored and broken.outcome is None

    external = next(g for g in r.scores if g.strategy == "external")
    assert external.model == "m1" and external.n_samples == 7 and external.n_scored == 6
    assert external.buckets["task_broken"] == 1 and external.tasks_scored == 1
    assert external.metrics.ks == [1, 3, 5]
    # 1 of 6 samples passes: pass@1 = 1/6; pass@5 = 1 - C(5,5)/C(6,5) = 5/6
    assert external.metrics.class_level.full[1].value == pytest.approx(1 / 6)
    assert external.metrics.class_level.full[5].value == pytest.approx(5 / 6)
    assert external.taxonomy == {
        "syntax": 1,
        "dependency": 1,
        "logic": 0,
        "integration": 0,
        "timeout_resource": 2,
        "other": 1,
    }

    # regrading offline reproduces every score, and does not run or ask anything
    before = out.results.model_dump(mode="json")
    again = regrade(out.run_dir)
    assert [g.model_dump() for g in again.results.scores] == [g.model_dump() for g in r.scores]
    assert again.results.model_dump(mode="json")["samples"] == before["samples"]
    assert load_results(out.run_dir).scores == again.results.scores

    # a resumed run executes nothing: every execution is in the content store
    resumed = evaluate(request, config(tmp_path), env={})
    assert resumed.run_dir == out.run_dir and resumed.results.stats.sandbox_runs == 0
    assert [g.metrics for g in resumed.results.scores] == [g.metrics for g in r.scores]


def test_regrade_refuses_unknown_schema_versions(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({"schema_version": 99}), encoding="utf-8")
    with pytest.raises(ResultsError, match="schema version 99"):
        regrade(tmp_path)
    with pytest.raises(ResultsError, match="no results file"):
        regrade(tmp_path / "nowhere")


def test_reference_model_reuses_one_execution_for_identical_samples(classeval_path, tmp_path):
    cfg = config(tmp_path)
    cfg.evaluate.n_samples = 3
    out = evaluate(EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=[BANK]), cfg, env={})
    r = out.results
    assert [s.bucket for s in r.samples] == ["completed"] * 3
    # the pre-run only: the three identical programs reuse it
    assert r.stats.sandbox_runs == r.reference[0].timings
    assert {s.execution.key for s in r.samples} == {r.reference[0].execution_key}
    assert r.scores[0].strategy == "direct" and r.scores[0].metrics.class_level.full[3].value == 1.0
    store = ExecutionStore(out.run_dir / "executions")
    assert store.get(r.samples[0].execution.key).program == r.samples[0].program


def test_limits_have_a_floor_and_a_cap_and_references_are_timed_once(classeval_path, tmp_path):
    cfg = config(tmp_path)
    cfg.sandbox.scale_floor_s, cfg.sandbox.scale_factor, cfg.sandbox.scale_cap_s = 0.5, 100.0, 0.7
    r = evaluate(EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=[BANK]), cfg, env={}).results
    ref = r.reference[0]
    # 100 x any real run of BankAccount's tests (> 7 ms of CPU) is above the floor: the limit is the cap;
    # the CPU time does not grow with the machine's load, so one timing is enough
    assert ref.timings == 1 and ref.cpu_s is not None and ref.limit_s == 0.7
    assert r.stats.sandbox_runs == 1  # the pre-run; the sample reuses it
    assert (r.settings.scale_floor_s, r.settings.scale_factor, r.settings.scale_cap_s) == (0.5, 100.0, 0.7)
    assert r.settings.grace_s == cfg.sandbox.grace_s and r.settings.hash_seed == 0
    summary = (tmp_path / "results" / r.run_id / "summary.md").read_text(encoding="utf-8")
    assert "at least 0.5 s, at most 0.7 s, killed 2 s after it" in summary and "PYTHONHASHSEED=0" in summary


def test_cli_evaluates_then_regrades(classeval_path, tmp_path):
    from typer.testing import CliRunner

    from classforge_bench.pipeline.cli import app

    runner = CliRunner()
    args = [
        "evaluate",
        "--dataset",
        str(classeval_path),
        "--model",
        "reference",
        "--model",
        "empty",
        "--task",
        BANK,
        "--task",
        BROKEN,
        "--n",
        "1",
        "--out",
        str(tmp_path / "results"),
        "--plots",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "1 broken, excluded" in first.output and "reference" in first.output and "100.0" in first.output
    (run_dir,) = (tmp_path / "results").iterdir()
    assert {p.name for p in run_dir.iterdir()} >= {
        "results.json",
        "summary.md",
        "passk.png",
        "taxonomy.png",
        "executions",
    }
    again = runner.invoke(app, ["evaluate", "--regrade", str(run_dir)])
    assert again.exit_code == 0, again.output
    assert "regraded 2 stored samples offline" in again.output
    bad = runner.invoke(
        app,
        [
            "evaluate",
            "--dataset",
            str(classeval_path),
            "--model",
            "reference",
            "--task",
            "nope",
            "--out",
            str(tmp_path / "results"),
        ],
    )
    # The error is one unwrapped line on stderr, whatever the terminal width or the path's length.
    assert bad.exit_code == 2 and bad.stderr.splitlines() == [f"error: {classeval_path}: no task(s) nope"]


def test_results_and_plots_are_written_once_per_run(classeval_path, tmp_path, monkeypatch):
    import classforge_bench.benchmark.runner as runner

    calls: list[str] = []
    real_save, real_plots = runner.save_results, runner.write_plots
    monkeypatch.setattr(runner, "save_results", lambda *a, **k: (calls.append("results"), real_save(*a, **k))[1])
    monkeypatch.setattr(runner, "write_plots", lambda *a: (calls.append("plots"), real_plots(*a))[1])
    cfg = config(tmp_path)
    cfg.evaluate.plots = True
    out = evaluate(EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=[BANK]), cfg, env={})
    assert calls == ["results", "plots"]
    assert set(out.results.stats.seconds) == {"load", "reference", "generation", "execution", "scoring"}
    assert load_results(out.run_dir).stats.seconds == out.results.stats.seconds


def flat_v3(record: dict) -> dict:
    """A schema-5 sample file as schema 3 wrote it: one flat record, the run under `execution`."""
    record = as_schema_4(record)
    request, result = dict(record["request"]), dict(record["result"])
    run = {k: result.pop(k) for k in _V3_EXECUTION}
    execution = run | {"key": request.pop("execution_key"), "limit_s": request.pop("limit_s")}
    for new in ("dataset_sha256", "environment"):
        request.pop(new)
    for new in ("cpu_s", "peak_memory_mb", "reused"):
        result.pop(new)
    return request | result | {"execution": execution if run["suite_status"] is not None else None}


def test_one_file_per_sample_a_small_summary_and_old_results_still_regrade(classeval_path, lines, tmp_path):
    samples = write_samples(tmp_path / "samples.jsonl", lines[:3])
    out = evaluate(
        EvaluationRequest(dataset=classeval_path, samples_file=samples, task_ids=[BANK]), config(tmp_path), env={}
    )
    summary = json.loads((out.run_dir / "results.json").read_text(encoding="utf-8"))
    assert summary["schema_version"] == 6 and "samples" not in summary and len(summary["sample_files"]) == 3
    files = sorted((out.run_dir / "samples").rglob("*.json"))
    assert [str(f.relative_to(out.run_dir)) for f in files] == sorted(summary["sample_files"])
    first = json.loads((out.run_dir / summary["sample_files"][0]).read_text(encoding="utf-8"))
    assert first["generation"]["steps"][0]["raw"] == lines[0]["completion"]  # raw replies live in the sample files only
    assert lines[0]["completion"] not in (out.run_dir / "results.json").read_text(encoding="utf-8")

    # a run folder written by schema version 1 (everything in results.json) is read and regraded
    old = tmp_path / "old"
    old.mkdir()
    v1 = out.results.model_dump(mode="json") | {"schema_version": 1}
    v1["samples"] = [flat_v3(s) for s in v1["samples"]]
    (old / "results.json").write_text(json.dumps(v1), encoding="utf-8")
    again = regrade(old)
    assert [g.metrics for g in again.results.scores] == [g.metrics for g in out.results.scores]
    assert json.loads((old / "results.json").read_text(encoding="utf-8"))["schema_version"] == 6

    # so is one written by schema version 2 (sample files without `cause`, `repeats`, `reruns`)
    v2 = tmp_path / "v2"
    (v2 / "samples").mkdir(parents=True)
    (v2 / "results.json").write_text(json.dumps(summary | {"schema_version": 2}), encoding="utf-8")
    for name in summary["sample_files"]:
        record = flat_v3(json.loads((out.run_dir / name).read_text(encoding="utf-8")))
        for key in ("cause", "repeats"):
            record.pop(key)
        if record["execution"]:
            record["execution"].pop("reruns")
            record["execution"].pop("runs_wall_s")
        (v2 / name).parent.mkdir(parents=True, exist_ok=True)
        (v2 / name).write_text(json.dumps(record), encoding="utf-8")
    assert load_results(v2).schema_version == 2
    assert [g.metrics for g in regrade(v2).results.scores] == [g.metrics for g in out.results.scores]

    (out.run_dir / summary["sample_files"][1]).unlink()
    with pytest.raises(ResultsError, match=r"samples/.*__1__.*\.json: cannot read"):
        load_results(out.run_dir)
