"""Git bundles as a harvest source: the real repositories shipped in examples/real-repos."""

from __future__ import annotations

from pathlib import Path

import pytest

from classforge_bench.pipeline.config import HarvestConfig
from classforge_bench.pipeline.harvest.bundles import unpack_bundle
from classforge_bench.pipeline.harvest.local_source import SourceError
from classforge_bench.pipeline.harvest.run import gather_repos

REPOS = Path(__file__).resolve().parents[2] / "examples" / "real-repos"


def test_shipped_bundles_are_repositories_with_history_and_licences(tmp_path):
    cfg = HarvestConfig(bundle_sources=[REPOS], clone={"workdir": tmp_path / "clones"})
    refs = {r.full_name: r for r in gather_repos(cfg)}
    assert set(refs) == {"kimo26/textcounter", "liminma/rate-limiter", "security-use/security-use"}
    assert {r.license_spdx for r in refs.values()} == {"MIT"}
    # first commits after the cutoff, read from the bundled history
    assert str(refs["liminma/rate-limiter"].created_at.date()) == "2025-05-05"
    assert refs["security-use/security-use"].head_commit == "9655b4fa110085bb6eac972bbb53120ee6fefda2"
    assert (tmp_path / "bundled-repos" / "kimo26__textcounter.git" / "classforge-bundle").is_file()


def test_an_unpacked_bundle_is_reused_and_a_bad_one_is_one_line(tmp_path):
    bundle = REPOS / "liminma__rate-limiter.bundle"
    first = unpack_bundle(bundle, tmp_path)
    (first / "sentinel").write_text("kept")
    assert unpack_bundle(bundle, tmp_path) == first and (first / "sentinel").exists()
    broken = tmp_path / "broken.bundle"
    broken.write_text("not a bundle")
    with pytest.raises(SourceError, match="broken.bundle: not a readable git bundle"):
        unpack_bundle(broken, tmp_path / "out")
    with pytest.raises(SourceError, match="neither a .bundle file nor a folder"):
        gather_repos(HarvestConfig(bundle_sources=[tmp_path / "nope.txt"], clone={"workdir": tmp_path / "c"}))
