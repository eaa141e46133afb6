"""What a stopped process must still do before it ends.

A stop (SIGINT/SIGTERM on `classforge build`) ends the process with `os._exit` so that no library
can hold it up, which skips every `finally`. Work that would otherwise be lost or left behind
registers here for as long as it is under way: a candidate's spend not yet in the usage files, a
sandbox run's process group and its private folder. The stop runs the hooks newest first, as
nested `finally` blocks would, so a run's processes are killed before its folder is removed.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from classforge_bench.pipeline.core.errors import ClassforgeError

log = logging.getLogger(__name__)

_lock = threading.Lock()
_next_key = itertools.count()
_hooks: dict[int, tuple[str, Callable[[], None]]] = {}


@contextmanager
def at_stop(what: str, hook: Callable[[], None]) -> Iterator[None]:
    """While inside the block, a stop runs `hook` (`what` names it if it fails)."""
    key = next(_next_key)
    with _lock:
        _hooks[key] = (what, hook)
    try:
        yield
    finally:
        with _lock:
            _hooks.pop(key, None)


def run_stop_hooks() -> list[str]:
    """Run every registered hook once, newest first; returns a line for each that failed (the stop
    goes on: one hook's failure must not keep the others from running)."""
    with _lock:
        pending = sorted(_hooks.items(), reverse=True)
        _hooks.clear()
    failed = []
    for _key, (what, hook) in pending:
        try:
            hook()
        except (OSError, ClassforgeError) as exc:  # a full disk, a folder already gone: say it, go on
            failed.append(f"at the stop, {what} failed: {exc}")
            log.warning("stop hook %s failed: %s", what, exc)
    return failed
