"""Issue 31 item 4: what importing the tasks' heavy libraries once per batch saves.

Usage:
    python benchmarks/warm_imports.py [--dataset ClassEval_data.json] [--modules numpy,nltk,gensim,docx]
        [--repeat 3] [--batch-size 16]

The ClassEval tasks whose import lines name one of `--modules` (numpy, nltk, gensim, docx by
default) run their reference solutions in sandbox batches of `--batch-size` (the evaluator's
default, 16), the way the evaluator runs samples (`classforge_bench.pipeline.sandbox.batch.run_batches`):
once with the batch's supervisor importing the tasks' libraries before it forks the runners
(`SuiteRequest.warm_imports`, what the evaluator asks for), once without (each forked runner
imports them itself). The two are interleaved, `--repeat` times each; each is a child process
of its own in a cpuacct cgroup (as `evaluate_vs_classeval.py` measures), so its CPU time counts
everything, the sandboxed supervisor's imports included. Printed side by side, with the medians,
the ratio warm/cold, and the load average: the whole child's CPU (its interpreter and classforge's
own imports included, the same in both), the sum of the runners' own CPU times (what each sample's
limit is counted on), and the wall time. Both must give the same verdicts; the script says if not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "classeval" / "ClassEval_data.json"


def child(dataset: Path, modules: list[str], warm: bool, batch_size: int) -> None:
    """One measured run: the selected tasks' references in batches, with or without warm imports."""
    from classforge_bench.benchmark.execution import job_for, warm_imports_of
    from classforge_bench.benchmark.strategies import reference_program
    from classforge_bench.pipeline.config import SandboxConfig
    from classforge_bench.pipeline.formats.loader import load_dataset
    from classforge_bench.pipeline.sandbox import SuiteRequest, get_backend
    from classforge_bench.pipeline.sandbox.batch import can_batch, run_batches

    tasks = [t for t in load_dataset(dataset).tasks if set(warm_imports_of(t)) & set(modules)]
    config = SandboxConfig()
    backend = get_backend(config)
    if not can_batch(backend):
        raise SystemExit(f"batches need bubblewrap and a process sweep; this machine has {backend.isolation}")
    requests = []
    for t in tasks:
        job = job_for(t, reference_program(t), 60.0)
        requests.append(
            SuiteRequest(
                item_id=t.task_id,
                solution=job.program,
                tests=job.tests,
                test_classes=list(job.test_classes),
                limit_s=job.limit_s,
                coverage=False,
                wall_ceiling_s=job.limit_s * config.wall_ceiling_factor,
                warm_imports=list(job.warm_imports) if warm else [],
            )
        )
    found, runs = run_batches(requests, backend, config, workers=1, size=batch_size)
    print(
        json.dumps(
            {
                "tasks": [t.task_id for t in tasks],
                "batches": runs,
                "statuses": [r.status.value if r is not None else None for r in found],
                "runner_cpu_s": sum((r.cpu_s or 0.0) for r in found if r is not None),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--modules", default="numpy,nltk,gensim,docx")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--child", choices=["warm", "cold"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    modules = [m for m in args.modules.split(",") if m]
    if args.child:
        child(args.dataset, modules, args.child == "warm", args.batch_size)
        return
    from evaluate_vs_classeval import Meter

    meter = Meter()
    runs: dict[str, list[dict]] = {"warm": [], "cold": []}
    with tempfile.TemporaryDirectory(prefix="cf-warm-") as tmp:
        for i in range(args.repeat):
            for mode in ("warm", "cold") if i % 2 == 0 else ("cold", "warm"):
                log = Path(tmp) / f"{mode}-{i}.log"
                cmd = [sys.executable, __file__, "--child", mode, "--dataset", str(args.dataset)]
                cmd += ["--modules", args.modules, "--batch-size", str(args.batch_size)]
                wall, cpu = meter.run(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), log=log)
                out = json.loads(log.read_text().strip().splitlines()[-1])
                load = os.getloadavg()[0]
                runs[mode].append(out | {"wall_s": wall, "cpu_s": cpu, "load": load})
                print(
                    f"{mode:<4} #{i}: wall {wall:6.2f} s  cpu {cpu:6.2f} s  runners' cpu {out['runner_cpu_s']:6.2f} s"
                    f"  ({out['batches']} batch(es), load {load:.2f})",
                    flush=True,
                )
    tasks = runs["warm"][0]["tasks"]
    print(f"\n{len(tasks)} tasks importing {args.modules}: {', '.join(tasks)}; CPU by {meter.method}")
    for field, label in (("cpu_s", "whole child's CPU"), ("runner_cpu_s", "runners' own CPU"), ("wall_s", "wall")):
        warm = statistics.median(r[field] for r in runs["warm"])
        cold = statistics.median(r[field] for r in runs["cold"])
        print(f"{label:<20} warm {warm:7.2f} s   cold {cold:7.2f} s   warm/cold {warm / cold:.2f}")
    same = all(r["statuses"] == runs["warm"][0]["statuses"] for r in runs["warm"] + runs["cold"])
    print("verdicts: " + ("the same in every run" if same else "DIFFER between runs: " + json.dumps(runs)))
    print(f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
