"""The edge of the construction stages: a `Config` and the environment in, a finished build out.

The CLI (`classforge build`) and the Prefect flow call `run_build`; everything below it takes
what it needs as arguments. It opens the response cache, loads any shipped cache exports into it
(`llm.cache_imports`, how the offline example replays), makes the client and the sandbox gate,
reads the harvest snapshot and runs `build_tasks`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from pipeline.config import Config
from pipeline.construct.build import BuildResult, Progress, build_tasks
from pipeline.construct.gate import Gate, SandboxGate
from pipeline.llm import LLMClient, ResponseCache, UsageLedger
from pipeline.core.records import HarvestedClass
from pipeline.core.store import read_jsonl

log = logging.getLogger(__name__)


def snapshot_classes_path(config: Config) -> Path:
    return config.harvest.output_root / config.harvest.snapshot / "classes.jsonl"


def build_dir(config: Config) -> Path:
    return config.construction.output_root / config.harvest.snapshot


def import_caches(cache: ResponseCache, paths: list[Path]) -> int:
    """Load shipped cache exports; idempotent (entries already present are skipped)."""
    added = 0
    for path in paths:
        if not Path(path).exists():
            raise FileNotFoundError(f"llm.cache_imports: {path} does not exist")
        added += cache.import_jsonl(Path(path))
    if added:
        log.info("loaded %d recorded response(s) into %s", added, cache.path)
    return added


def run_build(
    config: Config,
    env: Mapping[str, str],
    *,
    classes_path: Path | None = None,
    out_dir: Path | None = None,
    gate: Gate | None = None,
    progress: Progress | None = None,
) -> BuildResult:
    classes_path = classes_path or snapshot_classes_path(config)
    if not classes_path.exists():
        raise FileNotFoundError(f"{classes_path}: no harvested classes; run `classforge harvest` for this snapshot first")
    classes: list[HarvestedClass] = list(read_jsonl(classes_path, HarvestedClass))
    with ResponseCache(config.llm.cache_path) as cache:
        import_caches(cache, config.llm.cache_imports)
        with LLMClient(config.llm, env, cache, UsageLedger(config.llm.costs)) as client:
            return build_tasks(classes, config, client, gate or SandboxGate(config.sandbox),
                               out_dir or build_dir(config), progress=progress)
