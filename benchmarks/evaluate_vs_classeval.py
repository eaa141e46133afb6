"""Issue 31: `classforge evaluate`, cold, against ClassEval's own evaluator, on ClassEval's published answers.

Usage:
    python benchmarks/evaluate_vs_classeval.py --classeval-repo PATH [--classeval-pythonpath DIR]
        [--dataset ClassEval_data.json] [--repeat 3] [--busy 4] [--json OUT]

`--classeval-repo`: FudanSELab/ClassEval, a working tree or a bare git directory (its HEAD is
exported into a temporary folder; nothing is fetched here, nothing is written into the repository).
ClassEval's `classeval_evaluation/evaluation.py` runs unchanged on that copy, with this interpreter
(the tasks' libraries) and `--classeval-pythonpath` on PYTHONPATH for what it needs besides
(`func_timeout`). Its fixed `time.sleep(5)` at the end is counted: a user of it waits for it too.

Two parts:

1. **Speed**, on GPT-4's 100 holistic answers (`GPT-4_100_c_t0.json`): ClassEval's evaluator and
   classforge **cold** (`classforge evaluate --samples`, a fresh results root and an empty reference
   cache, `XDG_CACHE_HOME` in a fresh folder, every repetition), interleaved, `--repeat` times; the
   medians. Each command runs in a cpuacct cgroup of its own (v1 or v2), so its CPU time counts
   every process it starts, the sandboxed ones included (bubblewrap's reaper hides those from
   getrusage); without a writable cgroup the script falls back to RUSAGE_CHILDREN and says so.
2. **Verdicts do not move with load**: GPT-4's, WizardCoder's and Instruct-StarCoder's answers
   (`*_100_c_t0.json`, one samples file) scored cold as the machine is, then cold again beside
   `--busy` CPU-bound processes; every sample's verdict (bucket, and per test class: tests run,
   failures, errors, timed out) compared. The load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEED_MODEL = "GPT-4"
VERDICT_MODELS = ("GPT-4", "WizardCoder", "instruct-StarCoder")
_CLI = "from classforge_bench.pipeline.cli import app; app()"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def export_classeval(repo: Path, into: Path) -> Path:
    """ClassEval's tree (evaluator, data, published outputs) under `into`; a bare git dir is exported from HEAD."""
    if (repo / "classeval_evaluation").is_dir():
        shutil.copytree(repo, into, ignore=shutil.ignore_patterns(".git"))
        return into
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", f"--git-dir={repo}", "archive", "HEAD", "classeval_evaluation", "data"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "output" / "model_output").mkdir(parents=True)
    for model in VERDICT_MODELS:  # one by one: a snapshot may lack other large outputs
        name = f"output/model_output/{model}_100_c_t0.json"
        blob = subprocess.run(["git", f"--git-dir={repo}", "show", f"HEAD:{name}"], capture_output=True, check=True)
        (into / name).write_bytes(blob.stdout)
    return into


class Meter:
    """Wall and CPU time of one command and everything it starts: a cpuacct cgroup of its own
    (cgroup v1 `cpuacct`, or v2 `cpu.stat`), else getrusage(RUSAGE_CHILDREN) (which misses what
    runs under bubblewrap: then said in `method`)."""

    def __init__(self) -> None:
        self.base, self.kind = self._find()
        self.method = {"v1": "cgroup v1 cpuacct", "v2": "cgroup v2 cpu.stat"}.get(
            self.kind, "getrusage(RUSAGE_CHILDREN), sandboxed processes NOT counted"
        )

    @staticmethod
    def _find() -> tuple[Path | None, str]:
        for base, kind in ((Path("/sys/fs/cgroup/cpuacct"), "v1"), (Path("/sys/fs/cgroup"), "v2")):
            probe = base / f"cf-bench-probe-{os.getpid()}"
            try:
                probe.mkdir()
                ok = (probe / ("cpuacct.usage" if kind == "v1" else "cpu.stat")).exists()
                probe.rmdir()
            except OSError:
                continue
            if ok:
                return base, kind
        return None, "rusage"

    def run(self, cmd: list[str], *, cwd: Path, env: dict, log: Path) -> tuple[float, float]:
        group = self.base / f"cf-bench-{os.getpid()}-{time.monotonic_ns()}" if self.base else None
        if group is not None:
            group.mkdir()
            cmd = ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh", *cmd]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        with log.open("w") as out:
            done = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=7200)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        if group is not None:
            cpu = self._cgroup_cpu(group)
            for _ in range(50):  # the group empties as its last processes are reaped
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
        if done.returncode != 0:
            raise RuntimeError(f"{cmd[-8:]} failed ({done.returncode}); see {log}: {log.read_text()[-2000:]}")
        return wall, cpu

    def _cgroup_cpu(self, group: Path) -> float:
        if self.kind == "v1":
            return int((group / "cpuacct.usage").read_text()) / 1e9
        stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6


def samples_file(outputs: list[Path], into: Path) -> Path:
    lines = []
    for path in outputs:
        model = path.name.split("_100_")[0]
        for record in json.loads(path.read_text(encoding="utf-8")):
            lines.append(json.dumps({"task_id": record["task_id"], "completion": record["predict"][0], "model": model}))
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


def run_classeval(meter: Meter, tree: Path, name: str, pythonpath: str, log: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (pythonpath, os.environ.get("PYTHONPATH")) if p))
    (tree / "output" / "result").mkdir(parents=True, exist_ok=True)
    wall, cpu = meter.run(
        [sys.executable, "evaluation.py", "--source_file_name", name, "--greedy", "1"],
        cwd=tree / "classeval_evaluation",
        env=env,
        log=log,
    )
    result = json.loads((tree / "output" / "result" / "pass_at_k_result.json").read_text())
    return {"wall_s": wall, "cpu_s": cpu, "pass_at_1": result["pass_1_greedy"][name], "load": os.getloadavg()}


def run_classforge(meter: Meter, dataset: Path, samples: Path, scratch: Path, log: Path) -> dict:
    """Cold: a fresh results root and an empty reference cache (the user's cache lives under XDG_CACHE_HOME)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    env = dict(os.environ, XDG_CACHE_HOME=str(scratch / "xdg-cache"), PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-c", _CLI, "evaluate", "-d", str(dataset), "--samples", str(samples)]
    wall, cpu = meter.run([*cmd, "--out", str(scratch / "results")], cwd=scratch, env=env, log=log)
    (run_dir,) = (scratch / "results").iterdir()
    from classforge_bench.benchmark.results import load_results

    results = load_results(run_dir)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "sandbox_runs": results.stats.sandbox_runs,
        "phases_s": results.stats.seconds,
        "load": os.getloadavg(),
        "verdicts": verdicts(results),
    }


def verdicts(results) -> dict[str, list]:
    """model/task -> [bucket, {class: [tests run, failures, errors, timed out]}]: what a score is made of."""
    found = {}
    for record in results.samples:
        outcome = record.outcome
        classes = (
            {n: [c.tests_run, c.failures, c.errors, c.timed_out] for n, c in sorted(outcome.test_classes.items())}
            if outcome is not None
            else {}
        )
        found[f"{record.model}/{record.task_id}"] = [record.bucket, classes]
    return found


def _passes(verdict: list) -> bool:
    """Every test class of the sample ran and had no failure nor error (class-level success)."""
    bucket, classes = verdict
    return bucket == "completed" and bool(classes) and all(c[0] > 0 and c[1] == c[2] == 0 for c in classes.values())


class Busy:
    """`n` CPU-bound processes for as long as the block runs (ended by their pids)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __enter__(self) -> Busy:
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(self.n)]
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def _speed(args, meter: Meter, tree: Path, dataset: Path, tmp: Path) -> dict:
    samples = samples_file([tree / "output" / "model_output" / f"{SPEED_MODEL}_100_c_t0.json"], tmp / "speed.jsonl")
    runs: dict[str, list[dict]] = {"classeval": [], "classforge_cold": []}
    for i in range(args.repeat):
        order = ["classeval", "classforge_cold"] if i % 2 == 0 else ["classforge_cold", "classeval"]
        for which in order:
            print(f"[{i + 1}/{args.repeat}] {which} ({_load()}) ...", flush=True)
            if which == "classeval":
                fig = run_classeval(
                    meter, tree, f"{SPEED_MODEL}_100_c_t0", args.classeval_pythonpath, tmp / f"ce{i}.log"
                )
            else:
                fig = run_classforge(meter, dataset, samples, tmp / f"cold{i}", tmp / f"cf{i}.log")
                fig.pop("verdicts")
            runs[which].append(fig)
            print(f"    {fig['wall_s']:.1f} s wall, {fig['cpu_s']:.1f} s CPU ({_load()})", flush=True)
    medians = {
        k: {"wall_s": statistics.median(r["wall_s"] for r in v), "cpu_s": statistics.median(r["cpu_s"] for r in v)}
        for k, v in runs.items()
    }
    ce, cf = medians["classeval"], medians["classforge_cold"]
    return {
        "runs": runs,
        "medians": medians,
        "wall_ratio": cf["wall_s"] / ce["wall_s"],
        "cpu_ratio": cf["cpu_s"] / ce["cpu_s"],
    }


def _verdict_check(args, meter: Meter, tree: Path, dataset: Path, tmp: Path) -> dict:
    outputs = [tree / "output" / "model_output" / f"{m}_100_c_t0.json" for m in VERDICT_MODELS]
    samples = samples_file(outputs, tmp / "verdicts.jsonl")
    print(f"verdicts, as the machine is ({_load()}) ...", flush=True)
    quiet = run_classforge(meter, dataset, samples, tmp / "v-quiet", tmp / "v-quiet.log")
    with Busy(args.busy):
        time.sleep(5)  # let the load average see them
        print(f"verdicts, beside {args.busy} CPU-bound processes ({_load()}) ...", flush=True)
        busy = run_classforge(meter, dataset, samples, tmp / "v-busy", tmp / "v-busy.log")
    keys = quiet["verdicts"].keys() | busy["verdicts"].keys()
    differ = sorted(k for k in keys if quiet["verdicts"].get(k) != busy["verdicts"].get(k))
    per_model = {
        m: sum(1 for k, v in quiet["verdicts"].items() if k.startswith(f"{m}/") and _passes(v)) for m in VERDICT_MODELS
    }
    for run in (quiet, busy):
        run["n_samples"] = len(run.pop("verdicts"))
    return {"quiet": quiet, "busy": busy, "differ": differ, "all_classes_pass": per_model}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--classeval-repo", type=Path, required=True)
    parser.add_argument("--classeval-pythonpath", default="", help="extra PYTHONPATH for evaluation.py (func_timeout)")
    parser.add_argument("--dataset", type=Path, default=None, help="default: the repository's data/ClassEval_data.json")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", type=int, default=4, help="CPU-bound processes beside the second verdict run")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-verdicts", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    meter = Meter()
    figures: dict = {"cores": os.cpu_count(), "cpu_measured_by": meter.method, "started_load": os.getloadavg()}
    print(f"CPU time measured by {meter.method}; {os.cpu_count()} cores; {_load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="cf-bench-ce-") as tmp:
        tmp_path = Path(tmp)
        tree = export_classeval(args.classeval_repo, tmp_path / "ClassEval")
        dataset = args.dataset or tree / "data" / "ClassEval_data.json"
        if not args.skip_speed:
            figures["speed"] = speed = _speed(args, meter, tree, dataset, tmp_path)
            m = speed["medians"]
            print(
                f"median of {args.repeat}: ClassEval {m['classeval']['wall_s']:.1f} s / {m['classeval']['cpu_s']:.1f} s CPU; "
                f"classforge cold {m['classforge_cold']['wall_s']:.1f} s / {m['classforge_cold']['cpu_s']:.1f} s CPU; "
                f"ratio {speed['wall_ratio']:.2f}x wall, {speed['cpu_ratio']:.2f}x CPU ({_load()})",
                flush=True,
            )
        if not args.skip_verdicts:
            figures["verdicts"] = v = _verdict_check(args, meter, tree, dataset, tmp_path)
            print(
                f"verdicts of {v['quiet']['n_samples']} samples: {len(v['differ'])} differ between "
                f"load {v['quiet']['load'][0]:.1f} and load {v['busy']['load'][0]:.1f} (+{args.busy} busy): "
                f"{v['differ'][:10]}; tasks with every class passing: {v['all_classes_pass']}",
                flush=True,
            )
    figures["ended_load"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
