"""A stop signal to a command whose output reader is gone (issue 33): the terminal closed, or the
pipe's reader died or stopped reading. The stop line cannot be written; the process must still end
with 130/143 on the one signal, not raise from the handler (exit 1) or block on the write.

The command is `Stoppable.run` (what `classforge build` runs its flow under) in a real process; no
Prefect, so the test is quick. Its timeouts are hang guards only, no duration is asserted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 120

# Works until stopped. `flood`: a thread keeps writing to stderr, so once the reader stops reading
# it blocks inside the write holding the stream's lock (what Prefect's or Rich's output does).
_COMMAND = textwrap.dedent("""
    import sys, threading
    from classforge_bench.pipeline.cli.stopping import Stoppable, say_stopped
    flood = sys.argv[1] == "flood"

    def work():
        if flood:
            threading.Thread(target=lambda: [sys.stderr.write("x" * 4096) for _ in iter(int, 1)], daemon=True).start()
        print("working", flush=True)
        threading.Event().wait()

    Stoppable(say_stopped).run(work)
""")


def _start(mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _COMMAND, mode],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_with_both_readers_closed_exits_with_the_signal_code(sig):
    proc = _start("quiet")
    try:
        assert proc.stdout.readline() == b"working\n"
        proc.stdout.close()  # the terminal or the pipe's reader is gone: writes get EPIPE
        proc.stderr.close()
        proc.send_signal(sig)
        code = proc.wait(HANG_GUARD_S)
    finally:
        proc.kill()
    assert code == {signal.SIGTERM: 143, signal.SIGINT: 130}[sig]


def test_a_stop_while_the_reader_has_stopped_reading_exits_143():
    proc = _start("flood")
    try:
        assert proc.stdout.readline() == b"working\n"
        # Never read stderr again: the flooding thread fills the pipe and blocks in its write.
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(HANG_GUARD_S)
    finally:
        proc.kill()
        proc.stdout.close()
        proc.stderr.close()
    assert code == 143


def test_a_stop_with_a_live_reader_still_says_what_was_kept():
    proc = _start("quiet")
    try:
        assert proc.stdout.readline() == b"working\n"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(HANG_GUARD_S)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.stdout.close()
        proc.stderr.close()
    assert code == 143
    assert err.startswith("stopped by SIGTERM: answers paid for in this run are stored (none)")
