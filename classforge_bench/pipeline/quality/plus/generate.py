"""Search-based unit-test generation (Pynguin), run only inside the sandbox.

Pynguin executes the code under test thousands of times while it searches, so it never runs in
the host process: one sandbox run (the same backend, isolation and rlimits as the gate, with the
generator's own virtualenv as the interpreter) gets the class as a module, runs Pynguin with a
fixed seed, hash seed and iteration cap, and hands back the exported pytest file.

The iteration cap, not the time cap, is what stops a normal run: with the seed and
PYTHONHASHSEED fixed, two runs then produce the same tests on any machine (checked by a test).
The time cap only bounds a pathological class; a run that reached it says so (`hit_time_cap`).
"""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.errors import InfrastructureError, InputError
from classforge_bench.pipeline.sandbox.base import RunLimits, SandboxError
from classforge_bench.pipeline.sandbox.registry import get_backend

log = logging.getLogger(__name__)

GENERATOR = "pynguin==0.48.0"  # what made the tests; part of every cache key
MODULE_NAME = "under_test"
_OUTPUT = f"out/test_{MODULE_NAME}.py"
_STATISTICS = "pynguin-report/statistics.csv"
# Pynguin reads its initial population from the first file under this folder whose name holds the
# module's name and "test_".
_SEED_DIR = "seeds"
_SEED_FILE = f"{_SEED_DIR}/test_{MODULE_NAME}.py"


class GeneratorUnavailable(InfrastructureError):
    """The generator's virtualenv is missing or broken: says nothing about the task."""

    def __init__(self, message: str, item_id: str = "") -> None:
        self.item_id = item_id
        super().__init__(f"[{item_id}] {message}" if item_id else message)


class GeneratedTests(BaseModel):
    """What one generation run produced: Pynguin's pytest module, or why there is none."""

    model_config = ConfigDict(extra="forbid")
    module: str = Field("", description="pytest source importing the class's module as `under_test`")
    ok: bool
    detail: str = Field("", description="why nothing came back (timeout, crash, no tests), with the log's tail")
    wall_s: float = 0.0
    hit_time_cap: bool = False
    coverage: float | None = Field(None, description="Pynguin's branch coverage of the class, in [0, 1]")
    iterations: int | None = None
    isolation: str = ""
    failure_reason: str | None = Field(None, description="the registered reason when nothing came back")


def _statistics(raw: bytes | None) -> dict[str, str]:
    """The one row of Pynguin's statistics.csv (the output variables asked for)."""
    rows = list(csv.DictReader(io.StringIO((raw or b"").decode("utf-8", errors="replace"))))
    return rows[-1] if rows else {}


def _search_stats(raw: bytes | None, max_iterations: int) -> dict[str, Any]:
    stats = _statistics(raw)
    try:
        coverage = float(stats["Coverage"])
        iterations = int(stats["AlgorithmIterations"])
    except (KeyError, ValueError):
        return {}
    # Full coverage also ends a search early; fewer iterations without it means the time cap did.
    return {
        "coverage": coverage,
        "iterations": iterations,
        "hit_time_cap": iterations < max_iterations and coverage < 1.0,
    }


# The checkout's own generator environment (scripts/setup.sh), found from the code, not the cwd
# (this file is classforge_bench/pipeline/quality/plus/generate.py: the checkout is parents[4]).
DEFAULT_PYTHON = Path(__file__).resolve().parents[4] / ".venv-plus" / "bin" / "python"


def generator_python(config: PlusConfig, item_id: str = "") -> str:
    """The generator's interpreter as an absolute path; a clear error when it was never set up."""
    python = DEFAULT_PYTHON if config.python is None else Path(config.python).expanduser()
    python = python if python.is_absolute() else Path.cwd() / python
    if not python.exists():
        raise GeneratorUnavailable(
            f"the plus-tier generator is not installed: {python} does not exist "
            "(run scripts/setup.sh, or set plus.python to a virtualenv with classforge_bench/pipeline/quality/plus/requirements.txt)",
            item_id,
        )
    return str(python)


def pynguin_command(python: str, config: PlusConfig, seeded: bool = False) -> list[str]:
    """The search's command line; `seeded`: start the population from the seed module (repo_seeds.py)."""
    seeding = ["--initial_population_seeding", "True", "--initial_population_data", _SEED_DIR] if seeded else []
    return [
        python,
        "-m",
        "pynguin",
        "--project-path",
        ".",
        "--module-name",
        MODULE_NAME,
        "--output-path",
        "out",
        "--seed",
        str(config.seed),
        "--maximum-iterations",
        str(config.max_iterations),
        "--maximum-search-time",
        str(config.budget_s),
        "--maximum-mutation-time",
        str(max(5, config.budget_s // 2)),
        "--assertion-generation",
        config.assertions,
        "--output-variables",
        "TargetModule",
        "Coverage",
        "AlgorithmIterations",
        "SearchTime",
        *seeding,
    ]


def generator_sandbox(sandbox: SandboxConfig, plus: PlusConfig, item_id: str = "") -> SandboxConfig:
    """The gate's sandbox settings with the generator's interpreter and its one required variable."""
    return sandbox.model_copy(
        update={
            "python": generator_python(plus, item_id),
            "memory_mb": max(sandbox.memory_mb, plus.memory_mb),
            # Pynguin refuses to start without it: it executes arbitrary code (here: inside the sandbox).
            "env": {**sandbox.env, "PYNGUIN_DANGER_AWARE": "1"},
        }
    )


def generate(
    source: str, sandbox: SandboxConfig, plus: PlusConfig, *, item_id: str = "", seeds: str = ""
) -> GeneratedTests:
    """Run Pynguin on `source` (a module defining the class under test) in a fresh sandbox;
    `seeds`: a pytest module of call sequences to start the search from (repo_seeds.py)."""
    if not source.strip():
        raise InputError(f"[{item_id}] nothing to generate tests for: the source is empty")
    config = generator_sandbox(sandbox, plus, item_id)
    backend = get_backend(config)
    limits = RunLimits.from_config(config, wall_s=plus.wall_limit_s)
    inputs = {f"{MODULE_NAME}.py": source, "out/.keep": ""} | ({_SEED_FILE: seeds} if seeds else {})
    try:
        run = backend.run(
            inputs,
            pynguin_command(backend.python, plus, seeded=bool(seeds)),
            limits,
            outputs=[_OUTPUT, _STATISTICS],
            env={"PYTHONHASHSEED": str(plus.hash_seed)},
        )
    except SandboxError as exc:
        raise GeneratorUnavailable(f"the sandbox could not run the generator: {exc}", item_id) from exc
    stats = _search_stats(run.outputs.get(_STATISTICS), plus.max_iterations)
    module = run.outputs.get(_OUTPUT, b"").decode("utf-8", errors="replace")
    if run.timed_out or not module.strip():
        reason, why = (
            (reasons.PLUS_GENERATOR_KILLED, f"killed at the wall limit ({plus.wall_limit_s:g} s)")
            if run.timed_out
            else (reasons.PLUS_GENERATOR_EXIT, f"exit status {run.exit_code}, no test file")
        )
        log.info("plus: %s: generation produced nothing (%s)", item_id or "<unnamed>", why)
        return GeneratedTests(
            ok=False,
            detail=f"{why}: {run.stderr[-600:]}",
            wall_s=run.wall_s,
            isolation=run.isolation,
            failure_reason=reason,
        )
    return GeneratedTests(module=module, ok=True, wall_s=run.wall_s, isolation=run.isolation, **stats)
