"""Wall time of evaluating ClassEval's reference solutions end to end, beside the bare cost.

Usage:
    python benchmarks/evaluate_reference.py [--dataset PATH] [--workers N] [--json OUT]

Three measurements in one run, on the same 100 suites, with the same number of parallel workers
(default: the evaluator's default pool, one per core):

1. end to end: `classforge_bench.benchmark.runner.evaluate` with model `reference`, 1 sample, into a fresh results
   folder (nothing to resume): dataset loading, the reference pre-run, the scoring run, metrics
   with bootstrap intervals, results.json, summary.md and plots;
2. sandbox alone: `classforge_bench.pipeline.sandbox.run_suites` on the 100 reference programs (one pass);
3. bare: `python -m unittest <module>.<Class> ...` in a subprocess per task (solution + tests in one
   file, as ClassEval runs them), with no isolation beyond a private network namespace
   (`unshare -rn`, when available) so that no test reaches the network.

2 and 3 run exactly the suites the evaluator runs, with `random` seeded to 0 (the harness seeds it
from the run's hash seed; the bare baseline seeds it at the top of its file). With --repeat N every measurement is taken N times,
interleaved, and the fastest of each is reported beside the others (the machine may be shared).

The end-to-end run executes every suite once (the `reference` model's samples reuse the pre-run;
a reference slow enough to lift its limit above the floor is timed a second time). It prints a table and, with --json, writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "classeval" / "ClassEval_data.json"


def end_to_end(dataset: Path, workers: int | None, out_root: Path) -> dict:
    from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
    from classforge_bench.pipeline.config import Config, EvaluateConfig

    cfg = Config()
    cfg.evaluate = EvaluateConfig(n_samples=1, output_root=out_root, workers=workers)
    t0 = time.perf_counter()
    out = evaluate(EvaluationRequest(dataset=dataset, models=["reference"]), cfg, env={})
    wall = time.perf_counter() - t0
    r = out.results
    g = r.scores[0]
    return {
        "wall_s": wall,
        "phases_s": r.stats.seconds,
        "sandbox_runs": r.stats.sandbox_runs,
        "broken": r.broken_task_ids,
        "class_pass_at_1": g.metrics.class_level.full[1].value,
        "tasks_scored": g.tasks_scored,
    }


def sandbox_alone(tasks: list, workers: int | None) -> dict:
    from classforge_bench.benchmark.strategies import reference_program
    from classforge_bench.pipeline.config import SandboxConfig
    from classforge_bench.pipeline.sandbox import SuiteRequest, run_suites

    requests = [
        SuiteRequest(
            item_id=t.task_id, solution=reference_program(t), tests=t.test, test_classes=t.test_classes, coverage=False
        )
        for t in tasks
    ]
    t0 = time.perf_counter()
    results = run_suites(requests, SandboxConfig(), workers=workers)
    wall = time.perf_counter() - t0
    per_run = [r.wall_s for r in results]
    return {
        "wall_s": wall,
        "runs": len(results),
        "passed": sum(r.passed for r in results),
        "median_run_s": statistics.median(per_run),
        "max_run_s": max(per_run),
        "isolation": results[0].isolation if results else "",
    }


# The sandbox harness seeds `random` with the run's hash seed (0) before the program runs; the bare
# baseline does the same so both run identical programs (ClassEval_58 draws mines at random).
_SEED = "import random as _seed_random; _seed_random.seed(0)\n"


def bare_unittest(tasks: list, workers: int, scratch: Path) -> dict:
    from classforge_bench.benchmark.strategies import reference_program

    prefix = ["unshare", "-rn"] if shutil.which("unshare") and _unshare_works() else []

    def one(task) -> tuple[float, int]:
        folder = scratch / task.task_id
        folder.mkdir(parents=True)
        module = "classeval_case"
        (folder / f"{module}.py").write_text(_SEED + reference_program(task) + "\n\n" + task.test, encoding="utf-8")
        cmd = [*prefix, sys.executable, "-m", "unittest", "-q", *(f"{module}.{c}" for c in task.test_classes)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=folder, capture_output=True, timeout=120, check=False)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = -1
        return time.perf_counter() - t0, code

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        runs = list(pool.map(one, tasks))
    wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "runs": len(runs),
        "exit_0": sum(code == 0 for _, code in runs),
        "median_run_s": statistics.median(t for t, _ in runs),
        "max_run_s": max(t for t, _ in runs),
        "isolation": "unshare -rn" if prefix else "none",
    }


def _unshare_works() -> bool:
    try:
        return subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--workers", type=int, default=None, help="default: the evaluator's pool (one per core)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1, help="measure N times, interleaved")
    args = parser.parse_args()

    from classforge_bench.pipeline.config import SandboxConfig
    from classforge_bench.pipeline.formats.loader import load_dataset
    from classforge_bench.pipeline.sandbox import pool_size

    workers = pool_size(SandboxConfig(), args.workers)
    tasks = load_dataset(args.dataset).tasks
    rounds = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="cf-bench-eval-") as tmp:
            tmp_path = Path(tmp)
            e2e = end_to_end(args.dataset, args.workers, tmp_path / "results")
            sandbox = sandbox_alone(tasks, args.workers)
            bare = bare_unittest(tasks, workers, tmp_path / "bare")
        rounds.append({"end_to_end": e2e, "sandbox_alone": sandbox, "bare_unittest": bare, "load_avg": os.getloadavg()})
    figures = {
        "machine": {"python": platform.python_version(), "cores": os.cpu_count(), "workers": workers},
        "tasks": len(tasks),
        "rounds": rounds,
    }
    print(
        f"ClassEval reference solutions, {len(tasks)} tasks, 1 sample, {workers} workers "
        f"(Python {platform.python_version()}, {os.cpu_count()} cores)"
    )
    for i, r in enumerate(rounds, start=1):
        e2e, sandbox, bare = r["end_to_end"], r["sandbox_alone"], r["bare_unittest"]
        print(f"round {i} (load average after it: {r['load_avg'][0]:.2f})")
        print(
            f"  end to end (classforge evaluate -m reference): {e2e['wall_s']:6.1f} s wall; phases "
            + ", ".join(f"{k} {v:.1f}s" for k, v in e2e["phases_s"].items())
            + f"; {e2e['sandbox_runs']} sandbox runs; {len(e2e['broken'])} broken; "
            f"class pass@1 {100 * e2e['class_pass_at_1']:.1f}% on {e2e['tasks_scored']} tasks"
        )
        print(
            f"  sandbox alone (run_suites, {sandbox['isolation']}): {sandbox['wall_s']:6.1f} s wall for {sandbox['runs']} runs; "
            f"median run {sandbox['median_run_s'] * 1000:.0f} ms, slowest {sandbox['max_run_s']:.1f} s; {sandbox['passed']} passed"
        )
        print(
            f"  bare python -m unittest ({bare['isolation']}): {bare['wall_s']:6.1f} s wall for {bare['runs']} runs; "
            f"median run {bare['median_run_s'] * 1000:.0f} ms, slowest {bare['max_run_s']:.1f} s; {bare['exit_0']} exited 0"
        )
    if len(rounds) > 1:
        best = {k: min(r[k]["wall_s"] for r in rounds) for k in ("end_to_end", "sandbox_alone", "bare_unittest")}
        figures["best_wall_s"] = best
        print("fastest: " + ", ".join(f"{k} {v:.1f} s" for k, v in best.items()))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
