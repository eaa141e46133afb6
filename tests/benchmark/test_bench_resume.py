"""One file per sample is the resume unit, and a timed-out sample costs its limit (issue 15, item 4).

A small synthetic dataset (a counter class, two test classes) and a samples file whose programs
are all different, so that which programs the sandbox ran says which samples were done.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from bench_kit import (
    N_TASKS,
    REPO,
    SKELETON,
    SOLUTION,
    TESTS,
    Counting,
    config,
    dataset,
    marker,
    sample_files,
    samples,
)

from classforge_bench.benchmark.results import load_results
from classforge_bench.benchmark.runner import EvaluationError, EvaluationRequest, evaluate
from classforge_bench.pipeline.sandbox import get_backend
from classforge_bench.pipeline.sandbox.timing import evaluation_limit


def scores(out) -> list:
    return [(g.model, g.strategy, g.buckets, g.metrics, g.taxonomy) for g in out.results.scores]


class Killed(Exception):
    pass


def test_an_interrupted_run_resumes_from_its_finished_samples(tmp_path, caplog):
    data, file = dataset(tmp_path), samples(tmp_path)
    request = EvaluationRequest(dataset=data, samples_file=file)
    whole = evaluate(request, config(tmp_path / "whole"), env={})
    assert len(whole.results.samples) == 9 and len(sample_files(whole.run_dir)) == 9

    def kill_after_three(phase: str, done: int, total: int) -> None:
        if phase == "execution" and done == 3:
            raise Killed

    with pytest.raises(Killed):
        evaluate(request, config(tmp_path / "cut", workers=1), env={}, progress=kill_after_three)
    run_dir = next((tmp_path / "cut").iterdir())
    assert not (run_dir / "results.json").exists()  # written once, at the end
    kept = sample_files(run_dir)
    assert len(kept) == 4  # the no_code sample, then three executed ones
    # a sample file cut short (a disk that filled, a hand edit) is redone, and named
    broken_path = next(p for p in kept if json.loads(p.read_text())["generation"]["program"])
    broken = json.loads(broken_path.read_text())
    broken_path.write_text(broken_path.read_text()[:100])

    backend = Counting(get_backend(config(tmp_path).sandbox))
    with caplog.at_level(logging.WARNING, logger="classforge_bench.benchmark.results"):
        resumed = evaluate(request, config(tmp_path / "cut"), env={}, backend=backend)
    assert f"{broken_path}: not valid JSON" in caplog.text
    finished = {marker(json.loads(p.read_text())["generation"]["program"] or "-") for p in kept if p != broken_path}
    ran = {marker(p) for p in backend.programs}
    # only the missing samples ran, once each; the cut file's sample is redone from its stored execution
    expected = {f"# sample {i}" for i in range(8)} - finished - {marker(broken["generation"]["program"])}
    assert ran == expected and len(backend.programs) == len(expected)
    # the reference (one program for the three tasks), the cut sample, and the reference's second timing
    # when the first was slow enough to lift its limit (a busy machine): stored, so also reused
    retimed = any(r.timings == 2 for r in resumed.results.reference)  # one program, so at most one retiming
    assert resumed.results.stats.executions_reused == 2 + retimed
    assert resumed.results.stats.samples_resumed == len(kept) - 1
    assert f"Resumed: {len(kept) - 1} of 9 samples were finished by an earlier run" in resumed.summary
    assert scores(resumed) == scores(whole)
    assert [s.model_dump(exclude=RUN_FIELDS) for s in resumed.results.samples] == [
        s.model_dump(exclude=RUN_FIELDS) for s in whole.results.samples
    ]
    assert load_results(resumed.run_dir).scores == resumed.results.scores


# what two runs of the same sample may differ in: their limits (scaled from the reference's own
# timing), the runs' timings, and whether the execution was run or found in the store
RUN_FIELDS = {
    "execution": {
        "limit_s",
        "key",
        "suite_status",
        "detail",
        "wall_s",
        "runs_wall_s",
        "cpu_s",
        "peak_memory_mb",
        "isolation",
        "per_class",
        "reruns",
        "reused",
    },
}

_KILLABLE = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from tests.benchmark.bench_kit import config
    from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
    evaluate(EvaluationRequest(dataset=Path(sys.argv[2]), samples_file=Path(sys.argv[3])), config(Path(sys.argv[4]), workers=1), env={})
""")


def test_a_run_killed_with_sigkill_resumes_and_scores_as_an_uninterrupted_one(tmp_path):
    data, file = dataset(tmp_path), samples(tmp_path, slow=0.4)  # samples 3-7 take 0.4 s each: time to kill
    root = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLABLE, str(REPO), str(data), str(file), str(root)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 600  # a polling bound only: a busy machine gets there later
    while time.monotonic() < deadline and proc.poll() is None:
        if root.is_dir() and any(len(sample_files(d)) >= 5 for d in root.iterdir()):
            break
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    proc.stderr.close()
    run_dir = next(root.iterdir())
    done = {marker(json.loads(p.read_text())["generation"]["program"] or "-") for p in sample_files(run_dir)}
    assert 5 <= len(done) < 9 and not (run_dir / "results.json").exists()

    backend = Counting(get_backend(config(tmp_path).sandbox))
    resumed = evaluate(EvaluationRequest(dataset=data, samples_file=file), config(root), env={}, backend=backend)
    ran = {marker(p) for p in backend.programs}
    assert ran == {f"# sample {i}" for i in range(8)} - done and len(backend.programs) == len(ran)
    whole = evaluate(EvaluationRequest(dataset=data, samples_file=file), config(tmp_path / "whole"), env={})
    assert scores(resumed) == scores(whole)


def test_a_sample_that_loops_forever_is_stopped_at_the_limit_scaled_from_its_reference(tmp_path):
    """What holds at any speed: the looping sample ends as a timeout at the limit its task's reference
    run set (the floor, or more when the reference itself ran slowly on a busy machine). How long the
    stop takes is a timing claim: benchmarks/ measures it, not this test."""
    data = dataset(tmp_path)
    looping = SOLUTION.replace("self.n += k", "while True:\n            pass")
    one_class = tmp_path / "one_class.jsonl"  # a single test class: the sample's bucket is the timeout
    row = json.loads(data.read_text().splitlines()[0]) | {"test_classes": ["CounterTestAdd"]}
    one_class.write_text(json.dumps(row) + "\n", encoding="utf-8")
    for path, bucket in ((one_class, "timeout"), (data, "completed")):
        file = tmp_path / f"loop-{bucket}.jsonl"
        file.write_text(json.dumps({"task_id": "T0", "model": "m", "completion": f"```python\n{looping}```"}) + "\n")
        cfg = config(tmp_path / bucket)
        out = evaluate(EvaluationRequest(dataset=path, samples_file=file, task_ids=["T0"]), cfg, env={})
        s = out.results.samples[0]
        (reference,) = [r for r in out.results.reference if r.task_id == "T0"]
        limit = s.execution.limit_s
        # From the reference's CPU time and never below its wall time (sandbox/timing.py): on a busy
        # machine the wall time alone is stretched, so the limit is checked against both as measured.
        assert limit == reference.limit_s == evaluation_limit(reference.wall_s, reference.cpu_s, cfg.sandbox)
        assert limit >= cfg.sandbox.scale_floor_s
        assert s.bucket == bucket and s.score.error_category == "timeout_resource"
        assert s.execution.suite_status == "timeout"
        if bucket == "completed":  # two classes, both calling the looping add: each stopped within its share
            assert f"CounterTestAdd ran past its share of the {limit:.1f}s of CPU limit" in s.execution.detail
            assert s.outcome.test_classes["CounterTestAdd"].timed_out
            assert s.outcome.test_classes["CounterTestReset"].timed_out


def test_a_crash_reruns_the_classes_it_did_not_reach_within_what_is_left(tmp_path):
    data = dataset(tmp_path)
    # add(2) (CounterTestAdd's call) kills the interpreter; CounterTestReset calls add(3)
    crashing = SOLUTION.replace(
        "self.n += k", "if k == 2:\n            import os\n            os._exit(3)\n        self.n += k"
    )
    file = tmp_path / "crash.jsonl"
    file.write_text(json.dumps({"task_id": "T0", "model": "m", "completion": f"```python\n{crashing}```"}) + "\n")
    out = evaluate(EvaluationRequest(dataset=data, samples_file=file, task_ids=["T0"]), config(tmp_path / "r"), env={})
    s = out.results.samples[0]
    assert s.execution.suite_status == "crashed" and s.execution.reruns == 1
    assert s.outcome.test_classes["CounterTestAdd"].problems[-1].exception.type == "Crashed"
    assert s.outcome.test_class_status("CounterTestReset") == "success"  # from the rerun


def test_an_interrupted_generation_keeps_what_it_paid_for_in_the_folders_usage(tmp_path):
    """Ctrl-C mid-generation: the answers already paid for are in the results folder's usage files,
    and after the resumed run `usage.json` equals everything the server answered (issue 14)."""
    from classforge_bench.pipeline.config import EndpointConfig
    from classforge_bench.pipeline.llm.usage_history import USAGE_DIR
    from tests.fakes.openai_server import FakeOpenAIServer

    data = dataset(tmp_path)
    with FakeOpenAIServer(api_key="sk-test", default=f"```python\n{SOLUTION}```") as srv:
        cfg = config(tmp_path / "results", workers=1)
        cfg.llm.cache_path = tmp_path / "llm.sqlite"
        cfg.evaluate.n_samples, cfg.evaluate.ks, cfg.evaluate.strategies = 2, [1], ["holistic"]
        cfg.evaluate.endpoint = EndpointConfig(base_url=srv.base_url, model="m", timeout_s=10, max_retries=0)
        request = EvaluationRequest(dataset=data, models=["m"])

        def stop_after_two(phase: str, done: int, total: int) -> None:
            if phase == "generation" and done == 2:
                raise Killed

        # The progress callback runs on the generation pool, which names the sample it stopped.
        with pytest.raises(EvaluationError, match="Killed"):
            evaluate(request, cfg, env={"OPENAI_API_KEY": "sk-test"}, progress=stop_after_two)
        paid_before_stop = srv.billed()
        run_dir = next((tmp_path / "results").iterdir())
        (stored,) = (run_dir / USAGE_DIR).glob("*/generation.jsonl")
        stored_requests = sum(json.loads(line)["counts"].get("requests", 0) for line in stored.read_text().splitlines())
        assert stored_requests == paid_before_stop[0] >= 2

        resumed = evaluate(request, cfg, env={"OPENAI_API_KEY": "sk-test"})
        paid = srv.billed()
    every = json.loads((run_dir / "usage.json").read_text())["total"]
    last = json.loads((run_dir / "usage-last-run.json").read_text())["total"]
    assert (every["requests"], every["prompt_tokens"], every["completion_tokens"]) == paid
    assert last["requests"] == paid[0] - paid_before_stop[0] == resumed.results.usage.total.requests
    assert len(resumed.results.samples) == 2 * N_TASKS


def test_a_reference_stretched_past_the_samples_wall_limit_is_not_broken(tmp_path):
    """A busy machine stretches the reference's wall time; the task is not broken for it (its
    limits then come from the reference's CPU time and wall time, as measured)."""
    slow = "import time\n" + SOLUTION.replace("self.n += k", "time.sleep(1.5)\n        self.n += k")
    row = {
        "task_id": "T0",
        "class_name": "Counter",
        "skeleton": SKELETON,
        "test": TESTS,
        "test_classes": ["CounterTestAdd", "CounterTestReset"],
        "solution_code": slow,
    }
    data = tmp_path / "slow.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    file = tmp_path / "samples.jsonl"
    file.write_text(json.dumps({"task_id": "T0", "model": "m", "completion": f"```python\n{slow}```"}) + "\n")
    cfg = config(tmp_path / "r")
    cfg.sandbox.wall_limit_s = 2.0  # below the reference's 3 s of sleeping
    out = evaluate(EvaluationRequest(dataset=data, samples_file=file), cfg, env={})
    (reference,) = out.results.reference
    assert not reference.broken and reference.suite_status == "passed", reference
    assert reference.wall_s > cfg.sandbox.wall_limit_s
    assert out.results.samples[0].bucket == "completed"
