"""The bundled example corpus harvests exactly as examples/corpus/EXPECTED.md says."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from classforge_bench.pipeline.config import CloneConfig, DedupConfig, HarvestConfig
from classforge_bench.pipeline.core.records import HarvestedClass, Rejection
from classforge_bench.pipeline.core.store import read_jsonl
from classforge_bench.pipeline.harvest.run import run_harvest

ROOT = Path(__file__).resolve().parents[2]
CLASSEVAL = ROOT.parent / "shared" / "data" / "classeval" / "ClassEval_data.json"

KEPT = {
    "ShoppingCart",
    "InvoiceCalculator",
    "CsvLogRotator",
    "LibraryInventory",
    "UrlRouter",
    "ResponseCache",
    "JsonPathQuery",
    "QueryBuilder",
    "PasswordVault",
    "TextTokenizer",
    "KeywordExtractor",
    "MarkdownTableFormatter",
    "SudokuBoard",
    "EventBus",
    "Matrix",
    "LogPathTools",  # its names come from `from os.path import *`, resolved through os.path's public names
}
CLASS_DROPS = {
    "brightcart/shopkit:shopkit/gateway.py::PaymentGatewayClient": "third-party-import",
    "brightcart/shopkit:shopkit/discounts.py::DiscountEngine": "relative-import",
    "brightcart/shopkit:shopkit/portfolio.py::StockPortfolioTracker": "reference-corpus",
    "tidyfiles/logroll:logroll/buffer.py::LineBuffer": "pre-cutoff",
    "tidyfiles/logroll:logroll/matching.py::GlobMatcher": "pre-cutoff",
    "shelfwise/libris:libris/export.py::CatalogExporter": "same-repo-import",
    "netwise/routekit:routekit/cookies.py::CookieJar": "too-few-methods",
    "netwise/routekit:routekit/status.py::StatusCodes": "too-short",
    "sqlsprout/sprout:sprout/cache.py::QueryCache": "near-duplicate",
    "vaultsmith/keyring:keyring/sessions.py::SessionManager": "unresolved-name",
    "vaultsmith/keyring:keyring/events.py::EventBus": "exact-duplicate",
    "wordsmith/textkit:textkit/regex_utils.py::RegexUtils": "reference-corpus",
    "pixelforge/boardgames:boardgames/leaderboard.py::Leaderboard": "unresolved-name",
}
FILE_DROPS = {
    "tidyfiles/logroll:logroll/recipes/tail_follow.py": "html-artefact",
    "shelfwise/libris:libris/waitlist.py": "syntax-error",
    "pixelforge/boardgames:boardgames/i18n/marcador.py": "not-utf8",
    "sqlsprout/sprout:sprout/migrations/0001_initial.py": "migration",
    "brightcart/shopkit:setup.py": "setup-script",
}


@pytest.mark.skipif(not CLASSEVAL.exists(), reason="ClassEval data not beside the project")
def test_example_corpus_outcomes(tmp_path):
    cfg = HarvestConfig(
        cutoff=date(2025, 1, 1),
        snapshot="example",
        output_root=tmp_path / "out",
        spec_corpora=[ROOT / "examples" / "corpus"],
        clone=CloneConfig(workdir=tmp_path / "cache" / "clones"),
        dedup=DedupConfig(reference_corpora=[CLASSEVAL]),
    )
    summary = run_harvest(cfg)
    snap = tmp_path / "out" / "example"
    classes = list(read_jsonl(snap / "classes.jsonl", HarvestedClass))
    rejects = {r.item_id: r.reason for r in read_jsonl(snap / "rejects.jsonl", Rejection)}
    assert {c.class_name for c in classes} == KEPT
    assert summary.classes == len(KEPT) == len(classes)
    for item, reason in {**CLASS_DROPS, **FILE_DROPS}.items():
        assert rejects.get(item) == reason, item
    covered = {d for c in classes for d in c.domains[:1]}
    assert len(covered) >= 8, covered
    by_name = {c.class_name: c for c in classes}
    # committed 2025-01-27 in UTC-5: first-seen dates are stored in UTC
    assert by_name["LibraryInventory"].first_seen_date == datetime(2025, 1, 28, 0, 2, tzinfo=UTC)
    assert any("TAX_RATES" in ctx for ctx in by_name["ShoppingCart"].context)
    assert all(c.license_spdx for c in classes)
