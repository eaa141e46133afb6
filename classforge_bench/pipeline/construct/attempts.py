"""Per stage, how many answers were good at once and how many only after a repair or re-ask.

The funnel counts keeps and drops; this says what the repair rounds bought, the number a user of a
small local model needs (a model whose skeletons pass only after repair pays twice per candidate).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from pydantic import BaseModel

from classforge_bench.pipeline.core import reasons as R


class FinishedCandidate(Protocol):
    """What the counts read of a finished candidate (build.CandidateResult has it)."""

    compose: Any
    judges: Any
    solution: Any


class StageAttempts(BaseModel):
    first_attempt: int = 0  # good on the first answer
    after_repair: int = 0  # good only after a repair turn (compose, solution) or a re-ask (judge votes)
    failed: int = 0  # still not good after every allowed attempt

    def add(self, ok: bool, attempts: int) -> None:
        if not ok:
            self.failed += 1
        elif attempts <= 1:
            self.first_attempt += 1
        else:
            self.after_repair += 1


def attempt_counts(results: Iterable[FinishedCandidate]) -> dict[str, StageAttempts]:
    """Counts for compose (skeletons), judges (one per vote) and solution, over finished candidates.
    An attempt that never got an answer (a failed call) counts as failed, not as an attempt."""
    counts = {stage: StageAttempts() for stage in (R.COMPOSE, R.JUDGES, R.SOLUTION)}
    for result in results:
        if result.compose is not None and result.compose.attempts:
            counts[R.COMPOSE].add(result.compose.outcome.keep, len(result.compose.attempts))
        if result.judges is not None:
            for vote in result.judges.votes:
                counts[R.JUDGES].add(vote.valid, vote.attempts)
        if result.solution is not None and result.solution.attempts:
            counts[R.SOLUTION].add(result.solution.outcome.keep, len(result.solution.attempts))
    return counts
