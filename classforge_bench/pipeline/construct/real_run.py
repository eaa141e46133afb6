"""The edge of the real-source track: a `Config` in, a finished real-source build out.

`run_real_build` reads the harvest snapshot, opens the LLM client (`LLMClient.from_config`, with any
shipped cache exports; used only for docstrings, and only when a role is configured), the sandbox
gate and the configured test generator, and builds every class in-process.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.construct.build import Progress
from classforge_bench.pipeline.construct.gate import ENVIRONMENT_CACHE, Gate, SandboxGate
from classforge_bench.pipeline.construct.real_build import RealBuildResult, build_real_tasks
from classforge_bench.pipeline.construct.real_candidate import TestGenerator
from classforge_bench.pipeline.construct.real_generators import configured_generator
from classforge_bench.pipeline.construct.run import build_dir, read_snapshot
from classforge_bench.pipeline.llm.client import LLMClient


def run_real_build(
    config: Config,
    env: Mapping[str, str],
    *,
    classes_path: Path | None = None,
    out_dir: Path | None = None,
    gate: Gate | None = None,
    generator: TestGenerator | None = None,
    progress: Progress | None = None,
) -> RealBuildResult:
    classes = read_snapshot(config, classes_path)
    out_dir = out_dir or build_dir(config)
    with LLMClient.from_config(config.llm, env, load_exports=True) as client:
        gate = gate or SandboxGate(config.sandbox, out_dir / ENVIRONMENT_CACHE)
        return build_real_tasks(
            classes,
            config,
            client,
            gate,
            out_dir,
            generator if generator is not None else configured_generator(config),
            progress=progress,
        )


def real_models(config: Config, generator: TestGenerator | None = None) -> dict[str, str]:
    """Role -> model for the release card: the generator, and the docstring roles when configured."""
    from classforge_bench.pipeline.construct.real_docs import writer_endpoint

    models = {"test_generator": (generator or configured_generator(config) or _Unnamed()).name}
    endpoint = writer_endpoint(config.llm, config.construction.real_source.docstring_role)
    if endpoint is not None:
        models |= {"docstring_writer": endpoint.model, "docstring_judge": config.llm.judges[0].model}
    return models


class _Unnamed:
    name = "none"
