"""Helpers shared by the sandbox tests (a uniquely named module: every test directory has a conftest)."""

from __future__ import annotations

import os
import secrets

from classforge_bench.pipeline.config import SandboxConfig

# A uid range of our own, so "no process left behind" can be checked by uid.
TEST_UID_BASE = 1_600_000_000 + secrets.randbelow(90_000_000)
TEST_UID_SPAN = 100_000


def make_config(**overrides) -> SandboxConfig:
    values = dict(
        wall_limit_s=20.0,
        grace_s=1.0,
        memory_mb=1024,
        max_processes=32,
        uid_base=TEST_UID_BASE,
        uid_span=TEST_UID_SPAN,
        traceback_cap_chars=1000,
    )
    values.update(overrides)
    return SandboxConfig(**values)


def leftover_processes(marker: str | None = None) -> list[str]:
    """Processes of the test uid range, or whose command line contains `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                status = dict(line.split(":", 1) for line in fh if ":" in line)
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, ValueError):
            continue
        uid = int(status["Uid"].split()[0])
        if status["State"].strip().startswith("Z"):
            continue
        if TEST_UID_BASE <= uid < TEST_UID_BASE + TEST_UID_SPAN or (marker and marker in cmdline):
            found.append(f"{entry} uid={uid} {cmdline[:120]}")
    return found
