"""classforge: build fresh, post-cutoff, class-level code-generation benchmarks and score models on them.

The one import root. Its distribution is `classforge-bench`: PyPI's `classforge` is another
project's and installs an import name `classforge`. Below it: `pipeline` (the construction
library), `flows` (Prefect wiring only) and `benchmark` (the evaluator).
"""

DISTRIBUTION = "classforge-bench"


def __getattr__(name: str) -> str:
    # `__version__` is read from the install's metadata on first use, not at import: pyproject.toml
    # is the one place it is written.
    if name != "__version__":
        raise AttributeError(f"module 'classforge_bench' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # a checkout on sys.path without an install (scripts/setup.sh's reuse mode)
        return "unknown"
