"""Sandboxed execution of untrusted code, and the verification gate built on it.

Public API (everything else in this package is an implementation detail):

    run_suite(solution, tests, test_classes, *, mode="classeval", config=None, ...) -> SuiteResult
    run_suites(requests: list[SuiteRequest], config=None, *, workers=None, ...) -> list[SuiteResult]
    execute(request: SuiteRequest, backend, config) -> SuiteResult
    verify(solution, tests, test_classes, config=None, *, mode="classeval", ...) -> GateVerdict
    scaled_limit(reference_s, config) -> float
    evaluation_limit(wall_s, cpu_s, config) -> float
    get_backend(config=None, name=None) -> SandboxBackend; register_backend(name, factory)
    SandboxBackend.run(files, command, limits, outputs=(), env=None) -> ExecResult

Importing this package does no work: backends probe their isolation on first use.
"""

from classforge_bench.pipeline.sandbox.base import ExecResult, RunLimits, SandboxBackend, SandboxError
from classforge_bench.pipeline.sandbox.gate import GateReason, GateVerdict, verify
from classforge_bench.pipeline.sandbox.pool import pool_size, run_suites
from classforge_bench.pipeline.sandbox.registry import backend_names, get_backend, register_backend
from classforge_bench.pipeline.sandbox.results import (
    ClassResult,
    ClassStatus,
    CoverageResult,
    MethodResult,
    SuiteMode,
    SuiteRequest,
    SuiteResult,
    SuiteStatus,
    TestOutcome,
)
from classforge_bench.pipeline.sandbox.suite import execute, run_suite
from classforge_bench.pipeline.sandbox.timing import evaluation_limit, scaled_limit

__all__ = [
    "ClassResult",
    "ClassStatus",
    "CoverageResult",
    "ExecResult",
    "GateReason",
    "GateVerdict",
    "MethodResult",
    "RunLimits",
    "SandboxBackend",
    "SandboxError",
    "SuiteMode",
    "SuiteRequest",
    "SuiteResult",
    "SuiteStatus",
    "TestOutcome",
    "backend_names",
    "evaluation_limit",
    "execute",
    "get_backend",
    "pool_size",
    "register_backend",
    "run_suite",
    "run_suites",
    "scaled_limit",
    "verify",
]
