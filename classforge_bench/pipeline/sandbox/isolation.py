"""Which isolation the local backend can use here, and the command-line prefix for each.

Preference: bubblewrap (private mount, PID, network, IPC and UTS namespaces, read-only root; a
user namespace too when not started by root), then `unshare` (network, PID and user namespaces
only: the filesystem stays visible and writable where the uid may write), then nothing. Started by
root, each run also gets a uid of its own (see rlimits.py). The choice is probed once, by really
starting the interpreter in a sandbox, so a kernel that forbids namespaces or an interpreter the
sandbox uid cannot reach is noticed before the first job rather than in it.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Isolation = Literal["bwrap", "unshare", "none"]
INSIDE_WORKDIR = "/tmp/work"
_PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class BwrapLayout:
    """The filesystem view inside bubblewrap.

    `expose_paths` are directories the interpreter needs (e.g. a pyenv build under /root); those
    under a hidden directory are bound back read-only.
    """

    tmp_size_bytes: int
    hide_paths: tuple[str, ...] = ()
    expose_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class BwrapRun:
    """What may differ between runs under one layout (the environment checks vary these)."""

    hostname: str = "sandbox"
    chdir: str = INSIDE_WORKDIR
    uid: int | None = None  # unprivileged only: the uid inside bubblewrap's user namespace


def bwrap_prefix(
    host_workdir: str, layout: BwrapLayout, drop_to: int | None = None, run: BwrapRun = BwrapRun()
) -> list[str]:
    """bubblewrap's command-line prefix.

    Unprivileged (`drop_to` None) it runs in a user namespace as the calling user. Run by root,
    a user namespace would map the sandbox to root's uid outside, so every root process on the
    machine would count against the sandbox's process limit. Instead bubblewrap runs privileged
    (it can then bind paths a stranger may not look up) without a user namespace, and the command
    drops to the dedicated uid `drop_to` with no capabilities and no_new_privs, before any
    sandboxed code runs.
    """
    argv = ["bwrap", "--die-with-parent", "--new-session"]
    if drop_to is None:
        argv += ["--unshare-all", "--unshare-user", "--disable-userns"]
        if run.uid is not None:
            argv += ["--uid", str(run.uid), "--gid", str(run.uid)]
    else:
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    argv += [
        "--hostname",
        run.hostname,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(layout.tmp_size_bytes),
        "--tmpfs",
        "/tmp",
    ]
    argv += _hidden_and_exposed(layout)
    argv += ["--bind", host_workdir, INSIDE_WORKDIR, "--chdir", run.chdir, "--"]
    if drop_to is not None:
        argv += [
            "setpriv",
            f"--reuid={drop_to}",
            f"--regid={drop_to}",
            "--clear-groups",
            "--inh-caps=-all",
            "--no-new-privs",
            "--",
        ]
    return argv


def _hidden_and_exposed(layout: BwrapLayout) -> list[str]:
    """bubblewrap's arguments that hide the layout's directories behind empty tmpfs mounts and bind
    back, read-only, the paths under them the sandbox needs (the interpreter, its libraries)."""
    argv: list[str] = []
    hidden = [p for p in layout.hide_paths if os.path.isdir(p)]
    for path in hidden:
        argv += ["--tmpfs", path]
    # The private /tmp hides the host's too: an interpreter or virtualenv living there (a CI
    # checkout under /tmp, say) is bound back read-only like one under a hidden directory.
    covered = hidden + ["/tmp"]
    made: set[str] = set()
    for path in dict.fromkeys(os.path.abspath(p) for p in layout.expose_paths):
        roots = [h for h in covered if _under(path, h)]
        if not os.path.isdir(path) or not roots:
            continue
        # bubblewrap creates missing parents mode 0700, which the sandbox's uid cannot traverse (the
        # interpreter would then silently fall back to another stdlib); make them 0755 first.
        for parent in _between(max(roots, key=len), path):
            if parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
        argv += ["--ro-bind", path, path]
    return argv


def unshare_prefix() -> list[str]:
    # -c maps the uid to itself: after exec a non-root uid keeps no capabilities in the new user
    # namespace, so it cannot ptrace or read the memory of other processes in the sandbox.
    return ["unshare", "--net", "--map-current-user", "--pid", "--fork", "--kill-child", "--"]


def _between(root: str, path: str) -> list[str]:
    """Directories strictly between `root` and `path`, outermost first."""
    inner = Path(path)
    found = [str(p) for p in inner.parents if _under(str(p), root) and Path(p) != Path(root)]
    return list(reversed(found))


def _under(path: str, parent: str) -> bool:
    p, q = Path(path).resolve(), Path(parent).resolve()
    return p == q or q in p.parents


def prefix_for(
    isolation: Isolation, host_workdir: str, layout: BwrapLayout, drop_to: int | None = None, run: BwrapRun = BwrapRun()
) -> list[str]:
    if isolation == "bwrap":
        return bwrap_prefix(host_workdir, layout, drop_to, run)
    if isolation == "unshare":
        return unshare_prefix()
    return []


def workdir_inside(isolation: Isolation, host_workdir: str) -> str:
    return INSIDE_WORKDIR if isolation == "bwrap" else host_workdir


def _probe(argv: Sequence[str], cwd: str, user: int | None) -> bool:
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("isolation probe %s failed: %s", argv[0], exc)
        return False
    if done.returncode != 0:
        log.debug("isolation probe %s exited %s: %s", argv[0], done.returncode, done.stderr[-500:])
    return done.returncode == 0


@dataclass(frozen=True)
class Plan:
    """How runs are started: the isolation, and whether each run gets its own uid."""

    isolation: Isolation
    dedicated_uid: bool


def candidates(wanted: Literal["auto", "bwrap", "unshare", "none"], root: bool) -> list[Plan]:
    kinds: list[Isolation] = ["bwrap", "unshare", "none"] if wanted == "auto" else [wanted]
    uid_modes = [True, False] if root else [False]
    return [Plan(kind, dedicated) for kind in kinds for dedicated in uid_modes]


def probe(plan: Plan, probe_dir: str, layout: BwrapLayout, uid: int | None, command: Sequence[str]) -> bool:
    """Start a real sandbox with this plan and check that `command` (the interpreter) runs in it."""
    needed = {"bwrap": ["bwrap"] + (["setpriv"] if uid is not None else []), "unshare": ["unshare"], "none": []}
    if any(shutil.which(tool) is None for tool in needed[plan.isolation]):
        return False
    prefix = prefix_for(plan.isolation, probe_dir, layout, uid if plan.isolation == "bwrap" else None)
    launch_as = None if plan.isolation == "bwrap" else uid
    return _probe(prefix + list(command), probe_dir, launch_as)
