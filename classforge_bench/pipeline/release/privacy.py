"""Whether a release is a private benchmark: built with code whose repository declares no licence.

Read from the release's own config record (manifest.json), so the card and `classforge export`
decide from what the build did, not from the exporter's settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PRIVATE_NOTE = (
    "**Private benchmark.** This release was built with `construction.real_source.admit_unlicensed`: "
    "it may contain code from repositories that declare no licence, which may not be redistributed. "
    "Keep it private; `classforge export` refuses to upload it."
)


def is_private(config: Mapping[str, Any] | None) -> bool:
    """A real-source build that admitted unlicensed repositories."""
    construction = (config or {}).get("construction") or {}
    real_source = construction.get("real_source") or {}
    return construction.get("track") == "real-source" and bool(real_source.get("admit_unlicensed"))
