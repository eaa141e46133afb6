"""The dataset card as Hub users read it: sections, embedded plots, licences, units, replayed answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pipeline.config import Config
from pipeline.core.funnel import FunnelReport, StageCounts
from pipeline.core.task import SourceRef, task_license
from pipeline.release.report import write_report
from pipeline.release.tables import funnel_rows, overall_yield


def _sections(card: str) -> list[str]:
    return re.findall(r"^## (.+)$", card, flags=re.M)


def test_card_has_the_sections_a_hub_user_looks_for(release: Path) -> None:
    card = (release / "README.md").read_text(encoding="utf-8")
    sections = _sections(card)
    for name in ("How it was built", "Contents", "Funnel", "Loading", "How to evaluate", "Limitations", "Citation"):
        assert name in sections, name
    assert sections.index("Funnel") < sections.index("Loading") < sections.index("How to evaluate")
    assert "classforge evaluate --dataset hf:ORG/NAME@2025.06.01" in card
    assert "unittest.TextTestRunner" in card and "@article{du2023classeval" in card
    # Every embedded image is a file of the release (relative links, as the Hub renders them).
    images = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", card)
    assert images and all((release / image).is_file() for image in images)
    assert "plots/funnel.png" in images


def test_per_task_licence_column(release: Path) -> None:
    rows = [json.loads(line) for line in (release / "tasks.jsonl").read_text().splitlines()]
    assert [r["license"] for r in rows] == [
        task_license([SourceRef.model_validate(s) for s in r["sources"]]) for r in rows
    ]

    def refs(*licences: str | None) -> list[SourceRef]:
        return [
            SourceRef(
                class_id="c", class_name="C", domain="Utils", repo="o/r", path="c.py", commit="0" * 40, license_spdx=lic
            )
            for lic in licences
        ]

    assert task_license(refs("MIT", "MIT")) == "MIT"
    assert task_license(refs("MIT", "Apache-2.0")) == "Apache-2.0 AND MIT"
    assert task_license(refs("MIT", None)) == "NOASSERTION"
    assert task_license([]) == "NOASSERTION"
    assert "| `license` | `string` |" in (release / "README.md").read_text()


def test_replayed_answers_are_declared(write: Any) -> None:
    cfg = Config()
    cfg.llm.mode = "replay"
    cfg.llm.cache_imports = [Path("examples/llm_cache.jsonl")]
    card = (write(config=cfg) / "README.md").read_text()
    assert "LLM answers prepared ahead, not generated during this build" in card
    assert "`examples/llm_cache.jsonl`" in card and "written by hand" in card


def test_a_live_build_card_claims_no_replay(release: Path) -> None:
    assert "prepared ahead" not in (release / "README.md").read_text()


def test_funnel_counts_name_their_unit_and_keep_pipeline_order() -> None:
    # funnel.json is written with sorted keys: the order below is what a reader gets back.
    funnel = FunnelReport(
        stages={
            "clone": StageCounts(seen=8, kept=8),
            "compile": StageCounts(seen=40, kept=39),
            "dedup": StageCounts(seen=19, kept=17),
            "imports": StageCounts(seen=35, kept=31),
            "judges": StageCounts(seen=3, kept=3),
            "release": StageCounts(seen=3, kept=3),
            "select": StageCounts(seen=47, kept=42),
            "task": StageCounts(seen=3, kept=3),
        }
    )
    rows = funnel_rows(funnel)
    assert [r[0] for r in rows] == ["clone", "select", "compile", "imports", "dedup", "judges", "task", "release"]
    assert [r[1] for r in rows] == [
        "repositories",
        "files",
        "files",
        "classes",
        "classes",
        "candidate pairs",
        "tasks",
        "tasks",
    ]
    assert overall_yield(funnel) == (
        "8 of 8 repositories (100.0%); 39 of 47 files (83.0%); 17 of 35 classes (48.6%); "
        "3 of 3 candidate pairs (100.0%); 3 of 3 tasks (100.0%)"
    )


def test_report_keeps_pipeline_order(write: Any, tmp_path: Path) -> None:
    stages = {"clone": (8, 8), "compose": (3, 3), "dedup": (19, 17), "release": (3, 3), "select": (47, 42)}
    funnel = FunnelReport(stages={k: StageCounts(seen=a, kept=b) for k, (a, b) in sorted(stages.items())})
    result = write_report(write(funnel=funnel), tmp_path / "report")
    listed = [
        cells[1].strip()
        for cells in (line.split("|") for line in result.markdown.splitlines())
        if len(cells) == 8 and cells[1].strip() in stages
    ]  # the funnel table: six columns
    assert listed == ["clone", "select", "dedup", "compose", "release"]
    assert "8 of 8 repositories (100.0%); 42 of 47 files (89.4%); 17 of 19 classes (89.5%)" in result.markdown


def test_every_stage_the_pipeline_records_has_a_place_and_a_unit():
    """A stage missing from the order table would be listed last, after the release, counted in 'items'."""
    import inspect

    from pipeline.core import reasons as R
    from pipeline.harvest import filters, scan
    from pipeline.release.tables import STAGE_UNITS

    harvest_stages = {"github-search", "clone", "select", "content", "compile", "provenance", "dedup"}
    class_filters = {
        cls.name
        for cls in vars(filters).values()
        if inspect.isclass(cls) and isinstance(getattr(cls, "name", None), str)
    }
    assert class_filters and "testability" in class_filters and "imports" in class_filters
    assert "Testability()" in inspect.getsource(scan)
    for stage in harvest_stages | class_filters | set(R.STAGES) | {"release"}:
        assert stage in STAGE_UNITS, stage
