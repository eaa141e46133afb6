"""Which tasks an evaluation pre-runs and scores, and what it pays for references (issues 22 and 23):
a samples file's tasks are the ones selected (only their references run, and the report counts the
scored tasks); --task with a samples file of other tasks says they are not selected; a strategy
given to `reference` is said not to apply; a reference run is reused by a second results folder;
the limit comes from the reference's CPU time."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from classforge_bench.benchmark.execution import environment_tag
from classforge_bench.benchmark.results import load_results
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig, SandboxConfig
from classforge_bench.pipeline.sandbox import evaluation_limit

BANK = "ClassEval_8"
OTHER = "ClassEval_1"


def _samples(path: Path, classeval, task_ids: list[str]) -> Path:
    by_id = classeval.by_id()
    path.write_text(
        "".join(
            json.dumps({"task_id": t, "completion": f"```python\n{by_id[t].solution_code}\n```", "model": "m"}) + "\n"
            for t in task_ids
        ),
        encoding="utf-8",
    )
    return path


def _cli(args: list[str]):
    from typer.testing import CliRunner

    from classforge_bench.pipeline.cli import app

    return CliRunner().invoke(app, args)


def test_a_samples_file_selects_its_tasks_and_task_says_what_is_not_selected(classeval, classeval_path, tmp_path):
    both = _samples(tmp_path / "both.jsonl", classeval, [OTHER, BANK])
    out = tmp_path / "results"
    first = _cli(["evaluate", "--dataset", str(classeval_path), "--samples", str(both), "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "pass@k (%) on 2 scored task(s) of 2 selected" in first.output
    (run_dir,) = out.iterdir()
    results = load_results(run_dir)
    assert sorted(r.task_id for r in results.reference) == [OTHER, BANK]  # not the dataset's 100
    assert results.dataset.n_tasks_loaded == 100 and results.dataset.n_tasks_selected == 2

    one = _cli(
        ["evaluate", "--dataset", str(classeval_path), "--samples", str(both), "--task", BANK, "--out", str(out)]
    )
    assert one.exit_code == 0, one.output
    assert "on 1 scored task(s) of 1 selected" in one.output
    assert f"samples of 1 task(s) not selected by --task/--max-tasks are left out: {OTHER}" in one.output

    other = _samples(tmp_path / "other.jsonl", classeval, [OTHER])
    bad = _cli(
        ["evaluate", "--dataset", str(classeval_path), "--samples", str(other), "--task", BANK, "--out", str(out)]
    )
    assert bad.exit_code == 2
    assert bad.stderr.splitlines() == [
        f"error: {other}: no sample of the selected task(s) {BANK}; its samples are of "
        f"task(s) {OTHER} (in the dataset, not selected by --task/--max-tasks)"
    ]


def test_a_strategy_given_to_the_reference_model_is_said_not_to_apply(classeval_path, tmp_path):
    result = _cli(
        [
            "evaluate",
            "--dataset",
            str(classeval_path),
            "--model",
            "reference",
            "--strategy",
            "incremental",
            "--task",
            BANK,
            "--n",
            "1",
            "--out",
            str(tmp_path / "results"),
        ]
    )
    assert result.exit_code == 0, result.output
    assert (
        "note: model(s) reference answer with the whole class, so --strategy incremental does not apply to them: "
        "they are scored once, as strategy 'direct'"
    ) in result.output


def _reference_config(out: Path) -> Config:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=out, n_samples=1, bootstrap_resamples=200)
    return cfg


def test_a_second_results_folder_reuses_the_reference_runs_and_limits_come_from_cpu_time(classeval_path, tmp_path):
    request = EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=[BANK])
    first = evaluate(request, _reference_config(tmp_path / "results-a"), env={}).results
    assert first.stats.sandbox_runs >= 1
    second = evaluate(request, _reference_config(tmp_path / "results-b"), env={}).results
    assert second.stats.sandbox_runs == 0  # another folder, same cache beside it: nothing runs again
    assert second.reference == first.reference
    ref = first.reference[0]
    assert ref.cpu_s is not None and ref.limit_s == evaluation_limit(ref.wall_s, ref.cpu_s, Config().sandbox)
    assert list((tmp_path / ".cache" / "references").iterdir()) == [
        tmp_path / ".cache" / "references" / environment_tag(Config().sandbox)
    ]


def test_the_cache_is_per_interpreter():
    assert environment_tag(SandboxConfig()) == environment_tag(SandboxConfig())
    assert environment_tag(SandboxConfig()) != environment_tag(SandboxConfig(python="/bin/sh"))


def test_the_cache_moves_when_a_library_is_installed_or_upgraded(tmp_path):
    """A virtual environment's interpreter resolves to its base one; its libraries are told apart by
    its own site-packages folder, whose stamp moves when pip adds or removes a `.dist-info` entry."""
    venv = tmp_path / "venv"
    site_packages = venv / "lib" / "python3.11" / "site-packages"
    site_packages.mkdir(parents=True)
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    sandbox = SandboxConfig(python=str(venv / "bin" / "python"))
    before = environment_tag(sandbox)
    assert environment_tag(sandbox) == before
    (site_packages / "numpy-1.26.4.dist-info").mkdir()
    os.utime(site_packages, ns=(1, 1_000_000_000))  # a stamp no earlier state had, whatever the clock
    assert environment_tag(sandbox) != before


@pytest.mark.parametrize(
    ("wall", "cpu", "limit"),
    [
        (6.0, 0.5, 5.0),  # timed on a loaded machine: wall time 12x the CPU time; scaled wall time would be 60
        (0.3, 0.25, 2.5),  # factor x CPU time
        (0.05, 0.04, 2.0),  # the floor
        (12.0, 0.1, 2.0),  # a reference that sleeps: its wall time (load moves it) does not count
        (100.0, 10.0, 60.0),  # within the cap
        (1.0, None, 10.0),  # no CPU time known: the wall time is scaled
    ],
)
def test_evaluation_limit(wall, cpu, limit):
    cfg = SandboxConfig(scale_floor_s=2.0, scale_factor=10.0, scale_cap_s=60.0)
    assert evaluation_limit(wall, cpu, cfg) == pytest.approx(limit)


def test_the_reference_cache_is_the_users_whatever_the_results_parent(tmp_path, monkeypatch):
    """One cache per user (XDG), not one per results parent: two results roots under different
    parents share it; `evaluate.reference_cache` still wins; with no HOME nor XDG_CACHE_HOME in the
    environment given, the old place beside the results root."""
    from classforge_bench.benchmark import runner

    monkeypatch.undo()  # the real rule, not the tests' own stand-in (tests/conftest.py); every path below is tmp
    rule = runner.user_cache_dir
    assert rule({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/classforge/references")
    assert rule({"HOME": "/h"}) == Path("/h/.cache/classforge/references")
    assert rule({}) is None
    sandbox = SandboxConfig()
    tag = environment_tag(sandbox)
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    a = runner.reference_cache(EvaluateConfig(output_root=tmp_path / "one" / "results"), sandbox, xdg)
    b = runner.reference_cache(EvaluateConfig(output_root=tmp_path / "two" / "r"), sandbox, xdg)
    assert a.root == b.root == tmp_path / "xdg" / "classforge" / "references" / tag
    chosen = EvaluateConfig(output_root=tmp_path / "r", reference_cache=tmp_path / "mine")
    assert runner.reference_cache(chosen, sandbox, xdg).root == tmp_path / "mine" / tag
    assert runner.reference_cache(EvaluateConfig(output_root=tmp_path / "r"), sandbox, {}).root == (
        tmp_path / ".cache" / "references" / tag
    )


def test_references_run_batched_like_samples(classeval_path, tmp_path):
    """Three references, cold: fewer sandbox starts than references (a batch forks a runner per
    reference), and each still passes with its limit from its own runner's CPU time."""
    tasks = [BANK, OTHER, "ClassEval_2"]
    request = EvaluationRequest(dataset=classeval_path, models=["reference"], task_ids=tasks)
    results = evaluate(request, _reference_config(tmp_path / "results"), env={}).results
    assert results.stats.sandbox_runs < len(tasks)
    assert [r.broken for r in results.reference] == [False] * len(tasks)
    for ref in results.reference:
        assert ref.cpu_s is not None and ref.limit_s == evaluation_limit(ref.wall_s, ref.cpu_s, Config().sandbox)
