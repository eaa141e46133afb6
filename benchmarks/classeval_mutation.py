"""Mutation scores of ClassEval's hand-written test suites on its canonical solutions.

    nice -n 10 .venv/bin/python benchmarks/classeval_mutation.py [--dataset PATH] [--max-per-method 10]
        [--limit N] [--task ClassEval_0 ...] [--workers N] [--cache DIR] [--json OUT]

The same engine the build gates with (`classforge_bench.pipeline.quality.measure_mutation`, the default
`MutationConfig` unless overridden): each task's reference program (its import statements and
canonical solution, as the evaluator runs it) is mutated and its own tests run against every
mutant in the sandbox. Tasks are measured one after the other, each task's mutants in parallel;
the wall time per task includes timing the reference once. Tasks whose reference fails its own
tests here (see the README: 17, 48, 51, 52, 69) are listed and left out of the distribution.

Outcomes are cached under --cache (default .cache/mutation-classeval): a second run re-runs
nothing and its wall times measure only the bookkeeping (the `cached` column says so).
Prints a per-task table and the distribution (mean, quartiles) of scores and wall times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATASET = Path("/work/shared/data/classeval/ClassEval_data.json")


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        v = values[0] if values else float("nan")
        return v, v, v
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[1], q[2]


def measure(tasks, config, sandbox, cache: Path) -> tuple[list[dict], list[dict]]:
    from classforge_bench.benchmark.strategies import reference_program
    from classforge_bench.pipeline.quality.mutation import MutationError, measure_mutation

    rows, skipped = [], []
    for task in tasks:
        t0 = time.perf_counter()
        try:
            run = measure_mutation(
                reference_program(task),
                task.test,
                task.test_classes,
                config=config,
                sandbox=sandbox,
                item_id=task.task_id,
                cache_root=cache,
            )
        except MutationError as exc:
            skipped.append({"task_id": task.task_id, "reason": str(exc)[:160]})
            print(f"{task.task_id:<14} skipped: {str(exc)[:110]}", flush=True)
            continue
        r = run.report
        row = {
            "task_id": task.task_id,
            "mutants": r.mutants,
            "equivalent": r.equivalent,
            "killed": r.killed,
            "timed_out": r.timed_out,
            "survived": r.survived,
            "score": r.score,
            "wall_s": time.perf_counter() - t0,
            "sandbox_runs": run.sandbox_runs,
            "cached": run.cached,
            "by_operator": r.by_operator,
        }
        rows.append(row)
        shown = "n/a" if r.score is None else f"{100 * r.score:5.1f}"
        print(
            f"{task.task_id:<14} {r.mutants:>7} {r.equivalent:>5} {r.killed:>6} {r.timed_out:>4} {r.survived:>8} "
            f"{shown:>6} {row['wall_s']:>7.1f} {run.cached:>6}",
            flush=True,
        )
    return rows, skipped


def summarise(rows: list[dict], skipped: list[dict], total_s: float) -> dict:
    scores = [100 * r["score"] for r in rows if r["score"] is not None]
    walls = [r["wall_s"] for r in rows]
    q1, med, q3 = quartiles(scores)
    w1, wmed, w3 = quartiles(walls)
    operators: dict[str, list[int]] = {}
    for r in rows:
        for op, (det, scored) in r["by_operator"].items():
            tally = operators.setdefault(op, [0, 0])
            tally[0] += det
            tally[1] += scored
    return {
        "tasks": len(rows),
        "skipped": [s["task_id"] for s in skipped],
        "mutants": sum(r["mutants"] for r in rows),
        "equivalent": sum(r["equivalent"] for r in rows),
        "killed": sum(r["killed"] for r in rows),
        "timed_out": sum(r["timed_out"] for r in rows),
        "survived": sum(r["survived"] for r in rows),
        "score_pct": {
            "mean": statistics.fmean(scores) if scores else None,
            "min": min(scores, default=None),
            "q1": q1,
            "median": med,
            "q3": q3,
            "max": max(scores, default=None),
        },
        "wall_s_per_task": {
            "mean": statistics.fmean(walls) if walls else None,
            "q1": w1,
            "median": wmed,
            "q3": w3,
            "max": max(walls, default=None),
        },
        "total_wall_s": total_s,
        "by_operator_pct": {op: round(100 * d / s, 1) if s else None for op, (d, s) in sorted(operators.items())},
        "below": {f"{t}%": sum(s < t for s in scores) for t in (50, 60, 70, 80, 90)},
    }


def main(argv: list[str] | None = None) -> int:
    from classforge_bench.pipeline.config import MutationConfig, SandboxConfig
    from classforge_bench.pipeline.formats.loader import load_dataset

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--max-per-method", type=int, default=MutationConfig().max_mutants_per_method)
    ap.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    ap.add_argument("--task", action="append", default=None, help="only these task ids (repeatable)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "mutation-classeval")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    dataset = load_dataset(args.dataset, task_ids=args.task)
    tasks = dataset.tasks[: args.limit] if args.limit else dataset.tasks
    config = MutationConfig(max_mutants_per_method=args.max_per_method, workers=args.workers)
    sandbox = SandboxConfig(workers=args.workers)
    print(
        f"{len(tasks)} tasks, at most {config.max_mutants_per_method} mutants per method, seed {config.seed}, "
        f"timeouts count as {config.timeouts_count_as}"
    )
    print(
        f"{'task':<14} {'mutants':>7} {'equiv':>5} {'killed':>6} {'tout':>4} {'survived':>8} {'score%':>6} {'wall s':>7} {'cached':>6}"
    )
    t0 = time.perf_counter()
    rows, skipped = measure(tasks, config, sandbox, args.cache)
    summary = summarise(rows, skipped, time.perf_counter() - t0)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows, "skipped": skipped}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
