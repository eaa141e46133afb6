"""Two builds of the offline example from two checkouts (different paths, different working
directories) publish byte-identical task rows, and no row names the builder's directories."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from classforge_bench.pipeline.config import load_config
from classforge_bench.pipeline.construct.run import run_build
from classforge_bench.pipeline.formats.release_rows import DATA_FILE
from classforge_bench.pipeline.release.writer import write_release

ROOT = Path(__file__).resolve().parents[2]


def build_release_from(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", checkout / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    config_path = checkout / "examples" / "classforge.toml"
    # (the plus tier, on in the example, is off here: tests/construct/test_example_plus.py covers it)
    lines = [
        line if line != "enabled = true" else "enabled = false"
        for line in config_path.read_text().splitlines()
        if not line.startswith("reference_corpora")
    ]
    # The rows' mutation figures must not depend on the place either; a small sample says so as well
    # as the full one, at a fraction of the sandbox runs.
    config_path.write_text("\n".join(lines) + "\n\n[construction.mutation]\nmax_mutants_per_method = 2\n")
    monkeypatch.chdir(checkout)
    from classforge_bench.pipeline.harvest.run import run_harvest

    config = load_config(config_path, env={})
    run_harvest(config.harvest)
    result = run_build(config, {})
    assert len(result.tasks) == 3 and not result.incomplete
    return write_release(
        result.tasks,
        version="2026.01.01",
        output_root=checkout / "releases",
        funnel=result.funnel,
        config=config,
        models={},
        prompt_versions={},
        pipeline_version="test",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


@pytest.mark.slow
def test_task_rows_do_not_depend_on_where_the_build_ran(tmp_path, monkeypatch):
    short = build_release_from(tmp_path / "a", monkeypatch)
    long = build_release_from(tmp_path / ("very-long-directory-name-" * 6) / "nested" / "checkout", monkeypatch)
    for name in ("tasks.jsonl", DATA_FILE):
        assert (short / name).read_bytes() == (long / name).read_bytes(), name
    for release in (short, long):
        text = (
            (release / "tasks.jsonl").read_text()
            + (release / "manifest.json").read_text()
            + (release / "README.md").read_text()
        )
        assert str(tmp_path) not in text and "file://" not in text
