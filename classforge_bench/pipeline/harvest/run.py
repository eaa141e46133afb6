"""The harvest stage end to end: sources -> clones -> per-repo shards -> dedup -> snapshot files.

Resumable: each repository's result is a shard written atomically under `<snapshot>/.work/`;
a re-run skips repositories whose shard is at the remote's current head. The snapshot files are
assembled from the shards by streaming, so memory does not grow with the corpus.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from classforge_bench.pipeline.config import HarvestConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import KEEP, Funnel, FunnelReport, Verdict
from classforge_bench.pipeline.core.records import Rejection, RepoRef
from classforge_bench.pipeline.core.store import atomic_open, read_jsonl, write_json, write_jsonl
from classforge_bench.pipeline.harvest.bundles import unpack_bundles
from classforge_bench.pipeline.harvest.clone import CloneFailure, clone_for_scan, remote_head
from classforge_bench.pipeline.harvest.dedup import (
    DedupIndex,
    Origin,
    ReleasedSolution,
    load_earlier_harvest,
    load_earlier_releases,
    load_reference_corpus,
)
from classforge_bench.pipeline.harvest.domains import label_domains
from classforge_bench.pipeline.harvest.github_source import GitHubSearchResult
from classforge_bench.pipeline.harvest.local_source import expand_local_sources, local_repo_ref
from classforge_bench.pipeline.harvest.repo_builder import materialise_corpus
from classforge_bench.pipeline.harvest.scan import RepoShard, scan_checkout

ProgressFn = Callable[[str, int | None], None]  # (what just happened, total if known)


@dataclass
class HarvestSummary:
    snapshot_dir: Path
    repos: int
    classes: int
    rejects: int
    funnel: FunnelReport
    reused_shards: int = 0
    corpora: dict[str, list[str]] | None = None  # what dedup checked against (decontamination.json)


def snapshot_dir(cfg: HarvestConfig) -> Path:
    return Path(cfg.output_root) / cfg.snapshot


def github_search_cached(
    cfg: HarvestConfig, search: Callable[[], GitHubSearchResult], today: date
) -> GitHubSearchResult:
    """Run the GitHub search once per day and settings: a resumed harvest does not re-pay the rate limit."""
    settings = cfg.github.model_dump(mode="json", exclude={"token"}) | {"cutoff": str(cfg.cutoff), "day": str(today)}
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    path = snapshot_dir(cfg) / ".work" / f"github-search-{key}.json"
    if path.exists():
        return GitHubSearchResult.model_validate_json(path.read_text(encoding="utf-8"))
    result = search()
    if not result.failed():
        with atomic_open(path) as fh:
            fh.write(result.model_dump_json())
    return result


def gather_repos(cfg: HarvestConfig, github: GitHubSearchResult | None = None) -> list[RepoRef]:
    """Every repository to harvest: the example specs built into git repos, local sources, and GitHub."""
    locations = list(cfg.local_sources)
    for spec_root in cfg.spec_corpora:
        built = materialise_corpus(spec_root, Path(cfg.clone.workdir).parent / "example-repos")
        locations += [str(p) for p in built]
    if cfg.bundle_sources:
        unpacked = unpack_bundles(cfg.bundle_sources, Path(cfg.clone.workdir).parent / "bundled-repos")
        locations += [str(p) for p in unpacked]
    refs = [local_repo_ref(p) for p in expand_local_sources(locations)] if locations else []
    if github is not None:
        refs += github.repos
    unique: dict[str, RepoRef] = {}
    for r in refs:
        unique.setdefault(r.clone_url, r)
    return sorted(unique.values(), key=lambda r: r.full_name)


def _shard_path(snap: Path, ref: RepoRef) -> Path:
    key = hashlib.sha256(ref.clone_url.encode()).hexdigest()[:16]
    return snap / ".work" / "repos" / f"{key}.json"


def _read_shard(path: Path) -> RepoShard | None:
    try:
        return RepoShard.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # unreadable shard: redo the repository rather than trust it


def harvest_repo(
    ref: RepoRef, cfg: HarvestConfig, snap: Path, on_file: Callable[[str], None] | None = None
) -> tuple[RepoShard, bool]:
    """Clone and scan one repository unless its shard is current; returns (shard, reused)."""
    shard_path = _shard_path(snap, ref)
    funnel: Funnel[RepoRef] = Funnel()
    try:
        head = remote_head(ref.clone_url, ref.full_name, cfg.clone.timeout_s)
        previous = _read_shard(shard_path) if shard_path.exists() else None
        if previous is not None and previous.head_commit == head:
            return previous, True
        checkout = clone_for_scan(ref.clone_url, ref.full_name, cfg.clone, cfg.cutoff, head)
        ref = ref.model_copy(update={"head_commit": head})
        shard = scan_checkout(ref, checkout, cfg.filters, cfg.cutoff, on_file=on_file)
        funnel.record(R.CLONE, ref.full_name, KEEP)
        shard.funnel = funnel.report().merge(shard.funnel)
    except CloneFailure as exc:
        funnel.record(R.CLONE, ref.full_name, Verdict.drop(exc.reason, exc.detail))
        shard = RepoShard(
            repo=ref,
            head_commit=None,
            funnel=funnel.report(),
            rejects=[Rejection(item_id=ref.full_name, stage=R.CLONE, reason=exc.reason, detail=exc.detail)],
        )
    with atomic_open(shard_path) as fh:
        fh.write(shard.model_dump_json())
    return shard, False


def build_dedup_index(
    cfg: HarvestConfig, releases: Mapping[str, Iterable[ReleasedSolution]] | None = None
) -> DedupIndex:
    """`releases`: the tasks of the project's earlier releases by release folder (the edge reads
    `release.output_root` with `classforge_bench.pipeline.release.history.release_solutions`); new classes must not
    copy their solution classes."""
    from classforge_bench.pipeline.formats.hub import cached_dataset

    index = DedupIndex(cfg.dedup)
    for corpus in cfg.dedup.reference_corpora:
        n = load_reference_corpus(index, corpus)
        index.corpora["checked"].append(f"{corpus} ({n} classes)")
    for name in cfg.dedup.reference_datasets:
        folder = cached_dataset(name)
        if folder is None:
            index.corpora["not_checked"].append(
                f"{name} (not in the local Hugging Face cache; download it once to check against it)"
            )
            continue
        n = load_reference_corpus(index, folder)
        index.corpora["checked"].append(f"{name} ({n} classes, Hugging Face cache)")
    earlier = list(cfg.dedup.earlier_harvests)
    root = Path(cfg.output_root)
    if root.is_dir():
        # Every other finished snapshot is an earlier harvest: a refresh never re-emits old classes.
        earlier += [
            p / "classes.jsonl"
            for p in sorted(root.iterdir())
            if p.name != cfg.snapshot and (p / "funnel.json").exists() and (p / "classes.jsonl").exists()
        ]
    for path in earlier:
        n = load_earlier_harvest(index, path, path.parent.name)
        index.corpora["checked"].append(f"snapshot {path.parent.name} ({n} classes)")
    for release_root, solutions in (releases or {}).items():
        by_version = load_earlier_releases(index, solutions)
        index.corpora["checked"] += [f"release {v} ({n} solution classes)" for v, n in by_version.items()] or [
            f"earlier releases (none yet under {release_root})"
        ]
    return index


def assemble_snapshot(
    cfg: HarvestConfig, refs: list[RepoRef], index: DedupIndex, snap: Path, github: GitHubSearchResult | None = None
) -> HarvestSummary:
    """Stream shards (in repository order, so results are deterministic) into the snapshot files."""
    funnel = github.funnel() if github is not None else FunnelReport()
    dedup_funnel: Funnel = Funnel()
    counts = {"classes": 0, "rejects": 0}

    def shards() -> Iterator[RepoShard]:
        for ref in refs:
            shard = _read_shard(_shard_path(snap, ref))
            if shard is not None:
                yield shard

    with (
        atomic_open(snap / "classes.jsonl") as classes_fh,
        atomic_open(snap / "rejects.jsonl") as rejects_fh,
        atomic_open(snap / "repos.jsonl") as repos_fh,
    ):
        for rej in github.rejections() if github is not None else []:
            rejects_fh.write(rej.model_dump_json() + "\n")
            counts["rejects"] += 1
        for shard in shards():
            funnel = funnel.merge(shard.funnel)
            repos_fh.write(shard.repo.model_dump_json() + "\n")
            for rej in shard.rejects:
                rejects_fh.write(rej.model_dump_json() + "\n")
                counts["rejects"] += 1

            for cls in shard.classes:
                item_id = f"{cls.repo}:{cls.path}::{cls.class_name}"
                verdict = index.check_and_add(cls.source, Origin("harvest", item_id), cls.id)
                if not dedup_funnel.record(R.DEDUP, cls.id, verdict):
                    rej = Rejection(item_id=item_id, stage=R.DEDUP, reason=verdict.reason, detail=verdict.detail)
                    rejects_fh.write(rej.model_dump_json() + "\n")
                    counts["rejects"] += 1
                    continue
                cls.domains = label_domains(
                    cls.class_name,
                    [cls.docstring or ""] + [m.docstring or "" for m in cls.methods],
                    shard.repo.domains,
                    where=f"{cls.repo}/{cls.path}",
                )
                classes_fh.write(cls.model_dump_json() + "\n")
                counts["classes"] += 1
    funnel = funnel.merge(dedup_funnel.report())
    write_json(snap / "funnel.json", funnel.model_dump())
    write_json(snap / "decontamination.json", index.corpora)
    if github is not None:
        write_jsonl(snap / "github_queries.jsonl", github.queries)
    return HarvestSummary(snap, len(refs), counts["classes"], counts["rejects"], funnel, corpora=index.corpora)


def clone_failures(snap: Path) -> list[Rejection]:
    """The repositories of a snapshot that could not be cloned, with git's message (the edge says them out loud)."""
    path = snap / "rejects.jsonl"
    return [r for r in read_jsonl(path, Rejection) if r.stage == R.CLONE] if path.is_file() else []


def _reused_in_worker(ref: RepoRef, cfg: HarvestConfig, snap: Path) -> bool:
    """Pool entry point: the shard goes to disk, only the reuse flag comes back."""
    return harvest_repo(ref, cfg, snap)[1]


def harvest_all(refs: list[RepoRef], cfg: HarvestConfig, snap: Path, progress: ProgressFn | None = None) -> int:
    """Harvest every repository, `cfg.workers` processes at a time (repositories are independent);
    returns how many shards were reused."""
    workers = min(cfg.workers or os.cpu_count() or 1, len(refs))
    if workers <= 1:
        reused = 0
        for ref in refs:
            reused += harvest_repo(ref, cfg, snap)[1]
            if progress is not None:
                progress(ref.full_name, len(refs))
        return reused
    # fork is cheapest and needs no importable __main__, but forking a threaded process (a Prefect
    # worker) can deadlock on a lock another thread held; then a fork server starts clean workers.
    context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(_reused_in_worker, ref, cfg, snap): ref for ref in refs}
        reused = 0
        for future in as_completed(futures):
            reused += future.result()
            if progress is not None:
                progress(futures[future].full_name, len(refs))
    return reused


def run_harvest(
    cfg: HarvestConfig,
    *,
    github_search: Callable[[], GitHubSearchResult] | None = None,
    progress: ProgressFn | None = None,
    today: date | None = None,
    releases: Mapping[str, Iterable[ReleasedSolution]] | None = None,
) -> HarvestSummary:
    """`github_search` is injected by the edge (CLI, flow) so the library never builds network clients itself;
    `releases` as in `build_dedup_index`."""
    snap = snapshot_dir(cfg)
    github = github_search_cached(cfg, github_search, today or date.today()) if github_search is not None else None
    refs = gather_repos(cfg, github)
    index = build_dedup_index(cfg, releases)
    reused = harvest_all(refs, cfg, snap, progress)
    summary = assemble_snapshot(cfg, refs, index, snap, github)
    summary.reused_shards = reused
    return summary
