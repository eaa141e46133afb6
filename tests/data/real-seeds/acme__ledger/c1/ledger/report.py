"""A call site of the ledger in the library itself."""

from ledger.book import Ledger


def year_end():
    ledger = Ledger("report", limit=12)
    ledger.book("2025-12-31", 1)
    return ledger.total()
