"""The one stage contract: every filter or gate answers keep, or drop with a named reason.

The counts of those answers, per stage and reason, are the funnel report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, Field, model_validator

from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.records import Rejection

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)


@dataclass(frozen=True)
class Verdict:
    keep: bool
    reason: str = ""
    detail: str = ""

    @classmethod
    def kept(cls) -> Verdict:
        return cls(True)

    @classmethod
    def drop(cls, reason: str, detail: str = "") -> Verdict:
        if not reason:
            raise ValueError("a drop needs a reason code")
        if not reasons.is_registered(reason):
            raise ValueError(f"reason code {reason!r} is not registered in classforge_bench/pipeline/core/reasons.py")
        return cls(False, reason, detail)


KEEP = Verdict.kept()


class Filter(Protocol[T_contra]):
    """A named check over one item."""

    name: str

    def check(self, item: T_contra) -> Verdict: ...


class StageCounts(BaseModel):
    seen: int = 0
    kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)


def in_pipeline_order(stages: dict[str, StageCounts]) -> dict[str, StageCounts]:
    """The stages in `reasons.PIPELINE_ORDER`; a stage it does not name keeps its relative place, after the rest.

    The one order every output shows: a report's stages arrive in whatever order shards, merges or a
    sorted-keys funnel.json give them."""
    known = {stage: i for i, stage in enumerate(reasons.PIPELINE_ORDER)}
    return dict(sorted(stages.items(), key=lambda kv: known.get(kv[0], len(known))))


class FunnelReport(BaseModel):
    """Per-stage counts, always in pipeline order (`in_pipeline_order`), whoever built or read them."""

    stages: dict[str, StageCounts] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _pipeline_order(self) -> FunnelReport:
        # Assigning through __dict__: a validate_assignment model would re-enter this validator.
        self.__dict__["stages"] = in_pipeline_order(self.stages)
        return self

    def merge(self, other: FunnelReport) -> FunnelReport:
        merged = FunnelReport(stages={k: v.model_copy(deep=True) for k, v in self.stages.items()})
        for name, counts in other.stages.items():
            mine = merged.stages.setdefault(name, StageCounts())
            mine.seen += counts.seen
            mine.kept += counts.kept
            for reason, n in counts.dropped.items():
                mine.dropped[reason] = mine.dropped.get(reason, 0) + n
        return FunnelReport(stages=merged.stages)


@dataclass
class Funnel(Generic[T]):
    """Counts verdicts as they happen and hands each drop to a rejection sink."""

    sink: RejectionSink | None = None
    _seen: Counter = field(default_factory=Counter)
    _kept: Counter = field(default_factory=Counter)
    _dropped: dict[str, Counter] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)

    def _touch(self, stage: str) -> None:
        if stage not in self._seen and stage not in self._order:
            self._order.append(stage)

    def record(self, stage: str, item_id: str, verdict: Verdict) -> bool:
        self._touch(stage)
        self._seen[stage] += 1
        if verdict.keep:
            self._kept[stage] += 1
            return True
        self._dropped.setdefault(stage, Counter())[verdict.reason] += 1
        if self.sink is not None:
            self.sink.reject(Rejection(item_id=item_id, stage=stage, reason=verdict.reason, detail=verdict.detail))
        return False

    def apply(self, filt: Filter[T], item: T, item_id: str) -> bool:
        return self.record(filt.name, item_id, filt.check(item))

    def report(self) -> FunnelReport:
        return FunnelReport(
            stages={
                s: StageCounts(seen=self._seen[s], kept=self._kept[s], dropped=dict(self._dropped.get(s, {})))
                for s in self._order
            }
        )


class RejectionSink(Protocol):
    def reject(self, rejection: Rejection) -> None: ...


class RejectionList:
    """A sink that keeps every rejection in memory, for the caller to write where it belongs."""

    def __init__(self) -> None:
        self.rejections: list[Rejection] = []

    def reject(self, rejection: Rejection) -> None:
        self.rejections.append(rejection)
