"""The Prefect API a build talks to: the server PREFECT_API_URL names, or one temporary server started here.

Prefect 3.8.8's own temporary-server start polls /health with a 5 s client timeout and catches only
ConnectError: a server that accepts but answers slowly (its migrations on a busy machine) raised
ReadTimeout out of the flow call, hundreds of traceback lines. Here the wait is ours: any HTTP error
while the server starts means "not yet", a server process that dies is started again on a new port
(a few times), and the only failure is one sentence after PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.

    python -m classforge_bench.pipeline.cli.server COMMAND [ARG...]

runs COMMAND with one temporary server for its whole duration (PREFECT_API_URL set for it and its
children), so `make run`'s two builds share one server instead of starting one each.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from classforge_bench.pipeline.core.errors import InfrastructureError

START_ATTEMPTS = 3
POLL_S = 0.5
# Each /health request may take this long: a busy SQLite migration answers late, not never.
REQUEST_TIMEOUT_S = 30.0
DEFAULT_STARTUP_S = 600.0


class ServerStartError(InfrastructureError):
    """The temporary Prefect server did not answer /health in time, or kept exiting."""


def startup_timeout_s() -> float:
    """The same setting Prefect's own start honours (the Makefile and `_prefect_defaults` set 600 s)."""
    value = os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "")
    try:
        return float(value) if value else DEFAULT_STARTUP_S
    except ValueError:
        return DEFAULT_STARTUP_S


def wait_healthy(
    url: str,
    *,
    timeout_s: float,
    alive: Callable[[], bool] = lambda: True,
    request_timeout_s: float | None = None,
    poll_s: float | None = None,
) -> bool:
    """True once GET {url}/health answers 200; False when `alive()` turns false or `timeout_s` passes.

    Every httpx error (refused, read timeout, a reset) means the server is still starting."""
    import httpx

    deadline = time.monotonic() + timeout_s
    poll_s = POLL_S if poll_s is None else poll_s
    with httpx.Client(timeout=REQUEST_TIMEOUT_S if request_timeout_s is None else request_timeout_s) as client:
        while True:
            if not alive():
                return False
            try:
                if client.get(f"{url}/health").status_code == 200:
                    return True
            except httpx.HTTPError:
                pass  # not up yet; the deadline below decides when to stop asking
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll_s)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(port: int) -> list[str]:
    """The uvicorn command Prefect's own temporary server runs (prefect.server.api.server), UI off."""
    import prefect

    return [
        sys.executable,
        "-m",
        "uvicorn",
        "--app-dir",
        str(prefect.__module_path__.parent),
        "--factory",
        "prefect.server.api.server:create_app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "error",
        "--lifespan",
        "on",
    ]


@dataclass
class TemporaryServer:
    """One started server process and the API URL it answers on."""

    process: subprocess.Popen[bytes]
    api_url: str

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(
    command: Callable[[int], list[str]] | None = None, *, timeout_s: float | None = None
) -> TemporaryServer:
    """A temporary server that answers /health, tried up to START_ATTEMPTS times within one timeout."""
    timeout_s = startup_timeout_s() if timeout_s is None else timeout_s
    command = command or server_command
    deadline = time.monotonic() + timeout_s
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1"}
    env.pop("PREFECT_API_URL", None)
    exited = []
    for _ in range(START_ATTEMPTS):
        port = free_port()
        process = subprocess.Popen(command(port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = TemporaryServer(process, f"http://127.0.0.1:{port}/api")
        left = deadline - time.monotonic()
        if left > 0 and wait_healthy(server.api_url, timeout_s=left, alive=server.alive):
            return server
        server.stop()
        if process.returncode is None or time.monotonic() >= deadline:
            break
        exited.append(str(process.returncode))
    said = f" (it exited with code {', '.join(exited)})" if exited else ""
    raise ServerStartError(
        f"the temporary Prefect server did not answer within {timeout_s:g} s{said}; "
        "set PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS higher, or PREFECT_API_URL to a running server"
    )


@contextmanager
def serve() -> Iterator[str]:
    """A temporary server for the block's duration, its URL in PREFECT_API_URL for child processes."""
    server = start_server()
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        yield server.api_url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()


@contextmanager
def prefect_api() -> Iterator[str]:
    """The API URL for this process's flows: PREFECT_API_URL when set (nothing is started), else a
    temporary server of ours (`serve`) for the block's duration."""
    named = os.environ.get("PREFECT_API_URL")
    if named:
        yield named
        return
    with serve() as url:
        from prefect.settings import PREFECT_API_URL, temporary_settings

        # Prefect read its root settings when it was imported: the URL goes in through its own API.
        with temporary_settings(updates={PREFECT_API_URL: url}):
            yield url


def main(argv: list[str]) -> int:
    """Run argv with one temporary server (or the named one); its exit code, or 2 with one line."""
    if not argv:
        print("usage: python -m classforge_bench.pipeline.cli.server COMMAND [ARG...]", file=sys.stderr)
        return 2
    try:
        if os.environ.get("PREFECT_API_URL"):
            return subprocess.call(argv)
        with serve():
            return subprocess.call(argv)
    except ServerStartError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
