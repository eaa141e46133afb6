"""Goal 2 of issue 22: the fixed cost of the commands users wait for, as a new process each time.

Usage:
    python benchmarks/fixed_cost.py --dataset ClassEval_data.json [--repeat 3] [--compare OTHER_CHECKOUT]

Measured, each as its own `python -m classforge_bench.pipeline.cli ...` process (median of --repeat, wall and CPU
time of the process and its children, with the load average): `python -c pass` (the interpreter's own
start, the floor), `classforge --help`, and `classforge evaluate --samples` on 1 sample of 1 task
(the canonical solution of ClassEval_0 with a comment appended, so it is not the reference's own
program, whose run the evaluator reuses), without and with `--task`, each into an empty results
folder with an empty reference cache (cold: `XDG_CACHE_HOME` a fresh folder each time, so the
reference and the sample both run), then once more into another empty results folder sharing that
cache (warm: the reference comes from the cache). Targets: --help <= 0.5 s, one sample <= 1.5 s
wall on a quiet machine and <= 1 s CPU. CPU time is taken the way benchmarks/evaluate_vs_classeval.py
takes it (a cpuacct cgroup per command, so the sandboxed processes count; getrusage, which misses
them, only where no cgroup is writable, and then said). `--compare`: another checkout (e.g.
`git archive main | tar -x -C DIR`) measured the same way, interleaved, with the ratio this/other.
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
sys.path.insert(0, str(ROOT / "benchmarks"))
from evaluate_vs_classeval import Meter  # noqa: E402  (one way to count the sandboxes' CPU)

METER = Meter()


def timed(argv: list[str], root: Path, cache: Path) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(root), XDG_CACHE_HOME=str(cache))
    with tempfile.NamedTemporaryFile(prefix="cf-bench-fixed-", suffix=".log") as log:
        return METER.run(argv, cwd=root, env=env, log=Path(log.name))


def measure(label: str, make_argv, repeat: int, other: Path | None, caches: Path) -> None:
    roots = [ROOT] + ([other] if other else [])
    runs: dict[Path, list[tuple[float, float]]] = {r: [] for r in roots}
    for i in range(repeat):
        for root in roots:  # interleaved, so both see the same load
            slot = f"{i}-{roots.index(root)}"
            runs[root].append(timed(make_argv(slot), root, caches / slot))
    one, five, _ = os.getloadavg()
    wall = {r: statistics.median(w for w, _ in v) for r, v in runs.items()}
    cpu = {r: statistics.median(c for _, c in v) for r, v in runs.items()}
    line = f"{label:<50} wall {wall[ROOT]:6.2f} s  cpu {cpu[ROOT]:5.2f} s"
    if other:
        line += f"  | other: wall {wall[other]:6.2f} s  cpu {cpu[other]:5.2f} s  | ratio wall {wall[ROOT] / wall[other]:.2f} cpu {cpu[ROOT] / max(cpu[other], 1e-9):.2f}"
    print(line + f"  (load {one:.2f}/{five:.2f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", type=Path, default=None, help="another checkout, measured the same way")
    args = parser.parse_args()
    task = next(t for t in json.loads(args.dataset.read_text(encoding="utf-8")) if t["task_id"] == "ClassEval_0")
    cli = [sys.executable, "-m", "classforge_bench.pipeline.cli"]
    with tempfile.TemporaryDirectory(prefix="cf-bench-fixed-") as tmp:
        tmp_path = Path(tmp)
        samples = tmp_path / "one.jsonl"
        samples.write_text(
            json.dumps({"task_id": task["task_id"], "completion": task["solution_code"] + "\n# a sample\n"}) + "\n",
            encoding="utf-8",
        )
        base = [*cli, "evaluate", "--dataset", str(args.dataset), "--samples", str(samples)]
        other = args.compare.resolve() if args.compare else None
        print(f"CPU time: {METER.method}", flush=True)
        measure("python -c pass", lambda i: [sys.executable, "-c", "pass"], args.repeat, other, tmp_path / "c0")
        measure("classforge --help", lambda i: [*cli, "--help"], args.repeat, other, tmp_path / "c1")
        for extra, name in (([], "1 sample, 1 task"), (["--task", "ClassEval_0"], "1 sample, 1 task, --task")):
            slug = "task" if extra else "all"
            measure(
                f"evaluate {name} (cold)",
                lambda i, extra=extra, slug=slug: [*base, *extra, "--out", str(tmp_path / f"{slug}{i}" / "a")],
                args.repeat,
                other,
                tmp_path / f"cache-{slug}",  # one fresh cache per repetition: cold
            )
            measure(
                f"evaluate {name} (warm reference)",
                lambda i, extra=extra, slug=slug: [*base, *extra, "--out", str(tmp_path / f"{slug}{i}" / "b")],
                args.repeat,
                other,
                tmp_path / f"cache-{slug}",  # the cold run's cache of the same repetition: warm
            )


if __name__ == "__main__":
    main()
