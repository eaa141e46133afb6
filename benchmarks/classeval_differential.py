"""Differential testing of ClassEval's published answers against the reference (EvalPlus-style, class level).

    nice -n 15 .venv/bin/python benchmarks/classeval_differential.py --outputs DIR [--dataset PATH]
        [--mutants 8] [--splices 6] [--json OUT]
    .venv/bin/python benchmarks/classeval_differential.py --record-suites STRENGTHENED.json

`--outputs`: a folder holding ClassEval's published output files GPT-4_100_c_t0.json (its repository's
output/model_output/) and GPT-3.5-Turbo_class_H_greedy.json (output/model_output_v1.0.0/); ClassEval's,
MIT, not in this repository. Each answer is extracted as the evaluator does and run with ClassEval's own
tests; every answer that passes them all is then run, with the reference, on scenarios made from the
task's base tests by the plus tier's seed-input mutation (classforge_bench/pipeline/quality/plus/
seed_scenarios.py, called with this benchmark's own key "verdicts:<task id>"): each test as written,
up to `--mutants` mutants per test (one literal in an input position changed type-preservingly: an int keeps its sign, a str gets one character changed within its
class, dropped or doubled, a list loses or doubles an element, a dict loses an entry or has a value
mutated; dict keys are never changed: they are a record's structure), and up to `--splices` pairs of
tests of one test class run on one object (the second test's constructor dropped, its variable renamed),
plus one mutant of each. Observed: every public method's return value or exception type, the skeleton's
constructor fields after each call, and the arguments of every assert. A scenario the reference does
not repeat under two hash seeds is left out. The output (--json) lists every divergence: the scenario,
the first differing observation of each side; tests/data/classeval_plus_verdicts.json holds the
verdicts read by hand on them (tests/quality/test_plus_verdicts.py).

`--record-suites`: write the plus suites of a `classforge strengthen` output for the tasks
tests/data/classeval_published_answers.json names into tests/data/classeval_plus_suites.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHILD = Path(__file__).resolve().with_name("classeval_differential_child.py")
_RELATIVE = Path("shared") / "data" / "classeval" / "ClassEval_data.json"
# beside the checkout (/work/main -> /work/shared) or beside a worktree's parent
DEFAULT_DATASET = next((p / _RELATIVE for p in ROOT.parents if (p / _RELATIVE).is_file()), ROOT.parent / _RELATIVE)
FILES = {"GPT-4": "GPT-4_100_c_t0.json", "GPT-3.5": "GPT-3.5-Turbo_class_H_greedy.json"}
DATA = ROOT / "tests" / "data"


def _indented(text: str | None) -> str | None:
    """A scenario's source as the child runs it: a function body (four spaces)."""
    if text is None:
        return None
    return "\n".join("    " + line for line in text.splitlines()) or "    pass"


def scenarios(task):
    """The product's seed scenarios (classforge_bench/pipeline/quality/plus/seed_scenarios.py) of the
    task's tests, drawn from the key this benchmark has always used (so its divergences reproduce)."""
    from classforge_bench.pipeline.quality.plus.seed_scenarios import scenarios as seed_scenarios

    made = seed_scenarios(
        task["test"], task["class_name"], "verdicts:" + task["task_id"], mutants=ARGS.mutants, splices=ARGS.splices
    )
    return [
        {
            "cls": s.test_class,
            "test": s.test,
            "kind": s.kind,
            "setup": _indented(s.setup),
            "teardown": _indented(s.teardown),
            "body": _indented(s.body),
        }
        for s in made
    ]


BASE_RUNNER = """
import json, sys, unittest
sys.path.insert(0, ".")
import mod
res = {}
for n in json.loads(sys.argv[1]):
    r = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(getattr(mod, n)).run(r)
    res[n] = r.wasSuccessful() and r.testsRun > 0
print(json.dumps(res))
"""


def passes_base(task: dict, program: str) -> bool:
    """ClassEval's own tests, every test class (class level), in a subprocess in a temp dir."""
    with tempfile.TemporaryDirectory() as d:
        Path(d, "mod.py").write_text(program + "\n\n" + task["test"], encoding="utf-8")
        Path(d, "run.py").write_text(BASE_RUNNER, encoding="utf-8")
        try:
            p = subprocess.run(
                [sys.executable, "run.py", json.dumps(task["test_classes"])],
                cwd=d,
                capture_output=True,
                text=True,
                timeout=120,
            )
            res = json.loads(p.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError):
            return False
    return all(res.values())


def run(task: dict, program: str, scs: list[dict], hashseed: int) -> list | dict:
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d, "spec.json")
        module = program + "\n\n" + task["test"].replace("if __name__", "if False and __name__")
        spec.write_text(
            json.dumps(
                {"program": module, "class_name": task["class_name"], "fields": task["fields"], "scenarios": scs}
            ),
            encoding="utf-8",
        )
        env = dict(os.environ, PYTHONHASHSEED=str(hashseed))
        try:
            p = subprocess.run(
                [sys.executable, str(CHILD), str(spec)], cwd=d, capture_output=True, text=True, timeout=900, env=env
            )
            return json.loads(p.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError) as exc:
            return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}


def first_diff(a: list, b: list) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b)) if len(a) != len(b) else None


def do_task(task: dict, reference: str, answers: dict[str, str]) -> dict:
    scs = scenarios(task)
    r1, r2 = run(task, reference, scs, 0), run(task, reference, scs, 1)
    res: dict = {"task_id": task["task_id"], "scenarios": len(scs), "answers": {}}
    if isinstance(r1, dict) or isinstance(r2, dict):
        res["error"] = str(r1)[:300] + str(r2)[:300]
        return res
    stable = [i for i in range(len(scs)) if r1[i] == r2[i]]
    res["stable"] = len(stable)
    for model, program in answers.items():
        ra = run(task, program, scs, 0)
        if isinstance(ra, dict):
            res["answers"][model] = {"error": ra["error"]}
            continue
        divs = []
        for i in stable:
            ref, got = r1[i], ra[i]
            if ref == got:
                continue
            k = first_diff(ref["trace"], got["trace"])
            divs.append(
                {
                    "kind": scs[i]["kind"],
                    "test": scs[i]["cls"] + "." + scs[i]["test"],
                    "setup": scs[i]["setup"],
                    "body": scs[i]["body"],
                    "ref_status": ref["status"],
                    "got_status": got["status"],
                    "at": k,
                    "ref": ref["trace"][k] if k is not None and k < len(ref["trace"]) else None,
                    "got": got["trace"][k] if k is not None and k < len(got["trace"]) else None,
                }
            )
        res["answers"][model] = {"divergences": divs}
    return res


def programs(outputs: Path, tasks: dict[str, dict]) -> dict[str, dict[str, str]]:
    from classforge_bench.pipeline.llm.extraction import extract_code

    out: dict[str, dict[str, str]] = {m: {} for m in FILES}
    for model, name in FILES.items():
        for r in json.loads((outputs / name).read_text(encoding="utf-8")):
            task = tasks[r["task_id"]]
            code = extract_code(r["predict"][0], class_name=task["class_name"]).code
            if code:
                out[model][r["task_id"]] = "\n".join([*task["import_statement"], code.strip("\n")]) + "\n"
    return out


def record_suites(strengthened: Path) -> None:
    from classforge_bench.pipeline.formats.loader import load_dataset

    wanted = {
        a["task_id"] for a in json.loads((DATA / "classeval_published_answers.json").read_text())["answers"].values()
    }
    suites = {
        t.task_id: t.plus.model_dump(mode="json", exclude={"drops"})
        for t in load_dataset(strengthened).tasks
        if t.task_id in wanted and t.plus is not None
    }
    missing = sorted(wanted - set(suites))
    if missing:
        sys.exit(f"{strengthened} has no plus suite for {', '.join(missing)}")
    note = (
        "Plus suites as `classforge strengthen` (default [plus] settings) wrote them for the ClassEval tasks "
        "of tests/data/classeval_published_answers.json; recorded by benchmarks/classeval_differential.py "
        "--record-suites. The tests are generated on ClassEval's reference solutions (MIT, FudanSELab/ClassEval)."
    )
    ordered = dict(sorted(suites.items(), key=lambda kv: int(kv[0].split("_")[1])))
    (DATA / "classeval_plus_suites.json").write_text(
        json.dumps({"note": note, "suites": ordered}, indent=1) + "\n", encoding="utf-8"
    )
    print(f"recorded {len(suites)} suites, {sum(s['tests'] for s in suites.values())} plus tests")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outputs", type=Path)
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--mutants", type=int, default=8)
    ap.add_argument("--splices", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--record-suites", type=Path, metavar="STRENGTHENED")
    args = ap.parse_args()
    ARGS.mutants, ARGS.splices = args.mutants, args.splices
    if args.record_suites:
        record_suites(args.record_suites)
        return
    if args.outputs is None:
        ap.error("--outputs is required")
    tasks = {t["task_id"]: t for t in json.loads(args.dataset.read_text(encoding="utf-8"))}
    progs = programs(args.outputs, tasks)
    passing: dict[str, dict[str, str]] = {}
    with ThreadPoolExecutor(args.workers) as ex:
        checks = [(m, tid, ex.submit(passes_base, tasks[tid], p)) for m, ps in progs.items() for tid, p in ps.items()]
        for model, tid, fut in checks:
            if fut.result():
                passing.setdefault(tid, {})[model] = progs[model][tid]
    for model in FILES:
        print(f"{model}: {sum(model in a for a in passing.values())} answers pass ClassEval's own tests", flush=True)
    order = sorted(passing, key=lambda t: int(t.split("_")[1]))

    def one(tid: str) -> dict:
        task = tasks[tid]
        return do_task(
            task, "\n".join([*task["import_statement"], task["solution_code"].strip("\n")]) + "\n", passing[tid]
        )

    with ThreadPoolExecutor(args.workers) as ex:
        results = list(ex.map(one, order))
    for r in results:
        counts = {
            m: len(a.get("divergences", [])) if "error" not in a else a["error"][:80] for m, a in r["answers"].items()
        }
        print(f"{r['task_id']:<14} scenarios {r['scenarios']:>4} (stable {r.get('stable', '-')}) divergences {counts}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


class _Args:
    mutants = 8
    splices = 6


ARGS = _Args()

if __name__ == "__main__":
    main()
