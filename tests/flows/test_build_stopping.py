"""Stopping a live `classforge build`, as a user does: Ctrl-C (SIGINT), SIGTERM, kill -9, sent to a
real CLI process while its requests hang at a server that never answers or streams slowly.

Asserted are outcomes only: the process ends (bounds generous enough for a busy machine), with one
line saying what was kept, every answer the server sent is in the cache, and no process the build
started (Prefect's embedded server, the orphan guard) is left.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from flow_kit import live_config

from classforge_bench.pipeline.core.orphan_guard import children_of
from tests.fakes.openai_server import Delay, FakeOpenAIServer, ServerProfile, Text

ROOT = Path(__file__).resolve().parents[2]
ANSWERED = 2  # the server answers this many requests, then never again (or at a crawl)
PATIENCE_S = 900  # a busy machine may take minutes to start Prefect's server


def _script(slow: bool):
    lock = threading.Lock()
    seen = [0]

    def respond(body):
        with lock:
            seen[0] += 1
            n = seen[0]
        if n <= ANSWERED:
            return Text(text="no code in this answer")  # paid; the stage asks again (a repair)
        return Text(text="z" * 20000) if slow else Delay(seconds=3600)

    return respond


def _start(tmp_path: Path, example_config: Path, srv: FakeOpenAIServer, stream: bool) -> subprocess.Popen[str]:
    cfg = live_config(example_config, srv.base_url, tmp_path)
    if stream:
        cfg.write_text(cfg.read_text().replace("max_retries = 0\n", "max_retries = 0\nstream = true\n"))
    env = dict(
        os.environ,
        OPENAI_API_KEY="sk-loopback",
        PREFECT_HOME=str(tmp_path / "prefect"),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=str(PATIENCE_S),
        COLUMNS="200",
        PYTHONPATH=str(ROOT),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "classforge_bench.pipeline.cli", "build", "--config", str(cfg)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_hanging_request(proc: subprocess.Popen[str], srv: FakeOpenAIServer, tmp_path: Path) -> dict[int, str]:
    """Wait until the answered requests are stored and another is in flight; the CLI's children seen meanwhile
    (pid -> start time); their command lines go to COMMANDS."""
    children: dict[int, str] = {}
    deadline = time.monotonic() + PATIENCE_S
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the build never sent a request past the answered ones"
        for pid, start in children_of(proc.pid).items():
            children[pid] = start
            try:
                COMMANDS[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                pass  # ended while we looked
        if srv.answering and _cached_answers(tmp_path) == ANSWERED:
            return children
        time.sleep(0.2)


COMMANDS: dict[int, bytes] = {}


def _servers(children: dict[int, str]) -> list[int]:
    return [pid for pid in children if b"uvicorn" in COMMANDS.get(pid, b"")]


def _gone(pid: int, start: str, within_s: float = 120) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat.rsplit(")", 1)[1].split()[19] != start or stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.2)
    return False


def _cached_answers(tmp_path: Path) -> int:
    if not (tmp_path / "llm.sqlite").exists():
        return 0
    try:
        with sqlite3.connect(tmp_path / "llm.sqlite", timeout=30) as db:
            return db.execute("SELECT count(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # not created yet


pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")]


@pytest.mark.parametrize(
    ("sig", "slow"),
    [(signal.SIGINT, False), (signal.SIGTERM, True)],
    ids=["ctrl-c-never-answers", "sigterm-slow-stream"],
)
def test_a_signal_stops_the_build_in_seconds_keeping_every_paid_answer(example_config, tmp_path, sig, slow):
    profile = ServerProfile(chunk_delay_s=1.0) if slow else ServerProfile()
    with FakeOpenAIServer(default=_script(slow), profile=profile) as srv:
        proc = _start(tmp_path, example_config, srv, stream=slow)
        try:
            children = _wait_for_hanging_request(proc, srv, tmp_path)
            proc.send_signal(sig)
            _out, err = proc.communicate(timeout=120)  # seconds in practice; generous for a busy machine
            if slow:  # the streams were closed: the server's next chunk finds no reader and it stops
                deadline = time.monotonic() + 120
                while srv.answering and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert srv.answering == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 128 + sig, err[-2000:]
    lines = [line for line in err.splitlines() if line.startswith("stopped by")]
    assert lines == [
        f"stopped by {signal.Signals(sig).name}: answers paid for in this run are stored "
        f"({ANSWERED} in {tmp_path / 'llm.sqlite'}); the next build pays for none of them again; "
        f"{lines[0].split('; ')[-1]}"
    ], err[-2000:]
    assert "request(s) in flight cut off" in lines[0]
    assert "Traceback" not in err
    assert _cached_answers(tmp_path) == ANSWERED
    assert _paid_requests_in_usage_files(tmp_path) == ANSWERED, "the stop lost spend of a candidate in flight"
    assert _servers(children), "Prefect's embedded server was not among the build's children"
    assert [pid for pid, start in children.items() if not _gone(pid, start)] == []


def _paid_requests_in_usage_files(tmp_path: Path) -> int:
    """Answered requests recorded under the build's usage/ folder by candidates (the pre-flight's
    probes are saved under their role's name and are not candidates' spend)."""
    import json

    total = 0
    for path in (tmp_path / "built").glob("*/usage/*/*.jsonl"):  # built/<snapshot>/usage/<run>/
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            total += entry["counts"].get("requests", 0)
    return total


def test_kill_9_of_the_cli_leaves_no_prefect_server(example_config, tmp_path):
    with FakeOpenAIServer(default=_script(False)) as srv:
        proc = _start(tmp_path, example_config, srv, stream=False)
        try:
            children = _wait_for_hanging_request(proc, srv, tmp_path)
            assert _servers(children), "Prefect's embedded server was not among the build's children"
            proc.kill()
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert _cached_answers(tmp_path) == ANSWERED  # stored as they came, before the kill
    assert [pid for pid, start in children.items() if not _gone(pid, start)] == []
