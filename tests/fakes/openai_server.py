"""A scriptable, loopback, OpenAI-compatible server for tests (like inspect_ai's `mockllm`).

openai 3.x talks through httpx2, which respx cannot intercept, so tests of every LLM-using
stage run the real client against this server instead. It answers `POST /v1/chat/completions`
and `GET /v1/models` with realistic bodies, and records every request.

Scripting::

    with FakeOpenAIServer(default="ok") as server:
        server.add_rule(pattern=r"judge", replies=[HTTPError(429, retry_after=2), Text('{"score": 10}')])
        server.add_rule(model="solver-model", respond=lambda req: Text(solve(req)))
        ...  # point an EndpointConfig at server.base_url
        assert len(server.chat_requests) == 2

A request goes to the first rule that matches it (model name equal, regex found in the
concatenated message contents, predicate true) and still has a reply queued (or a `respond`
callable); otherwise to `default`. With no default, it gets a 400 `unscripted_request` error
(not retryable, so a missing script fails fast) and is listed in `.unmatched`.

`ServerProfile` makes the server behave as real ones do: json_schema refused with
llama-cpp-python's HTTP 500, no `usage`, a context window with OpenAI's
`context_length_exceeded` 400 (and `max_model_len` in `/v1/models`), `n > 1` or `seed` refused,
slow first byte, slow streamed chunks, streaming refused; `llama_cpp` adds llama.cpp's own paths
(`/props` with the per-slot `n_ctx`, `/slots` with `is_processing` while answering, `/health`)
and lists the window as `meta.n_ctx` beside a larger `n_ctx_train`. A `Delay` longer than any test
is a server that never answers. `NullContent` is a billed 200 with `content: null`;
`"stream": true` requests get server-sent events.

Token usage is deterministic: `fake_token_count(text)` = ceil(characters / 4), the usual rule of
thumb, over the concatenated message contents (prompt) and the reply text (completion).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.llm.tokens import estimate_tokens, message_text

_HOST = "127.0.0.1"  # loopback only: tests never touch the network


def fake_token_count(text: str) -> int:
    return estimate_tokens(text)


def messages_text(messages: list[dict[str, Any]]) -> str:
    """Message contents joined by newlines; content may be a string or a list of text parts."""
    return "\n".join(message_text(m) for m in messages)


class ServerProfile(BaseModel):
    """How far the fake departs from OpenAI, the way real local servers and proxies do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    json_schema: bool = Field(True, description="False: a json_schema response_format gets llama-cpp-python's HTTP 500")
    usage: bool = Field(True, description="False: no `usage` in any answer")
    context_window: int | None = Field(
        None, description="prompt + max_tokens above it: HTTP 400 context_length_exceeded"
    )
    report_window: bool = Field(True, description="list the window in /v1/models as `max_model_len` (vLLM's field)")
    n: bool = Field(True, description="False: n > 1 is an HTTP 400")
    seed: bool = Field(True, description="False: a `seed` field is an HTTP 400")
    first_token_delay_s: float = Field(0.0, ge=0, description="wait before the first byte of every answer")
    chunk_delay_s: float = Field(0.0, ge=0, description="streamed answers: wait between chunks")
    stream: bool = Field(True, description="False: a `stream: true` request is an HTTP 400")
    ignore_stream: bool = Field(False, description="answer `stream: true` with one JSON body, as some proxies do")
    llama_cpp: bool = Field(False, description="serve /props, /slots and /health as llama.cpp's server does")
    slots: int = Field(1, ge=1, description="llama_cpp: parallel slots; each gets context_window / slots")


# -- replies ------------------------------------------------------------------------------------
class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(_Reply):
    """A normal completion. Token counts default to `fake_token_count`."""

    text: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def Truncated(text: str, **kw: Any) -> Text:  # noqa: N802 - reads like the other reply types
    """A completion cut off at the token limit (finish_reason "length")."""
    return Text(text=text, finish_reason="length", **kw)


class HTTPError(_Reply):
    """An OpenAI-style error body with the given status, optionally with Retry-After (seconds)."""

    status: int
    message: str = "scripted error"
    type: str | None = None
    code: str | None = None
    retry_after: float | None = None


class NullContent(_Reply):
    """A billed 200 whose message has `content: null` (a reasoning model that used its whole budget)."""

    finish_reason: str = "length"
    prompt_tokens: int = 100
    completion_tokens: int = 256


class Malformed(_Reply):
    """A body that is not a valid completion (default: not JSON at all) with a JSON content type."""

    body: str = "<html>502 Bad Gateway</html>"
    status: int = 200
    content_type: str = "application/json"


class Delay(_Reply):
    """Wait `seconds` (longer than the client's timeout to provoke one), then send `then`."""

    seconds: float
    then: Reply = Field(default_factory=lambda: Text(text="late"))


class Disconnect(_Reply):
    """Close the connection without answering (a connection error for the client)."""


Reply = Text | NullContent | HTTPError | Malformed | Delay | Disconnect
Delay.model_rebuild()
Responder = Callable[[dict[str, Any]], "Reply | str"]


def _as_reply(value: Reply | str) -> Reply:
    return Text(text=value) if isinstance(value, str) else value


# -- rules and recorded requests -----------------------------------------------------------------
class Rule:
    """Matches requests and hands out queued replies in order, then `respond(...)` if given."""

    def __init__(
        self,
        *,
        model: str | None = None,
        pattern: str | re.Pattern[str] | None = None,
        when: Callable[[dict[str, Any]], bool] | None = None,
        replies: list[Reply | str] | None = None,
        respond: Responder | None = None,
    ) -> None:
        self.model = model
        self.pattern = re.compile(pattern, re.DOTALL) if isinstance(pattern, str) else pattern
        self.when = when
        self.replies: deque[Reply] = deque(_as_reply(r) for r in replies or [])
        self.respond = respond
        self.hits = 0

    def matches(self, body: dict[str, Any]) -> bool:
        if self.model is not None and body.get("model") != self.model:
            return False
        if self.pattern is not None and not self.pattern.search(messages_text(body.get("messages") or [])):
            return False
        if self.when is not None and not self.when(body):
            return False
        return bool(self.replies) or self.respond is not None

    def take(self, body: dict[str, Any]) -> Reply:
        self.hits += 1
        if self.replies:
            return self.replies.popleft()
        assert self.respond is not None  # matches() guarantees one of the two
        return _as_reply(self.respond(body))

    @property
    def remaining(self) -> int:
        return len(self.replies)


class RecordedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str
    path: str
    headers: dict[str, str] = Field(description="names lower-cased")
    body: dict[str, Any] | None
    reply: str = Field(description="kind of reply sent: Text, HTTPError, ..., or 'models'")
    at: float

    @property
    def model(self) -> str | None:
        return (self.body or {}).get("model")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return (self.body or {}).get("messages") or []

    @property
    def text(self) -> str:
        return messages_text(self.messages)


# -- the server ---------------------------------------------------------------------------------
class FakeOpenAIServer:
    def __init__(
        self,
        rules: list[Rule] | None = None,
        default: Reply | str | Responder | None = None,
        *,
        api_key: str | None = None,
        models: list[str] | None = None,
        profile: ServerProfile | None = None,
    ) -> None:
        self.profile = profile or ServerProfile()
        self.rules: list[Rule] = list(rules or [])
        self.default = default
        self.api_key = api_key  # when set, requests with another bearer token get a 401
        self.models = models
        self._requests: list[RecordedRequest] = []
        self.unmatched: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._counter = 0
        self._billed: list[tuple[int, int]] = []
        self.answering = 0  # chat requests being answered now (llama_cpp's /slots reports them)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting --
    def add_rule(self, **kw: Any) -> Rule:
        rule = Rule(**kw)
        with self._lock:
            self.rules.append(rule)
        return rule

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def billed(self) -> tuple[int, int, int]:
        """The server's own count of what it answered: (answers, prompt tokens, completion tokens),
        also when its profile sends no `usage`, so a test can hold a client's ledger against it."""
        with self._lock:
            return len(self._billed), sum(p for p, _ in self._billed), sum(c for _, c in self._billed)

    # -- lifecycle --
    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running; use it as a context manager or call start()")
        return f"http://{_HOST}:{self._httpd.server_port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer((_HOST, 0), _make_handler(self))
        self._httpd.daemon_threads = True  # a handler stuck in a Delay must not block shutdown
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a Delay
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from handler threads) --
    def _choose(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            for rule in self.rules:
                if rule.matches(body):
                    return rule.take(body)
            default = self.default
            if default is None:
                self.unmatched.append(body)
        if default is None:
            return HTTPError(
                status=400,
                type="unscripted_request",
                message=f"fake server: no rule or default reply for model {body.get('model')!r}: "
                f"{messages_text(body.get('messages') or [])[:200]!r}",
            )
        if callable(default):
            return _as_reply(default(body))
        return _as_reply(default)

    def _record(self, method: str, path: str, headers: dict[str, str], body: dict[str, Any] | None, reply: str) -> None:
        with self._lock:
            self._requests.append(
                RecordedRequest(method=method, path=path, headers=headers, body=body, reply=reply, at=time.monotonic())
            )

    def _next_id(self) -> str:
        with self._lock:
            self._counter += 1
            return f"chatcmpl-fake-{self._counter}"

    def _completion_body(self, body: dict[str, Any], reply: Text | NullContent) -> dict[str, Any]:
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = fake_token_count(messages_text(body.get("messages") or []))
        completion_tokens = reply.completion_tokens
        text = reply.text if isinstance(reply, Text) else None
        if completion_tokens is None:
            completion_tokens = fake_token_count(text or "")
        choices = max(1, int(body.get("n") or 1))
        with self._lock:
            self._billed.append((prompt_tokens, completion_tokens))
        answer: dict[str, Any] = {
            "id": self._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
                for i in range(choices)
            ],
        }
        if self.profile.usage:
            answer["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return answer

    def _refusal(self, body: dict[str, Any]) -> HTTPError | None:
        """What a real server with this profile says about the request itself, before any rule."""
        p = self.profile
        rf = body.get("response_format") or {}
        if not p.json_schema and rf.get("type") == "json_schema":
            # llama-cpp-python's pydantic validation error, sent as a 500.
            return HTTPError(
                status=500,
                type="server_error",
                message="1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  "
                "Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']",
            )
        if not p.stream and body.get("stream"):
            return HTTPError(
                status=400, message="streaming is not supported by this server", code="unsupported_parameter"
            )
        if not p.n and int(body.get("n") or 1) > 1:
            return HTTPError(status=400, message="n > 1 is not supported", code="unsupported_parameter")
        if not p.seed and "seed" in body:
            return HTTPError(status=400, message="Unrecognized request argument supplied: seed")
        if p.context_window is not None:
            prompt = fake_token_count(messages_text(body.get("messages") or []))
            room = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
            if prompt + room > p.context_window // p.slots and p.llama_cpp:  # a request gets one slot's share
                return HTTPError(
                    status=400,
                    type="exceed_context_size_error",
                    message=(
                        f"request ({prompt + room} tokens) exceeds the available context size "
                        f"({p.context_window // p.slots} tokens), try increasing it"
                    ),
                )
            if prompt + room > p.context_window:
                return HTTPError(
                    status=400,
                    code="context_length_exceeded",
                    message=(
                        f"This model's maximum context length is {p.context_window} tokens. However, you requested "
                        f"{prompt + room} tokens ({prompt} in the messages, {room} in the completion). "
                        "Please reduce the length of the messages or completion."
                    ),
                )
        return None

    def llama_cpp_path(self, path: str) -> tuple[int, Any] | None:
        """llama.cpp's own paths, for a `llama_cpp` profile: (status, JSON body), else None."""
        p = self.profile
        if not p.llama_cpp:
            return None
        with self._lock:
            busy = self.answering
        window = p.context_window // p.slots if p.context_window else 4096
        if path == "/props":
            return 200, {"default_generation_settings": {"n_ctx": window}, "total_slots": p.slots}
        if path == "/slots":
            return 200, [{"id": i, "n_ctx": window, "is_processing": i < busy} for i in range(p.slots)]
        if path == "/health":
            return 200, {"status": "ok"}
        return None

    def _model_ids(self) -> list[str]:
        if self.models is not None:
            return list(self.models)
        with self._lock:
            names = {r.model for r in self.rules if r.model}
        return sorted(names) or ["fake-model"]


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection; simpler, and a timed-out client never reuses a
        # connection whose late answer is still coming.
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass  # keep test output clean; every request is recorded in server.requests instead

        def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _unauthorised(self) -> bool:
            if server.api_key is None:
                return False
            if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return False
            self._send_json(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
            )
            return True

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            headers = {k.lower(): v for k, v in self.headers.items()}
            if self.path.rstrip("/").endswith("/models"):
                server._record("GET", self.path, headers, None, "models")
                if self._unauthorised():
                    return
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server._model_ids()]
                window = server.profile.context_window
                if window is not None and server.profile.report_window:
                    for item in data:
                        if server.profile.llama_cpp:  # the whole context, and the weights' 4x larger one
                            item["meta"] = {"n_ctx": window, "n_ctx_train": 4 * window}
                        else:
                            item["max_model_len"] = window
                self._send_json(200, {"object": "list", "data": data})
                return
            own = server.llama_cpp_path(self.path.rstrip("/"))
            if own is not None:
                server._record("GET", self.path, headers, None, self.path.strip("/"))
                self._send_json(*own)
                return
            server._record("GET", self.path, headers, None, "404")
            self._send_json(404, {"error": {"message": f"unknown path {self.path}", "type": "invalid_request_error"}})

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            headers = {k.lower(): v for k, v in self.headers.items()}
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                server._record("POST", self.path, headers, None, "400")
                self._send_json(
                    400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
                )
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                server._record("POST", self.path, headers, body, "404")
                self._send_json(
                    404, {"error": {"message": f"unknown path {self.path}", "type": "invalid_request_error"}}
                )
                return
            if self._unauthorised():
                server._record("POST", self.path, headers, body, "401")
                return
            reply = server._refusal(body) or server._choose(body)
            server._record("POST", self.path, headers, body, type(reply).__name__)
            with server._lock:
                server.answering += 1
            try:
                self._answer(body, reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before we answered; that was the point
            finally:
                with server._lock:
                    server.answering -= 1

        def _answer(self, body: dict[str, Any], reply: Reply) -> None:
            if server.profile.first_token_delay_s and server._stopping.wait(server.profile.first_token_delay_s):
                return
            while isinstance(reply, Delay):
                if server._stopping.wait(reply.seconds):
                    return
                reply = reply.then
            if isinstance(reply, (Text, NullContent)) and body.get("stream") and not server.profile.ignore_stream:
                self._stream(body, server._completion_body(body, reply))
            elif isinstance(reply, (Text, NullContent)):
                self._send_json(200, server._completion_body(body, reply))
            elif isinstance(reply, HTTPError):
                headers = {} if reply.retry_after is None else {"Retry-After": _fmt_seconds(reply.retry_after)}
                error = {
                    "message": reply.message,
                    "type": reply.type or _error_type(reply.status),
                    "param": None,
                    "code": reply.code,
                }
                self._send_json(reply.status, {"error": error}, headers)
            elif isinstance(reply, Malformed):
                data = reply.body.encode("utf-8")
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif isinstance(reply, Disconnect):
                self.close_connection = True
                # Drop the socket without a status line; the client sees the connection end.
                self.connection.shutdown(socket.SHUT_RDWR)

        def _stream(self, body: dict[str, Any], answer: dict[str, Any]) -> None:
            """Server-sent events, chunked as OpenAI does: deltas, then the finish reason, then usage."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            text = answer["choices"][0]["message"]["content"] or ""
            base = {k: answer[k] for k in ("id", "created", "model", "system_fingerprint")} | {
                "object": "chat.completion.chunk"
            }
            pieces = [text[i : i + 16] for i in range(0, len(text), 16)]
            events = [
                base
                | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}]}
                for piece in pieces
            ]
            events.append(
                base | {"choices": [{"index": 0, "delta": {}, "finish_reason": answer["choices"][0]["finish_reason"]}]}
            )
            if "usage" in answer and (body.get("stream_options") or {}).get("include_usage"):
                events.append(base | {"choices": [], "usage": answer["usage"]})
            for event in events:
                if server.profile.chunk_delay_s and server._stopping.wait(server.profile.chunk_delay_s):
                    return
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


def _fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_exceeded"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"
