"""How an evaluation reports its progress, and why it stops: shared by the runner and its phases."""

from __future__ import annotations

from collections.abc import Callable

from classforge_bench.pipeline.core.errors import InputError

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total): phases "reference", "generation", "execution", "scoring"."""


class EvaluationError(InputError):
    """The evaluation cannot start or go on; the message says why (and which task, if one)."""


class PhaseCounter:
    """Counts one phase's finished items and reports each to `progress` (0 of the total first)."""

    def __init__(self, phase: str, total: int, progress: Progress | None) -> None:
        self.phase, self.total, self.progress, self.done = phase, total, progress, 0
        if progress:
            progress(phase, 0, total)

    def tick(self) -> None:
        self.done += 1
        if self.progress:
            self.progress(self.phase, self.done, self.total)
