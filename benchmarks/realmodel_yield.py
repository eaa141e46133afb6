"""Yield of every construction stage against the real local model, and tokens per surviving task.

    python scripts/realmodel/realmodel.py up
    python benchmarks/realmodel_yield.py --candidates 3 [--workdir .cache/realmodel/yield]
    python benchmarks/realmodel_yield.py --handwritten composer --candidates 3 --workdir .cache/realmodel/yield-example

Runs `classforge build` (the installed console script, as a user does) over the bundled example
corpus with every role pointed at the local model, `--candidates` pairs (up to 3: the example's
pinned pairs; more: all drawn by the seeded pairing), then prints per stage: candidates in,
kept, first-attempt successes, successes after the client's retry with more room for a cut answer,
and successes after a repair or re-ask (the local model's answers per candidate and stage, from the
build's response cache), all answers paid for at the stage, drop reasons, and the tokens
spent per surviving candidate. `--handwritten composer[,test_writer]` takes those roles' answers
from the example's handwritten ones, so that the later stages meet the local model on valid
skeletons (and suites). The
work folder is kept, so running it again reuses every answer already paid for.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from classforge_bench.pipeline.core.reasons import STAGES  # noqa: E402 - the pipeline's stage order
from tests.realmodel.realmodel_config import EXAMPLE_MODELS, EXAMPLE_PAIRS, build_config  # noqa: E402

# Which stage a request served, by the first prompt of its version ("compose@v1+compose_repair@v2"):
# several requests of one candidate at one stage are repairs, re-asks or retries.
HANDWRITTEN_STAGE = {"composer": "compose", "test_writer": "tests"}
PROMPT_STAGE = {
    "compose": "compose",
    "tests_writer": "tests",
    "judge": "judges",
    "solve": "solution",
    "tests_strengthen": "strengthen",
}


def request_kind(request: dict, smaller_asked: bool) -> str:
    """What a request was for: "repair" (a repair or re-ask: its prompt version chains a second
    prompt, "compose@v1+compose_repair@v2"), "room" (the client's retry of a cut answer: the same
    request with a larger max_tokens than one already asked) or "first"."""
    if "+" in request["prompt_version"]:
        return "repair"
    return "room" if smaller_asked else "first"


def paid_answers(cache: Path, model: str) -> tuple[dict[tuple[str, str], collections.Counter[str]], int, int]:
    """From the build's response cache, what `model` answered over every run: ((candidate id,
    stage) -> answers by `request_kind`, prompt tokens, completion tokens). Imported answers of
    other models (the example's handwritten skeletons) are not counted."""
    counts: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    prompt = completion = 0
    with sqlite3.connect(cache) as db:
        docs = [json.loads(entry) for (entry,) in db.execute("SELECT entry FROM responses WHERE model = ?", (model,))]
    # The same request but for max_tokens: the smallest one asked first, the others are retries for room.
    asked = [
        (doc, json.dumps({k: v for k, v in doc["request"].items() if k != "max_tokens"}, sort_keys=True))
        for doc in docs
    ]
    smallest: dict[str, int] = {}
    for doc, same in asked:
        smallest[same] = min(smallest.get(same, doc["request"]["max_tokens"]), doc["request"]["max_tokens"])
    for doc, same in asked:
        request = doc["request"]
        prompt_name = request["prompt_version"].split("@")[0]
        kind = request_kind(request, request["max_tokens"] > smallest[same])
        counts[(doc.get("task_id") or "?", PROMPT_STAGE.get(prompt_name, prompt_name))][kind] += 1
        prompt += doc.get("prompt_tokens", 0)
        completion += doc.get("completion_tokens", 0)
    return counts, prompt, completion


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=REPO / ".cache" / "realmodel" / "yield")
    parser.add_argument(
        "--state",
        type=Path,
        default=REPO / ".cache" / "realmodel" / "server.json",
        help="the state file `realmodel.py up` wrote (base URL and model)",
    )
    parser.add_argument("--base-url", help="another server than the state file's (then give --model too)")
    parser.add_argument("--model")
    parser.add_argument(
        "--handwritten",
        type=lambda v: frozenset(x for x in v.split(",") if x),
        default=frozenset(),
        help="comma-separated roles (composer, test_writer) answered by the example corpus's "
        "handwritten answers (its three pairs), so the later stages meet the local model "
        "on valid input",
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="send nothing: fold what an earlier (stopped) run paid for; candidates it did not "
        "finish are listed as unfinished",
    )
    args = parser.parse_args()
    state = {"base_url": args.base_url, "model": args.model} if args.base_url else json.loads(args.state.read_text())
    if args.handwritten and args.candidates > len(EXAMPLE_PAIRS):
        parser.error(
            f"--handwritten: the example has {len(EXAMPLE_PAIRS)} handwritten pairs; ask for at most that many"
        )
    if args.handwritten - set(EXAMPLE_MODELS):
        parser.error(f"--handwritten: choose among {', '.join(EXAMPLE_MODELS)}")
    if args.candidates <= len(EXAMPLE_PAIRS):
        config = build_config(
            state["base_url"], state["model"], EXAMPLE_PAIRS[: args.candidates], handwritten=args.handwritten
        )
    else:
        intra = args.candidates // 3
        config = (
            build_config(state["base_url"], state["model"], [])
            .replace("intra_target = 0", f"intra_target = {intra}")
            .replace("cross_target = 0", f"cross_target = {args.candidates - intra}")
        )
    if args.replay:
        config = config.replace('mode = "live"', 'mode = "replay"')
    args.workdir.mkdir(parents=True, exist_ok=True)
    (args.workdir / "classforge.toml").write_text(config)
    classforge = Path(sys.executable).with_name("classforge")
    started = time.monotonic()
    done = subprocess.run(
        [str(classforge), "build", "--config", "classforge.toml"],
        cwd=args.workdir,
        env=dict(os.environ, OPENAI_API_KEY="not-needed-on-loopback", COLUMNS="160"),
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    out = args.workdir / "built" / "realmodel"
    if not (out / "funnel.json").exists():
        print(done.stdout[-3000:], done.stderr[-3000:])
        return 1
    funnel = json.loads((out / "funnel.json").read_text())
    rejects = [json.loads(x) for x in (out / "rejects.jsonl").read_text().splitlines() if x.strip()]
    tasks = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines() if x.strip()]
    per_cand, prompt, completion = paid_answers(args.workdir / ".cache" / "llm.sqlite", state["model"])
    rejected_at = {r["item_id"]: (r["stage"], r["reason"]) for r in rejects if r["item_id"].startswith("cand-")}

    by_hand = f" ({', '.join(sorted(args.handwritten))}: the example's handwritten answers)" if args.handwritten else ""
    print(
        f"model {state['model']} at {state['base_url']}{by_hand}; {args.candidates} candidates; build exit "
        f"{done.returncode} after {seconds:.0f} s (a re-run replays what was paid for from the cache)"
    )
    print(
        f"{'stage':<12}{'in':>4}{'kept':>6}{'1st try':>9}{'more room':>11}{'repaired':>10}{'answers':>9}  drop reasons"
    )
    stages = list(STAGES)  # funnel.json's keys are sorted by name, not in pipeline order
    candidates = {c for c, _ in per_cand} | set(rejected_at)
    for name in stages:
        counts = funnel["stages"].get(name, {"seen": 0, "kept": 0, "dropped": {}})
        columns: tuple[object, ...] = ("-",) * 4
        if name in {HANDWRITTEN_STAGE[role] for role in args.handwritten}:
            columns = ("example",) * 4
        elif name in PROMPT_STAGE.values():
            # Kept here = not dropped at this stage or an earlier one.
            kept_ids = [
                c for c in candidates if c not in rejected_at or stages.index(rejected_at[c][0]) > stages.index(name)
            ]
            kinds = [per_cand.get((c, name), collections.Counter()) for c in kept_ids]
            expected = 3 if name == "judges" else 1  # three judges answer once each on a first try
            columns = (
                sum(k == collections.Counter(first=expected) for k in kinds),
                sum(k["room"] > 0 and k["repair"] == 0 for k in kinds),
                sum(k["repair"] > 0 for k in kinds),
                sum(sum(k.values()) for (_, stage), k in per_cand.items() if stage == name),
            )
        first, room, repaired, answers = columns
        print(
            f"{name:<12}{counts['seen']:>4}{counts['kept']:>6}{first:>9}{room:>11}{repaired:>10}{answers:>9}  "
            f"{json.dumps(counts['dropped'])}"
        )
    tokens = prompt + completion
    print(
        f"{sum(sum(k.values()) for k in per_cand.values())} answers paid for, {prompt} prompt + {completion} completion tokens; "
        f"{len(tasks)} surviving task(s); tokens per surviving candidate: "
        + (f"{tokens / len(tasks):.0f}" if tasks else f"- ({tokens} tokens spent for none)")
    )
    for cid, (stage, reason) in sorted(rejected_at.items()):
        print(f"  {cid}: dropped at {stage} ({reason})")
    build = json.loads((out / "build.json").read_text()) if (out / "build.json").exists() else {}
    for item in build.get("incomplete", []):
        print(f"  {item['candidate_id']}: unfinished ({item['reason']}): {item['detail'][:120]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
