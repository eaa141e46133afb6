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
    """A sample's limit from its reference's run: the CPU time scaled (a busy machine stretches
    wall time, not CPU time: a reference timed under load once lifted its task's limit to the cap),
    and never below the reference's own wall time (within the cap), so a correct answer that waits
    (sleeps, I/O) as long as the reference does is not cut short. Without a CPU time the wall time
    is scaled, as before."""
    if cpu_s is None:
        return scaled_limit(wall_s, config)
    return max(scaled_limit(cpu_s, config), min(config.scale_cap_s, wall_s))
