"""The build-benchmark flow end to end on the offline example, under Prefect's test harness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_flow_runs_end_to_end_and_resumes(prefect_harness, example_config, tmp_path):
    from classforge_bench.flows.build_benchmark import build_benchmark
    from classforge_bench.pipeline.formats.shipped_references import read_shipped
    from classforge_bench.pipeline.release.verify import verify_release

    first = build_benchmark(config_path=str(example_config))
    snap = first.snapshot
    assert (snap / "classes.jsonl").exists() and (snap / "funnel.json").exists()
    # 18: ClassEval is not in the (empty) Hugging Face cache, so its two look-alikes in the corpus stay.
    assert first.classes == 18 and first.tasks == 3 and first.incomplete == 0
    assert json.loads((snap / "decontamination.json").read_text())["not_checked"][0].startswith("classeval (not in")
    stages = first.funnel.stages
    assert stages["provenance"].dropped.get("pre-cutoff", 0) == 2
    assert stages["solution"].kept == 3 and stages["release"].kept == 3
    release = first.release
    assert release.parent == tmp_path / "releases" and verify_release(release) == []
    # the release ships its references' verified results, one per released task (issue 31)
    shipped = read_shipped(release)
    assert shipped is not None and len(shipped.references) == 3
    assert first.usage.requests == 0, "the example replays recorded responses only"
    before = (snap / "classes.jsonl").read_bytes()
    clones = tmp_path / "clones"
    shutil.rmtree(clones)  # a resumed run must not need to clone again
    second = build_benchmark(config_path=str(example_config))
    assert second.classes == first.classes and second.tasks == 3
    assert second.release is None and second.note.startswith("nothing new to release")
    assert second.funnel.stages["release"].dropped == {"already-released": 3}
    # The release stage's drops are written down like every other stage's, with the task and the reason.
    [left_out] = list(tmp_path.rglob("release-rejects.jsonl"))
    rejected = [json.loads(line) for line in left_out.read_text().splitlines()]
    assert sorted(r["item_id"] for r in rejected) == sorted(
        json.loads(line)["task_id"] for line in (release / "tasks.jsonl").read_text().splitlines()
    )
    assert {(r["stage"], r["reason"]) for r in rejected} == {("release", "already-released")}
    assert all(f"in release {release.name}" in r["detail"] for r in rejected)
    visible = sorted(p.name for p in (tmp_path / "releases").iterdir() if not p.name.startswith("."))
    assert visible == [release.name], "a version is written once"
    assert not list((tmp_path / "releases").glob(".*partial*")), "no half-written version is left behind"
    assert (snap / "classes.jsonl").read_bytes() == before
    assert not clones.exists() or not any(clones.iterdir())


@pytest.mark.slow
def test_the_run_shows_its_funnel_and_summary_as_artifacts(prefect_harness, example_config):
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    from classforge_bench.flows.build_benchmark import build_benchmark

    state = build_benchmark(config_path=str(example_config), return_state=True)
    assert state.is_completed()

    async def artifacts():
        async with get_client() as client:
            flt = ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]))
            return {a.key: a for a in await client.read_artifacts(artifact_filter=flt)}

    found = asyncio.run(artifacts())
    assert set(found) == {"build-funnel", "build-summary"}
    import json

    rows = (
        found["build-funnel"].data
        if isinstance(found["build-funnel"].data, list)
        else json.loads(found["build-funnel"].data)
    )
    stages = [r["stage"] for r in rows]
    assert stages.index("clone") < stages.index("pairing") < stages.index("solution") < stages.index("release")
    assert {r["stage"]: r["kept"] for r in rows}["release"] == 3
    summary = found["build-summary"].data
    assert "released 3 task(s)" in summary and "| release | `" in summary
