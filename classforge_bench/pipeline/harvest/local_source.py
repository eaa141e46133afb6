"""Local repositories as a harvest source: directories of git repos, repo paths and file:// URLs.

This is the offline default and what the tests use. Metadata GitHub would give us (creation
date, licence) is read from the repository itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import git

from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.records import RepoRef
from classforge_bench.pipeline.harvest.clone import GIT_ENV, clone_url_for

_LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING")
_LICENSE_PATTERNS = (
    ("Apache-2.0", r"Apache License,?\s+Version 2\.0"),
    ("GPL-3.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 3"),
    ("GPL-2.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 2"),
    ("LGPL-3.0", r"GNU LESSER GENERAL PUBLIC LICENSE\s+Version 3"),
    ("MPL-2.0", r"Mozilla Public License,?\s+(v\. |Version )2\.0"),
    ("BSD-3-Clause", r"Neither the name of"),
    ("BSD-2-Clause", r"Redistributions in binary form must reproduce"),
    ("MIT", r"Permission is hereby granted, free of charge"),
    ("Unlicense", r"This is free and unencumbered software"),
    ("ISC", r"Permission to use, copy, modify, and/or distribute this software"),
)


class SourceError(InputError):
    """A configured local source does not exist or holds no git repository."""


def detect_license(text: str) -> str | None:
    """SPDX id from a licence file's text, by its distinctive sentences; None when unsure."""
    for spdx, pattern in _LICENSE_PATTERNS:
        if re.search(pattern, text, re.IGNORECASE):
            return spdx
    return None


def _path_of(location: str) -> Path:
    if location.startswith("file://"):
        return Path(url2pathname(urlparse(location).path))
    return Path(location)


def _is_repo(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def expand_local_sources(locations: list[str]) -> Iterator[Path]:
    """Every repository named by `locations`: a repo itself, or a directory whose children are repos."""
    seen: set[Path] = set()
    for loc in locations:
        path = _path_of(loc)
        if not path.exists():
            raise SourceError(f"local source {loc!r} does not exist")
        if path.is_symlink() and not path.resolve().exists():
            raise SourceError(f"local source {loc!r} is a dangling link")
        candidates = [path] if _is_repo(path) else sorted(p for p in path.iterdir() if p.is_dir() and _is_repo(p))
        if not candidates:
            raise SourceError(f"local source {loc!r} is neither a git repository nor a folder of them")
        for repo in candidates:
            real = repo.resolve()
            if real not in seen:
                seen.add(real)
                yield real


def local_repo_ref(path: Path) -> RepoRef:
    """Describe a local repository the way the GitHub source describes a remote one."""
    name = path.name[:-4] if path.name.endswith(".git") else path.name
    full_name = name.replace("__", "/", 1) if "__" in name else f"local/{name}"
    ref = RepoRef(full_name=full_name, clone_url=clone_url_for(str(path)), source="local")
    try:
        repo = git.Repo(path)
        with repo.git.custom_environment(**GIT_ENV):
            if not repo.head.is_valid():
                return ref  # empty repository: the clone stage records why
            head = repo.head.commit
            ref.head_commit = head.hexsha
            ref.default_branch = None if repo.head.is_detached else repo.active_branch.name
            root_sha = repo.git.rev_list("--max-parents=0", "HEAD").split()[-1]
            ref.created_at = datetime.fromtimestamp(repo.commit(root_sha).authored_date, tz=UTC)
            for fname in _LICENSE_FILES:
                try:
                    blob = head.tree / fname
                except KeyError:
                    continue
                ref.license_spdx = detect_license(blob.data_stream.read().decode("utf-8", "replace"))
                break
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, ValueError) as exc:
        raise SourceError(f"{path}: cannot read repository: {exc}") from exc
    return ref
