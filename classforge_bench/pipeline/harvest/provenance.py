"""When did a class first appear? After HumanEvo: post-cutoff is a property of the code, not of
the repository, so a class first committed before the cutoff is dropped even in a young repo.

A class is its file's path and its name: its first-seen commit is the first one adding `class
<Name>` to that file or to an earlier name of it (renames and moves are followed back through
history), or adding the same code (most of its lines, not merely its name) to another file it
was moved from. An unrelated older class of the same name elsewhere does not count.

The clone holds history back to the cutoff only (`shallow_since`). A class that is already
present in a shallow boundary commit may predate it, so the repository is deepened by one
commit and asked again before we decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path

import git

from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import KEEP, Verdict
from classforge_bench.pipeline.harvest.clone import GIT_ENV

_ADDED_CLASS = re.compile(r"^\+class\s+([A-Za-z_][A-Za-z0-9_]*)")
_COMMIT = "@@commit "
# Share of an earlier class's added lines that must reappear for it to count as the same code moved
# (not merely the same name): a moved and edited class keeps most lines, an unrelated one few.
SAME_CODE = 0.5


@dataclass(frozen=True)
class FirstSeen:
    commit: str
    authored: datetime
    committed: datetime


@dataclass(frozen=True)
class _Added:
    """One commit adding a top-level `class <Name>` line to one file, with the lines it added."""

    seen: FirstSeen
    path: str
    lines: frozenset[str]


def _code_lines(text: str) -> frozenset[str]:
    return frozenset(s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith("#"))


class History:
    """Git history questions about one checkout."""

    def __init__(self, checkout: Path, timeout_s: float = 120.0, names: Iterable[str] | None = None):
        """`names`: the only classes it will be asked about (None: any). The log then shows only the
        files whose diff adds or removes one of their `class` lines, and every such diff in full, so
        each of these names gets exactly the events the unrestricted walk finds, at a fraction of
        the output to read (on a large repository, megabytes of other classes' diffs)."""
        self.repo = git.Repo(checkout)
        self.timeout_s = timeout_s
        self._names = None if names is None else sorted(set(names))
        self._deepened = False
        self._added: dict[str, list[_Added]] | None = None
        self._renames: list[tuple[str, str]] | None = None  # (old path, new path), oldest first

    def _shallow_commits(self) -> set[str]:
        shallow = Path(self.repo.git_dir) / "shallow"
        return set(shallow.read_text().split()) if shallow.exists() else set()

    def _git_log(self, *args: str) -> str:
        # Classes live in .py files only: limiting the walk to them spares git diffing notebooks,
        # data and assets, which in real repositories is most of the log's cost.
        return self.repo.git.log(
            *args,
            "--no-color",
            "--format=" + _COMMIT + "%H %at %ct",
            "HEAD",
            "--",
            "*.py",
            env=GIT_ENV,
            kill_after_timeout=self.timeout_s,
        )

    def _scan(self) -> None:
        """Every commit adding a top-level `class <Name>` line (with the file and the lines it added),
        and every rename, each in one log walk."""
        out = self._git_log("-G", self._class_line_pattern(), "--reverse", "-p", "-U0", "-M")
        added: dict[str, list[_Added]] = {}
        current: FirstSeen | None = None
        path = ""
        block: tuple[str, list[str]] | None = None  # (class name, its added lines) while inside one

        def close() -> None:
            if block is not None and current is not None:
                added.setdefault(block[0], []).append(_Added(current, path, _code_lines("\n".join(block[1]))))

        utc = UTC
        # Dispatch on the first character: the log runs to millions of lines on a large repository,
        # most of them removed lines ("-") that nothing here reads.
        for line in out.splitlines():
            head = line[:1]
            if head == "+":
                if line.startswith("+++ "):
                    close()
                    block = None
                    path = line[6:] if line.startswith("+++ b/") else ""
                elif line.startswith("+class"):
                    close()
                    match = _ADDED_CLASS.match(line)
                    block = (match.group(1), [line[1:]]) if match else None
                elif block is not None:
                    if len(line) > 1 and not line[1].isspace() and line[1] not in "#)]}":
                        close()  # the next top-level statement ends the class
                        block = None
                    else:
                        block[1].append(line[1:])
            elif head == "@" or head == "d":
                close()
                block = None
                if line.startswith(_COMMIT):
                    sha, at, ct = line.split()[1:4]
                    current = FirstSeen(sha, datetime.fromtimestamp(int(at), utc), datetime.fromtimestamp(int(ct), utc))
        close()
        self._added = added
        self._renames = None

    def _class_line_pattern(self) -> str:
        if self._names is None:
            return r"^class[[:space:]]"
        # A name followed by anything but an identifier character: a superset of what _ADDED_CLASS
        # reads as that name, so no event of it is missed (extra files shown only add other names).
        alternatives = "|".join(re.escape(n) for n in self._names)
        return rf"^class[[:space:]]+({alternatives})([^A-Za-z0-9_]|$)"

    def _load_renames(self) -> list[tuple[str, str]]:
        if self._renames is None:
            renames: list[tuple[str, str]] = []
            for line in self._git_log("--reverse", "-M", "--diff-filter=R", "--name-status").splitlines():
                if line.startswith("R"):
                    _status, old, new = line.split("\t")
                    renames.append((old, new))
            self._renames = renames
        return self._renames

    def _lineage(self, path: str) -> set[str]:
        """`path` and every path the file had before, following renames and moves back in time."""
        names = {path}
        for old, new in reversed(self._load_renames()):
            if new in names:
                names.add(old)
        return names

    def _find(self, path: str, class_name: str, source: str) -> FirstSeen | None:
        assert self._added is not None
        events = self._added.get(class_name, [])
        code = _code_lines(source)
        # Renames are read from history only when this file's own name and the code do not settle it.
        for lineage in ({path}, None):
            paths = lineage if lineage is not None else self._lineage(path)
            for event in events:  # oldest first
                if event.path in paths:
                    return event.seen
                # The same code added earlier under another path: a class moved between files.
                if event.lines and len(event.lines & code) >= SAME_CODE * len(event.lines):
                    return event.seen
        return None

    def first_seen(self, path: str, class_name: str, source: str) -> FirstSeen | None:
        """The first commit that added this class: in this file or an earlier name of it, or the
        same code (not merely the same name) in another file it was moved from."""
        assert self._names is None or class_name in self._names, f"history restricted to other names than {class_name}"
        if self._added is None:
            self._scan()
        found = self._find(path, class_name, source)
        if found is not None and found.commit in self._shallow_commits() and not self._deepened:
            # Present at the history boundary: fetch one more commit of history and ask again.
            self._deepened = True
            try:
                self.repo.git.fetch("--deepen=1", env=GIT_ENV, kill_after_timeout=self.timeout_s)
            except git.GitCommandError:
                return found
            self._scan()
            found = self._find(path, class_name, source)
        return found

    def is_boundary(self, sha: str) -> bool:
        return sha in self._shallow_commits()


@dataclass
class PostCutoff:
    """Keep a class only if its definition first appeared on or after the cutoff."""

    history: History
    cutoff: date
    name: str = R.PROVENANCE

    def check_first_seen(self, path: str, class_name: str, source: str) -> tuple[Verdict, FirstSeen | None]:
        seen = self.history.first_seen(path, class_name, source)
        if seen is None:
            return Verdict.drop(R.NO_HISTORY, f"no commit adds 'class {class_name}' to {path}"), None
        limit = datetime.combine(self.cutoff, time.min, tzinfo=UTC)
        # Rebases keep the author date and amends keep neither honest; the earlier one is the safer claim.
        earliest = min(seen.authored, seen.committed)
        if earliest < limit:
            return Verdict.drop(R.PRE_CUTOFF, f"first seen {earliest.date()} in {seen.commit[:12]}"), seen
        if self.history.is_boundary(seen.commit):
            return Verdict.drop(
                R.PRE_CUTOFF, f"present at the history boundary {seen.commit[:12]}; older history unavailable"
            ), seen
        return KEEP, seen
