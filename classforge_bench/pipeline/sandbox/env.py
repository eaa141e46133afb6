"""The environment a sandboxed process sees: built from an allow-list, never copied from the host.

Nothing is inherited, so a secret in the host environment (OPENAI_API_KEY, GITHUB_TOKEN, HF_TOKEN,
...) cannot reach the code under test even if someone adds it to a config file by mistake: names
that look like credentials are refused outright.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from classforge_bench.pipeline.sandbox.base import SandboxError

# Names a caller may set per run or through the config. Anything else is an error, not a silent drop,
# so a typo or a leaked secret is noticed where it is introduced.
ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "TZ",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONNOUSERSITE",
        "PYTHONUNBUFFERED",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "MPLBACKEND",
        "NLTK_DATA",
        # what the environment checks vary (host name and user where no namespace can)
        "HOSTNAME",
        "USER",
        "LOGNAME",
    }
)

_SECRET_LIKE = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _defaults(workdir: str, bin_dir: str | None) -> dict[str, str]:
    path = "/usr/local/bin:/usr/bin:/bin"
    return {
        # The sandbox interpreter's own bin dir first, so `python` inside a test is the same one.
        "PATH": f"{bin_dir}:{path}" if bin_dir else path,
        "HOME": workdir,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        # One thread per numeric library: the pool already uses every core, and the process
        # limit counts threads.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
    }


def check_name(name: str, allowed: frozenset[str]) -> None:
    if not _NAME.match(name):
        raise SandboxError(f"not a valid environment variable name: {name!r}")
    if _SECRET_LIKE.search(name):
        raise SandboxError(f"refusing to pass a credential-like variable into the sandbox: {name}")
    if name not in allowed:
        raise SandboxError(f"environment variable {name} is not on the sandbox allow-list")


def build_env(
    workdir: str,
    bin_dir: str | None = None,
    configured: Mapping[str, str] | None = None,
    per_run: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Defaults, then operator-configured values (their names join the allow-list), then per-run values."""
    configured = dict(configured or {})
    allowed = ALLOWED_NAMES | frozenset(configured)
    env = _defaults(workdir, bin_dir)
    for source in (configured, dict(per_run or {})):
        for name, value in source.items():
            check_name(name, allowed)
            if "\0" in value:
                raise SandboxError(f"environment value for {name} contains a NUL byte")
            env[name] = value
    return env
