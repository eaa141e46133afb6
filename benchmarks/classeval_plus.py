"""ClassEval+: ClassEval's 100 tasks strengthened with tests no LLM wrote, measured in one run.

    nice -n 15 .venv/bin/python benchmarks/classeval_plus.py --outputs DIR [--dataset PATH]
        [--models GPT-4_100_c_t0 GPT-3.5-Turbo_class_H_greedy ...] [--out DIR] [--skip-mutation]
        [--mutation-limit N] [--strengthened PATH] [--json OUT] [--no-seeds] [--no-select]

1. `classforge strengthen` on the dataset (the same function; suites cached under plus.cache_dir,
   so a second run only reads them): per task the plus tests kept, dropped (by reason) and the
   generation's wall time.
2. `classforge evaluate --model reference` on the strengthened copy: the share of tasks whose
   reference passes base + plus, among those whose reference passes base.
3. For each published model output (ClassEval's `predict` lists, e.g. GPT-4_100_c_t0.json =
   holistic greedy; the files are ClassEval's, MIT, not in this repository: --outputs names their
   folder): base vs plus class-level pass@1 through `classforge evaluate --samples`, and every
   sample that passes base and fails plus, with the plus tests it fails (for inspection by hand).
4. Mutation score of each task with plus tests, base tests alone vs base + plus (the build's
   engine, classforge_bench.pipeline.quality.measure_mutation); a task without plus tests scores the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "classeval" / "ClassEval_data.json"
DEFAULT_MODELS = ["GPT-4_100_c_t0", "GPT-3.5-Turbo_class_H_greedy"]


def strengthen(dataset: Path, out: Path, cfg) -> tuple[Path, list[dict]]:
    from classforge_bench.pipeline.quality.plus.dataset import strengthen_dataset

    rows: list[dict] = []

    def shown(task, suite, reused: bool) -> None:
        rows.append(
            {
                "task_id": task.task_id,
                "kept": suite.tests,
                "generated": suite.generated,
                "dropped": suite.dropped,
                "generation_s": suite.generation_s,
                "cached": reused,
                "failure": (suite.failure or "")[:100],
                "hit_time_cap": suite.hit_time_cap,
            }
        )
        drops = ", ".join(f"{r} {n}" for r, n in suite.dropped.items()) or "-"
        print(
            f"{task.task_id:<14} kept {suite.tests:>3} of {suite.generated:>3}  gen {suite.generation_s:6.1f}s"
            f"{' (cached)' if reused else ''}  dropped: {drops}",
            flush=True,
        )

    summary = strengthen_dataset(dataset, out, cfg.sandbox, cfg.plus, on_task=shown)
    return Path(summary.output), rows


def _rows_of(strengthened: Path) -> list[dict]:
    from classforge_bench.pipeline.formats.loader import load_dataset

    return [
        {
            "task_id": t.task_id,
            "kept": t.plus.tests,
            "generated": t.plus.generated,
            "dropped": t.plus.dropped,
            "generation_s": t.plus.generation_s,
            "cached": True,
            "failure": (t.plus.failure or "")[:100],
            "hit_time_cap": t.plus.hit_time_cap,
        }
        for t in load_dataset(strengthened).tasks
        if t.plus is not None
    ]


def search_runs(strengthened: Path, cfg) -> dict[str, dict]:
    """Per task, the generator's run as cached (a suite read from the cache says 0 s; the search's
    own wall time, iterations and coverage are in the generation cache)."""
    from classforge_bench.pipeline.formats.loader import load_dataset
    from classforge_bench.pipeline.quality.plus.contract import annotated_source, declared_types
    from classforge_bench.pipeline.quality.plus.generate import GeneratedTests
    from classforge_bench.pipeline.quality.plus.suite import generation_path

    runs = {}
    for task in load_dataset(strengthened).tasks:
        contract = declared_types(task.skeleton or task.solution_code, task.class_name)
        path = generation_path(annotated_source(task.solution_code, task.class_name, contract), cfg.plus)
        if path is not None and path.is_file():
            run = GeneratedTests.model_validate_json(path.read_text(encoding="utf-8"))
            runs[task.task_id] = {
                "wall_s": run.wall_s,
                "hit_time_cap": run.hit_time_cap,
                "coverage": run.coverage,
                "iterations": run.iterations,
            }
    return runs


def samples_file(outputs: Path, model: str, dest: Path) -> Path:
    records = json.loads((outputs / f"{model}.json").read_text(encoding="utf-8"))
    lines = [
        json.dumps({"task_id": r["task_id"], "completion": r["predict"][0], "model": model, "strategy": "holistic"})
        for r in records
        if r.get("predict")
    ]
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def evaluate(dataset: Path, cfg, out: Path, *, samples: Path | None = None):
    from classforge_bench.benchmark.runner import EvaluationRequest
    from classforge_bench.benchmark.runner import evaluate as run_evaluation

    cfg = cfg.model_copy(deep=True)
    cfg.evaluate.output_root = out
    request = EvaluationRequest(dataset=dataset, models=[] if samples else ["reference"], samples_file=samples)
    return run_evaluation(request, cfg).results


def class_pass(results, which: str) -> float | None:
    groups = results.plus_scores if which == "plus" else results.scores
    if not groups or groups[0].metrics is None:
        return None
    return groups[0].metrics.class_level.full[1].value


def base_pass_plus_fail(results, tasks: dict, cfg) -> list[dict]:
    """Samples passing every base class, run on their plus suite alone: which plus tests fail, how."""
    from classforge_bench.benchmark.metrics import class_level_status
    from classforge_bench.pipeline.sandbox import run_suite

    found = []
    for record in results.samples:
        task = tasks[record.task_id]
        if not record.scored or record.outcome is None or task.plus is None or not task.plus.tests:
            continue
        if class_level_status(task, record.outcome) != "success":
            continue
        run = run_suite(record.program, task.plus.test, task.plus.test_classes, config=cfg.sandbox, coverage=False)
        failing = [
            f"{c.name}.{m.name}: {m.exc_type}: {(m.message or '')[:160]}"
            for c in run.classes
            for m in c.methods
            if not m.outcome.ok
        ]
        if failing or not run.passed:
            found.append(
                {
                    "task_id": record.task_id,
                    "model": record.model,
                    "failing": failing or [run.status.value],
                }
            )
    return found


def mutation(tasks: list, cfg, cache: Path) -> list[dict]:
    from classforge_bench.benchmark.plus import plus_task
    from classforge_bench.benchmark.strategies import reference_program
    from classforge_bench.pipeline.quality.mutation import MutationError, measure_mutation

    rows = []
    for task in tasks:
        if task.plus is None or not task.plus.tests:
            continue
        both = plus_task(task)
        try:
            before = measure_mutation(
                reference_program(task),
                task.test,
                task.test_classes,
                config=cfg.construction.mutation,
                sandbox=cfg.sandbox,
                item_id=task.task_id,
                cache_root=cache,
            ).report
            after = measure_mutation(
                reference_program(task),
                both.test,
                both.test_classes,
                config=cfg.construction.mutation,
                sandbox=cfg.sandbox,
                item_id=task.task_id,
                cache_root=cache,
            ).report
        except MutationError as exc:
            print(f"{task.task_id:<14} mutation skipped: {str(exc)[:100]}", flush=True)
            continue
        rows.append(
            {
                "task_id": task.task_id,
                "before": before.score,
                "after": after.score,
                "mutants": before.mutants,
                "survived_before": before.survived,
                "survived_after": after.survived,
            }
        )
        print(
            f"{task.task_id:<14} mutation {_pct(before.score)} -> {_pct(after.score)} "
            f"(survivors {before.survived} -> {after.survived} of {before.mutants})",
            flush=True,
        )
    return rows


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{100 * value:5.1f}%"


def main() -> None:
    from classforge_bench.pipeline.config import load_config
    from classforge_bench.pipeline.formats.loader import load_dataset

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--outputs", type=Path, required=True, help="folder of ClassEval's published model outputs")
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    ap.add_argument("--out", type=Path, default=Path(".cache/classeval-plus"))
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--skip-mutation", action="store_true")
    ap.add_argument(
        "--strengthened",
        type=Path,
        default=None,
        help="an already strengthened copy (skips step 1; e.g. the --out of an earlier run's dataset/)",
    )
    ap.add_argument(
        "--mutation-limit", type=int, default=None, help="measure mutation on the first N tasks with plus tests"
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--no-seeds", action="store_true", help="as `classforge strengthen --no-seeds`")
    ap.add_argument("--no-select", action="store_true", help="as `classforge strengthen --no-select`")
    args = ap.parse_args()
    cfg = load_config(args.config)
    # as `classforge strengthen`: seed tests and mutation-guided selection unless refused
    cfg.plus = cfg.plus.model_copy(update={"seeds": not args.no_seeds, "select_by_mutants": not args.no_select})
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    t0 = time.perf_counter()
    if args.strengthened is not None:
        strengthened, rows = args.strengthened, _rows_of(args.strengthened)
    else:
        strengthened, rows = strengthen(args.dataset, args.out / "dataset", cfg)
    report: dict = {"strengthen": rows, "strengthen_s": round(time.perf_counter() - t0, 1)}
    tasks = {t.task_id: t for t in load_dataset(strengthened).tasks}
    kept = [r["kept"] for r in rows]
    fresh = [r["generation_s"] for r in rows if not r["cached"] and r["generation_s"]]
    print(
        f"\nplus tests: {sum(kept)} over {len(kept)} tasks; tasks with >= 1: {sum(1 for k in kept if k)}; "
        f"median per task {statistics.median(kept) if kept else 0}; "
        f"generation wall time per task (fresh runs): median {statistics.median(fresh) if fresh else 0:.1f}s "
        f"over {len(fresh)}",
        flush=True,
    )
    searches = search_runs(strengthened, cfg)
    report["search"] = searches
    walls = sorted(r["wall_s"] for r in searches.values())
    if walls:
        print(
            f"search wall time per task (cached runs, {len(walls)} tasks whose search produced a module): median "
            f"{statistics.median(walls):.1f}s, mean {statistics.mean(walls):.1f}s, max {walls[-1]:.1f}s; "
            f"{sum(r['hit_time_cap'] for r in searches.values())} hit the time cap",
            flush=True,
        )
    totals: dict[str, int] = {}
    for r in rows:
        for reason, n in r["dropped"].items():
            totals[reason] = totals.get(reason, 0) + n
    print(
        "dropped by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items(), key=lambda kv: -kv[1])),
        flush=True,
    )

    ref = evaluate(strengthened, cfg, args.out / "results")
    base_ok = {r.task_id for r in ref.reference if not r.broken}
    plus_ok = {r.task_id for r in ref.plus_reference if not r.broken} if ref.plus_reference else base_ok
    print(
        f"\nreference: passes base on {len(base_ok)} tasks; base + plus on {len(base_ok & plus_ok)} of them "
        f"({100 * len(base_ok & plus_ok) / max(1, len(base_ok)):.1f}%)",
        flush=True,
    )
    report["reference"] = {
        "base": len(base_ok),
        "base_and_plus": len(base_ok & plus_ok),
        "failing_plus": sorted(base_ok - plus_ok),
    }

    report["models"] = {}
    for model in args.models:
        samples = samples_file(args.outputs, model, args.out / f"{model}.samples.jsonl")
        res = evaluate(strengthened, cfg, args.out / "results", samples=samples)
        inspect = base_pass_plus_fail(res, tasks, cfg)
        report["models"][model] = {
            "base": class_pass(res, "base"),
            "plus": class_pass(res, "plus"),
            "base_pass_plus_fail": inspect,
        }
        print(
            f"\n{model}: class-level pass@1 base {_pct(class_pass(res, 'base'))}, plus {_pct(class_pass(res, 'plus'))}; "
            f"{len(inspect)} samples pass base and fail plus",
            flush=True,
        )
        for item in inspect:
            print(f"  {item['task_id']}: " + " | ".join(item["failing"][:3]), flush=True)

    if not args.skip_mutation:
        print("\nmutation score, base tests vs base + plus (tasks with plus tests):", flush=True)
        ordered = [
            tasks[t]
            for t in sorted(tasks, key=lambda x: int(x.split("_")[-1]))
            if tasks[t].plus and tasks[t].plus.tests
        ]
        report["mutation"] = mutation(ordered[: args.mutation_limit], cfg, args.out / "mutation-cache")
        scored = [r for r in report["mutation"] if r["before"] is not None and r["after"] is not None]
        if scored:
            print(
                f"mean over {len(scored)} tasks: {_pct(statistics.mean(r['before'] for r in scored))} -> "
                f"{_pct(statistics.mean(r['after'] for r in scored))}",
                flush=True,
            )
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}; total {time.perf_counter() - t0:.0f}s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
