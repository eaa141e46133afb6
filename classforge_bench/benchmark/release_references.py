"""The release stage's reference run: the verified results a release ships in `references.json`.

The build's verification gate already ran every reference in the sandbox, but not as the evaluator
runs it: under coverage tracing (which multiplies the CPU time), with the gate's own limit, and it
keeps only the wall time (`GateOutcome.wall_s`), no CPU time and no execution the evaluator's key
finds. Its result cannot set the evaluator's limits, so the release stage runs each released task's
reference once more, exactly as the evaluator's pre-run does (`reference_prerun`: the same jobs and
keys, batched, through the user's reference cache), and packs the runs that passed with the
environment fingerprint (`classforge_bench.benchmark.shipped`). The release writer calls it on the
tasks as the release's rows give them back, which are what an evaluator loads.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from classforge_bench.benchmark.runner import EvaluatorConfig, evaluation_executor, reference_cache, reference_prerun
from classforge_bench.benchmark.shipped import (
    FingerprintError,
    environment_fingerprint,
    machine_class,
    package,
    third_party_modules,
)
from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.shipped_references import ShippedReferences
from classforge_bench.pipeline.sandbox import SandboxError

log = logging.getLogger(__name__)

ShipReferences = Callable[[list[Task]], ShippedReferences | None]


def verified_references(config: Config | EvaluatorConfig, env: Mapping[str, str] | None = None) -> ShipReferences:
    """What the release writer calls with the released tasks: their references run as the
    evaluator runs them, packed for shipping; None (the release ships none, a warning says why)
    when the sandbox or the interpreter cannot be used here. `env`: where the user's reference
    cache is (XDG_CACHE_HOME, HOME), as for `classforge evaluate`."""
    evaluator = EvaluatorConfig.of(config)

    def run(tasks: list[Task]) -> ShippedReferences | None:
        try:
            return _run(tasks, evaluator, env)
        except (SandboxError, FingerprintError) as exc:
            log.warning("the release ships no reference results: %s", exc)
            return None

    return run


def _run(tasks: list[Task], config: EvaluatorConfig, env: Mapping[str, str] | None) -> ShippedReferences:
    with tempfile.TemporaryDirectory(prefix="classforge-release-references-") as tmp:
        executor = evaluation_executor(config, Path(tmp), None, None)
        records = reference_prerun(
            tasks, executor, config.sandbox, cache=reference_cache(config.evaluate, config.sandbox, env)
        )
        done = {r.task_id: stored for r in records if (stored := executor.store.get(r.execution_key)) is not None}
        environment = environment_fingerprint(config.sandbox, executor.backend.isolation, third_party_modules(tasks))
    return package(tasks, done, environment, machine_class())
