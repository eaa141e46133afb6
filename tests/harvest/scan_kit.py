"""Scanning one repository with the harvest's filters, and the drop reasons it gave: shared by the scan and precision tests."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from classforge_bench.pipeline.config import CloneConfig, FilterConfig
from classforge_bench.pipeline.harvest.clone import clone_for_scan
from classforge_bench.pipeline.harvest.local_source import local_repo_ref
from classforge_bench.pipeline.harvest.scan import scan_checkout

CUTOFF = date(2025, 1, 1)


def scan(repo: Path, tmp_path: Path, cfg: FilterConfig | None = None):
    ref = local_repo_ref(repo)
    checkout = clone_for_scan(ref.clone_url, ref.full_name, CloneConfig(workdir=tmp_path / "clones"), CUTOFF)
    ref.head_commit = local_repo_ref(repo).head_commit
    return scan_checkout(ref, checkout, cfg or FilterConfig(), CUTOFF)


def reasons(shard) -> dict[str, str]:
    """item id -> reason code of every rejection, but files without a class (helpers, `__init__`,
    constants: most files of a repository), which `no_class_files` lists."""
    return {r.item_id: r.reason for r in shard.rejects if r.reason != "no-top-level-class"}
