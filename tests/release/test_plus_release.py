"""`classforge strengthen` on a release folder writes a new version that `verify-release` accepts:
every file hashed again, the `plus` column in the manifest, `derived_from` naming the original, the
original untouched. A copy written in place of the original's manifest (the old behaviour) fails
verify on the Parquet hash and the columns, so these tests fail without classforge_bench/pipeline/release/plus_release.py."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core.task import PlusSuite
from classforge_bench.pipeline.formats.loader import load_dataset
from classforge_bench.pipeline.quality.plus import dataset as dataset_module
from classforge_bench.pipeline.quality.plus.dataset import strengthen_dataset
from classforge_bench.pipeline.release.manifest import MANIFEST
from classforge_bench.pipeline.release.plus_release import write_plus_release
from classforge_bench.pipeline.release.verify import verify_release

SUITE = PlusSuite(
    test="import unittest\n\n\nclass XTestMain(unittest.TestCase):\n    def test_main_1(self):\n"
    "        self.assertTrue(True)\n",
    test_classes=["XTestMain"],
    tests=1,
    generated=3,
    dropped={"plus-expects-crash": 2},
    generator="pynguin==0.48.0",
)


def _canned_suites(monkeypatch) -> None:
    monkeypatch.setattr(dataset_module, "task_suite", lambda task, sandbox, plus: (SUITE, False))


def _hashes(folder) -> dict[str, str]:
    return {e["path"]: e["sha256"] for e in json.loads((folder / MANIFEST).read_text())["files"]}


def test_a_strengthened_release_is_a_new_version_verify_accepts(release, tmp_path, monkeypatch):
    _canned_suites(monkeypatch)
    original = tmp_path / "releases" / release.name
    shutil.copytree(release, original)
    before = _hashes(original)
    out = tmp_path / "releases" / f"{release.name}-1"
    summary = strengthen_dataset(
        original, out, SandboxConfig(), PlusConfig(), write=lambda d, o, s: write_plus_release(d, o, s, PlusConfig())
    )
    assert summary.output == str(out)
    assert verify_release(out, cache_dir=tmp_path) == []
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["version"] == out.name and manifest["derived_from"] == release.name
    assert manifest["columns"]["plus"] == "string" and "plus" in manifest["json_columns"]
    assert [t.plus.tests for t in load_dataset(out).tasks] == [1] * summary.tasks
    card = (out / "README.md").read_text()
    assert "Plus tests, hidden, no LLM" in card  # the card's table counts them, and its prose says what they are
    assert f"{summary.tasks} of {summary.tasks} tasks carry a hidden `plus` suite, {summary.tasks} tests in all" in card
    assert "carry a hidden `plus` suite" not in (original / "README.md").read_text()
    assert _hashes(original) == before and verify_release(original, load_with_datasets=False) == []


def test_cli_refuses_an_out_that_is_no_new_version_before_any_work(release, tmp_path, monkeypatch):
    from classforge_bench.pipeline.cli import app

    calls: list[str] = []
    monkeypatch.setattr(
        dataset_module, "task_suite", lambda task, sandbox, plus: calls.append(task.task_id) or (SUITE, False)
    )
    for out, says in ((tmp_path / "plus-copy", "named as one"), (tmp_path / release.name, "is the release it copies")):
        result = CliRunner().invoke(app, ["strengthen", "--dataset", str(release), "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert says in result.output and "Traceback" not in result.output
        assert not out.exists()
    assert calls == []
