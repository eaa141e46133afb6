"""Many sandbox runs in parallel (the one pool, `classforge_bench.pipeline.core.pool`). Each run is its own process tree, so threads suffice."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.pool import Outcome, map_concurrently
from classforge_bench.pipeline.sandbox.base import SandboxBackend
from classforge_bench.pipeline.sandbox.registry import get_backend
from classforge_bench.pipeline.sandbox.results import SuiteRequest, SuiteResult, SuiteStatus
from classforge_bench.pipeline.sandbox.suite import execute


def pool_size(config: SandboxConfig, workers: int | None = None) -> int:
    return workers or config.workers or os.cpu_count() or 1


def run_suites(
    requests: Sequence[SuiteRequest],
    config: SandboxConfig | None = None,
    *,
    backend: SandboxBackend | None = None,
    workers: int | None = None,
    on_done: Callable[[int, SuiteResult], None] | None = None,
) -> list[SuiteResult]:
    """Run every request, `workers` at a time (default: the machine's cores); results in order.

    A request whose run raises (a bug below `execute`, which already turns sandbox failures into
    SANDBOX_ERROR results) becomes a SANDBOX_ERROR result of its own; the others still run."""
    config = config or SandboxConfig()
    backend = backend or get_backend(config)

    def result_of(index: int, outcome: Outcome[SuiteRequest, SuiteResult]) -> SuiteResult:
        if outcome.error is None:
            return outcome.unwrap()
        request = outcome.item
        return SuiteResult(
            item_id=request.item_id,
            status=SuiteStatus.SANDBOX_ERROR,
            detail=f"{type(outcome.error).__name__}: {outcome.error}",
            limit_s=request.limit_s or 0.0,
            wall_s=0.0,
        )

    done = None if on_done is None else (lambda i, outcome: on_done(i, result_of(i, outcome)))
    outcomes = map_concurrently(
        lambda request: execute(request, backend, config),
        requests,
        pool_size(config, workers),
        on_done=done,
        thread_name="sandbox",
    )
    return [result_of(i, o) for i, o in enumerate(outcomes)]
