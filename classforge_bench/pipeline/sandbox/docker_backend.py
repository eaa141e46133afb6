"""The `docker` backend: one throw-away container per run, through the docker SDK.

No network (`network_mode="none"`; with podman `network_disabled=True` does not isolate), memory
and pids limits, a read-only root with tmpfs work dir and /tmp, every capability dropped,
no-new-privileges, a non-root user, and the container removed after the run. Files travel in and
results out through `docker_bootstrap.py` (see there why not through the archive API).
"""

from __future__ import annotations

import base64
import importlib.resources
import json
import logging
import zlib
from collections.abc import Mapping, Sequence
from functools import lru_cache

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.extras import require
from classforge_bench.pipeline.sandbox.base import (
    ExecResult,
    Perturbation,
    RunLimits,
    SandboxError,
    cap_text,
    check_relative_path,
)
from classforge_bench.pipeline.sandbox.env import build_env

log = logging.getLogger(__name__)

WORKDIR = "/work"
_CHUNK = 100_000  # below the kernel's 128 KiB limit on one environment string
_START_GRACE_S = 10.0  # container start-up on top of the run's own wall limit
_MB = 1024 * 1024
IMAGE_LIBFAKETIME = "/opt/classforge/libfaketime.so.1"  # linked there by the Dockerfile's sandbox stage


def perturbed_options(options: dict, p: Perturbation | None) -> tuple[dict, list[str], dict[str, str]]:
    """Container options, a command prefix and how each aspect was applied, for one perturbation."""
    if p is None:
        return options, [], {}
    options, applied = dict(options), {f"env:{k}": f"{k}={v}" for k, v in p.env.items()}
    if p.cwd:
        options["working_dir"] = f"{WORKDIR}/{p.cwd}"
        applied["cwd"] = options["working_dir"]
    if p.hostname is not None:
        options["hostname"] = p.hostname
        applied["hostname"] = f"{p.hostname} (container host name) and HOSTNAME"
    if p.user is not None:
        applied["user"] = f"USER/LOGNAME={p.user} (environment)"
    if p.uid is not None:
        # Every capability stays dropped: uid 0 here cannot override file permissions.
        options["user"] = f"{p.uid}:{p.uid}"
        applied["uid"] = f"container user {p.uid}:{p.uid} (all capabilities dropped)"
    if p.no_network:
        applied["network"] = "none in every run: network_mode none (the baseline too)"
    prefix: list[str] = []
    if p.clock_shift_days is not None:
        library = p.faketime_library or IMAGE_LIBFAKETIME
        prefix = ["env", f"LD_PRELOAD={library}", f"FAKETIME={p.clock_shift_days:+d}d"]
        applied["clock"] = f"clock {p.clock_shift_days:+d}d (LD_PRELOAD={library} in the image)"
    return options, prefix, applied


def _perturbed_env(p: Perturbation | None) -> dict[str, str]:
    if p is None:
        return {}
    env = dict(p.env)
    if p.hostname is not None:
        env["HOSTNAME"] = p.hostname
    if p.user is not None:
        env.update({"USER": p.user, "LOGNAME": p.user})
    return env


@lru_cache(maxsize=1)
def bootstrap_source() -> str:
    return (
        importlib.resources.files("classforge_bench.pipeline.sandbox")
        .joinpath("docker_bootstrap.py")
        .read_text(encoding="utf-8")
    )


def _encode_payload(payload: dict) -> dict[str, str]:
    text = base64.b64encode(zlib.compress(json.dumps(payload).encode("utf-8"), 6)).decode("ascii")
    chunks = [text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK)] or [""]
    env = {f"CF_PAYLOAD_{i}": chunk for i, chunk in enumerate(chunks)}
    env["CF_PAYLOAD_N"] = str(len(chunks))
    return env


def container_options(config: SandboxConfig, limits: RunLimits, environment: dict[str, str], python: str) -> dict:
    """Everything passed to `containers.create`; the security settings live here, in one place."""
    from docker.types import Ulimit

    tmpfs_size = f"size={config.tmp_size_mb}m"
    return {
        "image": config.docker_image,
        "command": [python, "-I", "-S", "-c", bootstrap_source()],
        "environment": environment,
        "working_dir": WORKDIR,
        "user": config.docker_user,
        "network_mode": "none",
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",
        "pids_limit": limits.max_processes + 4,
        "read_only": True,
        "tmpfs": {
            WORKDIR: f"rw,exec,nosuid,nodev,{tmpfs_size},mode=1777",
            "/tmp": f"rw,nosuid,nodev,{tmpfs_size},mode=1777",
        },
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            Ulimit(name="cpu", soft=limits.cpu_limit_s, hard=limits.cpu_limit_s + 1),
            Ulimit(name="fsize", soft=limits.max_file_mb * _MB, hard=limits.max_file_mb * _MB),
            Ulimit(name="data", soft=limits.memory_mb * _MB, hard=limits.memory_mb * _MB),
            Ulimit(name="core", soft=0, hard=0),
            # Explicit, because an engine given some ulimits (podman) asks for nofile/nproc of
            # 1048576 otherwise, above what it may grant. nproc counts the uid machine-wide, so it
            # is a fixed bound; the pids cgroup limit is the per-container one.
            Ulimit(name="nofile", soft=1024, hard=1024),
            Ulimit(name="nproc", soft=4096, hard=4096),
        ],
        "hostname": "sandbox",
        "labels": {"org.classforge.sandbox": "1"},
        "detach": True,
        "stdin_open": False,
        "tty": False,
    }


class DockerBackend:
    name = "docker"
    isolation = "docker"
    isolates_processes = True  # a container per run: its own PID namespace

    def __init__(self, config: SandboxConfig, client=None, python: str | None = None) -> None:
        self._config = config
        self._client = client
        # the interpreter inside the image: an evaluation's declared environment names it in
        # `config.python` (classforge_bench/benchmark/environment.py); otherwise the image's `python`
        self._python = python or config.python or "python"

    @property
    def python(self) -> str:
        return self._python

    def client(self):
        if self._client is None:
            require("docker", "the docker sandbox backend")
            import docker

            try:
                self._client = (
                    docker.DockerClient(base_url=self._config.docker_base_url)
                    if self._config.docker_base_url
                    else docker.from_env()
                )
            except docker.errors.DockerException as exc:
                raise SandboxError(f"no Docker-API engine reachable: {exc}") from exc
        return self._client

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
        for name in list(files) + list(outputs):
            check_relative_path(name)
        base = container_options(self._config, limits, {}, self._python)
        options, prefix, applied = perturbed_options(base, perturbation)
        payload = {
            "files": {
                n: base64.b64encode(c.encode("utf-8") if isinstance(c, str) else c).decode("ascii")
                for n, c in files.items()
            },
            "command": prefix + list(command),
            "env": build_env(
                options["working_dir"], None, self._config.env, {**dict(env or {}), **_perturbed_env(perturbation)}
            ),
            "wall_s": limits.wall_s,
            "cap": limits.output_cap_bytes,
            "outputs": list(outputs),
            "output_file_cap": limits.max_output_file_bytes,
        }
        options["environment"] = _encode_payload(payload)
        result = self._run_container(options, limits)
        return result.model_copy(update={"applied": applied}) if applied else result

    def _run_container(self, options: dict, limits: RunLimits) -> ExecResult:
        import docker
        import requests

        client = self.client()
        try:
            container = client.containers.create(**options)
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot create a sandbox container from {options['image']}: {exc}") from exc
        try:
            container.start()
            host_timeout = False
            try:
                container.wait(timeout=limits.wall_s + _START_GRACE_S)
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                host_timeout = True
                container.kill()
            logs = container.logs(stdout=True, stderr=False)
        except docker.errors.DockerException as exc:
            raise SandboxError(f"sandbox container failed: {exc}") from exc
        finally:
            try:
                container.remove(force=True)
            except docker.errors.DockerException as exc:
                log.warning("could not remove sandbox container %s: %s", getattr(container, "id", "?"), exc)
        return self._result(logs, limits, host_timeout)

    def _result(self, logs: bytes, limits: RunLimits, host_timeout: bool) -> ExecResult:
        lines = logs.decode("utf-8", "replace").strip().splitlines()
        try:
            envelope = json.loads(lines[-1]) if lines else None
        except ValueError:
            envelope = None
        if not isinstance(envelope, dict):
            return ExecResult(
                exit_code=None,
                timed_out=host_timeout,
                wall_s=limits.wall_s if host_timeout else 0.0,
                stderr="sandbox bootstrap produced no result envelope",
                isolation=self.isolation,
            )
        stdout, out_cut = cap_text(base64.b64decode(envelope["stdout"]), limits.output_cap_bytes)
        stderr, err_cut = cap_text(base64.b64decode(envelope["stderr"]), limits.output_cap_bytes)
        return ExecResult(
            exit_code=envelope["exit_code"],
            signal=envelope["signal"],
            timed_out=bool(envelope["timed_out"]) or host_timeout,
            wall_s=envelope["wall_s"],
            cpu_s=envelope["cpu_s"],
            peak_memory_mb=envelope["max_rss_kb"] / 1024,
            stdout=stdout,
            stderr=stderr,
            stdout_truncated=envelope["stdout_truncated"] or out_cut,
            stderr_truncated=envelope["stderr_truncated"] or err_cut,
            outputs={n: base64.b64decode(v) for n, v in envelope["outputs"].items()},
            isolation=self.isolation,
        )
