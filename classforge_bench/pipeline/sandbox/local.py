"""The `local` backend: bubblewrap, else `unshare`, else a plain subprocess, always with rlimits."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.stop_hooks import at_stop
from classforge_bench.pipeline.sandbox.base import ExecResult, Perturbation, RunLimits, SandboxError, cap_text
from classforge_bench.pipeline.sandbox.env import build_env
from classforge_bench.pipeline.sandbox.isolation import (
    BwrapLayout,
    BwrapRun,
    Isolation,
    Plan,
    candidates,
    prefix_for,
    probe,
    workdir_inside,
)
from classforge_bench.pipeline.sandbox.perturb import LocalPerturbation
from classforge_bench.pipeline.sandbox.perturb import plan as plan_perturbation
from classforge_bench.pipeline.sandbox.proc import Finished, run_command
from classforge_bench.pipeline.sandbox.rlimits import UidPool, nproc_allowance, rlimit_prefix
from classforge_bench.pipeline.sandbox.workdir import WorkDir

log = logging.getLogger(__name__)


def _interpreter_paths(python: str) -> tuple[str, ...]:
    """Directories the interpreter needs, so they can be bound back under a hidden parent."""
    venv_root = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    real_root = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    return tuple(dict.fromkeys([venv_root, real_root, sys.base_prefix, sys.prefix]))


_PROBE_SCRIPT = (
    "import sys, os, coverage, unittest; "
    f"sys.exit(0 if os.path.realpath(os.__file__).startswith(os.path.realpath({sys.base_prefix!r})) else 3)"
)


class LocalBackend:
    name = "local"

    def __init__(self, config: SandboxConfig) -> None:
        self._config = config
        self._python = config.python or sys.executable
        self._uids = UidPool(config.uid_base, config.uid_span) if UidPool.enabled() else None
        self._work_root = str(config.work_root) if config.work_root is not None else None
        self._layout = BwrapLayout(
            tmp_size_bytes=config.tmp_size_mb * 1024 * 1024,
            hide_paths=tuple(config.hide_paths),
            expose_paths=_interpreter_paths(self._python),
        )
        self._plan: Plan | None = None
        self._lock = threading.Lock()

    @property
    def python(self) -> str:
        return self._python

    @property
    def isolation(self) -> Isolation:
        return self.plan.isolation

    @property
    def isolates_processes(self) -> bool:
        """Whether everything of the sandbox's uid in its PID namespace belongs to this one run."""
        plan = self.plan
        return plan.isolation in ("bwrap", "unshare") or plan.dedicated_uid

    @property
    def plan(self) -> Plan:
        # Probed on first use, not at construction: building a backend must stay free of work.
        with self._lock:
            if self._plan is None:
                self._plan = self._choose()
        return self._plan

    def _take_uid(self, plan: Plan) -> int | None:
        """A uid of the pool when the plan runs as one; only root gets such plans, and root has the pool."""
        if not plan.dedicated_uid:
            return None
        assert self._uids is not None, "a dedicated-uid plan is offered only to root, which has a uid pool"
        return self._uids.acquire()

    def _give_back(self, uid: int | None) -> None:
        if uid is not None and self._uids is not None:
            self._uids.release(uid)

    def _choose(self) -> Plan:
        for plan in candidates(self._config.isolation, root=self._uids is not None):
            uid = self._take_uid(plan)
            probe_dir = WorkDir.create(self._work_root, uid)
            try:
                probe_dir.write({})
                # The harness needs the interpreter's own stdlib and coverage: an interpreter that
                # starts but cannot see them (unreadable parents) must not pass the probe.
                works = probe(plan, probe_dir.path, self._layout, uid, [self._python, "-c", _PROBE_SCRIPT])
            finally:
                probe_dir.remove()
                self._give_back(uid)
            if works:
                self._warn_if_weak(plan)
                return plan
        raise SandboxError(
            f"no sandbox isolation ({self._config.isolation}) can run the interpreter {self._python} here"
        )

    def _warn_if_weak(self, plan: Plan) -> None:
        if self._uids is not None and not plan.dedicated_uid:
            log.warning(
                "sandbox: a dedicated uid cannot run %s under %s isolation; runs use the host uid, so the "
                "process limit is shared with every process of that uid",
                self._python,
                plan.isolation,
            )
        if plan.isolation == "none":
            log.warning(
                "sandbox: running code in a plain subprocess with rlimits only (isolation setting %r). "
                "Isolation is weaker: no private filesystem, network or PID namespace. Install bubblewrap.",
                self._config.isolation,
            )
        elif plan.isolation == "unshare" and self._config.isolation == "auto":
            log.warning("sandbox: bubblewrap unavailable; `unshare` isolates network and PIDs but not the filesystem")

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        limits: RunLimits,
        outputs: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        perturbation: Perturbation | None = None,
    ) -> ExecResult:
        if not command:
            raise SandboxError("empty command")
        plan = self.plan
        moved = perturbation or Perturbation()
        uid = self._take_uid(plan)
        workdir = WorkDir.create(self._work_root, uid)
        # A stopped build ends with os._exit, which skips the `finally` below.
        with at_stop(f"removing sandbox folder {workdir.path}", workdir.remove):
            try:
                workdir.write({moved.prefixed(name): content for name, content in files.items()})
                # bubblewrap is started by root and drops to the uid itself; the others start as the uid.
                launch_as = None if plan.isolation == "bwrap" else uid
                argv, run_env, tweaks = self._launch(plan, workdir.path, uid, limits, command, env, perturbation)
                # Without a PID namespace, escaped processes are found by their dedicated uid.
                sweep = (lambda: _kill_uid(uid)) if plan.isolation == "none" and uid is not None else None
                done = run_command(
                    argv,
                    cwd=os.path.join(workdir.path, moved.cwd) if moved.cwd else workdir.path,
                    env=run_env,
                    wall_s=limits.wall_s,
                    output_cap=limits.output_cap_bytes,
                    user=launch_as,
                    after_exit=sweep,
                )
                read = workdir.read_outputs([moved.prefixed(n) for n in outputs], limits.max_output_file_bytes)
                found = {n: read[moved.prefixed(n)] for n in outputs if moved.prefixed(n) in read}
            finally:
                workdir.remove()
                self._give_back(uid)
        return _exec_result(done, plan.isolation, limits, found, tweaks)

    def _launch(
        self,
        plan: Plan,
        host_workdir: str,
        uid: int | None,
        limits: RunLimits,
        command: Sequence[str],
        env: Mapping[str, str] | None,
        perturbation: Perturbation | None,
    ) -> tuple[list[str], dict[str, str], LocalPerturbation]:
        """The full command line and environment of one run, with the perturbation applied."""
        inside = workdir_inside(plan.isolation, host_workdir)
        drop_to = uid if plan.isolation == "bwrap" else None
        tweaks = plan_perturbation(perturbation, plan.isolation, drop_to)
        start = inside
        if perturbation is not None and perturbation.cwd:
            start = tweaks.applied["cwd"] = os.path.join(inside, perturbation.cwd)
        run_env = build_env(inside, os.path.dirname(self._python), self._config.env, {**dict(env or {}), **tweaks.env})
        bwrap_run = BwrapRun(hostname=tweaks.hostname, chdir=start, uid=tweaks.bwrap_uid)
        argv = (
            rlimit_prefix(limits, nproc_allowance(limits, dedicated_uid=uid is not None))
            + prefix_for(plan.isolation, host_workdir, self._layout, drop_to, bwrap_run)
            + tweaks.inner
            + list(command)
        )
        return argv, run_env, tweaks


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of `uid` (kill(-1) sent from that uid reaches no one else)."""
    for _ in range(3):  # a fork in flight during one sweep is caught by the next
        subprocess.run(
            ["kill", "-s", "KILL", "--", "-1"],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )


def _exec_result(
    done: Finished, isolation: str, limits: RunLimits, found: dict, tweaks: LocalPerturbation
) -> ExecResult:
    """How the run ended, in the backend-neutral shape."""
    exit_code, sig = done.exit_code, done.signal
    if isolation != "none" and exit_code is not None and 128 < exit_code <= 128 + 64:
        # bwrap and unshare report a signal death of the command as 128 + signal.
        sig, exit_code = exit_code - 128, None
    stdout, out_cut = cap_text(done.stdout, limits.output_cap_bytes)
    stderr, err_cut = cap_text(done.stderr, limits.output_cap_bytes)
    return ExecResult(
        exit_code=exit_code,
        signal=sig,
        timed_out=done.timed_out,
        wall_s=done.wall_s,
        # bubblewrap's PID-1 reaper does not hand resource usage up to us (it exits without
        # being waited for), so under bwrap these are unknown rather than wrong.
        cpu_s=None if isolation == "bwrap" else done.cpu_s,
        peak_memory_mb=None if isolation == "bwrap" else done.peak_rss_kb / 1024,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=done.stdout_truncated or out_cut,
        stderr_truncated=done.stderr_truncated or err_cut,
        outputs=found,
        isolation=isolation,
        applied=tweaks.applied,
        not_applied=tweaks.not_applied,
    )
