"""`evaluate --dask`: sandbox runs on a real Dask cluster started the way users start one (`dask
scheduler` and `dask worker` as separate processes on 127.0.0.1), with the results of a local run,
resumed like one, and a worker that lacks what a run needs named at the start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from classforge_bench.benchmark.runner import EvaluationError, EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.sandbox import SandboxError

ROOT = Path(__file__).resolve().parents[2]
BANK = "ClassEval_8"


def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=log.parent,
            start_new_session=True,
        )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and one single-threaded worker, each its own process, on loopback."""
    folder = tmp_path_factory.mktemp("dask")
    info = folder / "scheduler.json"
    scheduler = _start(
        ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
        folder / "scheduler.log",
    )
    procs = [scheduler]
    try:
        deadline = time.monotonic() + 300  # a busy machine starts Python slowly
        while not info.is_file() and time.monotonic() < deadline and scheduler.poll() is None:
            time.sleep(0.2)
        assert info.is_file(), (folder / "scheduler.log").read_text()
        address = json.loads(info.read_text())["address"]
        procs.append(
            _start(
                ["worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard"], folder / "worker.log"
            )
        )
        yield address
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _samples(path: Path, bank: str) -> Path:
    broken = bank.replace("return self.balance", "return None", 1)
    runaway = bank.replace(
        "    def withdraw(self, amount):\n",
        "    def withdraw(self, amount):\n        while True:\n            pass\n",
        1,
    )
    lines = [bank, broken, bank.replace("def view_balance(self):", "def view_balance(self)"), runaway]
    path.write_text(
        "".join(json.dumps({"task_id": BANK, "completion": f"```python\n{c}\n```"}) + "\n" for c in lines),
        encoding="utf-8",
    )
    return path


def _config(out: Path, dask: str | None) -> Config:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=out, bootstrap_resamples=200, dask=dask)
    cfg.sandbox.scale_floor_s, cfg.sandbox.scale_factor = 2.0, 4.0  # keeps the runaway sample short
    return cfg


class _NoLocalSandbox:
    """Stands in for this machine's sandbox: any run that did not go to the cluster fails loudly."""

    name = "none-here"
    python = sys.executable

    def run(self, *args, **kwargs):
        raise SandboxError("ran locally")


def _verdicts(results) -> list[tuple]:
    return [
        (
            s.sample_index,
            s.bucket,
            {n: c.status for n, c in (s.outcome.test_classes if s.outcome else {}).items()},
        )
        for s in results.samples
    ]


def test_a_cluster_run_gives_the_local_results_and_resumes(cluster, classeval, classeval_path, tmp_path):
    samples = _samples(tmp_path / "samples.jsonl", classeval.by_id()[BANK].solution_code)
    request = EvaluationRequest(dataset=classeval_path, samples_file=samples)
    local = evaluate(request, _config(tmp_path / "local" / "results", None), env={}).results
    remote = evaluate(
        request, _config(tmp_path / "remote" / "results", cluster), env={}, backend=_NoLocalSandbox()
    ).results
    assert remote.stats.sandbox_runs >= 4  # the reference and the three samples that run, all on the worker
    assert _verdicts(remote) == _verdicts(local)
    assert [s.bucket for s in remote.samples] == ["completed", "completed", "compile_error", "completed"]
    assert remote.reference[0].broken is False
    again = evaluate(
        request, _config(tmp_path / "remote" / "results", cluster), env={}, backend=_NoLocalSandbox()
    ).results
    assert again.stats.sandbox_runs == 0 and again.stats.samples_resumed == 4
    assert _verdicts(again) == _verdicts(local)


def test_a_worker_without_the_task_environment_is_named_at_the_start(cluster, classeval_path, tmp_path):
    cfg = _config(tmp_path / "results", cluster)
    cfg.sandbox.python = str(tmp_path / "no-env" / "bin" / "python")
    with pytest.raises(
        EvaluationError,
        match=r"worker\(s\) cannot run the sandbox: tcp://127\.0\.0\.1:\d+: no interpreter "
        r".*no-env/bin/python \(the task environment\)",
    ):
        evaluate(EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=[BANK]), cfg, env={})
    assert not any((tmp_path / "results").rglob("samples/*"))  # nothing ran, nothing was written for a sample
