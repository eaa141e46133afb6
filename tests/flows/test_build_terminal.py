"""`classforge build` as a user sees it on a terminal: the example build (what `make run` does, its
outputs redirected into the test's folder) runs on a pseudo-terminal, and its bytes are replayed
through a terminal emulator (pyte) with scrollback, so the check reads what stayed on screen and
what scrolled past: no log line inside a progress row, no stale copy of the progress block, and
every stage's row finished as "k of k"."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COLUMNS, LINES = 120, 40
ROW = re.compile(r"^\S build (\S+) +(\d+ of \d+|\d+ done)")
LOG = re.compile(r"\d\d:\d\d:\d\d\.\d{3} \| ")


def run_on_a_terminal(argv: list[str], env: dict[str, str], cwd: Path, give_up_s: float = 1800) -> tuple[int, bytes]:
    """Run `argv` with a pseudo-terminal as stdin, stdout and stderr; every byte it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True)
    os.close(slave)
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed the terminal (EIO on Linux)
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        return proc.wait(timeout=give_up_s), bytes(out)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def replay(data: bytes) -> list[str]:
    """The lines a terminal shows after `data`: what scrolled off the top, then the screen."""
    pyte = pytest.importorskip("pyte", reason="pyte replays the terminal (pip install pyte)")
    screen = pyte.HistoryScreen(COLUMNS, LINES, history=1_000_000, ratio=0.5)
    pyte.ByteStream(screen).feed(data)
    scrolled = ["".join(line[x].data for x in range(COLUMNS)).rstrip() for line in screen.history.top]
    return scrolled + [line.rstrip() for line in screen.display]


@pytest.fixture(scope="module")
def terminal(tmp_path_factory) -> list[str]:
    pytest.importorskip("pyte", reason="pyte replays the terminal (pip install pyte)")
    tmp = tmp_path_factory.mktemp("terminal")
    text = (ROOT / "examples" / "classforge.toml").read_text()
    for old, new in (
        ('output_root = "../harvested"', f'output_root = "{tmp / "harvested"}"'),
        ('workdir = "../.cache/clones"', f'workdir = "{tmp / "clones"}"'),
        ('spec_corpora = ["corpus"]', f'spec_corpora = ["{ROOT / "examples" / "corpus"}"]'),
        ('cache_imports = ["llm_cache.jsonl"]', f'cache_imports = ["{ROOT / "examples" / "llm_cache.jsonl"}"]'),
        ('cache_path = "../.cache/llm-example.sqlite"', f'cache_path = "{tmp / "llm.sqlite"}"'),
        ('output_root = "../built"', f'output_root = "{tmp / "built"}"'),
    ):
        assert old in text, f"the example configuration changed: {old} is no longer redirected"
        text = text.replace(old, new)
    # The terminal's rows are the subject; the plus tier (on in the example) is tested elsewhere.
    text = text.replace("\nenabled = true\n", "\nenabled = false\n")
    config = tmp / "classforge.toml"
    config.write_text(text + f'\n[release]\noutput_root = "{tmp / "releases"}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PREFECT_"))}
    env |= {
        "TERM": "xterm-256color",
        "COLUMNS": str(COLUMNS),
        "LINES": str(LINES),
        "PREFECT_HOME": str(tmp / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_CACHE": str(tmp / "hf-hub"),
        # a busy machine can take minutes to start Prefect's embedded server
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "900",
    }
    code, data = run_on_a_terminal(
        [sys.executable, "-m", "classforge_bench.pipeline.cli", "build", "--config", str(config)], env, ROOT
    )
    (tmp / "terminal.bytes").write_bytes(data)  # kept for a look when an assertion fails
    lines = replay(data)
    assert code == 0, "\n".join(lines[-40:])
    return lines


def test_no_log_line_lands_inside_a_progress_row(terminal):
    glued = [line for line in terminal if ROW.match(line) and LOG.search(line)]
    assert glued == []
    assert [line for line in terminal if LOG.search(line) and not LOG.match(line)] == []


def test_no_stale_progress_block_stays_and_every_stage_ends_k_of_k(terminal):
    rows = [line for line in terminal if ROW.match(line)]
    stages = Counter(ROW.match(line)[1] for line in rows)
    assert {"harvest-repository", "build-candidate", "finish-build", "release"} <= set(stages), rows
    assert {stage: n for stage, n in stages.items() if n > 1} == {}, "\n".join(rows)
    for line in rows:
        done, _, total = ROW.match(line)[2].partition(" of ")
        assert total and done == total, line
    # the rows count the task runs' ends; the flow run's own end is still said
    assert not any("Task run" in line and "Finished in state" in line for line in terminal)
    assert any(line.startswith("Build funnel") for line in terminal)
