"""Goal 5 of issue 22: `classforge evaluate --dask` throughput with 1 and 2 workers, beside a local run.

Usage:
    python benchmarks/evaluate_dask.py --outputs GPT-4_100_c_t0.json --dataset ClassEval_data.json [--tasks 30]

The first `--tasks` answers of a ClassEval model-output file (completion = `predict[0]`) are scored
four ways, each from an empty results folder and an empty reference cache (nothing reused): locally
with 2 sandbox workers, then on a Dask cluster started here the way users start one (`dask scheduler`,
`dask worker ADDRESS --nthreads 1` as separate processes on 127.0.0.1) with 1 worker and with 2.
Printed: wall time, samples per second, the ratio to the local run, and the load average beside each
(every worker here shares this machine's cores, so 2 workers can only gain what the cores allow).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


def _dask(args: list[str], log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            start_new_session=True,
        )


def start_cluster(folder: Path, workers: int) -> tuple[str, list[subprocess.Popen]]:
    info = folder / "scheduler.json"
    procs = [
        _dask(
            ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
            folder / "scheduler.log",
        )
    ]
    deadline = time.monotonic() + 300
    while not info.is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    address = json.loads(info.read_text())["address"]
    for i in range(workers):
        procs.append(
            _dask(
                ["worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard"],
                folder / f"worker{i}.log",
            )
        )
    from distributed import Client

    with Client(address, timeout=300) as client:
        client.wait_for_workers(workers, timeout=300)
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=120)


def run(dataset: Path, samples: Path, out: Path, dask: str | None, workers: int | None) -> tuple[float, object]:
    from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
    from classforge_bench.pipeline.config import Config, EvaluateConfig

    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=out / "results", dask=dask, workers=workers)
    t0 = time.perf_counter()
    outcome = evaluate(EvaluationRequest(dataset=dataset, samples_file=samples), cfg, env={})
    return time.perf_counter() - t0, outcome.results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--outputs", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--tasks", type=int, default=30)
    args = parser.parse_args()
    records = json.loads(args.outputs.read_text(encoding="utf-8"))[: args.tasks]
    with tempfile.TemporaryDirectory(prefix="cf-bench-dask-") as tmp:
        tmp_path = Path(tmp)
        samples = tmp_path / "samples.jsonl"
        samples.write_text(
            "".join(
                json.dumps({"task_id": r["task_id"], "completion": r["predict"][0], "model": "m"}) + "\n"
                for r in records
            ),
            encoding="utf-8",
        )
        figures = {}
        print(f"{len(records)} answers of {args.outputs.name}; {os.cpu_count()} cores", flush=True)
        wall, results = run(args.dataset, samples, tmp_path / "local", None, 2)
        figures["local"] = (wall, results)
        print(
            f"local, 2 sandbox workers: {wall:.1f} s, {len(records) / wall:.2f} samples/s, "
            f"{results.stats.sandbox_runs} runs ({_load()})",
            flush=True,
        )
        for n in (1, 2):
            folder = tmp_path / f"cluster{n}"
            folder.mkdir()
            address, procs = start_cluster(folder, n)
            try:
                wall, remote = run(args.dataset, samples, folder, address, None)
            finally:
                stop(procs)
            same = [s.bucket for s in remote.samples] == [s.bucket for s in results.samples]
            print(
                f"dask, {n} worker(s): {wall:.1f} s, {len(records) / wall:.2f} samples/s, {remote.stats.sandbox_runs} runs, "
                f"x{figures['local'][0] / wall:.2f} the local throughput, buckets as local: {same} ({_load()})",
                flush=True,
            )


if __name__ == "__main__":
    main()
