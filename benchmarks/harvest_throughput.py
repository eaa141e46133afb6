"""Measure extract+filter throughput (files/s, classes/s) and peak memory of the harvest.

Usage:
    python benchmarks/harvest_throughput.py                 # synthetic corpora of 10, 20 and 40 repos
    python benchmarks/harvest_throughput.py --corpus DIR    # a directory of git repositories

Each corpus size runs in a fresh process so peak RSS is that run's own; if memory is streamed,
peak RSS stays flat while the corpus doubles.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harvest"))


def build_synthetic(root: Path, repos: int, files_per_repo: int) -> None:
    from classgen import make_class

    from classforge_bench.pipeline.harvest.repo_builder import CommitSpec, build_repo

    for r in range(repos):
        files: dict[str, str | bytes] = {}
        for f in range(files_per_repo):
            kind = f % 4
            name = f"Widget{r}x{f}"
            if kind == 0:
                src = make_class(name, methods=6 + f % 5, body_lines=6 + r % 4, imports="import json\nimport math\n")
            elif kind == 1:
                src = make_class(name, methods=3)  # too-few-methods
            elif kind == 2:
                src = make_class(name, methods=6, imports="import requests\nimport json\n")  # third-party
            else:
                src = "def helper(x):\n    return x * 2\n" * 20  # no classes
            files[f"pkg{r}/mod_{f}.py"] = src.replace("value + ", f"value + {r * 1000 + f} + ")
        when = datetime(2025, 3, 1, tzinfo=UTC)
        build_repo(root / f"bench__repo{r:03d}", [CommitSpec(when, "initial", files)])


def measure(corpus: Path, work: Path) -> dict:
    from classforge_bench.pipeline.config import CloneConfig, HarvestConfig
    from classforge_bench.pipeline.harvest.run import run_harvest

    cfg = HarvestConfig(
        cutoff=date(2025, 1, 1),
        snapshot="bench",
        output_root=work / "out",
        local_sources=[str(corpus)],
        clone=CloneConfig(workdir=work / "clones"),
    )
    files = sum(1 for p in corpus.rglob("*.py") if ".git" not in p.parts)
    start = time.perf_counter()
    summary = run_harvest(cfg)
    wall = time.perf_counter() - start
    stages = summary.funnel.stages
    candidates = stages["imports"].seen if "imports" in stages else 0
    return {
        "repos": summary.repos,
        "files": files,
        "candidate_classes": candidates,
        "kept": summary.classes,
        "wall_s": round(wall, 2),
        "files_per_s": round(files / wall, 1),
        "classes_per_s": round(candidates / wall, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="a directory of git repositories")
    parser.add_argument("--sizes", default="10,20,40", help="synthetic corpus sizes in repositories")
    parser.add_argument("--files-per-repo", type=int, default=24)
    parser.add_argument("--child", nargs=2, metavar=("CORPUS", "WORK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(Path(args.child[0]), Path(args.child[1]))))
        return
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{__import__('os').cpu_count()} cores"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpora = []
        if args.corpus:
            corpora.append(args.corpus.resolve())
        else:
            for n in (int(s) for s in args.sizes.split(",")):
                c = Path(tmp) / f"corpus{n}"
                build_synthetic(c, n, args.files_per_repo)
                corpora.append(c)
        for i, corpus in enumerate(corpora):
            work = Path(tmp) / f"work{i}"
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(corpus), str(work)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cols = ["repos", "files", "candidate_classes", "kept", "wall_s", "files_per_s", "classes_per_s", "peak_rss_mb"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))


if __name__ == "__main__":
    main()
