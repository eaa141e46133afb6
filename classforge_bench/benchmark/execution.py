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
So the sample's one limit is shared among its test classes (`ExecutionJob.class_floors`, enforced
by the harness's supervisor): a class that runs past its share of the time left (at least its
floor, a multiple of the reference's time in it) is stopped as a timeout. A run that ends
abnormally (TIMEOUT, CRASHED, RESOURCE_EXCEEDED) is then accounted per test class: the classes it
finished (every test the host expects from the test source reported) keep their outcomes, the
class it was in when it ended gets that end (timed out, crashed, out of memory), and the classes
it never reached run again, together, with what is left of the limit, as often as runs end
abnormally and time is left; a class no run reached counts as timed out. A timed-out sample thus
costs its limit (plus the grace), never more. (ClassEval gives each class its own thread timeout,
but its abandoned threads keep running beside the next classes.) When the whole-file run never
got as far as collecting the tests (the program hangs or crashes while it is imported), every
class would fail the same way, so the sample keeps the whole-run status.

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
import os
import re
import site
import sys
import sysconfig
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.benchmark.outcomes import (
    ExceptionInfo,
    SampleOutcome,
    TestClassOutcome,
    TestProblem,
    exception_from_traceback,
)
from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.store import write_json
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.sandbox import (
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
from classforge_bench.pipeline.sandbox.batch import can_batch, run_batches
from classforge_bench.pipeline.sandbox.cluster import DaskCluster
from classforge_bench.pipeline.sandbox.expectations import static_expectations
from classforge_bench.pipeline.sandbox.pool import pool_size
from classforge_bench.pipeline.sandbox.suite import harness_source

log = logging.getLogger(__name__)

EXEC_PROTOCOL = 5  # 4: limits are CPU time (wall ceiling above); 5: a lone run, like a batched one, imports the task's libraries before its runner (not in its CPU time). Bump when what a stored execution means changes; old entries are then ignored
_ABNORMAL = (SuiteStatus.TIMEOUT, SuiteStatus.CRASHED, SuiteStatus.RESOURCE_EXCEEDED)
_NORMAL = (SuiteStatus.PASSED, SuiteStatus.FAILED, SuiteStatus.ZERO_TESTS)
MIN_RERUN_S = 0.5  # what is left of a limit below this runs nothing: a sandbox start alone takes ~0.1 s
_EXC_IN_DETAIL = re.compile(r"(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)", re.DOTALL)


def job_for(task: Task, program: str, limit_s: float, class_floors: dict[str, float] | None = None) -> ExecutionJob:
    # Runs are reproducible without touching the tests: the harness seeds `random` with the
    # sandbox's hash seed before the program is imported (ClassEval_58 places mines at random).
    return ExecutionJob(
        task_id=task.task_id,
        program=program,
        tests=task.test,
        test_classes=tuple(task.test_classes),
        limit_s=limit_s,
        class_floors=class_floors,
        warm_imports=warm_imports_of(task),
    )


def warm_imports_of(task: Task) -> tuple[str, ...]:
    """The top-level modules of the task's own import lines (numpy, nltk, ...), for the batch's
    supervisor to import once before it forks the runners (`SuiteRequest.warm_imports`)."""
    names: list[str] = []
    for line in task.import_statement:
        words = line.replace(",", " ").split()
        if len(words) >= 2 and words[0] in ("import", "from"):
            for word in words[1:] if words[0] == "import" else words[1:2]:
                top = word.split(".")[0]
                if top.isidentifier() and top not in ("as", "import") and top not in names:
                    names.append(top)
                if words[0] == "import" and "as" in words:
                    break
    return tuple(names)


class ExecutionJob(BaseModel):
    """One program to run against one task's tests."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    program: str
    tests: str
    test_classes: tuple[str, ...]
    limit_s: float = Field(gt=0)
    repeat: int = Field(0, ge=0, description="> 0: the same run again (re-timing), stored under its own key")
    class_floors: dict[str, float] | None = Field(
        None,
        description="share the limit among the test classes, each getting at least this (classforge_bench.pipeline.sandbox)",
    )
    warm_imports: tuple[str, ...] = Field((), description="the task's libraries, imported once per batch")

    def key(self, config: SandboxConfig) -> str:
        material = (
            {
                "protocol": EXEC_PROTOCOL,
                "program": self.program,
                "tests": self.tests,
                "test_classes": list(self.test_classes),
                "limit_s": round(self.limit_s, 6),
                "sandbox": outcome_settings(config),
            }
            | ({"repeat": self.repeat} if self.repeat else {})
            | (  # keys of first runs stay as they were
                {"class_floors": self.class_floors} if self.class_floors is not None else {}
            )
        )
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# The sandbox settings that can change an outcome (worker counts and paths cannot): part of every
# execution's key, and of the environment a release's shipped reference results were made in.
OUTCOME_SETTINGS = frozenset(
    {
        "backend",
        "memory_mb",
        "max_processes",
        "max_file_mb",
        "hash_seed",
        "isolation",
        "python",
        "env",
        "docker_image",
        "tmp_size_mb",
        "grace_s",
        "wall_ceiling_factor",
    }
)


def outcome_settings(config: SandboxConfig) -> dict:
    return config.model_dump(mode="json", include=set(OUTCOME_SETTINGS))


def harness_digest() -> str:
    """What version of the sandbox harness a run was made with: the execution protocol and its source's hash."""
    return f"{EXEC_PROTOCOL}:{hashlib.sha256(harness_source().encode()).hexdigest()}"


def environment_tag(config: SandboxConfig) -> str:
    """What an execution's key leaves to the machine: the interpreter that runs the code (its path,
    size and time stamp: a rebuilt or upgraded one is another), the state of its site-packages
    folders (installing, upgrading or removing a library adds or removes a `.dist-info` entry
    there, which moves the folder's time stamp: a reference run with numpy 1.x is not handed back
    after an upgrade to 2.x) and the harness's source, so a store shared across results folders
    never hands back a run made with another of any of them."""
    given = config.python or sys.executable
    python = os.path.realpath(given)
    material = json.dumps([python, _stamp(Path(python)), _site_stamps(Path(given)), harness_digest()])
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def _stamp(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "unknown"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _site_stamps(python: Path) -> list[tuple[str, str]]:
    """The site-packages folders the interpreter `python` imports libraries from, each with its stamp:
    a virtual environment's own (found by its `pyvenv.cfg`, since the interpreter path resolves to
    the base one) and, for this very interpreter, the ones it reports (purelib, platlib, user site)."""
    folders: set[Path] = set()
    venv = python.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        folders.update(venv.glob("lib*/python*/site-packages"))
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        paths = sysconfig.get_paths()
        folders.update(Path(paths[k]) for k in ("purelib", "platlib"))
        folders.add(Path(site.getusersitepackages()))
    return sorted((str(f), _stamp(f)) for f in folders if f.is_dir())


class StoredExecution(BaseModel):
    """What the content store keeps per key: the raw sandbox results, whole-file and per class."""

    model_config = ConfigDict(extra="forbid")

    key: str
    protocol: int = EXEC_PROTOCOL
    task_id: str
    limit_s: float
    program: str
    whole: SuiteResult
    apart: bool = Field(False, description="an abnormal whole-file run accounted per test class")
    expected: dict[str, list[str]] = Field(
        default_factory=dict, description="apart: the tests the host expects per class"
    )
    reruns: list[SuiteResult] = Field(default_factory=list, description="apart: later runs of the classes not reached")

    @property
    def runs(self) -> list[SuiteResult]:
        return [self.whole, *self.reruns]

    @property
    def wall_s(self) -> float:
        return sum(r.wall_s for r in self.runs)

    @property
    def cpu_s(self) -> float:
        """The CPU time its runs used (what the limit is counted on); a run without a figure counts its wall time."""
        return sum(r.cpu_s if r.cpu_s is not None else r.wall_s for r in self.runs)

    @property
    def infrastructure_failure(self) -> bool:
        return any(r.status is SuiteStatus.SANDBOX_ERROR for r in self.runs)


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
        return TestProblem(
            test=f"{cls}.{method.name}",
            kind="failure",
            exception=ExceptionInfo(type="AssertionError", message="unexpected success"),
        )
    if method.outcome not in (TestOutcome.FAILED, TestOutcome.ERRORED):
        return None
    exc = ExceptionInfo(
        type=method.exc_type or ("AssertionError" if method.outcome is TestOutcome.FAILED else "Exception"),
        message=method.message or "",
        traceback=method.traceback or "",
    )
    return TestProblem(
        test=f"{cls}.{method.name}", kind="failure" if method.outcome is TestOutcome.FAILED else "error", exception=exc
    )


def class_outcome(
    result: ClassResult, *, extra_error: ExceptionInfo | None = None, timed_out: bool = False
) -> TestClassOutcome:
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
        extras.append(
            TestProblem(test=f"{name} (fixture)", kind="error", exception=_exception(result.error, "FixtureError"))
        )
    if extra_error is not None:
        extras.append(TestProblem(test=f"{name} (run)", kind="error", exception=extra_error))
    if result.status in (ClassStatus.MISSING, ClassStatus.ZERO_TESTS) and not result.methods:
        # nothing ran: tests_run stays 0 (an error); keep why for the taxonomy
        exc = ExceptionInfo(type="NoTestsRun", message=result.error or result.status.value)
        return TestClassOutcome(
            tests_run=0, timed_out=timed_out, problems=[TestProblem(test=name, kind="error", exception=exc), *extras]
        )
    return TestClassOutcome(
        tests_run=tests_run + len(extras),
        failures=failures,
        errors=errors + len(extras),
        skipped=skipped,
        timed_out=timed_out,
        problems=problems + extras,
    )


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
    return class_outcome(
        cls,
        extra_error=_exception(result.detail, "Crashed")
        if result.status is SuiteStatus.ERROR
        else ExceptionInfo(type="Crashed", message=result.detail),
    )


def _completed_classes(result: SuiteResult) -> dict[str, TestClassOutcome]:
    return {c.name: class_outcome(c) for c in result.classes}


def collected_anything(result: SuiteResult) -> bool:
    """Whether the run got as far as collecting the test classes (a class the harness never saw is
    reported as ZERO_TESTS 'not run')."""
    return any(c.methods or c.error != "not run" for c in result.classes)


def finished_classes(run: SuiteResult, expected: dict[str, list[str]]) -> list[str]:
    """The classes a run took to their end: all of them when it ended normally; after an abnormal
    end, those missing from the tests or stopped by a fixture, and those whose every expected test
    was reported."""
    if run.status in _NORMAL:
        return [c.name for c in run.classes]
    done = []
    for c in run.classes:
        reported = {m.name for m in c.methods}
        if c.status in (ClassStatus.MISSING, ClassStatus.FIXTURE_ERROR) or (
            c.name in expected and set(expected[c.name]) <= reported
        ):
            done.append(c.name)
    return done


def _ended_in(run: SuiteResult, finished: list[str]) -> str | None:
    """The class an abnormal run was in when it ended: the first (in run order) it did not finish."""
    return next((c.name for c in run.classes if c.name not in finished), None)


def classes_left(test_classes: Sequence[str], runs: Sequence[SuiteResult], expected: dict[str, list[str]]) -> list[str]:
    """Listed classes no run has decided yet (neither finished nor ended in), in listed order."""
    decided: set[str] = set()
    for run in runs:
        finished = finished_classes(run, expected)
        decided.update(finished)
        if run.status not in _NORMAL and (ended := _ended_in(run, finished)) is not None:
            decided.add(ended)
    return [c for c in test_classes if c not in decided]


def _apart_outcome(stored: StoredExecution, test_classes: Sequence[str]) -> SampleOutcome:
    """Per class: the first run that finished it or ended in it decides; classes no run reached
    count as timed out (the limit was spent before they could run)."""
    classes: dict[str, TestClassOutcome] = {}
    for run in stored.runs:
        if run.status is SuiteStatus.TAMPERED:
            return SampleOutcome(status="tampered", error=ExceptionInfo(type="Tampered", message=run.detail))
        finished = finished_classes(run, stored.expected)
        by_name = {c.name: c for c in run.classes}
        for name in finished:
            classes.setdefault(name, class_outcome(by_name[name]))
        ended = None if run.status in _NORMAL else _ended_in(run, finished)
        if ended is not None and ended not in classes:
            classes[ended] = _abnormal_class_outcome(run, ended)
    for name in test_classes:
        if name not in classes:
            problem = TestProblem(
                test=name,
                kind="error",
                exception=ExceptionInfo(
                    type="NotRun", message="not reached: the sample's time limit was spent before this class ran"
                ),
            )
            classes[name] = TestClassOutcome(tests_run=0, timed_out=True, problems=[problem])
    return SampleOutcome(status="completed", test_classes=classes)


def to_outcome(task_id: str, stored: StoredExecution, test_classes: Sequence[str] = ()) -> SampleOutcome:
    """The sample's outcome from its stored execution (see the module docstring for the rules).
    `test_classes`: the task's listed classes, so that classes no run reached are counted;
    `task_id` only names the task when its sandbox status cannot be scored."""
    whole = stored.whole
    status = whole.status
    if status in _NORMAL:
        return SampleOutcome(status="completed", test_classes=_completed_classes(whole))
    if status is SuiteStatus.ERROR:
        return SampleOutcome(status="load_error", error=_exception(whole.detail.split(": ", 1)[-1], "LoadError"))
    if status is SuiteStatus.TAMPERED:
        return SampleOutcome(status="tampered", error=ExceptionInfo(type="Tampered", message=whole.detail))
    if status in _ABNORMAL and stored.apart:
        return _apart_outcome(stored, test_classes or [c.name for c in whole.classes])
    bucket = {
        SuiteStatus.TIMEOUT: "timeout",
        SuiteStatus.RESOURCE_EXCEEDED: "resource_limit",
        SuiteStatus.CRASHED: "crashed",
    }.get(status)
    if bucket is None:
        raise ValueError(f"task {task_id}: sandbox status {status.value} cannot be scored ({whole.detail})")
    # a stop by the wall-clock safety net (the answer waited rather than computed) is named apart
    exc_type = {"timeout": "WallClockCeiling" if whole.wall_ceiling else "TimeoutError", "crashed": "Crashed"}.get(
        bucket
    )
    if exc_type is None:
        exc_type = "MemoryError" if whole.detail.startswith("memory") else "ResourceLimit"
    return SampleOutcome(
        status=bucket,
        error=ExceptionInfo(type=exc_type, message=whole.detail),
        test_classes={c.name: class_outcome(c, timed_out=bucket == "timeout") for c in whole.classes if c.methods},
    )


# -- running ------------------------------------------------------------------------------------------


class Executor:
    """Runs `ExecutionJob`s through the sandbox pool, backed by an `ExecutionStore`."""

    def __init__(
        self,
        config: SandboxConfig,
        store: ExecutionStore,
        *,
        workers: int | None = None,
        retries: int = 2,
        rerun_classes: bool = True,
        backend: SandboxBackend | None = None,
        cluster: DaskCluster | None = None,
        batch_size: int = 0,
    ) -> None:
        self.config = config
        self.batch_size = batch_size
        self.cluster = cluster
        self.store = store
        self.workers = workers
        self.retries = retries
        self.rerun_classes = rerun_classes
        self._backend = backend
        self._lock = threading.Lock()
        self.sandbox_runs = 0
        self.reused = 0
        self.reused_keys: set[str] = set()  # executions found in the store rather than run

    def with_hash_seed(self, seed: int) -> Executor:
        """The same executor (store, workers, backend, batching) whose runs use another PYTHONHASHSEED;
        kept beside the constructor so a setting added to it is carried over too."""
        return Executor(
            self.config.model_copy(update={"hash_seed": seed}),
            self.store,
            workers=self.workers,
            retries=self.retries,
            rerun_classes=self.rerun_classes,
            backend=self.backend,
            cluster=self.cluster,
            batch_size=self.batch_size,
        )

    @property
    def backend(self) -> SandboxBackend:
        if self._backend is None:
            self._backend = get_backend(self.config)  # probed on first use, not at construction
        return self._backend

    def _run(
        self, requests: list[SuiteRequest], on_done: Callable[[int, SuiteResult], None] | None = None
    ) -> list[SuiteResult]:
        """Run requests, retrying the ones the sandbox itself failed."""
        results = self._suites(requests, on_done)
        runs = len(requests)
        for _ in range(self.retries):
            again = [i for i, r in enumerate(results) if r.status is SuiteStatus.SANDBOX_ERROR]
            if not again:
                break
            log.warning(
                "retrying %d run(s) the sandbox failed: %s", len(again), ", ".join(requests[i].item_id for i in again)
            )
            for i, r in zip(again, self._suites([requests[i] for i in again]), strict=True):
                results[i] = r
            runs += len(again)
        with self._lock:
            self.sandbox_runs += runs
        return results

    def _suites(
        self, requests: list[SuiteRequest], on_done: Callable[[int, SuiteResult], None] | None = None
    ) -> list[SuiteResult]:
        """The runs on the Dask cluster when there is one, else in this machine's sandbox pool."""
        if self.cluster is not None:
            return self.cluster.run_suites(requests, self.config, on_done)
        return run_suites(requests, self.config, backend=self.backend, workers=self.workers, on_done=on_done)

    def run(
        self,
        jobs: Sequence[ExecutionJob],
        on_done: Callable[[StoredExecution], None] | None = None,
        batched: bool = True,
    ) -> dict[str, StoredExecution]:
        """Execute every distinct job (by key); returns key -> stored execution, including sandbox
        failures (those are returned but not stored, so a later run tries again). `on_done` sees
        each execution as soon as it is final (and stored). `batched=False`: each job in a sandbox
        run of its own (the reference pre-run, whose CPU time sets limits: a lone run's counts
        its interpreter's start, a batched runner's does not)."""
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
                self.reused_keys.add(key)
                if on_done:
                    on_done(stored)
            else:
                todo.append((key, job))
        requests = [self._request(key, job) for key, job in todo]

        def finished(i: int, result: SuiteResult) -> None:
            # Keep each finished run at once, so an interrupted evaluation keeps it.
            key, job = todo[i]
            if result.status is SuiteStatus.SANDBOX_ERROR or self._needs_apart(job, result):
                return
            self._keep(
                StoredExecution(key=key, task_id=job.task_id, limit_s=job.limit_s, program=job.program, whole=result),
                done,
                on_done,
            )

        abnormal: list[tuple[str, ExecutionJob, SuiteResult]] = []
        for (key, job), result in zip(
            todo,
            self._batched_or_alone(requests, finished, _costs([job for _, job in todo]) if batched else None),
            strict=True,
        ):
            if self._needs_apart(job, result):
                abnormal.append((key, job, result))
            elif key not in done:  # succeeded on a retry, or failed for good (then not stored)
                self._keep(
                    StoredExecution(
                        key=key, task_id=job.task_id, limit_s=job.limit_s, program=job.program, whole=result
                    ),
                    done,
                    on_done,
                )
        if abnormal:
            self._apart(abnormal, done, on_done)
        return done

    def _batched_or_alone(
        self, requests: list[SuiteRequest], on_done: Callable[[int, SuiteResult], None], costs: list[float] | None
    ) -> list[SuiteResult]:
        """First runs in batches where the sandbox allows it (`classforge_bench.pipeline.sandbox.batch`: one sandbox
        start, one forked runner per sample with its own limits, folder and signed report); a run
        its batch gave no trustworthy result for runs alone, as every run does without batches."""
        found: list[SuiteResult | None] = [None] * len(requests)
        if (
            costs is not None
            and self.batch_size > 0
            and self.cluster is None
            and len(requests) > 1
            and can_batch(self.backend)
        ):
            workers = pool_size(self.config, self.workers)

            def trustworthy(i: int, result: SuiteResult) -> None:
                if result.status is not SuiteStatus.SANDBOX_ERROR:
                    on_done(i, result)

            found, runs = run_batches(
                requests,
                self.backend,
                self.config,
                workers=workers,
                size=self.batch_size,
                on_done=trustworthy,
                costs=costs or None,
            )
            with self._lock:
                self.sandbox_runs += runs
        left = [i for i, r in enumerate(found) if r is None or r.status is SuiteStatus.SANDBOX_ERROR]
        if left and len(left) < len(requests):
            log.info(
                "%d of %d runs got no trustworthy result from their batch; they run alone", len(left), len(requests)
            )
        alone = self._run([requests[i] for i in left], lambda j, result: on_done(left[j], result)) if left else []
        for i, result in zip(left, alone, strict=True):
            found[i] = result
        return [r for r in found if r is not None]

    def _request(self, key: str, job: ExecutionJob) -> SuiteRequest:
        """A job's first run: its limit on CPU time, with the wall ceiling above it."""
        return SuiteRequest(
            item_id=f"{job.task_id}#{key[:10]}",
            solution=job.program,
            tests=job.tests,
            test_classes=list(job.test_classes),
            limit_s=job.limit_s,
            coverage=False,
            class_floors=self._floors(job),
            wall_ceiling_s=self._ceiling(job.limit_s),
            warm_imports=list(job.warm_imports),
        )

    def _ceiling(self, limit_s: float) -> float:
        """The wall-clock safety net of a run whose limit is `limit_s` of CPU."""
        return round(limit_s * self.config.wall_ceiling_factor, 3)

    def _floors(self, job: ExecutionJob) -> dict[str, float] | None:
        """Share the limit among the classes only where the classes a stop leaves run again."""
        return job.class_floors if self.rerun_classes and len(job.test_classes) > 1 else None

    def _needs_apart(self, job: ExecutionJob, result: SuiteResult) -> bool:
        return (
            self.rerun_classes
            and result.status in _ABNORMAL
            and len(job.test_classes) > 1
            and collected_anything(result)
        )

    def _apart(
        self,
        abnormal: list[tuple[str, ExecutionJob, SuiteResult]],
        done: dict[str, StoredExecution],
        on_done: Callable[[StoredExecution], None] | None,
    ) -> None:
        """Account abnormal runs per test class (module docstring): the classes not reached run
        again together, within what is left of the sample's limit, until none is left or the time is."""
        jobs = {key: job for key, job, _ in abnormal}
        pending = [
            StoredExecution(
                key=key,
                task_id=job.task_id,
                limit_s=job.limit_s,
                program=job.program,
                whole=whole,
                apart=True,
                expected=_expected(job),
            )
            for key, job, whole in abnormal
        ]
        while pending:
            asked: list[tuple[StoredExecution, list[str], float]] = []
            for stored in pending:
                left = classes_left(jobs[stored.key].test_classes, stored.runs, stored.expected)
                budget = stored.limit_s - stored.cpu_s  # CPU time, as the limit
                if left and budget >= MIN_RERUN_S and not stored.infrastructure_failure:
                    asked.append((stored, left, budget))
                else:
                    self._keep(stored, done, on_done)
            requests = [
                SuiteRequest(
                    item_id=f"{s.task_id}#{s.key[:10]}:rerun{len(s.reruns) + 1}",
                    solution=s.program,
                    tests=jobs[s.key].tests,
                    test_classes=left,
                    limit_s=budget,
                    coverage=False,
                    class_floors=self._floors(jobs[s.key]),
                    wall_ceiling_s=self._ceiling(budget),
                    warm_imports=list(jobs[s.key].warm_imports),
                )
                for s, left, budget in asked
            ]
            pending = []
            for (stored, _, _), result in zip(asked, self._run(requests) if requests else [], strict=True):
                stored.reruns.append(result)
                pending.append(stored)

    def _keep(
        self,
        stored: StoredExecution,
        done: dict[str, StoredExecution],
        on_done: Callable[[StoredExecution], None] | None,
    ) -> None:
        with self._lock:
            done[stored.key] = stored
        if not stored.infrastructure_failure:
            self.store.put(stored)
        if on_done:
            on_done(stored)


def _costs(jobs: Sequence[ExecutionJob]) -> list[float] | None:
    """What each run should take, to pack batches by, longest first; [] when nothing tells (the
    references: they set the times), and the runs are dealt evenly among the workers."""
    return [_predicted_s(job) for job in jobs] if any(job.class_floors for job in jobs) else []


def _predicted_s(job: ExecutionJob) -> float:
    """What a run should take, to pack batches by: its reference's time in the test classes (the
    floors are that times the limit's factor, so they order alike), else its limit."""
    return sum((job.class_floors or {}).values()) or job.limit_s


def _expected(job: ExecutionJob) -> dict[str, list[str]]:
    """The tests the host expects each listed class to report (its own reading of the test source)."""
    return {name: e.methods for name, e in static_expectations(job.tests, list(job.test_classes)).items()}
