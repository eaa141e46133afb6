"""Issue 31: what a release's shipped reference results save a cold `classforge evaluate`.

Usage:
    python benchmarks/shipped_references.py [--dataset ClassEval_data.json] [--repeat 3] [--samples FILE]

ClassEval's tasks are written as a classforge release (in a temporary folder, with the release
stage's reference run: `benchmarks` is not the build, so the tasks come straight from the dataset),
then `classforge evaluate --dataset <release>` runs cold (a fresh results root and an empty user
reference cache every time) with the shipped results trusted (`evaluate.shipped_references`, the
default) and ignored (`false`: every reference runs, as for a release that ships none),
interleaved, `--repeat` times each; CPU by a cpuacct cgroup (`evaluate_vs_classeval.Meter`).
`--samples`: a samples file to score (default: the `reference` model, one sample per task, which
reuses the reference's run, so what is left is the reference pre-run and the fixed cost). Prints
each run, the medians, the ratio trusted/ignored, the sandbox runs and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "classeval" / "ClassEval_data.json"
_CLI = "from classforge_bench.pipeline.cli import app; app()"


def write_classeval_release(dataset: Path, root: Path, cache: Path) -> Path:
    """ClassEval's tasks as a release, shipping their references' verified results."""
    from classforge_bench.benchmark.release_references import verified_references
    from classforge_bench.pipeline.config import Config
    from classforge_bench.pipeline.core.funnel import FunnelReport
    from classforge_bench.pipeline.formats.loader import load_dataset
    from classforge_bench.pipeline.release.writer import write_release

    # the card's statistics need a composition type and domains, which ClassEval's records lack
    labels = {"composition_type": "intra-domain", "domain1": "ClassEval", "domain2": "ClassEval"}
    tasks = [t.model_copy(update=labels) for t in load_dataset(dataset).tasks]
    return write_release(
        tasks,
        version="2026.01.01",
        output_root=root,
        funnel=FunnelReport(),
        config=Config(),
        models={},
        prompt_versions={},
        created_at=datetime.now(UTC),
        references=verified_references(Config(), {"XDG_CACHE_HOME": str(cache)}),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=Path, default=None)
    args = parser.parse_args()
    from evaluate_vs_classeval import Meter

    meter = Meter()
    runs: dict[str, list[dict]] = {"trusted": [], "ignored": []}
    with tempfile.TemporaryDirectory(prefix="cf-shipped-") as tmp:
        scratch = Path(tmp)
        release = write_classeval_release(args.dataset, scratch / "releases", scratch / "release-cache")
        shipped = json.loads((release / "references.json").read_text(encoding="utf-8"))
        print(f"release {release.name}: {len(shipped['references'])} references shipped", flush=True)
        for i in range(args.repeat):
            for mode in ("trusted", "ignored") if i % 2 == 0 else ("ignored", "trusted"):
                out = scratch / f"{mode}{i}"
                config = out / "classforge.toml"
                out.mkdir()
                config.write_text(f"[evaluate]\nshipped_references = {'true' if mode == 'trusted' else 'false'}\n")
                what = ["--samples", str(args.samples)] if args.samples else ["--model", "reference", "--n", "1"]
                cmd = [sys.executable, "-c", _CLI, "evaluate", "--config", str(config), "--dataset", str(release)]
                cmd += [*what, "--out", str(out / "results")]
                env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(out / "xdg"))
                wall, cpu = meter.run(cmd, cwd=ROOT, env=env, log=out / "log.txt")
                [results] = list((out / "results").glob("*/results.json"))
                stats = json.loads(results.read_text(encoding="utf-8"))["stats"]
                load = os.getloadavg()[0]
                runs[mode].append({"wall": wall, "cpu": cpu, "runs": stats["sandbox_runs"], "load": load})
                print(
                    f"{mode:<7} #{i}: wall {wall:6.2f} s  cpu {cpu:6.2f} s  {stats['sandbox_runs']} sandbox runs"
                    f"  (load {load:.2f})",
                    flush=True,
                )
    for field in ("wall", "cpu"):
        trusted = statistics.median(r[field] for r in runs["trusted"])
        ignored = statistics.median(r[field] for r in runs["ignored"])
        print(
            f"{field:<5} trusted {trusted:7.2f} s   ignored {ignored:7.2f} s   trusted/ignored {trusted / ignored:.2f}"
        )
    print(f"CPU by {meter.method}; load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
