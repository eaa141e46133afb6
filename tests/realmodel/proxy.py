"""A loopback pass-through proxy that counts what really reaches the model server.

It forwards every request unchanged to the upstream server and records, per request, the path,
the HTTP status and the `usage` the server reported (from a JSON body, or from the last
server-sent event of a streamed answer). The end-to-end tests compare these numbers with the
product's own usage ledger, and count requests to prove that a second run replays from the cache.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "host"}


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    usage: dict[str, Any] | None
    finish_reasons: list[str | None] = field(default_factory=list)
    purpose: str | None = None  # the request's X-Classforge-Purpose header ("preflight" for endpoint probes)


def _usage_of(body: bytes, content_type: str) -> tuple[dict[str, Any] | None, list[str | None]]:
    """The usage and finish reasons of a completion answer, JSON or server-sent events."""
    docs: list[dict[str, Any]] = []
    if "text/event-stream" in content_type:
        for line in body.decode("utf-8", "replace").splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                try:
                    docs.append(json.loads(line[5:]))
                except ValueError:
                    continue
    else:
        try:
            doc = json.loads(body)
        except ValueError:
            return None, []
        docs = [doc] if isinstance(doc, dict) else []
    usage = next((d["usage"] for d in reversed(docs) if isinstance(d.get("usage"), dict)), None)
    reasons = [c.get("finish_reason") for d in docs for c in d.get("choices") or [] if c.get("finish_reason")]
    return usage, reasons


class CountingProxy:
    """`with CountingProxy(upstream) as proxy:` serves `proxy.base_url` until the block ends."""

    def __init__(self, upstream_origin: str, timeout_s: float = 1800.0) -> None:
        self.upstream = upstream_origin.rstrip("/")
        self.timeout_s = timeout_s
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what the tests read ---------------------------------------------------------------
    def completions(self) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.path.endswith("/completions")]

    def probes(self) -> list[Exchange]:
        """The endpoint pre-flight's requests (marked by their header)."""
        return [e for e in self.completions() if e.purpose == "preflight"]

    def reported_tokens(self, only: list[Exchange] | None = None) -> tuple[int, int]:
        """(prompt, completion) tokens the server reported on successful completion answers
        (of `only`, when given)."""
        done = [e for e in (self.completions() if only is None else only) if e.status == 200 and e.usage]
        return (
            sum(int(e.usage.get("prompt_tokens") or 0) for e in done),
            sum(int(e.usage.get("completion_tokens") or 0) for e in done),
        )

    def reset(self) -> None:
        with self._lock:
            self.exchanges.clear()

    # -- serving -------------------------------------------------------------------------------
    @property
    def origin(self) -> str:
        assert self._server is not None, "proxy not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def __enter__(self) -> CountingProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:  # keep test output clean
                return

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                req = urllib.request.Request(
                    proxy.upstream + self.path, data=body, headers=headers, method=self.command
                )
                try:
                    with urllib.request.urlopen(req, timeout=proxy.timeout_s) as resp:
                        status, rheaders, payload = resp.status, resp.headers, resp.read()
                except urllib.error.HTTPError as err:
                    status, rheaders, payload = err.code, err.headers, err.read()
                usage, reasons = _usage_of(payload, rheaders.get("Content-Type", ""))
                with proxy._lock:
                    proxy.exchanges.append(
                        Exchange(
                            self.command, self.path, status, usage, reasons, self.headers.get("X-Classforge-Purpose")
                        )
                    )
                self.send_response(status)
                for key, value in rheaders.items():
                    if key.lower() not in _HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _forward  # noqa: N815 - http.server's naming

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="counting-proxy", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
