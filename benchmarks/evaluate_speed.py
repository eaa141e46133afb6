"""The evaluator's two speed targets (issue 15, item 4), measured side by side in one run.

Usage:
    python benchmarks/evaluate_speed.py [--dataset PATH] [--workers N] [--json OUT] [--only samples|reference]

1. Scoring 100 whole-class completions (one per ClassEval task) with `classforge evaluate
   --samples`, against an in-process ClassEval-style evaluator on the same programs. The
   completions are made here from the canonical solutions, written the way models answer (CRLF,
   prose around a fence) with a fixed mix of faults: every 20th task from the 8th has a method
   that loops forever (a timeout), every 20th from the 4th a syntax error, every 10th from the
   6th a method returning None (a logic failure); the rest are the canonical class. They are not
   a real model's outputs (none can be produced here); the mix is stated so the figure can be
   read. The baseline does what ClassEval's evaluator does: one Python process, each program
   and its tests imported in-process, each test class run in a thread joined with a 5 s timeout
   (a runaway thread is left running); it gets the programs classforge extracted, so only
   execution is compared. Target: classforge <= 1.5x the baseline.
2. ClassEval's 100 canonical solutions: `classforge evaluate -m reference` end to end against a
   bare pool of 2 processes running one `python -m unittest module.TestClass` per test class.
   Target: <= 0.5x.

Each classforge run starts from an empty results folder (nothing resumed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "classeval" / "ClassEval_data.json"

# ClassEval's evaluator, reduced to its execution loop (see the module docstring).
_INPROCESS = r"""
import importlib.util, json, sys, threading, time, unittest
programs = json.load(open(sys.argv[1], encoding="utf-8"))
passed = timeouts = errors = 0
for i, item in enumerate(programs):
    path = f"{sys.argv[2]}/case_{i}.py"
    open(path, "w", encoding="utf-8").write(item["program"] + "\n\n" + item["tests"])
    try:
        spec = importlib.util.spec_from_file_location(f"case_{i}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException:
        errors += len(item["classes"])
        continue
    for name in item["classes"]:
        result = {}
        def run(name=name, result=result):
            suite = unittest.TestLoader().loadTestsFromTestCase(getattr(module, name))
            result["r"] = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(suite)
        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(5)
        if worker.is_alive():
            timeouts += 1
        elif "r" in result and result["r"].wasSuccessful():
            passed += 1
        else:
            errors += 1
print(json.dumps({"passed_classes": passed, "timeouts": timeouts, "failed_classes": errors}))
"""


def completion_for(index: int, solution: str) -> tuple[str, str]:
    """(kind, completion) for the index-th task; see the module docstring for the mix."""
    code = solution
    kind = "canonical"
    if index % 20 == 7:
        kind = "timeout"
        head, sep, rest = code.partition("    def ")
        later = rest.find("\n    def ")  # the first method after __init__
        if later != -1:
            body_at = rest.index(":\n", later) + 2
            rest = rest[:body_at] + "        while True:\n            pass\n" + rest[body_at:]
        code = head + sep + rest
    elif index % 20 == 3:
        kind = "syntax"
        code = code.replace("):\n", ")\n", 1)
    elif index % 10 == 5:
        kind = "logic"
        code = re.sub(r"(?m)^        return ", "        return None\n        return ", code, count=1)
    text = f"Here is the completed class.\n```python\n{code}\n```\nIt follows the skeleton's docstrings."
    return kind, text.replace("\n", "\r\n")


def run_classforge(
    dataset: Path, out_root: Path, workers: int | None, *, samples: Path | None = None, model: str | None = None
) -> tuple[float, object]:
    from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
    from classforge_bench.pipeline.config import Config, EvaluateConfig

    cfg = Config()
    cfg.evaluate = EvaluateConfig(n_samples=1, output_root=out_root, workers=workers)
    request = EvaluationRequest(dataset=dataset, samples_file=samples, models=[model] if model else [])
    t0 = time.perf_counter()
    out = evaluate(request, cfg, env={})
    return time.perf_counter() - t0, out.results


def run_inprocess(programs: list[dict], scratch: Path) -> tuple[float, dict]:
    spec = scratch / "programs.json"
    spec.write_text(json.dumps(programs), encoding="utf-8")
    script = scratch / "inprocess.py"
    script.write_text(_INPROCESS, encoding="utf-8")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(script), str(spec), str(scratch)],
        capture_output=True,
        text=True,
        cwd=scratch,
        timeout=3600,
        check=False,
    )
    wall = time.perf_counter() - t0
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "{}"
    return wall, json.loads(last)


def run_bare_per_class(tasks: list, scratch: Path, workers: int = 2) -> tuple[float, int, int]:
    from classforge_bench.benchmark.strategies import reference_program

    jobs = []
    for task in tasks:
        folder = scratch / task.task_id
        folder.mkdir(parents=True)
        (folder / "case.py").write_text(
            "import random; random.seed(0)\n" + reference_program(task) + "\n\n" + task.test, encoding="utf-8"
        )
        jobs += [(folder, name) for name in task.test_classes]

    def one(job: tuple[Path, str]) -> int:
        folder, name = job
        try:
            return subprocess.run(
                [sys.executable, "-m", "unittest", "-q", f"case.{name}"],
                cwd=folder,
                capture_output=True,
                timeout=120,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            return -1

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        codes = list(pool.map(one, jobs))
    return time.perf_counter() - t0, len(jobs), sum(c == 0 for c in codes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--workers", type=int, default=None, help="classforge's sandbox workers (default: its own)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--only", choices=("samples", "reference"), default=None, help="measure one of the two targets")
    args = parser.parse_args()

    from classforge_bench.pipeline.config import Config
    from classforge_bench.pipeline.formats.loader import load_dataset
    from classforge_bench.pipeline.sandbox import pool_size

    tasks = load_dataset(args.dataset).tasks
    workers = args.workers or Config().evaluate.workers or pool_size(Config().sandbox)
    figures: dict = {
        "machine": {"python": platform.python_version(), "cores": os.cpu_count(), "load_avg_before": os.getloadavg()},
        "workers": workers,
    }
    with tempfile.TemporaryDirectory(prefix="cf-bench-speed-") as tmp:
        tmp_path = Path(tmp)
        lines, kinds = [], {}
        for i, task in enumerate(tasks):
            kind, text = completion_for(i, task.solution_code)
            kinds[kind] = kinds.get(kind, 0) + 1
            lines.append(json.dumps({"task_id": task.task_id, "completion": text, "model": "mix"}))
        samples = tmp_path / "samples.jsonl"
        samples.write_text("\n".join(lines) + "\n", encoding="utf-8")

        if args.only != "reference":
            figures["samples"] = measure_samples(args, tasks, samples, tmp_path)
        if args.only != "samples":
            figures["reference"] = measure_reference(args, tasks, tmp_path)
    figures["machine"]["load_avg_after"] = os.getloadavg()
    report(figures, kinds, workers)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")


def measure_samples(args, tasks: list, samples: Path, tmp_path: Path) -> dict:
    cf_wall, results = run_classforge(args.dataset, tmp_path / "r1", args.workers, samples=samples)
    by_id = {t.task_id: t for t in tasks}
    buckets: dict[str, int] = {}
    programs = []
    for s in results.samples:  # type: ignore[attr-defined]
        buckets[s.bucket] = buckets.get(s.bucket, 0) + 1
        if s.program is not None:
            programs.append(
                {
                    "program": s.program,
                    "tests": by_id[s.task_id].test,
                    "classes": by_id[s.task_id].test_classes,
                }
            )
    # what each runaway sample cost: every run of it together, against its limit
    runaway = [
        {
            "task": s.task_id,
            "limit_s": s.execution.limit_s,
            "runs_wall_s": s.execution.runs_wall_s,
            "reruns": s.execution.reruns,
        }
        for s in results.samples
        if s.execution is not None and s.execution.suite_status == "timeout"
    ]
    base_wall, base = run_inprocess(programs, tmp_path)
    return {
        "classforge_wall_s": cf_wall,
        "classforge_buckets": buckets,
        "runaway": runaway,
        "classforge_phases_s": results.stats.seconds,  # type: ignore[attr-defined]
        "inprocess_wall_s": base_wall,
        "inprocess": base,
        "ratio": cf_wall / base_wall,
    }


def measure_reference(args, tasks: list, tmp_path: Path) -> dict:
    ref_wall, ref_results = run_classforge(args.dataset, tmp_path / "r2", args.workers, model="reference")
    bare_wall, bare_runs, bare_ok = run_bare_per_class(tasks, tmp_path / "bare")
    return {
        "classforge_wall_s": ref_wall,
        "classforge_phases_s": ref_results.stats.seconds,  # type: ignore[attr-defined]
        "sandbox_runs": ref_results.stats.sandbox_runs,  # type: ignore[attr-defined]
        "bare_wall_s": bare_wall,
        "bare_processes": bare_runs,
        "bare_exit_0": bare_ok,
        "ratio": ref_wall / bare_wall,
    }


def report(figures: dict, kinds: dict, workers: int) -> None:
    before, after = figures["machine"]["load_avg_before"][0], figures["machine"]["load_avg_after"][0]
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} cores, classforge workers {workers}, "
        f"load average before/after {before:.2f}/{after:.2f}"
    )
    if "samples" in figures:
        s = figures["samples"]
        print(f"1. 100 completions ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}):")
        print(
            f"   classforge evaluate --samples: {s['classforge_wall_s']:.1f} s ({s['classforge_buckets']}; phases "
            + ", ".join(f"{k} {v:.1f}" for k, v in s["classforge_phases_s"].items())
            + ")"
        )
        for r in s["runaway"]:
            print(
                f"   runaway {r['task']}: limit {r['limit_s']:.1f} s, all its runs {r['runs_wall_s']:.1f} s, "
                f"{r['reruns']} rerun(s)"
            )
        print(f"   in-process ClassEval-style:    {s['inprocess_wall_s']:.1f} s ({s['inprocess']})")
        print(f"   ratio {s['ratio']:.2f}x (target <= 1.5x)")
    if "reference" in figures:
        r = figures["reference"]
        print(
            f"2. 100 canonical solutions: classforge -m reference {r['classforge_wall_s']:.1f} s "
            f"({r['sandbox_runs']} sandbox runs); bare unittest per test class, pool of 2: {r['bare_wall_s']:.1f} s "
            f"({r['bare_processes']} processes, {r['bare_exit_0']} exit 0); ratio {r['ratio']:.2f}x (target <= 0.5x)"
        )


if __name__ == "__main__":
    main()
