"""Run programs against their tasks' tests in the sandbox and map the result to `SampleOutcome`.

One sandbox run per program, with every listed test class, as ClassEval does it. Its evaluator
imports the program once and runs the test classes one after another *in that same process*
(`unittest.TestLoader().loadTestsFromTestCase(cls)` per class, with a per-class thread timeout),
so module state shared between classes is shared there too. Within a run, unittest already keeps
test classes apart: every test gets a fresh TestCase instance, a failure or error in one test is
recorded and the next test runs, and a failing `setUpClass` stops only its own class. So a failing
class-level test cannot mask a method-level one, and the one-process run gives the same
per-class answers as ClassEval, at a third of the cost of a process per class.

What one process cannot keep apart is a run that ends abnormally: a test that loops until the
time limit, kills the interpreter or exhausts memory takes every class not yet finished with it.
ClassEval's per-class timeout exists for exactly that, so here such a run (TIMEOUT, CRASHED,
RESOURCE_EXCEEDED) is followed by one sandbox run per test class, each with the full limit, and
the sample's outcome is built from those: the runaway class is marked timed out (or errored) and
every other class keeps its own result. When the whole-file run never got as far as collecting
the tests (the program hangs or crashes while it is imported), every class would fail the same
way, so no per-class runs are made and the sample keeps the whole-run status.

Executions are stored by content (program, tests, classes, limit and sandbox settings), so an
interrupted evaluation resumes without re-running anything finished, and identical programs (the
`reference` model's n samples, or a model that answers the same twice) run once. A run the
sandbox itself failed (SANDBOX_ERROR) is retried, and if it keeps failing it is reported and
never stored or scored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchmark.outcomes import ExceptionInfo, SampleOutcome, TestClassOutcome, TestProblem, exception_from_traceback
from pipeline.core.task import Task
from pipeline.config import SandboxConfig
from pipeline.sandbox import (
    ClassResult,
    ClassStatus,
    MethodResult,
    SandboxBackend,
    SuiteRequest,
    SuiteResult,
    SuiteStatus,
    TestOutcome,
    get_backend,
    run_suites,
)
from pipeline.core.store import write_json

log = logging.getLogger(__name__)

EXEC_PROTOCOL = 2  # bump when what a stored execution means changes; old entries are then ignored
_ABNORMAL = (SuiteStatus.TIMEOUT, SuiteStatus.CRASHED, SuiteStatus.RESOURCE_EXCEEDED)
_EXC_IN_DETAIL = re.compile(r"(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)", re.DOTALL)


def job_for(task: Task, program: str, limit_s: float) -> ExecutionJob:
    # Runs are reproducible without touching the tests: the harness seeds `random` with the
    # sandbox's hash seed before the program is imported (ClassEval_58 places mines at random).
    return ExecutionJob(task_id=task.task_id, program=program, tests=task.test,
                        test_classes=tuple(task.test_classes), limit_s=limit_s)


class ExecutionJob(BaseModel):
    """One program to run against one task's tests."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    program: str
    tests: str
    test_classes: tuple[str, ...]
    limit_s: float = Field(gt=0)
    repeat: int = Field(0, ge=0, description="> 0: the same run again (re-timing), stored under its own key")

    def key(self, config: SandboxConfig) -> str:
        material = {
            "protocol": EXEC_PROTOCOL, "program": self.program, "tests": self.tests,
            "test_classes": list(self.test_classes), "limit_s": round(self.limit_s, 6),
            # settings that can change an outcome; worker counts and paths cannot
            "sandbox": config.model_dump(mode="json", include={
                "backend", "memory_mb", "max_processes", "max_file_mb", "hash_seed", "isolation", "python", "env",
                "docker_image", "tmp_size_mb", "grace_s"}),
        } | ({"repeat": self.repeat} if self.repeat else {})  # keys of first runs stay as they were
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class StoredExecution(BaseModel):
    """What the content store keeps per key: the raw sandbox results, whole-file and per class."""

    model_config = ConfigDict(extra="forbid")

    key: str
    protocol: int = EXEC_PROTOCOL
    task_id: str
    limit_s: float
    program: str
    whole: SuiteResult
    per_class: dict[str, SuiteResult] = Field(default_factory=dict)

    @property
    def infrastructure_failure(self) -> bool:
        return self.whole.status is SuiteStatus.SANDBOX_ERROR or any(
            r.status is SuiteStatus.SANDBOX_ERROR for r in self.per_class.values())


class ExecutionStore:
    """`<root>/<key[:2]>/<key>.json`, written atomically; unreadable entries count as missing."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> StoredExecution | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            stored = StoredExecution.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError, OSError) as e:
            log.warning("ignoring unreadable stored execution %s: %s", path, e)
            return None
        return stored if stored.protocol == EXEC_PROTOCOL and stored.key == key else None

    def put(self, stored: StoredExecution) -> None:
        write_json(self._path(stored.key), stored.model_dump(mode="json"))


# -- mapping a sandbox result to outcomes -------------------------------------------------------------

def _exception(text: str, default_type: str) -> ExceptionInfo:
    """`Type: message` (or a traceback ending in one) out of a sandbox detail string."""
    info = exception_from_traceback(text)
    if info is not None:
        return info
    m = _EXC_IN_DETAIL.search(text)
    if m and m["type"][0].isupper():
        return ExceptionInfo(type=m["type"], message=m["message"].strip())
    return ExceptionInfo(type=default_type, message=text)


def _problem(cls: str, method: MethodResult) -> TestProblem | None:
    if method.outcome is TestOutcome.UNEXPECTED_SUCCESS:
        return TestProblem(test=f"{cls}.{method.name}", kind="failure",
                           exception=ExceptionInfo(type="AssertionError", message="unexpected success"))
    if method.outcome not in (TestOutcome.FAILED, TestOutcome.ERRORED):
        return None
    exc = ExceptionInfo(type=method.exc_type or ("AssertionError" if method.outcome is TestOutcome.FAILED else "Exception"),
                        message=method.message or "", traceback=method.traceback or "")
    return TestProblem(test=f"{cls}.{method.name}", kind="failure" if method.outcome is TestOutcome.FAILED else "error",
                       exception=exc)


def class_outcome(result: ClassResult, *, extra_error: ExceptionInfo | None = None, timed_out: bool = False) -> TestClassOutcome:
    """One test class: tests_run counts every reported test (skipped ones too, as unittest does);
    a fixture error, and any `extra_error` (the class's own run crashed or hit a limit), counts as
    one more errored test, so a class with a broken fixture or an abnormal end is never a success.
    MISSING and ZERO_TESTS classes ran nothing and score as errors."""
    name = result.name.strip()
    problems = [p for m in result.methods if (p := _problem(name, m)) is not None]
    failures = sum(m.outcome in (TestOutcome.FAILED, TestOutcome.UNEXPECTED_SUCCESS) for m in result.methods)
    errors = sum(m.outcome is TestOutcome.ERRORED for m in result.methods)
    skipped = sum(m.outcome is TestOutcome.SKIPPED for m in result.methods)
    tests_run = len(result.methods)
    extras: list[TestProblem] = []
    if result.status in (ClassStatus.FIXTURE_ERROR, ClassStatus.FAILED) and result.error:
        extras.append(TestProblem(test=f"{name} (fixture)", kind="error", exception=_exception(result.error, "FixtureError")))
    if extra_error is not None:
        extras.append(TestProblem(test=f"{name} (run)", kind="error", exception=extra_error))
    if result.status in (ClassStatus.MISSING, ClassStatus.ZERO_TESTS) and not result.methods:
        # nothing ran: tests_run stays 0 (an error); keep why for the taxonomy
        exc = ExceptionInfo(type="NoTestsRun", message=result.error or result.status.value)
        return TestClassOutcome(tests_run=0, timed_out=timed_out,
                                problems=[TestProblem(test=name, kind="error", exception=exc), *extras])
    return TestClassOutcome(tests_run=tests_run + len(extras), failures=failures, errors=errors + len(extras),
                            skipped=skipped, timed_out=timed_out, problems=problems + extras)


def _abnormal_class_outcome(result: SuiteResult, name: str) -> TestClassOutcome:
    """A test class's own run that ended abnormally: what it reported before, plus why it ended."""
    cls = next((c for c in result.classes if c.name == name), ClassResult(name=name, status=ClassStatus.ZERO_TESTS))
    if result.status is SuiteStatus.TIMEOUT:
        return class_outcome(cls, timed_out=True)
    if result.status is SuiteStatus.RESOURCE_EXCEEDED:
        if result.detail.startswith("CPU time"):
            return class_outcome(cls, timed_out=True)
        kind = "MemoryError" if result.detail.startswith("memory") else "ResourceLimit"
        return class_outcome(cls, extra_error=ExceptionInfo(type=kind, message=result.detail))
    return class_outcome(cls, extra_error=_exception(result.detail, "Crashed") if result.status is SuiteStatus.ERROR
                         else ExceptionInfo(type="Crashed", message=result.detail))


def _completed_classes(result: SuiteResult) -> dict[str, TestClassOutcome]:
    return {c.name: class_outcome(c) for c in result.classes}


def collected_anything(result: SuiteResult) -> bool:
    """Whether the run got as far as collecting the test classes (a class the harness never saw is
    reported as ZERO_TESTS 'not run')."""
    return any(c.methods or c.error != "not run" for c in result.classes)


def to_outcome(task_id: str, sample_index: int, stored: StoredExecution) -> SampleOutcome:
    """The sample's outcome from its stored execution (see the module docstring for the rules)."""
    whole = stored.whole
    status = whole.status
    if status in (SuiteStatus.PASSED, SuiteStatus.FAILED, SuiteStatus.ZERO_TESTS):
        return SampleOutcome(task_id=task_id, sample_index=sample_index, test_classes=_completed_classes(whole))
    if status is SuiteStatus.ERROR:
        return SampleOutcome(task_id=task_id, sample_index=sample_index, status="load_error",
                             error=_exception(whole.detail.split(": ", 1)[-1], "LoadError"))
    if status is SuiteStatus.TAMPERED:
        return SampleOutcome(task_id=task_id, sample_index=sample_index, status="tampered",
                             error=ExceptionInfo(type="Tampered", message=whole.detail))
    if status in _ABNORMAL and stored.per_class:
        classes: dict[str, TestClassOutcome] = {}
        for name, result in stored.per_class.items():
            if result.status is SuiteStatus.TAMPERED:
                return SampleOutcome(task_id=task_id, sample_index=sample_index, status="tampered",
                                     error=ExceptionInfo(type="Tampered", message=f"{name}: {result.detail}"))
            if result.status in (SuiteStatus.PASSED, SuiteStatus.FAILED, SuiteStatus.ZERO_TESTS):
                classes.update(_completed_classes(result))
            else:
                classes[name] = _abnormal_class_outcome(result, name)
        return SampleOutcome(task_id=task_id, sample_index=sample_index, test_classes=classes)
    bucket = {SuiteStatus.TIMEOUT: "timeout", SuiteStatus.RESOURCE_EXCEEDED: "resource_limit",
              SuiteStatus.CRASHED: "crashed"}.get(status)
    if bucket is None:
        raise ValueError(f"task {task_id}: sandbox status {status.value} cannot be scored ({whole.detail})")
    exc_type = {"timeout": "TimeoutError", "crashed": "Crashed"}.get(bucket)
    if exc_type is None:
        exc_type = "MemoryError" if whole.detail.startswith("memory") else "ResourceLimit"
    return SampleOutcome(task_id=task_id, sample_index=sample_index, status=bucket,  # type: ignore[arg-type]
                         error=ExceptionInfo(type=exc_type, message=whole.detail),
                         test_classes={c.name: class_outcome(c, timed_out=bucket == "timeout")
                                       for c in whole.classes if c.methods})


# -- running ------------------------------------------------------------------------------------------

class Executor:
    """Runs `ExecutionJob`s through the sandbox pool, backed by an `ExecutionStore`."""

    def __init__(self, config: SandboxConfig, store: ExecutionStore, *, workers: int | None = None,
                 retries: int = 2, rerun_classes: bool = True, backend: SandboxBackend | None = None) -> None:
        self.config = config
        self.store = store
        self.workers = workers
        self.retries = retries
        self.rerun_classes = rerun_classes
        self._backend = backend
        self._lock = threading.Lock()
        self.sandbox_runs = 0
        self.reused = 0

    @property
    def backend(self) -> SandboxBackend:
        if self._backend is None:
            self._backend = get_backend(self.config)  # probed on first use, not at construction
        return self._backend

    def _run(self, requests: list[SuiteRequest], on_done: Callable[[int, SuiteResult], None] | None = None) -> list[SuiteResult]:
        """Run requests, retrying the ones the sandbox itself failed."""
        results = run_suites(requests, self.config, backend=self.backend, workers=self.workers, on_done=on_done)
        runs = len(requests)
        for _ in range(self.retries):
            again = [i for i, r in enumerate(results) if r.status is SuiteStatus.SANDBOX_ERROR]
            if not again:
                break
            log.warning("retrying %d run(s) the sandbox failed: %s", len(again), ", ".join(requests[i].item_id for i in again))
            for i, r in zip(again, run_suites([requests[i] for i in again], self.config, backend=self.backend,
                                              workers=self.workers), strict=True):
                results[i] = r
            runs += len(again)
        with self._lock:
            self.sandbox_runs += runs
        return results

    def run(self, jobs: Sequence[ExecutionJob], on_done: Callable[[str], None] | None = None) -> dict[str, StoredExecution]:
        """Execute every distinct job (by key); returns key -> stored execution, including sandbox
        failures (those are returned but not stored, so a later run tries again)."""
        by_key: dict[str, ExecutionJob] = {}
        for job in jobs:
            by_key.setdefault(job.key(self.config), job)
        done: dict[str, StoredExecution] = {}
        todo: list[tuple[str, ExecutionJob]] = []
        for key, job in by_key.items():
            stored = self.store.get(key)
            if stored is not None:
                done[key] = stored
                self.reused += 1
                if on_done:
                    on_done(key)
            else:
                todo.append((key, job))
        requests = [SuiteRequest(item_id=f"{job.task_id}#{key[:10]}", solution=job.program, tests=job.tests,
                                 test_classes=list(job.test_classes), limit_s=job.limit_s, coverage=False)
                    for key, job in todo]
        persisted: set[str] = set()

        def finished(i: int, result: SuiteResult) -> None:
            # Persist each finished run at once, so an interrupted evaluation keeps it.
            key, job = todo[i]
            if result.status is SuiteStatus.SANDBOX_ERROR or self._needs_per_class(job, result):
                return
            self.store.put(StoredExecution(key=key, task_id=job.task_id, limit_s=job.limit_s, program=job.program, whole=result))
            with self._lock:
                persisted.add(key)
            if on_done:
                on_done(key)

        abnormal: list[tuple[str, ExecutionJob, SuiteResult]] = []
        for (key, job), result in zip(todo, self._run(requests, finished), strict=True):
            if self._needs_per_class(job, result):
                abnormal.append((key, job, result))
                continue
            stored = StoredExecution(key=key, task_id=job.task_id, limit_s=job.limit_s, program=job.program, whole=result)
            done[key] = stored
            if key not in persisted:  # succeeded on a retry, or failed for good (then not stored)
                self._keep(stored, done)
                if on_done:
                    on_done(key)
        if abnormal:
            self._per_class(abnormal, done, on_done)
        return done

    def _needs_per_class(self, job: ExecutionJob, result: SuiteResult) -> bool:
        return (self.rerun_classes and result.status in _ABNORMAL and len(job.test_classes) > 1
                and collected_anything(result))

    def _per_class(self, abnormal: list[tuple[str, ExecutionJob, SuiteResult]], done: dict[str, StoredExecution],
                   on_done: Callable[[str], None] | None) -> None:
        units = [(key, job, whole, name) for key, job, whole in abnormal for name in job.test_classes]
        requests = [SuiteRequest(item_id=f"{job.task_id}#{key[:10]}:{name}", solution=job.program, tests=job.tests,
                                 test_classes=[name], limit_s=job.limit_s, coverage=False)
                    for key, job, _, name in units]
        results = self._run(requests)
        per_key: dict[str, dict[str, SuiteResult]] = {}
        for (key, _, _, name), result in zip(units, results, strict=True):
            per_key.setdefault(key, {})[name] = result
        for key, job, whole in abnormal:
            stored = StoredExecution(key=key, task_id=job.task_id, limit_s=job.limit_s, program=job.program,
                                     whole=whole, per_class=per_key.get(key, {}))
            self._keep(stored, done)
            if on_done:
                on_done(key)

    def _keep(self, stored: StoredExecution, done: dict[str, StoredExecution]) -> None:
        with self._lock:
            done[stored.key] = stored
        if not stored.infrastructure_failure:
            self.store.put(stored)
