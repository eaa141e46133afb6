"""The same flow on a distributed engine: prefect-dask's DaskTaskRunner on a local Dask cluster
with worker processes, so every task's inputs and outputs really cross process boundaries."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_flow_runs_on_a_local_dask_cluster(prefect_harness, example_config, tmp_path):
    from prefect_dask import DaskTaskRunner

    from classforge_bench.flows.build_benchmark import build_benchmark
    from classforge_bench.pipeline.release.verify import verify_release

    runner = DaskTaskRunner(
        cluster_kwargs={"n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    )
    result = build_benchmark.with_options(task_runner=runner)(config_path=str(example_config))
    assert result.classes == 18 and result.tasks == 3 and result.incomplete == 0  # ClassEval not cached: see conftest
    assert result.usage.cached_hits == 18 and result.usage.requests == 0, (
        "usage recorded in the worker processes reaches the flow"
    )
    assert verify_release(tmp_path / "releases" / result.version) == []
