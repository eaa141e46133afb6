"""The Prefect API a build uses: PREFECT_API_URL honoured, else one temporary server whose start
survives a /health that answers slowly (Prefect's own start raised ReadTimeout there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from classforge_bench.pipeline.cli import server as cli_server

# A stand-in server: its first SLOW answers to /api/health come after the client's read timeout,
# then it answers 200; it counts what it was asked in a file. No network beyond 127.0.0.1.
FAKE = """
import http.server, sys, time
port, slow, sleep_s, log = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
asked = []
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        asked.append(self.path)
        open(log, "a").write(self.path + "\\n")
        if len(asked) <= slow:
            time.sleep(sleep_s)
        self.send_response(200 if self.path == "/api/health" else 404)
        self.end_headers()
        self.wfile.write(b"true")
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _fake(tmp_path: Path, slow: int, sleep_s: float):
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE)
    log = tmp_path / "asked.log"
    return (lambda port: [sys.executable, str(script), str(port), str(slow), str(sleep_s), str(log)]), log


def test_a_slow_health_answer_is_waited_out_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    command, log = _fake(tmp_path, slow=2, sleep_s=1.5)
    monkeypatch.setattr(cli_server, "REQUEST_TIMEOUT_S", 0.3)  # each of the first two answers comes too late
    monkeypatch.setattr(cli_server, "POLL_S", 0.05)
    server = cli_server.start_server(command, timeout_s=120)
    try:
        assert server.api_url.startswith("http://127.0.0.1:") and server.process.poll() is None
        asked = log.read_text().split()
        assert asked.count("/api/health") >= 3  # two timed out, then one was answered
    finally:
        server.stop()
    assert server.process.poll() is not None


def test_a_server_that_keeps_exiting_is_one_sentence(tmp_path: Path) -> None:
    started = []

    def command(port: int) -> list[str]:
        started.append(port)
        return [sys.executable, "-c", "raise SystemExit(3)"]

    with pytest.raises(cli_server.ServerStartError) as info:
        cli_server.start_server(command, timeout_s=60)
    assert len(started) == cli_server.START_ATTEMPTS  # retried on a new port each time
    message = str(info.value)
    assert "\n" not in message and "exited with code 3" in message and "PREFECT_API_URL" in message


def test_prefect_api_url_is_honoured_and_nothing_is_started(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("a temporary server was started although PREFECT_API_URL names one")

    monkeypatch.setattr(cli_server, "start_server", refuse)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    with cli_server.prefect_api() as url:
        assert url == "http://127.0.0.1:9/api"
    assert (
        cli_server.main(
            [
                sys.executable,
                "-c",
                "import os, sys; sys.exit(os.environ['PREFECT_API_URL'] != 'http://127.0.0.1:9/api')",
            ]
        )
        == 0
    )


def test_the_wrapper_gives_its_command_one_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make run`'s form: one server for the command and its children, gone when the command ends."""
    command, _ = _fake(tmp_path, slow=0, sleep_s=0)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(cli_server, "server_command", command)
    out = tmp_path / "url"
    code = cli_server.main(
        [sys.executable, "-c", f"import os; open({str(out)!r}, 'w').write(os.environ['PREFECT_API_URL'])"]
    )
    assert code == 0 and out.read_text().startswith("http://127.0.0.1:")
    assert "PREFECT_API_URL" not in __import__("os").environ
