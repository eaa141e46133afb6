"""The build-benchmark flow end to end on the offline example, under Prefect's test harness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_flow_runs_end_to_end_and_resumes(prefect_harness, example_config, tmp_path):
    from flows.build_benchmark import build_benchmark

    from pipeline.release.verify import verify_release

    first = build_benchmark(config_path=str(example_config))
    snap = Path(first["snapshot"])
    assert (snap / "classes.jsonl").exists() and (snap / "funnel.json").exists()
    # 17: ClassEval is not in the (empty) Hugging Face cache, so its two look-alikes in the corpus stay.
    assert first["classes"] == 17 and first["tasks"] == 3 and first["incomplete"] == 0
    assert json.loads((snap / "decontamination.json").read_text())["not_checked"][0].startswith("classeval (not in")
    stages = first["funnel"]["stages"]
    assert stages["provenance"]["dropped"].get("pre-cutoff", 0) == 2
    assert stages["solution"]["kept"] == 3 and stages["release"]["kept"] == 3
    release = Path(first["release"])
    assert release.parent == tmp_path / "releases" and verify_release(release) == []
    assert first["usage"]["requests"] == 0, "the example replays recorded responses only"
    before = (snap / "classes.jsonl").read_bytes()
    clones = tmp_path / "clones"
    shutil.rmtree(clones)  # a resumed run must not need to clone again
    second = build_benchmark(config_path=str(example_config))
    assert second["classes"] == first["classes"] and second["tasks"] == 3
    assert second["release"] is None and second["note"].startswith("nothing new to release")
    assert second["funnel"]["stages"]["release"]["dropped"] == {"already-released": 3}
    assert sorted(p.name for p in (tmp_path / "releases").iterdir()) == [release.name], "a version is written once"
    assert (snap / "classes.jsonl").read_bytes() == before
    assert not clones.exists() or not any(clones.iterdir())
