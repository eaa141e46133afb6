"""Backends for the conformance suite (helpers live in sandbox_support.py)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import pytest

from classforge_bench.pipeline.sandbox.base import SandboxBackend, SandboxError
from classforge_bench.pipeline.sandbox.docker_backend import DockerBackend
from classforge_bench.pipeline.sandbox.local import LocalBackend

sys.path.insert(0, os.path.dirname(__file__))
from fake_docker import FakeDockerClient  # noqa: E402
from sandbox_support import make_config  # noqa: E402


@dataclass
class BackendCase:
    name: str
    backend: SandboxBackend
    isolates_fs: bool
    isolates_net: bool
    enforces_limits: bool = True


def _local(isolation: str) -> BackendCase:
    backend = LocalBackend(make_config(isolation=isolation))
    try:
        actual = backend.isolation
    except SandboxError as exc:
        pytest.skip(f"local isolation {isolation!r} unavailable here: {exc}")
    return BackendCase(f"local-{actual}", backend, isolates_fs=actual == "bwrap", isolates_net=actual != "none")


_docker_skip: list[str] = []


def _real_docker() -> BackendCase:
    if _docker_skip:
        pytest.skip(_docker_skip[0])
    config = make_config(backend="docker")
    try:
        import docker

        client = (
            docker.DockerClient(base_url=config.docker_base_url)
            if config.docker_base_url
            else docker.from_env(timeout=3)
        )
        client.ping()
        client.images.get(config.docker_image)
    except Exception as exc:  # any failure means: no usable engine here, which is a skip, not an error
        _docker_skip.append(
            f"no Docker-API engine with image {config.docker_image} reachable ({exc.__class__.__name__})"
        )
        pytest.skip(_docker_skip[0])
    return BackendCase("docker", DockerBackend(config, client=client), isolates_fs=True, isolates_net=True)


def _fake_docker() -> BackendCase:
    backend = DockerBackend(make_config(backend="docker"), client=FakeDockerClient(), python=sys.executable)
    # The fake runs containers as plain host processes: nothing is contained, so nothing may be swept.
    backend.isolates_processes = False
    return BackendCase("docker-fake", backend, isolates_fs=False, isolates_net=False, enforces_limits=False)


@pytest.fixture(scope="session", params=["local-auto", "local-unshare", "local-none", "docker", "docker-fake"])
def backend_case(request) -> BackendCase:
    kind = request.param
    if kind.startswith("local-"):
        return _local(kind.split("-", 1)[1])
    return _real_docker() if kind == "docker" else _fake_docker()


@pytest.fixture(scope="session")
def local_backend() -> LocalBackend:
    """The default local backend (strongest isolation available)."""
    return LocalBackend(make_config())
