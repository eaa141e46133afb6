"""The same flow on a distributed engine: prefect-dask's DaskTaskRunner on a local Dask cluster
with worker processes, so every task's inputs and outputs really cross process boundaries. Both
construction tracks map their candidates as tasks of their own, so both are distributed."""

from __future__ import annotations

import pytest


def _dask():
    from prefect_dask import DaskTaskRunner

    return DaskTaskRunner(
        cluster_kwargs={"n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    )


def candidate_runs(state) -> list[str]:
    """The names of the flow run's `build-candidate` task runs, from Prefect's API."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
        )
    return sorted(r.name for r in runs if r.name.startswith("candidate "))  # build-candidate's run names


@pytest.mark.slow
def test_flow_runs_on_a_local_dask_cluster(prefect_harness, example_config, tmp_path):
    from classforge_bench.flows.build_benchmark import build_benchmark
    from classforge_bench.pipeline.release.verify import verify_release

    state = build_benchmark.with_options(task_runner=_dask())(config_path=str(example_config), return_state=True)
    result = state.result()
    assert result.classes == 18 and result.tasks == 3 and result.incomplete == 0  # ClassEval not cached: see conftest
    assert result.usage.cached_hits == 18 and result.usage.requests == 0, (
        "usage recorded in the worker processes reaches the flow"
    )
    assert verify_release(tmp_path / "releases" / result.version) == []
    assert len(candidate_runs(state)) == 3


@pytest.mark.slow
def test_a_real_source_build_runs_on_a_local_dask_cluster(prefect_harness, real_source_config, tmp_path):
    from classforge_bench.flows.build_benchmark import build_benchmark

    state = build_benchmark.with_options(task_runner=_dask())(
        config_path=str(real_source_config), cutoff="2025-01-01", return_state=True
    )
    assert state.is_completed() and state.name == "NothingReleased", state.message
    summary = state.result()
    # every class a task run of its own on the cluster's workers, not one task for the whole track
    runs = candidate_runs(state)
    assert summary.classes == 13 and len(runs) == 13, runs
    stages = summary.funnel.stages
    assert stages["license"].seen == 13 and stages["tests"].dropped == {"no-test-generator": 12}
    assert len(list((tmp_path / "built" / "real-source" / "candidates").glob("*.json"))) == 13
