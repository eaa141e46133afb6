"""Goal 1 of issue 22: `classforge evaluate` against ClassEval's own evaluator, on the same real answers.

Usage:
    python benchmarks/evaluate_vs_classeval.py --outputs GPT-4_100_c_t0.json --classeval-repo PATH
        [--dataset ClassEval_data.json] [--repeat 1] [--json OUT]

`--outputs`: one of ClassEval's published model-output files (a JSON list of task records, each with
`predict`, as in its repository's `output/model_output/`). `--classeval-repo`: a clone of
FudanSELab/ClassEval (a working tree, or a bare git directory: its HEAD is exported). Nothing is
fetched here. ClassEval's evaluator (`classeval_evaluation/evaluation.py`, which needs `func_timeout`
and `scipy`) runs unchanged on a copy, in one Python process, importing each answer in-process with a
5 s thread timeout per test class (and its own fixed `time.sleep(5)` at the end, counted: it is part of
what a user of it waits for).

classforge runs `evaluate --samples` on the same answers (one line per task, completion = `predict[0]`)
three ways, each in a fresh results folder so nothing is resumed from the folder:
  cold:  empty execution cache (the references of the scored tasks run);
  warm:  a second results folder, same cache root (the references come from the content cache);
  again: the same command as `warm` once more (everything resumes: nothing runs).
Each ratio is classforge's wall time over ClassEval's, measured in the same run; the load average is
printed beside each figure (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


def export_classeval(repo: Path, into: Path) -> Path:
    """ClassEval's tree (evaluator and data) under `into`; a bare git dir is exported from HEAD."""
    if (repo / "classeval_evaluation").is_dir():
        shutil.copytree(repo, into, ignore=shutil.ignore_patterns(".git", "output"))
        return into
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", f"--git-dir={repo}", "archive", "HEAD", "classeval_evaluation", "data"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_classeval(tree: Path, outputs: Path) -> tuple[float, dict]:
    name = outputs.stem
    (tree / "output" / "model_output").mkdir(parents=True, exist_ok=True)
    shutil.copy(outputs, tree / "output" / "model_output" / f"{name}.json")
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "evaluation.py", "--source_file_name", name, "--greedy", "1"],
        cwd=tree / "classeval_evaluation",
        check=True,
        capture_output=True,
        timeout=3600,
    )
    wall = time.perf_counter() - t0
    result = json.loads((tree / "output" / "result" / "pass_at_k_result.json").read_text())
    return wall, result["pass_1_greedy"][name]


def samples_file(outputs: Path, into: Path) -> Path:
    records = json.loads(outputs.read_text(encoding="utf-8"))
    lines = [
        json.dumps({"task_id": r["task_id"], "completion": r["predict"][0], "model": outputs.stem}) for r in records
    ]
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


def run_classforge(dataset: Path, samples: Path, out_root: Path, workers: int | None) -> tuple[float, object]:
    from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
    from classforge_bench.pipeline.config import Config, EvaluateConfig

    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=out_root, workers=workers)
    t0 = time.perf_counter()
    outcome = evaluate(EvaluationRequest(dataset=dataset, samples_file=samples), cfg, env={})
    return time.perf_counter() - t0, outcome.results


def _pass1(results) -> str:
    cells = [f"{s.level} {s.value:.1f}" for s in getattr(results.scores, "rows", [])][:2] if results.scores else []
    return ", ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--outputs", type=Path, required=True)
    parser.add_argument("--classeval-repo", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, default=None, help="default: the repository's data/ClassEval_data.json")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--skip-classeval", action="store_true", help="time classforge only")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    figures: dict = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="cf-bench-ce-") as tmp:
        tmp_path = Path(tmp)
        tree = export_classeval(args.classeval_repo, tmp_path / "ClassEval")
        dataset = args.dataset or tree / "data" / "ClassEval_data.json"
        samples = samples_file(args.outputs, tmp_path / "samples.jsonl")
        if not args.skip_classeval:
            print(f"ClassEval's evaluator ({_load()}) ...", flush=True)
            ce_wall, ce_scores = run_classeval(tree, args.outputs)
            figures["classeval"] = {"wall_s": ce_wall, "scores": ce_scores, "load": os.getloadavg()}
            print(f"  {ce_wall:.1f} s, {ce_scores} ({_load()})", flush=True)
        for label, out in (("cold", "r1"), ("warm", "r2"), ("again", "r2")):
            wall, results = run_classforge(dataset, samples, tmp_path / out, args.workers)
            stats = results.stats
            fig = {
                "wall_s": wall,
                "phases_s": stats.seconds,
                "sandbox_runs": stats.sandbox_runs,
                "reused": stats.executions_reused,
                "load": os.getloadavg(),
            }
            figures[label] = fig
            ratio = f", ratio {wall / figures['classeval']['wall_s']:.2f}x" if "classeval" in figures else ""
            print(
                f"classforge {label}: {wall:.1f} s ({stats.sandbox_runs} sandbox runs, {stats.executions_reused} reused; "
                + ", ".join(f"{k} {v:.1f}" for k, v in stats.seconds.items())
                + f"){ratio} ({_load()})",
                flush=True,
            )
        figures["classforge_summary_head"] = (tmp_path / "r1").glob("*/summary.md").__next__().read_text()[:1500]
    print(figures["classforge_summary_head"])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
