"""How close an unrelated class comes to the earlier-release threshold (harvest dedup).

    python benchmarks/release_containment.py [--classeval FILE] [--pairs 60]

For every ClassEval solution class, the highest estimated containment (docstrings aside, as the
harvest computes it against earlier releases) in `--pairs` solutions composed of two other random
ClassEval classes, the shape of a classforge release task. Prints the five highest and the
threshold; a class at or above it would be dropped as `earlier-release`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classforge_bench.pipeline.config import DedupConfig  # noqa: E402
from classforge_bench.pipeline.harvest.dedup import DedupIndex, classes_in, without_docstrings  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classeval", type=Path, default=Path("/work/shared/data/classeval/ClassEval_data.json"))
    parser.add_argument("--pairs", type=int, default=60)
    args = parser.parse_args()
    cfg = DedupConfig()
    index = DedupIndex(cfg)
    tasks = json.loads(args.classeval.read_text())
    classes = [(t["task_id"], src) for t in tasks for _, src in classes_in(t["solution_code"])]
    prints = [index._fingerprint(without_docstrings(src)) for _, src in classes]
    rng = random.Random(1)
    highest = []
    for i, (task_id, _) in enumerate(classes):
        mh, size = prints[i]
        worst = (0.0, "")
        for _ in range(args.pairs):
            a, b = rng.sample([k for k in range(len(classes)) if k != i], 2)
            other, other_size = index._fingerprint(without_docstrings(classes[a][1] + "\n" + classes[b][1]))
            j = mh.jaccard(other)
            contained = min(1.0, j * (size + other_size) / ((1 + j) * size))
            worst = max(worst, (contained, f"{classes[a][0]} + {classes[b][0]}"))
        highest.append((worst[0], task_id, worst[1]))
    highest.sort(reverse=True)
    print(f"{len(classes)} classes x {args.pairs} composed pairs; threshold {cfg.near_threshold}")
    for contained, task_id, pair in highest[:5]:
        print(f"  {task_id}: {contained:.2f} in {pair}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
