"""Time limits: the fixed construction limit, and an evaluation limit scaled from the reference."""

from __future__ import annotations

from pipeline.config import SandboxConfig


def scaled_limit(reference_s: float, config: SandboxConfig) -> float:
    """factor x the reference solution's measured time, at least the floor (slow machines do not
    fail correct code) and at most the cap (a reference timed under load cannot make a runaway
    sample cost minutes). A cap below the floor is the floor."""
    if reference_s < 0:
        raise ValueError(f"reference time must be >= 0, got {reference_s}")
    return max(config.scale_floor_s, min(config.scale_cap_s, config.scale_factor * reference_s))
