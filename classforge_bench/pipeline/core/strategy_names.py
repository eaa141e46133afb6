"""The evaluator's generation strategy names, in a module that imports nothing, so the command line
can offer them as choices without loading the configuration models (`classforge --help` stays fast)."""

from __future__ import annotations

from typing import Literal

EvalStrategy = Literal["holistic", "incremental", "compositional", "bottom_up", "top_down"]
"""The evaluator's generation strategies (`classforge_bench.benchmark.strategies.STRATEGIES`; a test keeps the two equal)."""
