"""Run calls concurrently and keep every outcome, so one failed candidate never sinks the batch."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Outcome(Generic[T, R]):
    """The result of `fn(item)`: `value` if it returned, `error` if it raised (never both)."""

    item: T
    value: R | None = None
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def unwrap(self) -> R:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


def map_concurrently(fn: Callable[[T], R], items: Iterable[T], concurrency: int) -> list[Outcome[T, R]]:
    """`fn` over `items` on up to `concurrency` threads; outcomes in input order.

    Exceptions are captured per item, not swallowed: each lands in its `Outcome.error` for the
    caller to turn into a rejection reason (or re-raise with `unwrap()`). BaseExceptions such as
    KeyboardInterrupt are not captured: they cancel every item not yet started.
    """
    items = list(items)

    def run(item: T) -> Outcome[T, R]:
        try:
            return Outcome(item=item, value=fn(item))
        except Exception as exc:  # noqa: BLE001 - kept in the outcome, see docstring
            return Outcome(item=item, error=exc)

    if concurrency <= 1 or len(items) <= 1:
        return [run(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=min(concurrency, len(items)), thread_name_prefix="llm")
    try:
        futures = [pool.submit(run, item) for item in items]
        return [f.result() for f in futures]
    except BaseException:
        # Ctrl-C (or a bug in the caller): queued items never start; only the calls already in
        # flight finish, instead of the whole queue as the executor's context manager would wait for.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=False)
