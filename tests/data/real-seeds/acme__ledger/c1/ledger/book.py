"""A small ledger of amounts booked on dates."""

from datetime import date


class Ledger:
    """Amounts booked on ISO dates, up to a limit of entries."""

    def __init__(self, owner: str, limit: int = 100):
        """Create an empty ledger.

        Args:
            owner: who keeps the ledger.
            limit: how many entries it holds at most.
        """
        self.owner = owner
        self.limit = limit
        self._entries = []

    def book(self, day: str, amount: int) -> int:
        """Book an amount on a day.

        Args:
            day: the date, as an ISO string (YYYY-MM-DD).
            amount: the amount booked.

        Returns:
            how many entries the ledger holds now.

        Raises:
            OverflowError: if the ledger already holds `limit` entries.
        """
        if len(self._entries) >= self.limit:
            raise OverflowError("the ledger is full")
        self._entries.append((date.fromisoformat(day), amount))
        return len(self._entries)

    def total(self) -> int:
        """The sum of every amount booked.

        Returns:
            the sum, 0 for an empty ledger.
        """
        return sum(amount for _, amount in self._entries)

    def total_since(self, day: str) -> int:
        """The sum of the amounts booked on or after a day.

        Args:
            day: the first date counted, as an ISO string (YYYY-MM-DD).

        Returns:
            the sum of those amounts.
        """
        start = date.fromisoformat(day)
        return sum(amount for when, amount in self._entries if when >= start)

    def count(self) -> int:
        """How many entries the ledger holds.

        Returns:
            the number of entries.
        """
        return len(self._entries)

    def clear(self) -> None:
        """Remove every entry."""
        self._entries = []
