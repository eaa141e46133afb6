"""Optional parts of the install: which extra brings a module, and one line when it is missing.

`pip install classforge-bench` is the evaluator and the harvest; the build's orchestration (Prefect),
Dask, the Docker backend, `datasets` (verify-release) and the plots are extras (`[build]`, `[dask]`, `[docker]`, `[hub]`,
`[plots]`, or `[all]`), so a user who only scores models does not install a workflow server.
"""

from __future__ import annotations

import importlib.util

from classforge_bench.pipeline.core.errors import InputError

# The import name -> the extra that installs it (pyproject.toml's [project.optional-dependencies]).
EXTRA_OF = {
    "prefect": "build",
    "prefect_dask": "dask",
    "docker": "docker",
    "datasets": "hub",
    "matplotlib": "plots",
}


class MissingExtra(InputError):
    """An optional dependency the asked-for command needs is not installed."""


def require(module: str, purpose: str) -> None:
    """Raise `MissingExtra` naming the command and the pip line when `module` cannot be imported."""
    if importlib.util.find_spec(module) is None:
        extra = EXTRA_OF[module]
        raise MissingExtra(
            f"{purpose} needs {module}, which is not installed: pip install 'classforge-bench[{extra}]' (or '[all]')"
        )
