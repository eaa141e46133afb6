"""`benchmarks/results_identity.py` finds two results folders equal when only timing differs, and
names every other difference: a changed value, a missing key, a file on one side only."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "results_identity.py"


def _script():
    spec = importlib.util.spec_from_file_location("results_identity", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _folder(root: Path, sample: dict, page: str) -> Path:
    (root / "run" / "samples").mkdir(parents=True)
    (root / "run" / "samples" / "s.json").write_text(json.dumps(sample), encoding="utf-8")
    (root / "run" / "results.html").write_text(page, encoding="utf-8")
    (root / "run" / ".classforge.lock").write_text(str(len(page)), encoding="utf-8")
    return root


SAMPLE = {"score": {"bucket": "completed"}, "execution": {"wall_s": 1.0, "cpu_s": 0.5, "reruns": [{"wall_s": 2}]}}


def test_timing_fields_and_the_page_date_are_not_differences(tmp_path, capsys):
    a = _folder(tmp_path / "a", SAMPLE, "<p>written 2026-11-28 23:46 UTC</p>\n<td>2026-11-28</td>\n")
    other = json.loads(json.dumps(SAMPLE))
    other["execution"] |= {"wall_s": 9.0, "cpu_s": 7.0, "reruns": [{"wall_s": 3}]}
    b = _folder(tmp_path / "b", other, "<p>written 2026-11-29 00:01 UTC</p>\n<td>2026-11-29</td>\n")
    assert _script().main([str(a), str(b)]) == 0
    assert "2 files in both: 2 identical, 0 differ; 0 only in A, 0 only in B" in capsys.readouterr().out


def test_every_other_difference_is_named(tmp_path, capsys):
    a = _folder(tmp_path / "a", SAMPLE, "<p>one</p>\n")
    other = {"score": {"bucket": "timeout", "cause": None}, "execution": SAMPLE["execution"]}
    b = _folder(tmp_path / "b", other, "<p>two</p>\n")
    (b / "run" / "summary.md").write_text("x", encoding="utf-8")
    assert _script().main([str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "2 files in both: 0 identical, 2 differ; 0 only in A, 1 only in B" in out
    assert "only in B: run/summary.md" in out
    assert "score.bucket: 'completed' != 'timeout'" in out and "score.cause: missing != null" in out
    assert "line 1: '<p>one</p>' != '<p>two</p>'" in out
    assert "field score.bucket: differs in 1 file(s)" in out


V5_SAMPLE = {  # a task_broken sample as schema 5 wrote it
    "request": {"model": "m", "strategy": "external", "task_id": "T1", "sample_index": 0, "dataset_sha256": None,
                "source": "samples_file", "levels": None, "steps": [], "program": "x = 1\n",
                "limit_s": None, "environment": None, "execution_key": None},
    "result": {"bucket": "task_broken", "reason": "task T1 is broken: failed", "cause": "task-broken",
               "repeats": True, "outcome": None, "error_category": None, "error_reason": None,
               "suite_status": None, "detail": "", "wall_s": None, "runs_wall_s": None, "cpu_s": None,
               "peak_memory_mb": None, "isolation": "", "per_class": False, "reruns": 0, "reused": None,
               "prompt_tokens": 0, "completion_tokens": 0},
}  # fmt: skip
V6_SAMPLE = {
    "model": "m", "strategy": "external", "task_id": "T1", "sample_index": 0, "dataset_sha256": None,
    "generation": {"source": "samples_file", "levels": None, "steps": [], "program": "x = 1\n", "unrun": None,
                   "reason": "", "cause": None},
    "execution": None,
    "score": {"bucket": "task_broken", "reason": "task T1 is broken: failed", "cause": "task-broken",
              "repeats": True, "error_category": None, "error_reason": None},
}  # fmt: skip


def test_records_of_two_schemas_compare_as_records(tmp_path, capsys):
    a = _folder(tmp_path / "a", V5_SAMPLE, "x\n")
    b = _folder(tmp_path / "b", V6_SAMPLE, "x\n")
    assert _script().main([str(a), str(b), "--show", "0"]) == 1  # as files they differ in shape
    assert _script().main([str(a), str(b), "--records"]) == 0
    assert "2 files in both: 2 identical, 0 differ" in capsys.readouterr().out
    changed = json.loads(json.dumps(V6_SAMPLE))
    changed["score"]["repeats"] = False
    c = _folder(tmp_path / "c", changed, "x\n")
    assert _script().main([str(a), str(c), "--records"]) == 1
    assert "score.repeats: true != false" in capsys.readouterr().out
