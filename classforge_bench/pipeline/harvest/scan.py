"""Scan one checkout: files -> candidate classes -> filters -> provenance. One repository's shard."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from classforge_bench.pipeline.config import FilterConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Funnel, FunnelReport, RejectionList, Verdict
from classforge_bench.pipeline.core.records import HarvestedClass, Rejection, RepoRef
from classforge_bench.pipeline.harvest import confine, files
from classforge_bench.pipeline.harvest.candidates import Candidate, list_candidates, to_record
from classforge_bench.pipeline.harvest.filters import ImportPurity, ReferenceCompleteness, Structure, Testability
from classforge_bench.pipeline.harvest.provenance import History, PostCutoff
from classforge_bench.pipeline.harvest.seeds import collect_seeds


class RepoShard(BaseModel):
    """Everything one repository contributed; written atomically, the unit of resume."""

    repo: RepoRef
    head_commit: str | None
    classes: list[HarvestedClass] = Field(default_factory=list)
    rejects: list[Rejection] = Field(default_factory=list)
    funnel: FunnelReport = Field(default_factory=FunnelReport)


def _judge(funnel: Funnel, filters: list, cand: Candidate) -> Candidate | None:
    """The class filters in order (the last one is testability); returns the class to keep (maybe
    without its interactive methods, see `confine`) or None."""
    *rules, testability = filters
    try:
        if not all(funnel.apply(flt, cand, cand.item_id) for flt in rules):
            return None
        verdict = testability.check(cand)
        if verdict.reason in (R.INTERACTIVE_INPUT, R.TERMINAL_CONTROL):
            cand, verdict = confine.cut_interactive(cand, filters, verdict)
    except RecursionError:
        funnel.record(R.REFERENCES, cand.item_id, Verdict.drop(R.TOO_DEEPLY_NESTED, "resolver recursion"))
        return None
    return cand if funnel.record(testability.name, cand.item_id, verdict) else None


_YOUNG_THRESHOLD = 20_000
_relaxed: dict[str, Any] = {"depth": 0, "saved": (0, 0, 0)}
_relaxed_lock = threading.Lock()


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """A scan allocates millions of AST nodes that die young and form no cycles. At the default
    threshold (a collection every 700 allocations, and every tenth one walks the older generations
    too) the collector cost 15% of the scan's CPU on 17 real repositories; cycles are still
    collected, only less often. Nested or concurrent scans restore the threshold once, at the end."""
    with _relaxed_lock:
        if _relaxed["depth"] == 0:
            _relaxed["saved"] = gc.get_threshold()
            young, *older = _relaxed["saved"]
            if 0 < young < _YOUNG_THRESHOLD:  # 0: automatic collection is off, and stays off
                gc.set_threshold(_YOUNG_THRESHOLD, *older)
        _relaxed["depth"] += 1
    try:
        yield
    finally:
        with _relaxed_lock:
            _relaxed["depth"] -= 1
            if _relaxed["depth"] == 0:
                gc.set_threshold(*_relaxed["saved"])


def scan_checkout(
    ref: RepoRef, checkout: Path, cfg: FilterConfig, cutoff: date, on_file: Callable[[str], None] | None = None
) -> RepoShard:
    with _fewer_collections():
        return _scan(ref, checkout, cfg, cutoff, on_file)


def _scan(
    ref: RepoRef, checkout: Path, cfg: FilterConfig, cutoff: date, on_file: Callable[[str], None] | None
) -> RepoShard:
    sink = RejectionList()
    funnel: Funnel = Funnel(sink=sink)
    listing = files.list_checkout(checkout)
    structure = Structure(cfg)
    # Structure first: it needs only the class statement, and the scope analysis the others need
    # is the most expensive step of the harvest.
    filters = [structure, ImportPurity(listing.modules), ReferenceCompleteness(), Testability()]
    survivors: list[tuple[Candidate, int]] = []  # (class that reaches provenance, rejections before it)
    for rel in listing.linked_dirs:
        funnel.record(R.SELECT, f"{ref.full_name}:{rel}", files.select(rel, checkout / rel, checkout))
    for rel, abspath in listing.python_files:
        if on_file is not None:
            on_file(rel)
        f = files.SourceFile(ref.full_name, rel, abspath)
        if not funnel.record(R.SELECT, f.item_id, files.select(rel, abspath, checkout)):
            continue
        if not funnel.record(R.CONTENT, f.item_id, files.read_content(f, cfg)):
            continue
        if not funnel.record(
            R.COMPILE, f.item_id, files.parse_and_compile(f, cfg, lambda node: structure.fits(node).keep)
        ):
            continue
        assert f.text is not None and f.module is not None  # a file that compiled was read and parsed
        for found in list_candidates(ref, rel, f.text, f.module, f.index):
            cand = _judge(funnel, filters, found)
            if cand is not None:
                survivors.append((cand, len(sink.rejections)))
    kept = _with_provenance(survivors, checkout, cutoff, funnel, sink)
    collect_seeds(checkout, listing, kept)
    return RepoShard(
        repo=ref, head_commit=ref.head_commit, classes=kept, rejects=sink.rejections, funnel=funnel.report()
    )


def _with_provenance(
    survivors: list[tuple[Candidate, int]], checkout: Path, cutoff: date, funnel: Funnel, sink: RejectionList
) -> list[HarvestedClass]:
    """Provenance last, once every class that reaches it is known: one history walk limited to their
    names. Each survivor carries where its rejection stood in the scan, so the rejections keep the
    order of a scan that asked class by class."""
    if not survivors:
        return []
    provenance = PostCutoff(History(checkout, names=[c.name for c, _ in survivors]), cutoff)
    kept: list[HarvestedClass] = []
    moved = 0
    for cand, position in survivors:
        verdict, seen = provenance.check_first_seen(cand.path, cand.name, cand.source)
        if not funnel.record(R.PROVENANCE, cand.item_id, verdict):
            sink.rejections.insert(position + moved, sink.rejections.pop())
            moved += 1
            continue
        assert seen is not None  # a kept provenance verdict comes with the first commit
        record = to_record(cand)
        record.first_seen_commit = seen.commit
        record.first_seen_date = seen.authored
        kept.append(record)
    return kept
