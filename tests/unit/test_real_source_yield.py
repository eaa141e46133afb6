"""`benchmarks/real_source_yield.py` builds its configurations for the product to read, harvests only
the manifest's clones at their recorded commits, reads the CLI's funnel and release files into the
yield it prints, and counts a blind implementation as passing only when no test of it failed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path

from classforge_bench.pipeline.config import Config

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "real_source_yield.py"


def _script():
    spec = importlib.util.spec_from_file_location("real_source_yield", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def _repo(path: Path) -> str:
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "a.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_both_configurations_are_valid_product_configurations(tmp_path):
    rsy = _script()
    manifest = [{"repo": "a/b", "clone": "a__b", "commit": "0" * 40, "license": "MIT", "created": "2025-06-01"}]
    plus = rsy.plus_section({"budget_s": 45})
    for name, cfg in (
        ("corpus", rsy.corpus_config(manifest, tmp_path / "src", tmp_path / "w", plus)),
        ("shipped", rsy.shipped_config(tmp_path / "w2", plus)),
    ):
        rsy.write_toml(cfg, tmp_path / f"{name}.toml")
        config = Config.model_validate(tomllib.loads((tmp_path / f"{name}.toml").read_text()))
        assert config.construction.track == "real-source"
        assert config.plus.budget_s == 45 and config.plus.python is not None
    corpus = Config.model_validate(tomllib.loads((tmp_path / "corpus.toml").read_text()))
    assert corpus.harvest.local_sources == [str(tmp_path / "src")]
    assert str(corpus.harvest.cutoff) == "2025-01-01"  # on or before the earliest creation date
    assert "MIT" in corpus.construction.real_source.license_allow


def test_only_manifest_clones_at_their_commit_are_harvested(tmp_path):
    rsy = _script()
    good = _repo(tmp_path / "clones" / "a__good")
    _repo(tmp_path / "clones" / "a__moved")
    _repo(tmp_path / "clones" / "a__unlisted")
    manifest = [
        {"repo": "a/good", "clone": "a__good", "commit": good},
        {"repo": "a/moved", "clone": "a__moved", "commit": "f" * 40},
        {"repo": "a/missing", "clone": "a__missing", "commit": good},
    ]
    problems = rsy.link_clones(manifest, tmp_path / "clones", tmp_path / "src")
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["a__good"]
    assert any("a/moved" in p and "manifest says" in p for p in problems)
    assert any("a/missing" in p and "no clone" in p for p in problems)


def test_outcome_reads_the_funnels_and_the_release(tmp_path):
    rsy = _script()
    snap = tmp_path / "harvested" / rsy.SNAPSHOT
    snap.mkdir(parents=True)
    (snap / "funnel.json").write_text(json.dumps({"stages": {"clone": {"seen": 2, "kept": 2, "dropped": {}}}}))
    (snap / "classes.jsonl").write_text('{"id": "c1"}\n{"id": "c2"}\n{"id": "c3"}\n')
    built = tmp_path / "built" / rsy.SNAPSHOT
    built.mkdir(parents=True)
    build_stages = {
        "license": {"seen": 3, "kept": 3, "dropped": {}},
        "docstrings": {"seen": 3, "kept": 3, "dropped": {}},
        "tests": {"seen": 3, "kept": 1, "dropped": {"no-generated-tests": 1, "too-few-methods": 1}},
    }
    (built / "funnel.json").write_text(json.dumps({"stages": build_stages}))
    rel = tmp_path / "releases" / "2026.11.28"
    rel.mkdir(parents=True)
    (rel / "tasks.jsonl").write_text(json.dumps({"task_id": "T1", "class_name": "C", "coverage": 97.5}) + "\n")
    o = rsy.read_outcome("corpus", tmp_path, rsy.RunTime(wall_s=30.0, cpu_s=12.0))
    # the method count drops a class inside `tests` before any search: it reaches the stage, not the generator
    assert (o.repos, o.harvested, o.reaching_tests, o.reaching_generator, len(o.released)) == (2, 3, 3, 2, 1)
    assert [s for s, _ in o.stages] == ["clone", "license", "docstrings", "tests"]
    table = rsy.side_by_side([o])
    assert "| tests | 3 -> 1 (no-generated-tests x1, too-few-methods x1) |" in table
    assert (
        "1 (33.3% of harvested, 33.3% of those reaching tests, 50.0% of those reaching the generator)"
        in rsy.yield_table([o])
    )


def test_an_implementation_passes_only_when_no_test_failed():
    rsy = _script()

    def sample(bucket: str, **counts: int) -> dict:
        outcome = {"test_classes": {"CTestA": {"tests_run": 3, **counts}, "CTestB": {"tests_run": 2}}}
        return {"score": {"bucket": bucket}, "execution": {"outcome": outcome}}

    assert rsy.sample_verdict(sample("completed")).passed
    failing = rsy.sample_verdict(sample("completed", failures=1))
    assert not failing.passed and "4 of 5 tests pass" in failing.detail and "CTestA (1)" in failing.detail
    assert not rsy.sample_verdict(sample("completed", errors=2)).passed
    assert not rsy.sample_verdict(sample("timeout")).passed
    assert not rsy.sample_verdict(
        {"score": {"bucket": "completed"}, "execution": {"outcome": {"test_classes": {}}}}
    ).passed


def test_the_plus_tier_counts_when_the_task_has_one():
    rsy = _script()

    def results(value: float) -> dict:
        return {"plus_scores": [{"metrics": {"class_level": {"full": {"1": {"value": value}}}}}]}

    assert rsy.plus_verdict({"plus_scores": []}) is None
    assert rsy.plus_verdict(results(1.0)) is True
    assert rsy.plus_verdict(results(0.0)) is False
