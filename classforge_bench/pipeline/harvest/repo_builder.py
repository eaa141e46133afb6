"""Build real git repositories with dated commits from a declarative spec.

Used for the bundled offline example corpus and by the tests, so the harvest always runs over
genuine git history (first-seen dates come from commits, not from file metadata).

Spec on disk (one folder per repository):

    <folder>/repo.toml
        full_name = "owner/name"
        default_branch = "main"            # optional
        [[commits]]
        date = "2025-03-01T10:00:00+00:00"
        message = "Add ledger"
        tree = "c1"                        # folder beside repo.toml; its files are written as-is
        delete = ["old.py"]                # optional
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from classforge_bench.pipeline.core.errors import InfrastructureError, InputError
from classforge_bench.pipeline.core.store import write_text

# Bump when the way repositories are built changes, so built copies are rebuilt.
_BUILDER_VERSION = 2


@dataclass
class CommitSpec:
    date: datetime
    message: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "classforge fixture",
        "GIT_AUTHOR_EMAIL": "fixture@classforge.invalid",
        "GIT_COMMITTER_NAME": "classforge fixture",
        "GIT_COMMITTER_EMAIL": "fixture@classforge.invalid",
        "GIT_TERMINAL_PROMPT": "0",
    }
    full_env.update(env or {})
    proc = subprocess.run(["git", *args], cwd=repo, env=full_env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CorpusBuildError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


class CorpusSpecError(InputError):
    """A repository spec folder that cannot be built as written; the message names the file or folder."""


class CorpusBuildError(InfrastructureError):
    """git failed while building a repository from its spec; the message names the command and folder."""


def build_repo(dest: Path, commits: list[CommitSpec], branch: str = "main") -> str:
    """Create `dest` as a git repository holding `commits` in order; returns the head commit."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    _git(dest, "init", "-q", "-b", branch)
    for c in commits:
        for rel in c.delete:
            _git(dest, "rm", "-q", "-r", "--", rel)
        for rel, content in c.files.items():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        _git(dest, "add", "-A")
        stamp = c.date.isoformat()
        _git(
            dest,
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            c.message,
            env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
        )
    return _git(dest, "rev-parse", "HEAD")


def load_spec(folder: Path) -> tuple[str, str, list[CommitSpec]]:
    """Read a spec folder; returns (full_name, branch, commits)."""
    meta_path = Path(folder) / "repo.toml"
    try:
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CorpusSpecError(f"{meta_path}: cannot read repository spec: {exc}") from exc
    commits = []
    for i, c in enumerate(meta.get("commits", [])):
        try:
            files: dict[str, str | bytes] = {}
            if c.get("tree"):
                tree = Path(folder) / c["tree"]
                if not tree.is_dir():
                    raise CorpusSpecError(f"tree folder {c['tree']!r} does not exist")
                files = {p.relative_to(tree).as_posix(): p.read_bytes() for p in _spec_files(tree)}
            commits.append(CommitSpec(_commit_date(c["date"]), c["message"], files, list(c.get("delete", []))))
        except (KeyError, ValueError, TypeError, CorpusSpecError) as exc:
            raise CorpusSpecError(f"{meta_path}: commit #{i + 1} is malformed: {exc}") from exc
    if "full_name" not in meta or not commits:
        raise CorpusSpecError(f"{meta_path}: needs full_name and at least one commit")
    return meta["full_name"], meta.get("default_branch", "main"), commits


def _commit_date(value: object) -> datetime:
    """TOML may hand us a datetime or a string; a date without an offset is UTC, so commit ids
    do not depend on the machine's time zone."""
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _spec_files(folder: Path) -> list[Path]:
    """Files of a spec folder, without the bytecode caches running Python next to it would add."""
    return [
        p
        for p in sorted(Path(folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}
    ]


def materialise_corpus(spec_root: Path, dest_root: Path) -> list[Path]:
    """Build every spec folder under `spec_root` into `dest_root/<owner>__<name>`; returns the repo paths.

    A repository already built from an unchanged spec is left as it is, so re-runs are cheap and
    its commits (and therefore first-seen ids) stay stable.
    """
    built = []
    for folder in sorted(p.parent for p in Path(spec_root).glob("*/repo.toml")):
        full_name, branch, commits = load_spec(folder)
        dest = Path(dest_root) / full_name.replace("/", "__")
        fingerprint = _spec_fingerprint(folder)
        marker = dest / ".git" / "classforge-spec"
        if not (marker.exists() and marker.read_text() == fingerprint):
            if dest.exists() and not marker.exists():
                raise CorpusSpecError(f"{dest} exists and was not built from a spec; refusing to replace it")
            build_repo(dest, commits, branch)
            write_text(marker, fingerprint)  # atomic: a torn marker would match no spec and block a rebuild
        built.append(dest)
    return built


def _spec_fingerprint(folder: Path) -> str:
    h = hashlib.sha256(f"builder-v{_BUILDER_VERSION}".encode())
    for p in _spec_files(folder):
        h.update(p.relative_to(folder).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()
