"""Release version names: semver-like (`1.2.0`, `v1.2.0-rc.1`) or date-based (`2025.06.01`, `2025.06.01-2`).

The version is the folder name and the Hub tag, so it must be a plain, unambiguous token.
A 4-digit first component means a date and must be a real calendar date.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Literal

from classforge_bench.pipeline.release.errors import ReleaseError

_DATE = re.compile(r"^(?P<y>\d{4})\.(?P<m>\d{2})\.(?P<d>\d{2})(?:-(?P<n>[1-9]\d*))?$")
_SEMVER = re.compile(
    r"^v?(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*)"
    r"(?:-(?P<pre>[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*))?$"
)

Scheme = Literal["date", "patch", "minor", "major"]


def validate_version(version: str) -> str:
    """Return `version` if valid, else raise `ReleaseError` saying which forms are accepted."""
    if not isinstance(version, str):
        raise ReleaseError(f"release version must be a string, got {type(version).__name__}")
    m = _DATE.match(version)
    if m:
        try:
            date(int(m["y"]), int(m["m"]), int(m["d"]))
        except ValueError as exc:
            raise ReleaseError(f"release version {version!r}: not a real date ({exc})") from exc
        return version
    if re.match(r"^\d{4}\.", version):
        raise ReleaseError(f"release version {version!r}: date-based versions are YYYY.MM.DD or YYYY.MM.DD-N")
    if _SEMVER.match(version):
        return version
    raise ReleaseError(
        f"release version {version!r} is not valid: use semver-like MAJOR.MINOR.PATCH[-pre] "
        "(optionally with a leading 'v') or date-based YYYY.MM.DD[-N]"
    )


def is_version(name: str) -> bool:
    try:
        validate_version(name)
    except ReleaseError:
        return False
    return True


def list_releases(root: Path) -> list[str]:
    """Version folders under `root` (partial builds are hidden dot-folders and never listed)."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and is_version(p.name))


def next_version(root: Path, *, scheme: Scheme = "date", today: date | None = None) -> str:
    """The version a scheduled refresh should write next.

    `date`: today's `YYYY.MM.DD`, or `-2`, `-3`, ... when that day already has releases.
    `patch`/`minor`/`major`: bump the highest existing semver release (first is `0.1.0`).
    """
    existing = set(list_releases(root))
    if scheme == "date":
        base = (today or date.today()).strftime("%Y.%m.%d")
        if base not in existing:
            return base
        n = 2
        while f"{base}-{n}" in existing:
            n += 1
        return f"{base}-{n}"
    semvers = []
    for name in existing:
        m = _SEMVER.match(name)
        if m and not _DATE.match(name):
            semvers.append((int(m["major"]), int(m["minor"]), int(m["patch"])))
    if not semvers:
        return "0.1.0"
    major, minor, patch = max(semvers)
    if scheme == "major":
        return f"{major + 1}.0.0"
    if scheme == "minor":
        return f"{major}.{minor + 1}.0"
    if scheme == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ReleaseError(f"unknown version scheme {scheme!r} (date, patch, minor or major)")
