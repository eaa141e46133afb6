"""The validity section of the card and of `classforge report`: every number comes from the tasks
and the manifest (a task at 95% coverage shows up, a missing measure says "not measured")."""

from __future__ import annotations

import json
from pathlib import Path

from release_taskgen import as_tasks, make_tasks, sample_funnel

from classforge_bench.pipeline.config import Config, ReleaseConfig
from classforge_bench.pipeline.release.publish import publish
from classforge_bench.pipeline.release.report import write_report
from classforge_bench.pipeline.release.validity import compute_validity, validity_section
from classforge_bench.pipeline.release.writer import config_record

DECON = {
    "checked": ["reference corpus classeval (100 classes)", "snapshot earlier-2025"],
    "not_checked": ["hf:org/other: not in the local cache"],
}


def _tasks() -> list[dict]:
    tasks = make_tasks()
    tasks[0]["coverage"], tasks[0]["branch_coverage"] = 95.0, 80.0
    tasks[0]["sources"][1]["first_seen_date"] = "2025-03-10T00:00:00Z"  # both sources after the cutoff
    tasks[2]["sources"][0]["first_seen_date"] = None  # undated: unknown, never counted as fresh
    applied = ["hash-seed", "cwd", "tz:<+14>-14", "host-user", "network"]
    for t in tasks:
        t["environment_checks"] = {
            "applied": applied,
            "skipped": {"clock+365d": "libfaketime not found"},
            "errors": {},
            "changed": {},
            "isolation": "bwrap",
        }
    return tasks


def _config() -> Config:
    return Config.model_validate({"harvest": {"cutoff": "2025-02-15"}})


def test_facts_are_computed_from_the_tasks() -> None:
    facts = compute_validity(_tasks(), cutoff="2025-02-15", decontamination=DECON, earlier_releases=["2025.05.01"])
    assert facts.tasks == 3 and facts.gate_figures == 3
    assert facts.line_coverage.min == 95.0 and facts.line_coverage.max == 98.0 and facts.line_coverage.n == 3
    assert facts.branch_coverage.min == 80.0
    assert facts.mutation_score is None
    assert facts.environment.tasks_checked == 3 and facts.environment.applied["cwd"] == 3
    assert facts.environment.skipped_tasks == {"clock+365d": 3}
    assert (facts.cutoff.post_cutoff, facts.cutoff.pre_cutoff, facts.cutoff.unknown) == (1, 1, 1)


def test_mutation_scores_are_read_when_present_and_fractions_shown_as_percent() -> None:
    tasks = _tasks()
    for t, score in zip(tasks, (0.5, 0.75, 1.0)):
        t["mutation_score"] = score
    facts = compute_validity(tasks, cutoff=None)
    assert facts.mutation_score.min == 50.0 and facts.mutation_score.max == 100.0
    text = validity_section(facts)
    assert "| mutation score | 3 | 75.0% | 75.0% | 50.0% |" in text
    assert "0 of 3 tasks" in text and "3 undated or without a cutoff" in text


def test_fraction_scores_are_not_rounded_before_they_become_percent() -> None:
    """0.9381, 0.9515, 0.9659 average 95.18%; rounding the fractions first reported 95.0%."""
    tasks = _tasks()
    for t, score in zip(tasks, (0.9381, 0.9515, 0.9659)):
        t["mutation_score"] = score
    facts = compute_validity(tasks, cutoff=None)
    assert (facts.mutation_score.mean, facts.mutation_score.median, facts.mutation_score.min) == (95.18, 95.15, 93.81)


def test_card_and_report_state_the_measured_numbers(write, tmp_path: Path) -> None:
    folder = write(_tasks(), config=_config(), decontamination=DECON, earlier_releases=["2025.05.01"])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["decontamination"] == DECON and manifest["earlier_releases"] == ["2025.05.01"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    report = write_report(folder, tmp_path / "report").markdown
    for text in (card, report):
        assert "## Validity" in text
        assert "| line coverage | 3 | 96.7% | 97.0% | 95.0% |" in text
        assert "| branch coverage | 3 |" in text and "| 80.0% |" in text
        assert "| mutation score | not measured |" in text
        assert "**skipped** clock+365d on 3 task(s): libfaketime not found" in text
        assert "cwd (3)" in text and "network (3)" in text
        assert "checked reference corpus classeval (100 classes); snapshot earlier-2025" in text
        assert "**not checked**: hf:org/other: not in the local cache" in text
        assert "earlier releases (task ids, source-class pairs, solutions): 2025.05.01" in text
        assert (
            "(2025-02-15), from each source's first-seen date: 1 of 3 tasks (33%); 1 with an earlier source; 1 undated"
            in text
        )


def test_a_release_without_the_records_says_so(write, tmp_path: Path) -> None:
    tasks = make_tasks()
    folder = write(tasks, config=_config())
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "Environment checks: not measured" in card
    assert "Near-duplicate checks against known corpora: not recorded" in card
    assert "earlier releases: not recorded" in card


def test_publish_records_the_decontamination_and_the_config_it_is_given(tmp_path: Path) -> None:
    config = _config()
    kwargs = dict(config_record=config_record(config), decontamination=DECON)
    first = publish(
        as_tasks(make_tasks()),
        ReleaseConfig(output_root=tmp_path / "releases"),
        sample_funnel(),
        {"composer": "m"},
        **kwargs,
    )
    manifest = json.loads((first.path / "manifest.json").read_text(encoding="utf-8"))
    assert first.published == 3 and manifest["decontamination"] == DECON and manifest["cutoff"] == "2025-02-15"
    assert manifest["config"]["harvest"]["cutoff"] == "2025-02-15" and manifest["earlier_releases"] == []
    again = publish(
        as_tasks(make_tasks()),
        ReleaseConfig(output_root=tmp_path / "releases"),
        sample_funnel(),
        {"composer": "m"},
        **kwargs,
    )
    assert again.path is None and again.already_released == 3 and again.note.startswith("nothing new to release")
