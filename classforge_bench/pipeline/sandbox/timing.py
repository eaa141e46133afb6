"""Time limits: the fixed construction limit, and an evaluation limit scaled from the reference."""

from __future__ import annotations

from classforge_bench.pipeline.config import SandboxConfig


def scaled_limit(reference_s: float, config: SandboxConfig) -> float:
    """factor x the reference solution's measured time, at least the floor (slow machines do not
    fail correct code) and at most the cap (a reference timed under load cannot make a runaway
    sample cost minutes). A cap below the floor is the floor."""
    if reference_s < 0:
        raise ValueError(f"reference time must be >= 0, got {reference_s}")
    return max(config.scale_floor_s, min(config.scale_cap_s, config.scale_factor * reference_s))


def evaluation_limit(wall_s: float, cpu_s: float | None, config: SandboxConfig) -> float:
    """A sample's limit from its reference's run: the reference's CPU time scaled, in CPU time (the
    evaluator enforces it on the CPU time of the runner's process tree, `SuiteRequest.wall_ceiling_s`),
    so neither the reference's timing nor the sample's run moves with the machine's load. The
    reference's wall time no longer counts (it does move with load); an answer that waits rather
    than computes is bounded by the wall ceiling instead. Without a CPU time (a backend that cannot
    measure it) the wall time is scaled, as before."""
    return scaled_limit(wall_s if cpu_s is None else cpu_s, config)
