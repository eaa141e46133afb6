"""Run one test suite on one solution in a sandbox: `run_suite` and the request-level `execute`."""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import logging
import marshal
import secrets
from collections.abc import Sequence
from functools import lru_cache

from pydantic import ValidationError

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.parsing import compile_code
from classforge_bench.pipeline.sandbox.base import Perturbation, RunLimits, SandboxBackend, SandboxError
from classforge_bench.pipeline.sandbox.expectations import machinery_imports, static_expectations
from classforge_bench.pipeline.sandbox.interpret import interpret, without_report
from classforge_bench.pipeline.sandbox.registry import get_backend
from classforge_bench.pipeline.sandbox.report import ReportError, authenticate, parse
from classforge_bench.pipeline.sandbox.results import SuiteMode, SuiteRequest, SuiteResult, SuiteStatus

log = logging.getLogger(__name__)

HARNESS_FILE = "cf_harness.py"
SPEC_FILE = "cf_spec.json"
KEY_FILE = ".cf_key"
REPORT_FILE = "cf_report.json"
_LAUNCH = "import sys, cf_harness; sys.exit(cf_harness.supervise(sys.argv[1]))"


@lru_cache(maxsize=1)
def harness_source() -> str:
    return (
        importlib.resources.files("classforge_bench.pipeline.sandbox")
        .joinpath("harness_script.py")
        .read_text(encoding="utf-8")
    )


@lru_cache(maxsize=1)
def _harness_pyc() -> tuple[str, bytes]:
    """The harness precompiled for this interpreter (an unchecked-hash pyc, PEP 552), so a run
    does not spend ~10 ms compiling it. Another interpreter ignores the file by its cache tag."""
    source = harness_source().encode("utf-8")
    code = compile_code(source, HARNESS_FILE)
    flags = (0b01).to_bytes(4, "little")  # hash-based, not checked against the source
    data = importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code)
    return importlib.util.cache_from_source(HARNESS_FILE), data


def _tests_file(module_name: str) -> str:
    return f"test_{module_name}.py"


def _files(request: SuiteRequest, spec: dict, key: bytes) -> dict[str, str | bytes]:
    pyc_name, pyc = _harness_pyc()
    return {
        HARNESS_FILE: harness_source(),
        pyc_name: pyc,
        SPEC_FILE: json.dumps(spec),
        KEY_FILE: key,
        spec["solution_file"]: request.solution,
        spec["tests_file"]: request.tests,
    }


def _spec(
    request: SuiteRequest, run_id: str, limit_s: float, config: SandboxConfig, sweep: bool, seed: int = 0
) -> dict:
    return {
        "sweep": sweep,
        "seed": seed,
        "protocol": 1,
        "run_id": run_id,
        "mode": request.mode,
        "module_name": request.module_name,
        "solution_file": f"{request.module_name}.py",
        "tests_file": _tests_file(request.module_name),
        "test_classes": list(request.test_classes),
        "coverage": request.coverage,
        "branch": request.branch,
        "timeout_s": limit_s,
        "trace_cap": config.traceback_cap_chars,
        "preimport": machinery_imports(request.tests),
        "warm_imports": list(request.warm_imports),
        "report_file": REPORT_FILE,
        "key_file": KEY_FILE,
        "share": request.class_floors is not None,
        "class_floors": request.class_floors or {},
    } | clock_fields(request, limit_s)


def clock_fields(request: SuiteRequest, limit_s: float) -> dict:
    """What a CPU-clock run adds to its spec (see `SuiteRequest.wall_ceiling_s`): the ceiling, and
    a CPU rlimit a second above the limit on the runner itself, should the supervisor's watch miss."""
    if request.wall_ceiling_s is None:
        return {}
    return {"cpu_clock": True, "wall_ceiling_s": request.wall_ceiling_s, "cpu_limit_s": int(limit_s) + 2}


def execute(
    request: SuiteRequest, backend: SandboxBackend, config: SandboxConfig, perturbation: Perturbation | None = None
) -> SuiteResult:
    """Run `request` once on `backend`. Sandbox failures come back as SANDBOX_ERROR, not exceptions.

    With a `perturbation` the backend runs it in a changed environment and the result says what
    was applied and what not (the environment checks)."""
    limit_s = request.limit_s or config.wall_limit_s
    seed = config.hash_seed if request.hash_seed is None else request.hash_seed
    key, run_id = secrets.token_bytes(32), secrets.token_hex(8)
    # Only where kill(-1) inside the sandbox reaches nothing but the sandbox.
    spec = _spec(request, run_id, limit_s, config, bool(getattr(backend, "isolates_processes", False)), seed)
    # The host kill comes `grace_s` after the harness's own deadline, so a timeout normally still
    # yields a report with the outcomes reached so far.
    limits = RunLimits.from_config(config, wall_s=request.host_wall_s(limit_s) + config.grace_s)
    # Only passed when set, so a backend written before perturbations existed keeps working.
    extra = {"perturbation": perturbation} if perturbation is not None else {}
    try:
        run = backend.run(
            _files(request, spec, key),
            [backend.python, "-s", "-B", "-c", _LAUNCH, SPEC_FILE],
            limits,
            outputs=[REPORT_FILE],
            env={"PYTHONHASHSEED": str(seed)},
            **extra,
        )
    except SandboxError as exc:
        log.error("sandbox failed for %s: %s", request.item_id or "<unnamed>", exc)
        return SuiteResult(
            item_id=request.item_id,
            status=SuiteStatus.SANDBOX_ERROR,
            detail=str(exc),
            limit_s=limit_s,
            wall_s=0.0,
            hash_seed=seed,
        )
    try:
        report = parse(authenticate(run.outputs.get(REPORT_FILE), key, run_id))
    except ReportError as exc:
        result = without_report(request, run, exc.reason, limit_s, seed)
    except (ValidationError, ValueError) as exc:
        log.error("unreadable harness report for %s: %s", request.item_id or "<unnamed>", exc)
        result = without_report(request, run, "malformed", limit_s, seed)
    else:
        result = interpret(
            request, run, report, limit_s, seed, static_expectations(request.tests, request.test_classes)
        )
    if run.applied or run.not_applied:
        result = result.model_copy(
            update={"perturbation_applied": run.applied, "perturbation_skipped": run.not_applied}
        )
    return result


def run_suite(
    solution: str,
    tests: str,
    test_classes: Sequence[str],
    *,
    mode: SuiteMode = "classeval",
    module_name: str = "solution",
    config: SandboxConfig | None = None,
    limit_s: float | None = None,
    coverage: bool = True,
    hash_seed: int | None = None,
    item_id: str = "",
    backend: SandboxBackend | None = None,
) -> SuiteResult:
    """Run `tests` (the listed test classes) against `solution` in a fresh sandbox.

    mode "classeval": the tests do not import the solution; they run in its namespace, as if
    appended to it (ClassEval's convention). mode "import": the tests `import <module_name>`.
    """
    config = config or SandboxConfig()
    request = SuiteRequest(
        item_id=item_id,
        solution=solution,
        tests=tests,
        test_classes=list(test_classes),
        mode=mode,
        module_name=module_name,
        limit_s=limit_s,
        coverage=coverage,
        hash_seed=hash_seed,
    )
    return execute(request, backend or get_backend(config), config)
