"""The one thread pool: run calls concurrently and keep every outcome, so one failure never sinks a batch.

LLM calls, candidates and sandbox runs all go through `map_concurrently`; each item's exception is
kept in its `Outcome` for the caller to turn into that item's verdict.
"""

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
        return self.value  # type: ignore[return-value]  # set when error is None; R itself may allow None


def map_concurrently(
    fn: Callable[[T], R],
    items: Iterable[T],
    concurrency: int,
    *,
    on_done: Callable[[int, Outcome[T, R]], None] | None = None,
    thread_name: str = "classforge",
) -> list[Outcome[T, R]]:
    """`fn` over `items` on up to `concurrency` threads; outcomes in input order.

    `on_done(index, outcome)` sees each outcome as soon as it exists (progress bars, incremental
    writes), from the worker thread that produced it.

    Exceptions are captured per item, not swallowed: each lands in its `Outcome.error` for the
    caller to turn into a rejection reason (or re-raise with `unwrap()`). BaseExceptions such as
    KeyboardInterrupt are not captured: they cancel every item not yet started.
    """
    items = list(items)

    def run(index: int, item: T) -> Outcome[T, R]:
        try:
            outcome: Outcome[T, R] = Outcome(item=item, value=fn(item))
        except Exception as exc:  # noqa: BLE001 - kept in the outcome, see docstring
            outcome = Outcome(item=item, error=exc)
        if on_done is not None:
            on_done(index, outcome)
        return outcome

    if concurrency <= 1 or len(items) <= 1:
        return [run(i, item) for i, item in enumerate(items)]
    pool = ThreadPoolExecutor(max_workers=min(concurrency, len(items)), thread_name_prefix=thread_name)
    try:
        futures = [pool.submit(run, i, item) for i, item in enumerate(items)]
        return [f.result() for f in futures]
    except BaseException:
        # Ctrl-C (or a bug in the caller): queued items never start; only the calls already in
        # flight finish, instead of the whole queue as the executor's context manager would wait for.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=False)
