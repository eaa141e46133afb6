"""Sandbox runs on a Dask cluster's workers (`classforge evaluate --dask tcp://HOST:PORT` or `local`).

Each run is the same `execute` as on this machine (files written, the harness started in the
worker's own sandbox, its signed report checked and read there); only the finished `SuiteResult`
comes back, and storing, resuming and scoring stay on this machine, so a cluster run gives the
results of a local one and resumes the same way. So every worker needs what a local run needs:
classforge importable at this version, a sandbox backend that works there (bubblewrap or the
isolation configured), and the interpreter the code under test runs with (`sandbox.python`, e.g.
a dataset environment) at the same path. `DaskCluster.check` asks every worker at the start and
stops with one line naming each worker that lacks one of them.

`local` starts a `LocalCluster` of worker processes on this machine (one sandbox run at a time
per worker); an address connects to a cluster started as usual (`dask scheduler`,
`dask worker ADDRESS --nthreads 1`), which is left running.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.sandbox.base import SandboxError
from classforge_bench.pipeline.sandbox.results import SuiteRequest, SuiteResult, SuiteStatus

if TYPE_CHECKING:  # distributed is imported only when a cluster is used
    from distributed import Client, LocalCluster

_BACKENDS: dict[str, object] = {}  # per worker process: one probed backend per sandbox configuration
_LOCK = threading.Lock()


def _worker_backend(config: SandboxConfig):
    from classforge_bench.pipeline.sandbox.registry import get_backend

    key = config.model_dump_json()
    with _LOCK:
        if key not in _BACKENDS:
            _BACKENDS[key] = get_backend(config)
        return _BACKENDS[key]


def worker_execute(request_json: str, config_json: str) -> str:
    """On a worker: one sandbox run, as `execute` does it here; the result as JSON."""
    from classforge_bench.pipeline.sandbox.suite import execute

    config = SandboxConfig.model_validate_json(config_json)
    return execute(SuiteRequest.model_validate_json(request_json), _worker_backend(config), config).model_dump_json()


def worker_check(config_json: str) -> dict:
    """On a worker: what a run there needs (module docstring); `problems` empty when all is there."""
    from classforge_bench import __version__

    config = SandboxConfig.model_validate_json(config_json)
    problems = []
    if config.python and not os.access(config.python, os.X_OK):
        problems.append(f"no interpreter {config.python} (the task environment)")
    isolation = None
    if not problems:
        try:
            backend = _worker_backend(config)
            isolation = str(getattr(backend, "isolation", config.backend))
        except SandboxError as exc:
            problems.append(f"no working sandbox: {exc}")
    return {"version": __version__, "isolation": isolation, "problems": problems}


class DaskCluster:
    """A connection to a Dask cluster that runs sandbox executions (module docstring)."""

    def __init__(self, address: str, *, local_workers: int | None = None) -> None:
        self.address = address
        self._local_workers = local_workers
        self._cluster: LocalCluster | None = None
        self._client: Client | None = None

    def __enter__(self) -> DaskCluster:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self, timeout_s: float = 60.0) -> None:
        from distributed import Client, LocalCluster

        try:
            if self.address == "local":
                self._cluster = LocalCluster(
                    n_workers=self._local_workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                self._client = client = Client(self._cluster)
            else:
                self._client = client = Client(self.address, timeout=timeout_s)
            client.wait_for_workers(1, timeout=timeout_s)
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: an address Dask cannot parse
            self.close()
            raise SandboxError(f"Dask cluster {self.address}: cannot connect or no worker joined: {exc}") from exc

    def close(self) -> None:
        for part in (self._client, self._cluster):
            if part is not None:
                part.close()
        self._client = self._cluster = None

    def _connected(self) -> Client:
        if self._client is None:
            raise SandboxError(f"Dask cluster {self.address}: not connected (use it in a `with` block)")
        return self._client

    @property
    def workers(self) -> int:
        return len(self._client.scheduler_info()["workers"]) if self._client else 0

    def check(self, config: SandboxConfig) -> dict[str, dict]:
        """Ask every worker whether it can run a sandbox of this configuration; raise naming those that cannot."""
        from classforge_bench import __version__

        answers = self._connected().run(worker_check, config.model_dump_json())
        bad = []
        for worker, answer in sorted(answers.items()):
            problems = list(answer["problems"])
            if answer["version"] != __version__:
                problems.append(f"classforge {answer['version']} (this machine: {__version__})")
            if problems:
                bad.append(f"{worker}: {'; '.join(problems)}")
        if bad:
            raise SandboxError(f"Dask cluster {self.address}: worker(s) cannot run the sandbox: {' | '.join(bad)}")
        return answers

    def run_suites(
        self,
        requests: Sequence[SuiteRequest],
        config: SandboxConfig,
        on_done: Callable[[int, SuiteResult], None] | None = None,
    ) -> list[SuiteResult]:
        """Every request on the cluster; results in order. A run the cluster lost (a worker died,
        the connection broke) is a SANDBOX_ERROR of its own, retried like any sandbox failure."""
        from distributed import as_completed

        config_json = config.model_dump_json()
        futures = [
            self._connected().submit(worker_execute, r.model_dump_json(), config_json, pure=False) for r in requests
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[SuiteResult | None] = [None] * len(requests)
        for future in as_completed(futures):
            i = index[future.key]
            results[i] = done = self._result(requests[i], future)
            if on_done is not None:
                on_done(i, done)
        return [r for r in results if r is not None]

    @staticmethod
    def _result(request: SuiteRequest, future) -> SuiteResult:
        try:
            return SuiteResult.model_validate_json(future.result())
        except Exception as exc:  # noqa: BLE001 - whatever the cluster raised, this run failed for want of the sandbox
            detail = f"the Dask cluster lost the run: {type(exc).__name__}: {str(exc)[:500]}"
            return SuiteResult(
                item_id=request.item_id,
                status=SuiteStatus.SANDBOX_ERROR,
                detail=detail,
                limit_s=request.limit_s or 0.0,
                wall_s=0.0,
            )
