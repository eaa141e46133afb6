"""Scan one checkout: files -> candidate classes -> filters -> provenance. One repository's shard."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

from pydantic import BaseModel, Field

from pipeline.config import FilterConfig
from pipeline.core.funnel import Funnel, FunnelReport, RejectionList, Verdict
from pipeline.harvest import files
from pipeline.harvest import confine
from pipeline.harvest.candidates import Candidate, list_candidates, to_record
from pipeline.harvest.filters import ImportPurity, ReferenceCompleteness, Structure, Testability
from pipeline.harvest.provenance import History, PostCutoff
from pipeline.core.records import HarvestedClass, Rejection, RepoRef
from pipeline.core import reasons as R


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


def scan_checkout(ref: RepoRef, checkout: Path, cfg: FilterConfig, cutoff: date,
                  on_file: Callable[[str], None] | None = None) -> RepoShard:
    sink = RejectionList()
    funnel: Funnel = Funnel(sink=sink)
    listing = files.list_checkout(checkout)
    structure = Structure(cfg)
    # Structure first: it needs only the class statement, and the scope analysis the others need
    # is the most expensive step of the harvest.
    filters = [structure, ImportPurity(listing.modules), ReferenceCompleteness(), Testability()]
    provenance = PostCutoff(History(checkout), cutoff)
    kept: list[HarvestedClass] = []
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
        if not funnel.record(R.COMPILE, f.item_id, files.parse_and_compile(f, cfg, lambda node: structure.fits(node).keep)):
            continue
        for found in list_candidates(ref, rel, f.text, f.module, f.index):
            cand = _judge(funnel, filters, found)
            if cand is None:
                continue
            verdict, seen = provenance.check_first_seen(rel, cand.name, cand.source)
            if not funnel.record(R.PROVENANCE, cand.item_id, verdict):
                continue
            record = to_record(cand)
            record.first_seen_commit = seen.commit
            record.first_seen_date = seen.authored
            kept.append(record)
    return RepoShard(repo=ref, head_commit=ref.head_commit, classes=kept, rejects=sink.rejections, funnel=funnel.report())
