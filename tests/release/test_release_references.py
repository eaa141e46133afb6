"""A release ships its references' verified results (references.json), and the evaluator trusts them
only where its environment is the release's (classforge_bench.benchmark.shipped): a matching
evaluation runs no reference, a mismatching one runs them and says why, a tampered file is refused
by name (by verify-release and by the evaluator)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from release_taskgen import as_tasks, make_tasks, release_kwargs

from classforge_bench.benchmark.execution import ExecutionStore, StoredExecution
from classforge_bench.benchmark.release_references import verified_references
from classforge_bench.benchmark.runner import EvaluationRequest, EvaluatorConfig, evaluate, reference_jobs
from classforge_bench.benchmark.shipped import environment_differences, trust
from classforge_bench.pipeline.config import Config, EvaluateConfig, PlusConfig
from classforge_bench.pipeline.formats.loader import load_dataset
from classforge_bench.pipeline.formats.shipped_references import SHIPPED_FILE, read_shipped
from classforge_bench.pipeline.release.manifest import MANIFEST, sha256_file
from classforge_bench.pipeline.release.plus_release import write_plus_release
from classforge_bench.pipeline.release.verify import verify_release
from classforge_bench.pipeline.release.writer import write_release
from classforge_bench.pipeline.sandbox import get_backend

TASKS = [row["task_id"] for row in make_tasks()]


@pytest.fixture(scope="module")
def shipping(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release written with its references run as the evaluator runs them (a cache of its own)."""
    try:
        isolation = get_backend(Config().sandbox).isolation
    except Exception as exc:  # noqa: BLE001 - any probe failure: no sandbox here to run references in
        pytest.skip(f"no working sandbox here: {exc}")
    root = tmp_path_factory.mktemp("releases")
    cache = tmp_path_factory.mktemp("xdg")
    release = write_release(
        as_tasks(make_tasks()),
        output_root=root,
        references=verified_references(Config(), {"XDG_CACHE_HOME": str(cache)}),
        **release_kwargs(),
    )
    shipped = read_shipped(release)
    assert shipped is not None and shipped.environment["isolation"] == isolation  # what the runs actually used
    return release


def _copy(release: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy" / release.name
    shutil.copytree(release, dest)
    return dest


def _evaluate(release: Path, tmp_path: Path, **sandbox) -> tuple:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=tmp_path / "results", bootstrap_resamples=100)
    cfg.sandbox = cfg.sandbox.model_copy(update=sandbox)
    # the user's cache is the test's own, fresh (tests/conftest.py): only the release can spare a reference run
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    outcome = evaluate(EvaluationRequest(dataset=release, models=["reference"]), cfg, env=env)
    return outcome.results, outcome.summary


def _rewrite(release: Path, edit) -> None:
    """Edit references.json and list its new bytes in the manifest (so only the content checks can object)."""
    path = release / SHIPPED_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    manifest = json.loads((release / MANIFEST).read_text(encoding="utf-8"))
    for entry in manifest["files"]:
        if entry["path"] == SHIPPED_FILE:
            entry["sha256"], entry["bytes"] = sha256_file(path), path.stat().st_size
    (release / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def test_the_release_ships_every_reference_verified_and_passes_its_own_check(shipping: Path) -> None:
    shipped = read_shipped(shipping)
    assert shipped is not None
    assert [r.task_id for r in shipped.references] == TASKS
    assert all(r.passed and r.cpu_s is not None for r in shipped.references)
    assert {"python", "libraries", "harness", "isolation", "sandbox", "platform"} <= set(shipped.environment)
    assert shipped.environment["sandbox"]["memory_mb"] == Config().sandbox.memory_mb
    assert set(shipped.machine) == {"arch", "cpu"}
    assert verify_release(shipping, load_with_datasets=False) == []


def test_a_matching_environment_runs_no_reference(shipping: Path, tmp_path: Path) -> None:
    results, summary = _evaluate(shipping, tmp_path)
    assert results.stats.sandbox_runs == 0  # the references came from the release, the samples reuse them
    assert [r.task_id for r in results.reference if not r.broken] == TASKS
    note = results.dataset.shipped_references
    assert note is not None and "none runs here" in note
    assert note in summary
    shipped = read_shipped(shipping)
    assert shipped is not None
    # the limits are the shipped CPU times', as a run here would set them
    assert {r.task_id: r.cpu_s for r in results.reference} == {r.task_id: r.cpu_s for r in shipped.references}


def test_another_environment_runs_the_references_and_says_why(shipping: Path, tmp_path: Path) -> None:
    results, _ = _evaluate(shipping, tmp_path, memory_mb=1024)
    assert results.stats.sandbox_runs > 0
    assert [r.task_id for r in results.reference if not r.broken] == TASKS
    note = results.dataset.shipped_references
    assert note is not None and "sandbox.memory_mb: 2048 there, 1024 here" in note and "3 reference(s) run here" in note


def test_a_tampered_file_is_refused_by_name(shipping: Path, tmp_path: Path) -> None:
    release = _copy(shipping, tmp_path)
    path = release / SHIPPED_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["references"][0]["cpu_s"] = 9.0  # a longer limit for the first task, without updating the manifest
    path.write_text(json.dumps(data), encoding="utf-8")
    problems = verify_release(release, load_with_datasets=False)
    assert any(
        p.startswith(f"release {release.name}") and f"{SHIPPED_FILE} has" in p and "the manifest says" in p
        for p in problems
    ), problems
    results, _ = _evaluate(release, tmp_path)
    assert results.stats.sandbox_runs > 0
    note = results.dataset.shipped_references
    assert note == (
        f"release {release.name}: {SHIPPED_FILE} sha256 does not match the manifest (modified after release?); "
        "refused: its 3 reference(s) run here"
    )


def test_results_of_other_code_fail_the_release_check(shipping: Path, tmp_path: Path) -> None:
    release = _copy(shipping, tmp_path)

    def edit(data: dict) -> None:
        data["references"][1]["solution_sha256"] = "0" * 64
        data["references"][2]["passed"] = False
        data["references"].append(dict(data["references"][0], task_id="cf-9999"))

    _rewrite(release, edit)
    problems = verify_release(release, load_with_datasets=False)
    assert any(f"task {TASKS[1]}'s result is of another solution" in p for p in problems), problems
    assert any(f"task {TASKS[2]}'s reference did not pass" in p for p in problems), problems
    assert any("cf-9999, which the release does not hold" in p for p in problems), problems


def test_cpu_times_from_another_machine_set_only_limits_that_are_the_floor_anywhere(shipping: Path) -> None:
    """The rule of classforge_bench.benchmark.shipped: on another machine class, a reference whose
    scaled CPU time could exceed the floor on a slower machine runs here; on the same class none does."""
    shipped = read_shipped(shipping)
    assert shipped is not None
    heavy = shipped.references[0]
    execution = StoredExecution.model_validate(heavy.execution)
    execution.whole.cpu_s = 0.5  # 0.5 x factor 5 x margin 4 = 10 s > the 2 s floor
    references = [heavy.model_copy(update={"execution": execution.model_dump(mode="json")}), *shipped.references[1:]]
    shipped = shipped.model_copy(update={"references": references})
    config = Config().sandbox
    tasks = load_dataset(shipping).tasks
    jobs = reference_jobs(tasks, config)
    other = {"arch": "riscv64", "cpu": "another CPU"}

    same = trust(shipped, jobs, config, shipped.environment, shipped.machine, "v")
    elsewhere = trust(shipped, jobs, config, shipped.environment, other, "v")
    assert len(same.executions) == 3
    assert sorted(s.task_id for s in elsewhere.executions.values()) == TASKS[1:]
    assert (
        elsewhere.note is not None
        and "1 whose CPU time sets its limit" in elsewhere.note
        and "another CPU" in elsewhere.note
    )
    # a changed limit is another job: its shipped result is not used
    longer = reference_jobs(tasks, config.model_copy(update={"wall_limit_s": 90.0}))
    assert trust(shipped, longer, config, shipped.environment, shipped.machine, "v").executions == {}


def test_environment_differences_name_what_differs() -> None:
    there = {"python": "CPython 3.11.7", "libraries": {"numpy": "numpy 1.26.4"}, "sandbox": {"memory_mb": 2048}}
    here = {
        "python": "CPython 3.12.1",
        "libraries": {"numpy": "numpy 2.0.0", "nltk": None},
        "sandbox": {"memory_mb": 2048},
    }
    assert environment_differences(there, here) == [
        "nltk: not recorded there, not installed here",
        "numpy: numpy 1.26.4 there, numpy 2.0.0 here",
        "python: CPython 3.11.7 there, CPython 3.12.1 here",
    ]
    assert environment_differences(there, there) == []


def test_the_user_cache_is_filled_from_the_run_not_the_other_way(shipping: Path, tmp_path: Path) -> None:
    """Trusted results reach the user's reference cache like any reference run: a second results
    folder of the same user then needs neither the release's file nor a run."""
    _evaluate(shipping, tmp_path)
    cached = list((tmp_path / "user-cache" / "classforge" / "references").rglob("*.json"))
    assert len(cached) == 3
    key = json.loads(cached[0].read_text(encoding="utf-8"))["key"]
    assert ExecutionStore(cached[0].parent.parent).get(key) is not None
    sandbox = EvaluatorConfig().sandbox
    assert key in {j.key(sandbox) for j in reference_jobs(load_dataset(shipping).tasks, sandbox).values()}


def test_a_strengthened_copy_ships_the_originals_results(shipping: Path, tmp_path: Path) -> None:
    """Plus suites leave the tasks' solutions and base tests, so their references' jobs, as they were."""
    copy = write_plus_release(shipping, tmp_path / "releases" / "2025.06.02", {}, PlusConfig())
    assert read_shipped(copy) == read_shipped(shipping)
    assert verify_release(copy, load_with_datasets=False) == []
