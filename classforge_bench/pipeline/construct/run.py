"""The edge of the construction stages: a `Config` and the environment in, a finished build out.

`open_construction` wires a build of either track (`construction.track`): it reads the harvest
snapshot and makes the track (`open_track`: the composition track, or the real-source track with its
configured test generator) and its plan, the LLM client (`LLMClient.from_config`, the one place a
client, its response cache and the shipped cache exports are opened) and the sandbox gate;
`Construction.close` closes the client and its cache. The Prefect flow (`classforge build`) opens
one per flow run and process and maps the candidates as tasks of its own; `run_build` (scripts,
benchmarks, the example recorder) runs all candidates in-process through `build_tasks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.construct.build import (
    BuildPlan,
    BuildResult,
    BuildSettings,
    BuildTrack,
    Progress,
    build_tasks,
)
from classforge_bench.pipeline.construct.composition import CompositionTrack
from classforge_bench.pipeline.construct.gate import ENVIRONMENT_CACHE, Gate, SandboxGate
from classforge_bench.pipeline.construct.real_candidate import RealSourceTrack, TestGenerator
from classforge_bench.pipeline.construct.real_generators import configured_generator
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.records import HarvestedClass
from classforge_bench.pipeline.core.store import read_jsonl
from classforge_bench.pipeline.core.task import Track
from classforge_bench.pipeline.llm.client import LLMClient


def snapshot_classes_path(config: Config) -> Path:
    return config.harvest.output_root / config.harvest.snapshot / "classes.jsonl"


def build_dir(config: Config) -> Path:
    return config.construction.output_root / config.harvest.snapshot


@dataclass
class Construction:
    """What one build's candidates share in one process; close it when the build ends."""

    plan: BuildPlan
    client: LLMClient
    gate: Gate

    def close(self) -> None:
        """Closes the client and its cache: a cache that could not store paid answers (a full disk)
        spills them to an importable file here and raises a one-line CacheWriteError."""
        self.client.close()


def read_snapshot(config: Config, classes_path: Path | None = None) -> list[HarvestedClass]:
    classes_path = classes_path or snapshot_classes_path(config)
    if not classes_path.exists():
        raise InputError(f"{classes_path}: no harvested classes; run `classforge harvest` for this snapshot first")
    return list(read_jsonl(classes_path, HarvestedClass))


def open_track(
    config: Config, classes: list[HarvestedClass], out_dir: Path, generator: TestGenerator | None = None
) -> BuildTrack:
    """The configured track over `classes`; the real-source track's test generator is the
    configured one (the plus tier's, when its environment is installed) unless one is given."""
    settings = BuildSettings.of(config)
    if config.construction.track == Track.REAL_SOURCE:
        chosen = generator if generator is not None else configured_generator(config)
        return RealSourceTrack(classes, settings, out_dir, chosen)
    return CompositionTrack(classes, settings, out_dir)


def open_construction(
    config: Config,
    env: Mapping[str, str],
    *,
    run_id: str | None = None,
    classes_path: Path | None = None,
    out_dir: Path | None = None,
    gate: Gate | None = None,
) -> Construction:
    """Plan, client and gate for one build (see the module docstring)."""
    out_dir = out_dir or build_dir(config)
    plan = BuildPlan(open_track(config, read_snapshot(config, classes_path), out_dir), out_dir, run_id=run_id)
    client = LLMClient.from_config(config.llm, env, load_exports=True)
    return Construction(plan, client, gate or SandboxGate(config.sandbox, out_dir / ENVIRONMENT_CACHE))


def run_build(
    config: Config,
    env: Mapping[str, str],
    *,
    classes_path: Path | None = None,
    out_dir: Path | None = None,
    gate: Gate | None = None,
    generator: TestGenerator | None = None,
    progress: Progress | None = None,
) -> BuildResult:
    """Every candidate of the configured track in-process (`build_tasks`), with the cache and
    client closed at the end."""
    classes = read_snapshot(config, classes_path)
    out_dir = out_dir or build_dir(config)
    track = open_track(config, classes, out_dir, generator)
    with LLMClient.from_config(config.llm, env, load_exports=True) as client:
        gate = gate or SandboxGate(config.sandbox, out_dir / ENVIRONMENT_CACHE)
        return build_tasks(track, client, gate, out_dir, progress=progress)
