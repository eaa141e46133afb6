"""Yield of the real-source track (harvest -> tasks, no LLM) on a corpus of your own and on the shipped one.

    python benchmarks/real_source_yield.py --clones /work/corpus \
        [--manifest benchmarks/real_source_corpus.toml] [--work .cache/real-source-yield] \
        [--impls /work/fairness-impls] [--fairness-out /work/fairness] [--reuse] [--only corpus|shipped]

    python benchmarks/real_source_yield.py run-impl --fairness-dir /work/fairness TASK_ID IMPL.py

The corpus is a folder of clones (one per manifest entry, named by its `clone` field, at its
`commit`; benchmarks/real_source_corpus.toml lists 39 repositories created in 2025-2026 under
permissive licences). For each corpus the script writes a real-source configuration (local sources
for yours: a folder of links to the manifest's clones only, a cutoff on or before the earliest
creation date, the permissive licence list; for the shipped one: examples/real-source.toml with
its paths made absolute), runs the product's own CLI as a subprocess
(`python -m classforge_bench.pipeline.cli build --config ... --out ...`, under `nice`), and reads
only what the CLI writes: the harvest's and the build's funnel.json, the build's tasks.jsonl and
the release's tasks.jsonl. It prints side by side: the funnel (counts per stage, per drop reason),
the yield at each stage (of the harvested classes, of those reaching the `tests` stage, and of those
reaching the generator: past the method count that stage checks first), the
released tasks' mutation score and line coverage, time per class (CPU of the build's process tree
and wall, with the load average sampled during the run), and fairness: for each released task of
your corpus, its holistic prompt (what a model sees) and its tests are written to
FAIRNESS_OUT/<task_id>/ (prompt.md, tests.py, task.jsonl) with FAIRNESS_OUT/run_impl.py; blind
reimplementations are read from IMPLS/<task_id>/*.py and scored with the product's evaluator
(`classforge evaluate --dataset task.jsonl --samples ...`); a task is fair when every one of its
implementations passes every test. Nothing of the product is imported but its prompt renderer and
Task model for writing the prompts (the same code `classforge evaluate` uses).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_CONFIG = REPO / "examples" / "real-source.toml"
DEFAULT_MANIFEST = REPO / "benchmarks" / "real_source_corpus.toml"
PERMISSIVE = ["MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "0BSD", "Unlicense", "Zlib", "PSF-2.0"]
SNAPSHOT = "real-source"
CLI = [sys.executable, "-m", "classforge_bench.pipeline.cli"]


# -- configuration -----------------------------------------------------------------------------------


def read_manifest(path: Path) -> list[dict[str, str]]:
    return tomllib.loads(path.read_text(encoding="utf-8"))["repo"]


def link_clones(manifest: list[dict[str, str]], clones: Path, into: Path) -> list[str]:
    """A folder holding a link to each manifest clone (so nothing else in `clones` is harvested);
    returns the problems found (missing clone, other commit checked out)."""
    problems = []
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    for entry in manifest:
        src = clones / entry["clone"]
        if not (src / ".git").exists():
            problems.append(f"{entry['repo']}: no clone at {src}")
            continue
        head = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
        if head.strip() != entry["commit"]:
            problems.append(
                f"{entry['repo']}: {src} is at {head.strip()[:12]}, the manifest says {entry['commit'][:12]}"
            )
            continue
        (into / entry["clone"]).symlink_to(src.resolve())
    return problems


def plus_section(overrides: dict[str, Any]) -> dict[str, Any]:
    """The shipped example's generator settings (both corpora are built alike), the interpreter
    named absolutely (the checkout's .venv-plus), and any override from the command line."""
    plus = dict(tomllib.loads(EXAMPLE_CONFIG.read_text(encoding="utf-8"))["plus"])
    plus["python"] = str(REPO / ".venv-plus" / "bin" / "python")
    plus.update({k: v for k, v in overrides.items() if v is not None})
    return plus


def corpus_config(manifest: list[dict[str, str]], sources: Path, work: Path, plus: dict[str, Any]) -> dict[str, Any]:
    earliest = min(date.fromisoformat(e["created"]) for e in manifest)
    return {
        "harvest": {
            "cutoff": min(earliest, date(2025, 1, 1)).isoformat(),
            "snapshot": SNAPSHOT,
            "local_sources": [str(sources)],
            "github": {"enabled": False},
            "clone": {"workdir": str(work / "clones")},
            "dedup": {"reference_datasets": ["classeval"]},
        },
        "llm": {"mode": "replay", "cache_path": str(work / "llm.sqlite")},
        "construction": {
            "track": "real-source",
            "real_source": {"docstring_role": "none", "license_allow": PERMISSIVE},
        },
        "plus": {**plus, "cache_dir": str(work / "plus-cache")},
    }


def shipped_config(work: Path, plus: dict[str, Any]) -> dict[str, Any]:
    """examples/real-source.toml as `make run` builds it, its relative paths made absolute and its
    caches moved into the work folder."""
    cfg = tomllib.loads(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    base = EXAMPLE_CONFIG.parent
    cfg["harvest"]["bundle_sources"] = [str((base / p).resolve()) for p in cfg["harvest"]["bundle_sources"]]
    cfg["harvest"]["clone"] = {"workdir": str(work / "clones")}
    cfg["harvest"]["snapshot"] = SNAPSHOT
    cfg["llm"]["cache_path"] = str(work / "llm.sqlite")
    cfg["plus"] = {**plus, "cache_dir": str(work / "plus-cache")}
    for section in ("release", "construction"):
        cfg[section].pop("output_root", None)
    cfg["harvest"].pop("output_root", None)
    return cfg


def write_toml(data: dict[str, Any], path: Path) -> None:
    """The few shapes a configuration needs (tables, strings, numbers, booleans, lists of strings)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(str(v))

    def table(prefix: str, d: dict[str, Any]) -> list[str]:
        lines = [f"[{prefix}]"] if prefix else []
        lines += [f"{k} = {value(v)}" for k, v in d.items() if not isinstance(v, dict)]
        for k, v in d.items():
            if isinstance(v, dict):
                lines += ["", *table(f"{prefix}.{k}" if prefix else k, v)]
        return lines

    path.write_text("\n".join(table("", data)) + "\n", encoding="utf-8")


# -- running the CLI ---------------------------------------------------------------------------------


@dataclass
class RunTime:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    load_samples: list[float] = field(default_factory=list)
    exit_code: int | None = None

    @property
    def load(self) -> str:
        if not self.load_samples:
            return "-"
        return f"{min(self.load_samples):.1f}-{max(self.load_samples):.1f} (mean {sum(self.load_samples) / len(self.load_samples):.1f})"


def run_build(config: Path, out: Path, log: Path, niceness: int) -> RunTime:
    """`classforge build` as a subprocess under nice; CPU from the children's rusage, load average
    sampled every 15 s while it runs."""
    rt = RunTime()
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            rt.load_samples.append(os.getloadavg()[0])
            stop.wait(15)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.monotonic()
    # Its own Prefect home: two builds sharing one (this and `make run`, or another checkout's
    # build from the same folder) time out on the embedded server's database.
    env = {**os.environ, "PREFECT_HOME": str(out / "prefect-home")}
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run(
            ["nice", "-n", str(niceness), *CLI, "build", "--config", str(config), "--out", str(out)],
            cwd=REPO,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            check=False,
        )
    rt.wall_s = time.monotonic() - start
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rt.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rt.exit_code = proc.returncode
    return rt


# -- reading the outputs -----------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def release_folder(out: Path) -> Path | None:
    folders = sorted(p for p in (out / "releases").glob("*") if (p / "tasks.jsonl").is_file())
    return folders[-1] if folders else None


@dataclass
class Outcome:
    name: str
    stages: list[tuple[str, dict[str, Any]]]
    harvested: int
    reaching_tests: int
    reaching_generator: int  # past the method count the `tests` stage checks before any search
    released: list[dict[str, Any]]
    time: RunTime
    repos: int


def read_outcome(name: str, out: Path, rt: RunTime) -> Outcome:
    harvest = read_json(out / "harvested" / SNAPSHOT / "funnel.json") or {"stages": {}}
    build = read_json(out / "built" / SNAPSHOT / "funnel.json") or {"stages": {}}
    stages = list(harvest["stages"].items()) + [
        (k, v) for k, v in build["stages"].items() if k not in harvest["stages"]
    ]
    order = [s for s in STAGE_ORDER if any(k == s for k, _ in stages)]
    stages.sort(key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    classes = read_jsonl(out / "harvested" / SNAPSHOT / "classes.jsonl")
    rel = release_folder(out)
    released = read_jsonl(rel / "tasks.jsonl") if rel else []
    tests = build["stages"].get("tests", {})
    repos = harvest["stages"].get("clone", {}).get("kept", 0)
    # `too-few-methods` is decided at the start of `tests`, before the generator runs (issue 34).
    searched = int(tests.get("seen", 0)) - int(tests.get("dropped", {}).get("too-few-methods", 0))
    return Outcome(name, stages, len(classes), int(tests.get("seen", 0)), searched, released, rt, repos)


# The pipeline's stage order (core/reasons.py STAGES), repeated here so that the benchmark reads
# only the CLI's files; a stage missing from it sorts last.
STAGE_ORDER = [
    "clone",
    "select",
    "content",
    "compile",
    "imports",
    "structure",
    "references",
    "testability",
    "provenance",
    "dedup",
    "license",
    "skeleton",
    "docstrings",
    "tests",
    "generated-tests",
    "state-checks",
    "reference",
    "examples",
    "mutation",
    "task",
    "release",
]


# -- fairness: what a model sees, the tests, and scoring blind reimplementations ----------------------


def holistic_prompt(row: dict[str, Any]) -> str:
    """The holistic prompt exactly as `classforge evaluate` renders it for this task."""
    sys.path.insert(0, str(REPO))
    from classforge_bench.benchmark.strategies import plan, render_step
    from classforge_bench.pipeline.core.task import Task

    task = Task.from_row(row)
    rendered = render_step(task, plan(task, "holistic")[0], {})
    return "\n\n".join(f"## {m['role']}\n\n{m['content']}" for m in rendered.messages) + "\n"


RUN_IMPL = '''#!/usr/bin/env python3
"""Run a task's tests against an implementation file: run_impl.py TASK_ID IMPL.py
(the tests of {fairness}/TASK_ID, through `classforge evaluate`; exit 0 when every test passes)."""
import subprocess, sys
sys.exit(subprocess.call([{python!r}, {script!r}, "run-impl", "--fairness-dir", {fairness!r}, *sys.argv[1:]]))
'''


def write_fairness(released: list[dict[str, Any]], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for row in released:
        task_dir = folder / row["task_id"]
        task_dir.mkdir(parents=True, exist_ok=True)
        (task_dir / "prompt.md").write_text(holistic_prompt(row), encoding="utf-8")
        (task_dir / "tests.py").write_text(row["test"], encoding="utf-8")
        plus = row.get("plus")
        plus_test = json.loads(plus).get("test") if isinstance(plus, str) else (plus or {}).get("test")
        if plus_test:  # the hidden plus tier, scored too: a fair task is passed on both
            (task_dir / "tests_plus.py").write_text(plus_test, encoding="utf-8")
        (task_dir / "task.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    script = folder / "run_impl.py"
    script.write_text(
        RUN_IMPL.format(python=sys.executable, script=str(Path(__file__).resolve()), fairness=str(folder)),
        encoding="utf-8",
    )
    script.chmod(0o755)


@dataclass
class ImplResult:
    passed: bool
    detail: str


def score_impl(task_dir: Path, impl: Path) -> ImplResult:
    """One implementation against one task's tests, by `classforge evaluate --samples`: it passes
    when the sample passes every base test and, where the task has a plus tier, the plus suite."""
    task_id = task_dir.name
    with tempfile.TemporaryDirectory(prefix="rsy-") as tmp:
        samples = Path(tmp) / "samples.jsonl"
        completion = "```python\n" + impl.read_text(encoding="utf-8") + "\n```"
        line = {"task_id": task_id, "model": "blind", "strategy": "holistic", "completion": completion}
        samples.write_text(json.dumps(line) + "\n", encoding="utf-8")
        out = Path(tmp) / "results"
        proc = subprocess.run(
            [*CLI, "evaluate", "--dataset", str(task_dir / "task.jsonl"), "--samples", str(samples), "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        files = sorted(out.glob("*/samples/**/*.json"))
        results = sorted(out.glob("*/results.json"))
        if not files or not results:
            return ImplResult(False, f"evaluate wrote no sample (exit {proc.returncode}): {proc.stderr[-400:]}")
        base = sample_verdict(json.loads(files[0].read_text(encoding="utf-8")))
        plus = plus_verdict(json.loads(results[0].read_text(encoding="utf-8")))
    if plus is None:
        return base
    return ImplResult(base.passed and plus, f"{base.detail}; plus tier {'passes' if plus else 'FAILS'}")


def plus_verdict(results: dict[str, Any]) -> bool | None:
    """Whether the one sample passed the task's plus suite (results.json's plus scores: class-level
    full pass@1); None when the task has no plus tier."""
    scores = results.get("plus_scores") or []
    if not scores:
        return None
    full = scores[0].get("metrics", {}).get("class_level", {}).get("full", {}).get("1", {})
    return full.get("value") == 1.0


def sample_verdict(sample: dict[str, Any]) -> ImplResult:
    """A sample file of `classforge evaluate` (SampleRecord): it passes when it completed and no
    test of any test class failed, erred or timed out."""
    bucket = (sample.get("score") or {}).get("bucket")
    classes = ((sample.get("execution") or {}).get("outcome") or {}).get("test_classes", {})
    tests = sum(c.get("tests_run", 0) for c in classes.values())
    bad = {
        n: c.get("failures", 0) + c.get("errors", 0)
        for n, c in classes.items()
        if c.get("failures") or c.get("errors") or c.get("timed_out")
    }
    passed = bucket == "completed" and tests > 0 and not bad
    detail = f"{bucket}: {tests - sum(bad.values())} of {tests} tests pass"
    if bad:
        detail += "; failing in " + ", ".join(f"{n} ({k})" for n, k in sorted(bad.items()))
    return ImplResult(passed, detail)


def fairness(
    released: list[dict[str, Any]], impls: Path | None, folder: Path
) -> dict[str, list[tuple[str, ImplResult]]]:
    """task id -> each blind implementation's verdict (IMPLS/<task_id>/*.py)."""
    results: dict[str, list[tuple[str, ImplResult]]] = {}
    if impls is None:
        return results
    for row in released:
        files = sorted((impls / row["task_id"]).glob("*.py"))
        results[row["task_id"]] = [(f.name, score_impl(folder / row["task_id"], f)) for f in files]
    return results


# -- the report ---------------------------------------------------------------------------------------


def pct(n: float, d: float) -> str:
    return f"{100 * n / d:.1f}%" if d else "-"


def side_by_side(outcomes: list[Outcome]) -> str:
    names = [o.name for o in outcomes]
    lines = [
        "| stage | " + " | ".join(f"{n}: seen -> kept (dropped)" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    stage_names: list[str] = []
    for o in outcomes:
        stage_names += [s for s, _ in o.stages if s not in stage_names]
    for stage in stage_names:
        cells = []
        for o in outcomes:
            counts = dict(o.stages).get(stage)
            if counts is None:
                cells.append("-")
                continue
            dropped = ", ".join(
                f"{r} x{c}" for r, c in sorted(counts.get("dropped", {}).items(), key=lambda kv: -kv[1])
            )
            cells.append(f"{counts['seen']} -> {counts['kept']}" + (f" ({dropped})" if dropped else ""))
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def yield_table(outcomes: list[Outcome]) -> str:
    rows = [
        ("repositories", lambda o: str(o.repos)),
        ("classes harvested", lambda o: str(o.harvested)),
        (
            "reaching test generation",
            lambda o: f"{o.reaching_tests} ({pct(o.reaching_tests, o.harvested)} of harvested)",
        ),
        (
            "reaching the generator (past the method count)",
            lambda o: f"{o.reaching_generator} ({pct(o.reaching_generator, o.harvested)} of harvested)",
        ),
        (
            "released",
            lambda o: (
                f"{len(o.released)} ({pct(len(o.released), o.harvested)} of harvested, {pct(len(o.released), o.reaching_tests)} of those reaching tests, {pct(len(o.released), o.reaching_generator)} of those reaching the generator)"
            ),
        ),
    ]
    return _table(["", *(o.name for o in outcomes)], [[label, *(f(o) for o in outcomes)] for label, f in rows])


def stage_yield(o: Outcome) -> str:
    """Classes left after each class-counted stage, as a share of the harvested classes."""
    parts = []
    for stage, counts in o.stages:
        if stage in (
            "license",
            "skeleton",
            "docstrings",
            "tests",
            "reference",
            "examples",
            "mutation",
            "task",
            "release",
        ):
            parts.append(f"{stage} {counts['kept']} ({pct(counts['kept'], o.harvested)})")
    return "; ".join(parts) or "-"


def tasks_table(o: Outcome, fair: dict[str, list[tuple[str, ImplResult]]]) -> str:
    if not o.released:
        return f"{o.name}: no task released"
    rows = []
    for row in o.released:
        src = (row.get("sources") or [{}])[0]
        verdicts = fair.get(row["task_id"], [])
        passing = sum(r.passed for _, r in verdicts)
        rows.append(
            [
                row["task_id"],
                row["class_name"],
                f"{src.get('repo', '?')} {src.get('path', '')}",
                src.get("license_spdx") or "-",
                f"{row.get('coverage') or 0:.1f}%",
                _mutation(row),
                f"{passing}/{len(verdicts)}" if verdicts else "no impls",
            ]
        )
    return _table(
        ["task", "class", "source", "licence", "line coverage", "mutation score", "blind impls passing"], rows
    )


def _mutation(row: dict[str, Any]) -> str:
    m = row.get("mutation") or {}
    score = row.get("mutation_score")
    if score is None:
        return "-"
    killed = m.get("killed")
    scored = (m.get("mutants") or 0) - (m.get("equivalent") or 0)
    return (
        f"{100 * score:.1f}%" + (f" ({killed} of {scored})" if killed is not None else "")
        if score <= 1
        else f"{score:.1f}%"
    )


def time_table(outcomes: list[Outcome]) -> str:
    rows = []
    for o in outcomes:
        t = o.time
        rows.append(
            [
                o.name,
                f"{t.wall_s:.0f} s",
                f"{t.cpu_s:.0f} s",
                f"{t.wall_s / o.harvested:.1f} s" if o.harvested else "-",
                f"{t.cpu_s / o.harvested:.1f} s" if o.harvested else "-",
                f"{t.cpu_s / o.reaching_tests:.1f} s" if o.reaching_tests else "-",
                t.load,
                str(t.exit_code),
            ]
        )
    return _table(
        [
            "corpus",
            "wall",
            "CPU (build tree)",
            "wall / harvested class",
            "CPU / harvested class",
            "CPU / class reaching tests",
            "load average (1 min) during the run",
            "exit",
        ],
        rows,
    )


def fairness_line(o: Outcome, fair: dict[str, list[tuple[str, ImplResult]]]) -> str:
    judged = {t: v for t, v in fair.items() if v}
    fair_tasks = [t for t, v in judged.items() if all(r.passed for _, r in v)]
    lines = [
        f"{o.name}: {len(fair_tasks)} of {len(judged)} tasks with blind implementations pass them all "
        f"({len(o.released)} released, {len(o.released) - len(judged)} without implementations)"
    ]
    for task, verdicts in judged.items():
        for name, r in verdicts:
            lines.append(f"  {task} {name}: {'pass' if r.passed else 'FAIL'} ({r.detail})")
    return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]
    )


# -- main ---------------------------------------------------------------------------------------------


def build_one(name: str, cfg: dict[str, Any], work: Path, args: argparse.Namespace) -> Outcome:
    out = work / name
    timing = work / f"{name}.time.json"
    if args.reuse and timing.is_file():
        rt = RunTime(**json.loads(timing.read_text(encoding="utf-8")))
    else:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        write_toml(cfg, work / f"{name}.toml")
        print(f"building {name} (log: {work / f'{name}.log'}) ...", flush=True)
        rt = run_build(work / f"{name}.toml", out, work / f"{name}.log", args.nice)
        timing.write_text(json.dumps(rt.__dict__), encoding="utf-8")
    if rt.exit_code != 0:
        tail = (work / f"{name}.log").read_text(encoding="utf-8", errors="replace").splitlines()[-5:]
        print(
            f"warning: the {name} build exited {rt.exit_code}; its log ends:\n  " + "\n  ".join(tail), file=sys.stderr
        )
    return read_outcome(name, out, rt)


def report(args: argparse.Namespace) -> int:
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    plus = plus_section(
        {"max_iterations": args.max_iterations, "budget_s": args.budget_s, "wall_limit_s": args.wall_limit_s}
    )
    outcomes = []
    if args.only in (None, "corpus"):
        manifest = read_manifest(args.manifest)
        problems = link_clones(manifest, args.clones.resolve(), work / "corpus-sources")
        for p in problems:
            print(f"warning: {p}", file=sys.stderr)
        outcomes.append(
            build_one(
                "corpus", corpus_config(manifest, work / "corpus-sources", work / "corpus-work", plus), work, args
            )
        )
    if args.only in (None, "shipped"):
        outcomes.append(build_one("shipped", shipped_config(work / "shipped-work", plus), work, args))
    # Every released task gets its prompt, tests and run_impl.py (the shipped corpus's too: `make
    # run` releases them, and issue 34 asks the same check of them); blind implementations are
    # scored wherever IMPLS has some for a task.
    released = [row for o in outcomes for row in o.released]
    write_fairness(released, args.fairness_out)
    fair = fairness(released, args.impls, args.fairness_out)
    print("\n## Yield\n\n" + yield_table(outcomes))
    for o in outcomes:
        print(f"\nclasses left after each stage ({o.name}): {stage_yield(o)}")
    print("\n## Funnel (per stage: seen -> kept, drop reasons)\n\n" + side_by_side(outcomes))
    for o in outcomes:
        print(f"\n## Released tasks ({o.name})\n\n" + tasks_table(o, fair))
    print("\n## Time per class\n\n" + time_table(outcomes))
    print("\n## Fairness (blind reimplementations passing every test / tasks)\n")
    for o in outcomes:
        print(fairness_line(o, {t: v for t, v in fair.items() if t in {r["task_id"] for r in o.released}}))
    return 0


def run_impl(args: argparse.Namespace) -> int:
    task_dir = args.fairness_dir / args.task_id
    if not (task_dir / "task.jsonl").is_file():
        print(f"no task {args.task_id} under {args.fairness_dir}", file=sys.stderr)
        return 2
    result = score_impl(task_dir, args.impl)
    print(("PASS " if result.passed else "FAIL ") + result.detail)
    return 0 if result.passed else 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    if argv[:1] == ["run-impl"]:
        p = argparse.ArgumentParser(prog="real_source_yield.py run-impl")
        p.add_argument("--fairness-dir", type=Path, default=Path("/work/fairness"))
        p.add_argument("task_id")
        p.add_argument("impl", type=Path)
        ns = p.parse_args(argv[1:])
        ns.command = "run-impl"
        return ns
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clones", type=Path, help="folder holding the manifest's clones (owner__name)")
    p.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    p.add_argument("--work", type=Path, default=REPO / ".cache" / "real-source-yield")
    p.add_argument(
        "--impls",
        type=Path,
        default=REPO / "tests" / "data" / "fairness" / "corpus",
        help="blind implementations: IMPLS/<task_id>/*.py (default: the recorded ones of our corpus)",
    )
    p.add_argument("--fairness-out", type=Path, default=Path("/work/fairness"))
    p.add_argument("--only", choices=["corpus", "shipped"])
    p.add_argument("--reuse", action="store_true", help="read the last builds' outputs instead of building again")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--max-iterations", type=int, help="plus.max_iterations (default: the example's)")
    p.add_argument(
        "--budget-s", type=int, help="plus.budget_s, the search's time cap per class (default: the example's)"
    )
    p.add_argument("--wall-limit-s", type=float, help="plus.wall_limit_s, the generator's kill per class")
    ns = p.parse_args(argv)
    if ns.only != "shipped" and ns.clones is None:
        p.error("--clones is required unless --only shipped")
    ns.command = "report"
    return ns


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_impl(args) if args.command == "run-impl" else report(args)


if __name__ == "__main__":
    sys.exit(main())
