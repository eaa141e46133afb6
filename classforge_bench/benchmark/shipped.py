"""A release's shipped reference results: what the release stage packs, and when the evaluator trusts them.

The release stage runs its tasks' references once, as the evaluator's reference pre-run does (the
same jobs, so the same execution keys), and ships the stored executions in `references.json`
(`classforge_bench.pipeline.formats.shipped_references`) with two fingerprints:

- **environment**: what a verdict depends on. The interpreter that runs the code (implementation
  and version) and its platform, the version of every third-party library the tasks import as that
  interpreter has it installed, the sandbox harness (`harness_digest`: execution protocol and
  source), the isolation the sandbox actually used, and the sandbox settings that can change an
  outcome (`outcome_settings`, the very settings every execution key holds). The library versions
  are read by the code's own interpreter, in a child process.
- **machine**: the machine class (architecture and CPU model), which CPU times depend on.

The evaluator trusts a shipped result for a task (and runs no reference for it) when:

1. the environment here is the release's, key by key (for the libraries the selected tasks
   import); any difference and every reference runs here, the run saying why in one line;
2. the result is of the job this evaluator would run: the same execution key (program, tests,
   classes, limit, sandbox settings) and the task's own reference program;
3. its CPU time can set a limit here. A CPU time measured on another machine class is not one
   measured here: a slower machine would time out correct answers under limits set elsewhere. On
   the same machine class every result is trusted. On another one (or an unknown one) only a
   reference whose limit is the floor on any machine up to `SPEED_MARGIN` times slower than the
   release's (`cpu_s x scale_factor x SPEED_MARGIN <= scale_floor_s`: 0.1 s of CPU with the
   defaults, as most references use) is trusted; the others run here, batched.

Never trusted: results on a Dask cluster (the workers' environments are not fingerprinted here) or
the docker backend (the interpreter is the image's), and a file whose bytes are not the ones the
release's manifest lists (edited after the release).
"""

from __future__ import annotations

import json
import logging
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from classforge_bench.benchmark.environment import distribution_of, imported_modules
from classforge_bench.benchmark.execution import (
    ExecutionJob,
    Executor,
    StoredExecution,
    harness_digest,
    outcome_settings,
)
from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.class_analysis import is_stdlib_module
from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.shipped_references import (
    ShippedReference,
    ShippedReferences,
    ShippedReferencesError,
    read_shipped,
    text_sha256,
)
from classforge_bench.pipeline.sandbox import SandboxError, SuiteStatus

log = logging.getLogger(__name__)

# How much slower than the release's machine a machine of another class may be for a shipped CPU
# time still to give the same limit here: only references whose scaled time stays under the floor
# by this margin are trusted across machine classes (single-core Python speed differs by less
# than 4x between the x86-64 and arm64 machines of the last decade).
SPEED_MARGIN = 4.0

_PROBE = """
import importlib.metadata as md, json, platform, sys
out = {"python": platform.python_implementation() + " " + platform.python_version(),
       "platform": sys.platform + "-" + platform.machine(), "libraries": {}}
for module, dist in json.loads(sys.argv[1]).items():
    try:
        out["libraries"][module] = dist + " " + md.version(dist)
    except md.PackageNotFoundError:
        out["libraries"][module] = None
print(json.dumps(out))
"""


class FingerprintError(InfrastructureError):
    """The code's interpreter could not be asked what it is; the message names it and why."""


def third_party_modules(tasks: Iterable[Task]) -> list[str]:
    """The top-level modules beyond the standard library the tasks import (their versions are part of the fingerprint)."""
    return sorted({m for t in tasks for m in imported_modules(t) if not is_stdlib_module(m)})


def environment_fingerprint(config: SandboxConfig, isolation: str, modules: Iterable[str]) -> dict[str, Any]:
    """What a verdict depends on (module docstring), as the interpreter that runs the code reports it."""
    python = config.python or sys.executable
    wanted = {m: distribution_of(m) for m in modules}
    try:
        done = subprocess.run(
            [python, "-I", "-c", _PROBE, json.dumps(wanted)], capture_output=True, text=True, timeout=120
        )
        probe = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        raise FingerprintError(f"the interpreter {python} cannot be asked its version: {exc}") from exc
    if not isinstance(probe, dict):
        raise FingerprintError(f"the interpreter {python} cannot be asked its version: {done.stderr.strip()[-300:]}")
    return {
        "python": probe["python"],
        "platform": probe["platform"],
        "libraries": probe["libraries"],
        "harness": harness_digest(),
        "isolation": isolation,
        "sandbox": outcome_settings(config),
    }


def machine_class() -> dict[str, str]:
    """The architecture and CPU model this machine's CPU times are measured on ("unknown" when unread)."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                name, _, value = line.partition(":")
                if name.strip().lower() in ("model name", "hardware", "cpu model") and value.strip():
                    model = value.strip()
                    break
    except OSError:
        pass
    return {"arch": platform.machine() or "unknown", "cpu": model}


def environment_differences(release: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """What differs, as 'name: release's value there, this one here', libraries compared for the modules `here` holds."""
    found = []
    for name in sorted(set(release) | set(here)):
        if name == "libraries":
            theirs = release.get("libraries") or {}
            for module, version in sorted((here.get("libraries") or {}).items()):
                if theirs.get(module, "not recorded") != version:
                    there = theirs.get(module, "not recorded")
                    found.append(f"{module}: {there or 'not installed'} there, {version or 'not installed'} here")
        elif name == "sandbox":
            a, b = release.get(name) or {}, here.get(name) or {}
            found += [
                f"sandbox.{k}: {a.get(k)!r} there, {b.get(k)!r} here"
                for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)
            ]
        elif release.get(name) != here.get(name):
            found.append(f"{name}: {release.get(name)} there, {here.get(name)} here")
    return found


def package(
    tasks: list[Task],
    done: Mapping[str, StoredExecution],
    environment: dict[str, Any],
    machine: dict[str, str],
) -> ShippedReferences:
    """The release's `references.json`: each task's passed reference run (one that did not pass is
    left out: the evaluator runs it), with the environment and machine it ran in."""
    references = []
    for task in tasks:
        stored = done.get(task.task_id)
        if stored is None or stored.whole.status is not SuiteStatus.PASSED:
            why = stored.whole.detail if stored is not None else "the sandbox failed"
            log.warning("task %s: its reference did not pass at release (%s); not shipped", task.task_id, why)
            continue
        references.append(
            ShippedReference(
                task_id=task.task_id,
                execution_key=stored.key,
                passed=True,
                cpu_s=stored.whole.cpu_s,
                solution_sha256=text_sha256(task.solution_code),
                tests_sha256=text_sha256(task.test),
                execution=stored.model_dump(mode="json"),
            )
        )
    return ShippedReferences(environment=environment, machine=machine, references=references)


@dataclass
class Trust:
    """What the evaluator takes from a release's shipped results: executions by key, and one line saying so."""

    executions: dict[str, StoredExecution] = field(default_factory=dict)
    note: str | None = None


def trust(
    shipped: ShippedReferences,
    jobs: Mapping[str, ExecutionJob],
    config: SandboxConfig,
    here: dict[str, Any],
    machine: dict[str, str],
    release: str,
) -> Trust:
    """The shipped results this evaluator may use instead of running `jobs` (task id -> the
    reference's job), by the rule of the module docstring."""
    differences = environment_differences(shipped.environment, here)
    if differences:
        return Trust(
            note=f"release {release} ships reference results for another environment "
            f"({'; '.join(differences[:3])}{'; ...' if len(differences) > 3 else ''}): "
            f"its {len(jobs)} reference(s) run here"
        )
    same_machine = shipped.machine == machine and "unknown" not in machine.values()
    by_task = shipped.by_task()
    kept: dict[str, StoredExecution] = {}
    other_job = slow = 0
    for tid, job in jobs.items():
        stored = _stored(by_task.get(tid), job, config)
        if stored is None:
            other_job += 1
        elif same_machine or _floor_anywhere(stored, config):
            kept[stored.key] = stored
        else:
            slow += 1
    return Trust(
        executions=kept, note=_trust_note(release, len(jobs), len(kept), other_job, slow, shipped.machine, machine)
    )


def _stored(ref: ShippedReference | None, job: ExecutionJob, config: SandboxConfig) -> StoredExecution | None:
    """The shipped execution when it is this job's own passed run, else None."""
    if ref is None or not ref.passed or ref.execution_key != job.key(config):
        return None
    try:
        stored = StoredExecution.model_validate(ref.execution)
    except ValidationError:
        return None
    ok = stored.key == ref.execution_key and stored.program == job.program and stored.whole.status is SuiteStatus.PASSED
    return stored if ok else None


def _floor_anywhere(stored: StoredExecution, config: SandboxConfig) -> bool:
    """Whether the reference's limit is the floor on a machine up to SPEED_MARGIN times slower."""
    cpu = stored.whole.cpu_s
    return cpu is not None and cpu * config.scale_factor * SPEED_MARGIN <= config.scale_floor_s


def _trust_note(
    release: str, total: int, used: int, other_job: int, slow: int, there: dict[str, str], here: dict[str, str]
) -> str:
    if used == total:
        return f"release {release}: the shipped results of its {total} reference(s) are used (same environment): none runs here"
    parts = []
    if other_job:
        parts.append(f"{other_job} without a shipped result for the job run here (not shipped, or other limits)")
    if slow:
        parts.append(
            f"{slow} whose CPU time sets its limit run(s) here (machine {there.get('cpu')} ({there.get('arch')}) "
            f"at release, {here.get('cpu')} ({here.get('arch')}) here)"
        )
    used_line = (
        f"release {release}: the shipped results of {used} of its {total} reference(s) are used (same environment)"
    )
    return f"{used_line}; " + "; ".join(parts)


def release_trust(folder: Path, tasks: list[Task], jobs: Mapping[str, ExecutionJob], executor: Executor) -> Trust:
    """What the evaluator may take from the release folder `folder`'s shipped results for the
    references of `jobs` (task id -> job); nothing, with one line saying why, when a rule says no."""
    release = Path(folder).name
    try:
        shipped = read_shipped(folder)
    except ShippedReferencesError as exc:
        return _refused(f"{exc}; refused", len(jobs))
    if shipped is None:
        return Trust()
    where = ("a Dask cluster" if executor.cluster is not None else None) or (
        f"the {executor.config.backend} backend" if executor.config.backend != "local" else None
    )
    if where is not None:
        return _refused(f"release {release}: its shipped reference results are not used on {where}", len(jobs))
    try:
        here = environment_fingerprint(executor.config, executor.backend.isolation, third_party_modules(tasks))
    except (FingerprintError, SandboxError) as exc:
        return _refused(f"release {release}: its shipped reference results cannot be checked here ({exc})", len(jobs))
    return trust(shipped, jobs, executor.config, here, machine_class(), release)


def _refused(reason: str, count: int) -> Trust:
    """No shipped result is used, for `reason`."""
    return Trust(note=f"{reason}: its {count} reference(s) run here")
