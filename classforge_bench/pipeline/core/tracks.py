"""The construction tracks by name: the one spelling the configuration, the command line, a task
record and a release row use (a small module of its own, so the configuration and the CLI's
option can name a track without importing the task model)."""

from __future__ import annotations

from enum import StrEnum


class Track(StrEnum):
    """How classforge built a task: by fusing two harvested classes with LLMs (composition), or
    from one harvested class as its authors wrote it (real-source). A `str`, so a release row
    keeps the plain value ("real-source") and a configuration file names it the same way."""

    COMPOSITION = "composition"
    REAL_SOURCE = "real-source"
