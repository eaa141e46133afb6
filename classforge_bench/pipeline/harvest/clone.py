"""Clone repositories with gitpython for scanning: shallow (history back to the cutoff only),
single-branch, bounded in time and size, never prompting for credentials.

Failures become `CloneFailure` with a reason code; the caller records them as rejections.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from datetime import date
from pathlib import Path
from typing import cast

import git

from classforge_bench.pipeline.config import CloneConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.errors import InfrastructureError

# Never let git ask for a password or read the user's config: a prompt would hang the harvest.
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false", "GCM_INTERACTIVE": "never"}


class CloneFailure(InfrastructureError):
    def __init__(self, repo: str, reason: str, detail: str = ""):
        super().__init__(f"{repo}: {reason}: {detail}")
        self.repo, self.reason, self.detail = repo, reason, detail


def clone_url_for(location: str) -> str:
    """Plain paths become file:// URLs, because git ignores --depth/--shallow-since for plain paths."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", location) or location.startswith("git@"):
        return location
    return Path(location).resolve().as_uri()


def remote_head(url: str, repo: str, timeout_s: float) -> str:
    """The commit the remote's HEAD points at, without cloning (for resume checks)."""
    try:
        # GitPython types a command as every shape `execute` can return; without `as_process` or
        # `with_extended_output` it is the output text.
        out = cast(str, git.cmd.Git().ls_remote(url, "HEAD", env=GIT_ENV, kill_after_timeout=timeout_s))
    except git.GitCommandError as exc:
        raise CloneFailure(repo, _classify(exc), _stderr(exc)) from exc
    if not out.strip():
        raise CloneFailure(repo, R.EMPTY_REPOSITORY, "remote has no HEAD commit")
    return out.split()[0]


def clone_for_scan(url: str, repo: str, cfg: CloneConfig, cutoff: date, head: str | None = None) -> Path:
    """A shallow single-branch clone holding history since the cutoff; reused when already at the
    remote head (`head`, when the caller has asked the remote already)."""
    dest = Path(cfg.workdir) / _folder_name(repo, url)
    head = head or remote_head(url, repo, cfg.timeout_s)
    if (dest / ".git").exists():
        try:
            if git.Repo(dest).head.commit.hexsha == head:
                return dest
        except (git.InvalidGitRepositoryError, ValueError):
            pass
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        # shallow_since keeps exactly the post-cutoff history provenance needs; older commits are
        # represented by the shallow boundary, which is enough to tell "present before the cutoff".
        git.Repo.clone_from(
            url,
            tmp,
            env=GIT_ENV,
            single_branch=True,
            no_tags=True,
            shallow_since=cutoff.isoformat(),
            kill_after_timeout=cfg.timeout_s,
        )
    except git.GitCommandError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        reason = _classify(exc)
        if reason == "clone-failed" and "shallow" in _stderr(exc).lower():
            reason = R.NO_POST_CUTOFF_HISTORY
        raise CloneFailure(repo, reason, _stderr(exc)) from exc
    size_mb = _tree_size(tmp) / 1e6
    if size_mb > cfg.max_size_mb:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CloneFailure(repo, R.TOO_LARGE, f"{size_mb:.1f} MB > {cfg.max_size_mb} MB")
    os.replace(tmp, dest)
    return dest


def _folder_name(repo: str, url: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "__", repo).strip("_") or "repo"
    return f"{safe}-{hashlib.sha256(url.encode()).hexdigest()[:8]}"


def _tree_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            fp = os.path.join(root, f)
            if not os.path.islink(fp):
                total += os.path.getsize(fp)
    return total


def _stderr(exc: git.GitCommandError) -> str:
    return (str(exc.stderr or exc) or "").strip()[-500:]


def _classify(exc: git.GitCommandError) -> str:
    text = _stderr(exc).lower()
    if exc.status is not None and isinstance(exc.status, int) and exc.status < 0:
        return R.CLONE_TIMEOUT
    if "timed out" in text or "timeout" in text or "killed" in text:
        return R.CLONE_TIMEOUT
    if (
        "does not appear to be a git repository" in text
        or "not found" in text
        or "could not read" in text
        or "unable to" in text
    ):
        return R.UNREACHABLE
    return R.CLONE_FAILED
