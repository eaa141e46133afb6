"""How much the sandboxed harness costs compared with plain `python -m unittest`, on ClassEval.

    .venv/bin/python benchmarks/sandbox_overhead.py [--repeat 3] [--limit 100] [--json out.json]

In one run, on the same tasks and the same interpreter:
  * per suite, one at a time: plain `python -m unittest` in a subprocess (ClassEval's convention:
    the tests appended to the solution), the sandboxed harness without coverage (what evaluation
    uses) and with line+branch coverage (what the verification gate uses); median of --repeat runs,
    interleaved so drift hits all three alike; the overhead ratio is harness / plain per task;
  * the fixed costs that make up the difference (sandbox start-up, interpreter start-up, the
    harness's own work, importing coverage);
  * total wall time for all tasks through the worker pool (default: one worker per core), for
    plain unittest (a thread pool of subprocesses) and for both harness modes.
Not a test: it prints a table (and optionally writes JSON) for the README.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.sandbox import SuiteRequest, get_backend, pool_size, run_suites
from classforge_bench.pipeline.sandbox.base import RunLimits
from classforge_bench.pipeline.sandbox.suite import execute

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "classeval" / "ClassEval_data.json"


def plain_unittest(task: dict, python: str) -> float:
    """Wall time of `python -m unittest` on solution + tests in a fresh temp dir."""
    with tempfile.TemporaryDirectory(prefix="cf-bench-") as tmp:
        Path(tmp, "task_module.py").write_text(task["solution_code"] + "\n\n" + task["test"], encoding="utf-8")
        names = [f"task_module.{name.strip()}" for name in task["test_classes"]]
        started = time.perf_counter()
        subprocess.run([python, "-m", "unittest", *names], cwd=tmp, capture_output=True, check=False)
        return time.perf_counter() - started


def request(task: dict, coverage: bool) -> SuiteRequest:
    return SuiteRequest(
        item_id=task["task_id"],
        solution=task["solution_code"],
        tests=task["test"],
        test_classes=task["test_classes"],
        coverage=coverage,
    )


def harness(task: dict, coverage: bool, backend, config: SandboxConfig) -> float:
    started = time.perf_counter()
    execute(request(task, coverage), backend, config)
    return time.perf_counter() - started


def per_suite(tasks: list[dict], repeat: int, backend, config: SandboxConfig, python: str) -> list[dict]:
    rows = []
    for task in tasks:
        samples: dict[str, list[float]] = {"plain": [], "eval": [], "gate": []}
        for _ in range(repeat):  # interleaved, so slow drift affects every mode alike
            samples["plain"].append(plain_unittest(task, python))
            samples["eval"].append(harness(task, False, backend, config))
            samples["gate"].append(harness(task, True, backend, config))
        med = {k: statistics.median(v) for k, v in samples.items()}
        rows.append(
            {
                "task": task["task_id"],
                **med,
                "eval_ratio": med["eval"] / med["plain"],
                "gate_ratio": med["gate"] / med["plain"],
            }
        )
    return rows


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def fixed_costs(backend, config: SandboxConfig, python: str, repeat: int) -> dict[str, float]:
    """The parts of the harness's cost that do not depend on the task."""
    limits = RunLimits.from_config(config, wall_s=30)
    empty = {"solution_code": "", "test": "import unittest\n", "test_classes": [], "task_id": "empty"}
    return {
        "process start, plain (python -c pass)": _median_time(
            lambda: subprocess.run([python, "-c", "pass"], check=False), repeat
        ),
        "sandbox start + python -c pass": _median_time(lambda: backend.run({}, [python, "-c", "pass"], limits), repeat),
        "sandbox start + /bin/true": _median_time(lambda: backend.run({}, ["/bin/true"], limits), repeat),
        "import unittest (plain)": _median_time(
            lambda: subprocess.run([python, "-c", "import unittest"], check=False), repeat
        )
        - _median_time(lambda: subprocess.run([python, "-c", "pass"], check=False), repeat),
        "import coverage (plain)": _median_time(
            lambda: subprocess.run([python, "-c", "import coverage"], check=False), repeat
        )
        - _median_time(lambda: subprocess.run([python, "-c", "pass"], check=False), repeat),
        "harness, empty suite, no coverage": _median_time(lambda: harness(empty, False, backend, config), repeat),
        "harness, empty suite, coverage": _median_time(lambda: harness(empty, True, backend, config), repeat),
    }


def pool_totals(tasks: list[dict], backend, config: SandboxConfig, python: str, workers: int) -> dict[str, float | str]:
    totals = {}
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as executor:
        list(executor.map(lambda t: plain_unittest(t, python), tasks))
    totals["plain unittest"] = time.perf_counter() - started
    for label, coverage in (("harness, no coverage", False), ("harness, coverage", True)):
        started = time.perf_counter()
        results = run_suites([request(t, coverage) for t in tasks], config, backend=backend, workers=workers)
        totals[label] = time.perf_counter() - started
        totals[f"{label}: passed"] = sum(r.passed for r in results)
        totals[f"{label}: not passed"] = ", ".join(
            f"{r.item_id.split('_')[-1]} {r.status.value}" for r in results if not r.passed
        )
    return totals


def _quantiles(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"median {statistics.median(values):.2f}x  (p25 {q[0]:.2f}x, p75 {q[2]:.2f}x, max {max(values):.2f}x)"


def report(rows: list[dict], costs: dict[str, float], totals: dict[str, float], meta: dict) -> None:
    print(
        f"\nmachine: {meta['machine']}; {meta['cores']} cores; python {meta['python']}; isolation {meta['isolation']}; "
        f"{meta['tasks']} ClassEval tasks, median of {meta['repeat']} runs each; "
        f"load average {meta['load_before']:.1f} before, {meta['load_after']:.1f} after (other work on the machine inflates both sides)\n"
    )
    print(f"{'task':<14}{'plain s':>9}{'eval s':>9}{'gate s':>9}{'eval x':>8}{'gate x':>8}")
    for row in sorted(rows, key=lambda r: r["plain"]):
        print(
            f"{row['task']:<14}{row['plain']:>9.3f}{row['eval']:>9.3f}{row['gate']:>9.3f}{row['eval_ratio']:>8.2f}{row['gate_ratio']:>8.2f}"
        )
    plain = [r["plain"] for r in rows]
    print(
        f"\nper-suite wall time: plain {statistics.median(plain):.3f}s, harness (eval) {statistics.median(r['eval'] for r in rows):.3f}s, "
        f"harness (gate) {statistics.median(r['gate'] for r in rows):.3f}s (medians)"
    )
    print(
        f"overhead, evaluation mode (no coverage): {_quantiles([r['eval_ratio'] for r in rows])}; "
        f"<= 1.3x for {sum(r['eval_ratio'] <= 1.3 for r in rows)}/{len(rows)}"
    )
    print(f"overhead, gate mode (line+branch coverage): {_quantiles([r['gate_ratio'] for r in rows])}")
    print(
        f"median added time per suite: eval +{statistics.median(r['eval'] - r['plain'] for r in rows) * 1000:.0f} ms, "
        f"gate +{statistics.median(r['gate'] - r['plain'] for r in rows) * 1000:.0f} ms"
    )
    print("\nfixed costs (median):")
    for label, seconds in costs.items():
        print(f"  {label:<42}{seconds * 1000:>8.1f} ms")
    print(f"\nall {meta['tasks']} tasks through the pool ({meta['workers']} workers):")
    for label, value in totals.items():
        if isinstance(value, str):
            print(f"  {label:<42}{value}")
        else:
            print(f"  {label:<42}{value:>8.1f}" + ("" if label.endswith("passed") else " s"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=100, help="first N tasks")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    tasks = json.loads(args.data.read_text(encoding="utf-8"))[: args.limit]
    config = SandboxConfig()
    backend = get_backend(config)
    python = backend.python
    workers = pool_size(config, args.workers)
    meta = {
        "machine": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "isolation": backend.isolation,
        "tasks": len(tasks),
        "repeat": args.repeat,
        "workers": workers,
        "load_before": os.getloadavg()[0],
    }
    harness(tasks[0], True, backend, config)  # warm the OS caches once, for every mode alike
    plain_unittest(tasks[0], python)
    rows = per_suite(tasks, args.repeat, backend, config, python)
    costs = fixed_costs(backend, config, python, max(5, args.repeat))
    totals = pool_totals(tasks, backend, config, python, workers)
    meta["load_after"] = os.getloadavg()[0]
    report(rows, costs, totals, meta)
    if args.json:
        args.json.write_text(
            json.dumps({"meta": meta, "per_suite": rows, "fixed_costs": costs, "pool": totals}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
