"""How the local backend applies a `Perturbation`: extra bwrap flags, an inner command prefix, env.

The inner prefix runs inside the sandbox, after bubblewrap (and after `setpriv` has dropped to the
run's uid), right before the command: a user namespace (`unshare --map-user`) for another uid, a
network namespace where the isolation has none, and libfaketime for the clock. Every aspect asked
for ends up in `applied` (how) or `not_applied` (why not); nothing is dropped silently.
"""

from __future__ import annotations

import glob
import os
import shutil
from dataclasses import dataclass, field

from classforge_bench.pipeline.sandbox.base import Perturbation

_DEFAULT_HOSTNAME = "sandbox"
# Where distributions put libfaketime (Debian/Ubuntu: multiarch; others: plain lib dirs).
_FAKETIME_GLOBS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/lib64/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


def find_libfaketime(configured: str | None = None) -> str | None:
    if configured:
        return configured if os.path.isfile(configured) else None
    for pattern in _FAKETIME_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


@dataclass
class LocalPerturbation:
    hostname: str = _DEFAULT_HOSTNAME
    bwrap_uid: int | None = None  # unprivileged bubblewrap: its own --uid/--gid
    inner: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    applied: dict[str, str] = field(default_factory=dict)
    not_applied: dict[str, str] = field(default_factory=dict)


def _user(p: Perturbation, isolation: str, drop_to: int | None, out: LocalPerturbation) -> list[str]:
    """USER/LOGNAME always; the uid through a user namespace. Returns inner `unshare` options."""
    if p.user is not None:
        out.env.update({"USER": p.user, "LOGNAME": p.user})
        out.applied["user"] = f"USER/LOGNAME={p.user} (environment)"
    if p.uid is None:
        return []
    if isolation == "bwrap" and drop_to is None:
        # bubblewrap's own user namespace forbids nested ones (--disable-userns): use its --uid.
        out.bwrap_uid = p.uid
        out.applied["uid"] = f"uid {p.uid} in bubblewrap's user namespace (--uid/--gid)"
        return []
    if shutil.which("unshare") is None:
        out.not_applied["uid"] = "no `unshare` program for a user namespace; uid unchanged"
        return []
    out.applied["uid"] = f"uid {p.uid} in a user namespace over the run's uid (unshare --map-user)"
    return ["--user", f"--map-user={p.uid}", f"--map-group={p.uid}"]


def _network(p: Perturbation, isolation: str, user_opts: list[str], out: LocalPerturbation) -> list[str]:
    if not p.no_network:
        return []
    if isolation in ("bwrap", "unshare"):
        out.applied["network"] = (
            f"none in every run: {isolation} gives each run an empty network namespace (the baseline too)"
        )
        return []
    if shutil.which("unshare") is None:
        out.not_applied["network"] = "isolation 'none' and no `unshare` program: the run keeps the host network"
        return []
    out.applied["network"] = "empty network namespace (unshare --net)"
    # A network namespace needs a user namespace unless started by root; map the uid onto itself.
    return ["--net"] + ([] if user_opts else ["--map-current-user"])


def _clock(p: Perturbation, out: LocalPerturbation) -> list[str]:
    if p.clock_shift_days is None:
        return []
    library = find_libfaketime(p.faketime_library)
    if library is None:
        where = p.faketime_library or "the usual library folders"
        out.not_applied["clock"] = f"libfaketime not found in {where} (install the Debian package libfaketime)"
        return []
    offset = f"{p.clock_shift_days:+d}d"
    out.applied["clock"] = f"clock {offset} (LD_PRELOAD={library}, FAKETIME={offset})"
    # Preloaded directly through `env`, not the `faketime` wrapper: the wrapper needs POSIX
    # semaphores in /dev/shm, which the sandbox does not share. LD_PRELOAD stays off the
    # sandbox's environment allow-list; only this fixed library is ever preloaded.
    return ["env", f"LD_PRELOAD={library}", f"FAKETIME={offset}"]


def plan(p: Perturbation | None, isolation: str, drop_to: int | None) -> LocalPerturbation:
    out = LocalPerturbation()
    if p is None:
        return out
    out.env.update(p.env)
    for name, value in p.env.items():
        out.applied[f"env:{name}"] = f"{name}={value}"
    if p.hostname is not None:
        out.env["HOSTNAME"] = p.hostname
        if isolation == "bwrap":
            out.hostname = p.hostname
            out.applied["hostname"] = f"{p.hostname} in a UTS namespace (bwrap --hostname) and HOSTNAME"
        else:
            out.applied["hostname"] = f"HOSTNAME={p.hostname} (environment only: no UTS namespace under {isolation!r})"
    user_opts = _user(p, isolation, drop_to, out)
    unshare_opts = user_opts + _network(p, isolation, user_opts, out)
    if unshare_opts:
        out.inner += ["unshare", *unshare_opts, "--"]
    out.inner += _clock(p, out)
    return out
