"""Backends by name. Built-ins are imported on first use, so importing this costs nothing."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.sandbox.base import SandboxBackend, SandboxError

Factory = Callable[[SandboxConfig], SandboxBackend]

_BUILTIN = {
    "local": "classforge_bench.pipeline.sandbox.local:LocalBackend",
    "docker": "classforge_bench.pipeline.sandbox.docker_backend:DockerBackend",
}
_factories: dict[str, Factory] = {}
_instances: dict[tuple[str, str], SandboxBackend] = {}
_lock = threading.Lock()


def register_backend(name: str, factory: Factory) -> None:
    """Add (or replace) a backend; `factory(config)` builds it."""
    with _lock:
        _factories[name] = factory
        for key in [k for k in _instances if k[0] == name]:
            del _instances[key]


def backend_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_factories))


def _factory(name: str) -> Factory:
    if name in _factories:
        return _factories[name]
    if name in _BUILTIN:
        module, attr = _BUILTIN[name].split(":")
        return getattr(importlib.import_module(module), attr)
    raise SandboxError(f"unknown sandbox backend {name!r}; known: {', '.join(backend_names())}")


def get_backend(config: SandboxConfig | None = None, name: str | None = None) -> SandboxBackend:
    """The shared backend for this config (one per name and config, so probes run once)."""
    config = config or SandboxConfig()
    name = name or config.backend
    key = (name, config.model_dump_json())
    with _lock:
        if key not in _instances:
            _instances[key] = _factory(name)(config)
        return _instances[key]
