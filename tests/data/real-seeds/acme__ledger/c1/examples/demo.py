from ledger.book import Ledger

ledger = Ledger("demo", 10)
ledger.book("2025-05-05", 40)
print(ledger.total_since("2025-01-01"))
