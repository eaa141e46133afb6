"""Repeated threaded builds of the offline example: how many candidates are lost to errors.

Each round harvests nothing new (the snapshot is built once), then runs the construction stages
for the example's three candidates on `--concurrency` threads with the real sandbox gate, into a
fresh build folder, replaying the shipped responses. A lost candidate is one that ends unfinished
with an internal error (before the parse guard: "AST constructor recursion depth mismatch").

    .venv/bin/python benchmarks/build_thread_stress.py --rounds 10 --concurrency 4
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()

    from classforge_bench.pipeline.config import load_config
    from classforge_bench.pipeline.construct.run import run_build
    from classforge_bench.pipeline.harvest.run import run_harvest

    work = Path(tempfile.mkdtemp(prefix="classforge-stress-"))
    config = load_config(ROOT / "examples" / "classforge.toml", env={})
    config.harvest.output_root = work / "harvested"
    config.harvest.clone.workdir = work / "clones"
    config.harvest.dedup.reference_corpora = []
    config.llm.cache_path = work / "llm.sqlite"
    config.llm.concurrency = args.concurrency
    run_harvest(config.harvest)
    lost: Counter[str] = Counter()
    built = 0
    started = time.monotonic()
    for round_no in range(args.rounds):
        config.construction.output_root = work / f"built-{round_no}"
        result = run_build(config, {})
        built += len(result.tasks)
        for unfinished in result.incomplete:
            lost[unfinished.detail.split(":")[0]] += 1
        print(f"round {round_no + 1}: {len(result.tasks)} built, {len(result.incomplete)} lost", flush=True)
    elapsed = time.monotonic() - started
    shutil.rmtree(work, ignore_errors=True)
    print(
        f"{args.rounds} rounds x 3 candidates on {args.concurrency} threads: {built} built, "
        f"{sum(lost.values())} lost {dict(lost) or ''} in {elapsed:.0f} s"
    )
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
