# Named so that pytest never collects it from this fixture; the harvest reads it as a test file (tests/).
import pytest

from ledger.book import Ledger

# If the harvest ever ran this file, this marker would appear beside it.
open(__file__ + ".ran", "w").close()


def test_book_and_total():
    day = "2025-03-01"
    ledger = Ledger("ann", limit=2)
    assert ledger.book(day, 5) == 1
    ledger.book("2025-03-02", 7)
    assert ledger.total() == 12
    with pytest.raises(OverflowError):
        ledger.book("2025-03-03", 1)
    assert ledger.count() == 2


def test_internals_end_the_sequence():
    ledger = Ledger("bob")
    ledger.book("2025-01-01", 3)
    ledger._entries.append(None)
    ledger.total()


def test_values_from_a_fixture_are_no_seed(tmp_path):
    ledger = Ledger(str(tmp_path))
    ledger.book(str(tmp_path), 1)
