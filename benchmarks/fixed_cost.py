"""Goal 2 of issue 22: the fixed cost of the commands users wait for, as a new process each time.

Usage:
    python benchmarks/fixed_cost.py --dataset ClassEval_data.json [--repeat 3] [--compare OTHER_CHECKOUT]

Measured, each as its own `python -m classforge_bench.pipeline.cli ...` process (median of --repeat, wall and CPU
time of the process and everything it starts, with the load average): `python -c pass` (the
interpreter's own start, the floor), `classforge --help`, and `classforge evaluate --samples` on 1
sample of 1 task (the canonical solution of ClassEval_0, which reuses its reference's run; and an
answer that differs from it by a comment, which runs itself), without and with `--task`, each into an
empty results folder with an empty user reference cache (`XDG_CACHE_HOME` a fresh folder: cold, the
reference and the sample both run), then once more into another empty results folder with the same
user cache (warm: the reference comes from the cache). Targets (issue 31): one sample <= 1.5 s wall
on a quiet machine and <= 1 s CPU anywhere; on a shared machine the wall time grows with the load,
the CPU time does not, so both are printed. The CPU time is a cpuacct cgroup's when one can be made
(`evaluate_vs_classeval.Meter`: it counts the sandboxed processes too), else the process's and its
children's (which misses what runs under bubblewrap: its reaper does not pass it up); the script
says which. `--compare`: another checkout (e.g. `git archive main | tar -x -C DIR`) measured the
same way, interleaved, with the ratio this/other.
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


sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_vs_classeval import Meter  # noqa: E402 - beside this script

METER = Meter()


def timed(argv: list[str], root: Path) -> tuple[float, float]:
    """Wall and CPU time of one command; `XDG_CACHE:<dir>` as the first word sets the user cache."""
    env = dict(os.environ, PYTHONPATH=str(root))
    if argv[0].startswith("XDG_CACHE:"):
        env["XDG_CACHE_HOME"] = argv[0].split(":", 1)[1]
        argv = argv[1:]
    with tempfile.NamedTemporaryFile(prefix="cf-fixed-", suffix=".log") as log:
        return METER.run(argv, cwd=root, env=env, log=Path(log.name))


def measure(label: str, make_argv, repeat: int, other: Path | None) -> None:
    roots = [ROOT] + ([other] if other else [])
    runs: dict[Path, list[tuple[float, float]]] = {r: [] for r in roots}
    for i in range(repeat):
        for root in roots:  # interleaved, so both see the same load
            runs[root].append(timed(make_argv(f"{i}-{roots.index(root)}"), root))
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
            json.dumps({"task_id": task["task_id"], "completion": task["solution_code"]}) + "\n", encoding="utf-8"
        )
        # an answer that is not the reference's own program (a comment added), so it runs itself
        answer = tmp_path / "answer.jsonl"
        answer.write_text(
            json.dumps({"task_id": task["task_id"], "completion": task["solution_code"] + "\n# an answer\n"}) + "\n",
            encoding="utf-8",
        )
        base = [*cli, "evaluate", "--dataset", str(args.dataset), "--samples", str(samples)]
        other = args.compare.resolve() if args.compare else None
        measure("python -c pass", lambda i: [sys.executable, "-c", "pass"], args.repeat, other)
        measure("classforge --help", lambda i: [*cli, "--help"], args.repeat, other)
        for extra, name in (([], "1 sample, 1 task"), (["--task", "ClassEval_0"], "1 sample, 1 task, --task")):
            slug = "task" if extra else "all"
            # run i of each checkout (i = "<repeat>-<checkout>") has its own user cache: empty when
            # cold, filled by that cold run when warm
            for phase, label in (("a", "cold"), ("b", "warm reference")):
                measure(
                    f"evaluate {name} ({label})",
                    lambda i, extra=extra, slug=slug, phase=phase: [
                        f"XDG_CACHE:{tmp_path / f'{slug}{i}' / 'xdg'}",
                        *base,
                        *extra,
                        "--out",
                        str(tmp_path / f"{slug}{i}" / phase),
                    ],
                    args.repeat,
                    other,
                )
        for i_phase, label in (("a", "cold"), ("b", "warm reference")):
            measure(
                f"evaluate 1 other answer, 1 task ({label})",
                lambda i, phase=i_phase: [
                    f"XDG_CACHE:{tmp_path / f'answer{i}' / 'xdg'}",
                    *base[:-1],
                    str(answer),
                    "--out",
                    str(tmp_path / f"answer{i}" / phase),
                ],
                args.repeat,
                other,
            )
        print(f"CPU time by {METER.method}")


if __name__ == "__main__":
    main()
