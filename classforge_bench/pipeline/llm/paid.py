"""What this process paid for and stored, readable at any moment (a stop signal reads it).

Every live answer is stored in the response cache as soon as it arrives (committed per answer), so
a stopped run loses only the requests in flight. `storing()` wraps that write: a stop waits for
the write under way (`hold`) so no paid answer is half stored, and reports how many were stored.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_store_lock = threading.Lock()
_count_lock = threading.Lock()
_stored: dict[str, int] = {}  # cache path -> answers stored by this process
_in_flight = 0
# Caches holding answers their database could not take (disk full): a stop stores or spills them.
_keepers: list[weakref.WeakMethod] = []


@contextmanager
def storing(cache_path: str) -> Iterator[None]:
    """Around the cache write of one paid answer."""
    with _store_lock:
        yield
    with _count_lock:
        _stored[cache_path] = _stored.get(cache_path, 0) + 1


@contextmanager
def sending() -> Iterator[None]:
    """Around one live request (counted so a stop can say how many it cut off)."""
    global _in_flight  # noqa: PLW0603 - one count of live requests per process, under _count_lock
    with _count_lock:
        _in_flight += 1
    try:
        yield
    finally:
        with _count_lock:
            _in_flight -= 1


def hold(timeout_s: float) -> bool:
    """Wait for the answer being stored, then keep any other from starting (the process is ending)."""
    return _store_lock.acquire(timeout=timeout_s)


def summary() -> tuple[dict[str, int], int]:
    """(answers stored by this process per cache file, requests in flight now)."""
    with _count_lock:
        return dict(_stored), _in_flight


def keeps_unsaved(flush: Callable[[], str | None]) -> None:
    """Register a cache's `flush` (a bound method: the cache is not kept alive by this): a stop calls
    it, and it returns None when everything is stored or a line saying where the rest went."""
    with _count_lock:
        _keepers.append(weakref.WeakMethod(flush))


def forget(flush: Callable[[], str | None]) -> None:
    with _count_lock:
        _keepers[:] = [ref for ref in _keepers if ref() not in (None, flush)]


def store_kept() -> list[str]:
    """At a stop, after `hold`: store the answers caches kept in memory; what could not be stored
    is said (with the spill file it went to) instead of being counted as stored."""
    with _count_lock:
        flushes = [ref() for ref in _keepers]
    return [said for flush in flushes if flush is not None and (said := flush()) is not None]
