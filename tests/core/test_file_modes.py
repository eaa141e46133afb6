"""Output files follow the user's umask, as files made with open() do: 0644 under umask 022 (so a
group or a web server can read results), 0600 under 077. mkstemp/mkdtemp alone give owner-only."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from classforge_bench.pipeline.core.store import write_json, write_jsonl, write_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "release"))
from release_taskgen import as_tasks, make_tasks, release_kwargs  # noqa: E402


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o027, 0o640)])
def test_atomic_writes_follow_the_umask(tmp_path: Path, mask: int, expected: int) -> None:
    with umask(mask):
        write_text(tmp_path / "a.md", "x")
        write_json(tmp_path / "results" / "b.json", {"a": 1})
        write_jsonl(tmp_path / "harvested" / "c.jsonl", [{"a": 1}])
    for name in ("a.md", "results/b.json", "harvested/c.jsonl"):
        assert _mode(tmp_path / name) == expected, (name, oct(_mode(tmp_path / name)))


def test_a_release_follows_the_umask_too(tmp_path: Path) -> None:
    from classforge_bench.pipeline.release.writer import write_release

    with umask(0o027):
        release = write_release(as_tasks(make_tasks()), **release_kwargs(output_root=tmp_path / "releases"))
    assert _mode(release) == 0o750
    entries = list(release.rglob("*"))
    assert entries and all(_mode(p) == (0o750 if p.is_dir() else 0o640) for p in entries), sorted(
        (str(p.relative_to(release)), oct(_mode(p))) for p in entries
    )


def test_a_report_is_readable_by_the_group_under_umask_022(tmp_path: Path) -> None:
    from classforge_bench.pipeline.release.report import write_report
    from classforge_bench.pipeline.release.writer import write_release

    with umask(0o022):
        release = write_release(as_tasks(make_tasks()), **release_kwargs(output_root=tmp_path / "releases"))
        result = write_report(release, tmp_path / "reports")
    written = [result.report_path, *result.plots.values()]
    assert all(_mode(Path(p)) == 0o644 for p in written), [(str(p), oct(_mode(Path(p)))) for p in written]


def test_the_umask_is_read_without_changing_it() -> None:
    from classforge_bench.pipeline.core.store import current_umask

    with umask(0o027):
        assert current_umask() == 0o027
        assert current_umask() == 0o027
