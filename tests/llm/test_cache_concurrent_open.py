"""Several runs opening one new cache file at once (two builds started together) all get it: the
switch to WAL mode used to fail at once with "database is locked" in about 1 round in 10 of this
test (6 threads), which the CI run of 2026-11-26 met as a crashed concurrent-build test."""

from __future__ import annotations

import threading
from pathlib import Path

from classforge_bench.pipeline.llm.cache import ResponseCache


def test_six_openers_of_one_new_cache_file_all_succeed(tmp_path):
    failures: list[BaseException] = []
    for round_ in range(40):
        path = tmp_path / f"round-{round_}" / "llm.sqlite"
        start = threading.Barrier(6)

        # bound now: a thread still running after join(60) on a busy machine must not see the next round's
        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                ResponseCache(path).close()
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                failures.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not failures, f"{len(failures)} opens failed, first: {failures[0]!r}"
