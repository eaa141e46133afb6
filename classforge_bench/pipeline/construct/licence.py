"""Real-source track, stage `license`: which source licences a build admits.

The default admits the permissive SPDX ids of `construction.real_source.license_allow` only. A
repository that declares no licence (or NOASSERTION) is admitted only when the config says so
explicitly (`admit_unlicensed`): its code may not be redistributed, so such a build is a private
benchmark, marked so on its card (`release/privacy.py`) and refused by `classforge export`.
"""

from __future__ import annotations

from classforge_bench.pipeline.config import RealSourceConfig
from classforge_bench.pipeline.construct.common import StageOutcome
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.records import HarvestedClass

UNLICENSED = ("", "NOASSERTION")  # what the harvest records when a repository states no licence


def licence_outcome(hc: HarvestedClass, rs: RealSourceConfig) -> StageOutcome:
    """Keep or drop one class on its repository's licence."""
    spdx = hc.license_spdx or ""
    if spdx in UNLICENSED:
        if rs.admit_unlicensed:
            return StageOutcome.kept(R.LICENSE)
        return StageOutcome.drop(R.LICENSE, R.NO_LICENSE, f"{hc.repo} declares no licence")
    if spdx not in rs.license_allow:
        return StageOutcome.drop(R.LICENSE, R.LICENSE_NOT_ALLOWED, f"{hc.repo}: {spdx}")
    return StageOutcome.kept(R.LICENSE)
