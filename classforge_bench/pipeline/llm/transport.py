"""One request to one OpenAI-compatible endpoint, and what its failure means (inspect_ai's `ModelAPI`).

`Transport.send` makes exactly one HTTP request with the openai SDK (its own retries off) and
returns the `Answer`, or a `Failure` that says whether another attempt may help. Every way an
answer can go wrong while it is being read is classified here, streamed or whole: the SDK's own
errors, and the transport errors raised while the body of a `stream: true` request is read, which
happens after the SDK's error mapping (a connection reset mid-body is a connection error, retried
like any other, not an internal error).

What the transport learns about an endpoint is about transport only: whether it takes streaming
(`stream = "auto"`) and how fast it writes (a whole answer's time limit). Cache, budget, window
fitting, format fallback, retries and single flight are the policy's (`client.LLMClient`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

from classforge_bench.pipeline.config import EndpointConfig, resolve_api_key
from classforge_bench.pipeline.llm import paid
from classforge_bench.pipeline.llm.cache import CacheKeyMaterial
from classforge_bench.pipeline.llm.tokens import estimate_tokens

try:  # the HTTP library the SDK reads bodies with: httpx2 for openai 3.x, httpx before
    import httpx2 as sdk_http
except ImportError:  # pragma: no cover - an older openai release
    import httpx as sdk_http  # type: ignore[no-redef]

log = logging.getLogger(__name__)

# The SDK's own choice of retryable statuses: request timeout, lock conflict, rate limit, 5xx.
_RETRYABLE_STATUS = frozenset({408, 409, 429})
# Auth, unknown model or path, rate limit: fixed by the operator, not by the content, so transient.
_OPERATOR_STATUS = frozenset({401, 403, 404, 408, 409, 429})
# What servers say when they cannot take the response_format they were sent.
_FORMAT_REFUSAL = re.compile(
    r"response_format|json_schema|json_object|'text' or 'json_object'|grammar|structured output", re.IGNORECASE
)
_CONTEXT_EXCEEDED = re.compile(
    r"context_length_exceeded|context length|context window|maximum context|exceeds? the available context|"
    r"too many tokens|prompt is too long|n_ctx",
    re.IGNORECASE,
)


class Failure(BaseModel):
    """What one failed request tells the retry loop."""

    retryable: bool
    reason: str
    status: int | None = None
    retry_after_s: float | None = None
    transient: bool = True  # for a final failure: may a later run succeed?
    format_refused: bool = False  # the server cannot take the response_format sent
    context_exceeded: bool = False


class Answer(BaseModel):
    """A 200 answer, from a plain or a streamed response."""

    text: str | None
    finish_reason: str | None
    response_model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


class Transport:
    """SDK clients per (base URL, key, timeout), shared by the threads of one LLM client."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = dict(env)
        self._clients: dict[tuple[str, str, float], openai.OpenAI] = {}
        self._lock = threading.Lock()
        self._stream_modes: dict[tuple[str, str], bool] = {}  # learnt for `stream = "auto"`
        self._speeds: dict[tuple[str, str], float] = {}  # measured completion tokens/s per endpoint

    def connect(self, endpoint: EndpointConfig, role: str = "") -> openai.OpenAI:
        """The SDK client for the endpoint; raises `MissingAPIKey` before anything is sent."""
        api_key = resolve_api_key(endpoint, self._env, role)
        ident = (endpoint.base_url, api_key, endpoint.timeout_s)
        with self._lock:
            client = self._clients.get(ident)
            if client is None:
                # max_retries=0: retries are the policy's (logged, budgeted, with Retry-After honoured).
                client = openai.OpenAI(
                    base_url=endpoint.base_url, api_key=api_key, timeout=endpoint.timeout_s, max_retries=0
                )
                self._clients[ident] = client
            return client

    def send(self, endpoint: EndpointConfig, request: CacheKeyMaterial) -> Answer | Failure:
        """One request; its answer, or what went wrong with it."""
        kwargs: dict[str, Any] = {
            "model": endpoint.model,
            "messages": request.messages,
            "temperature": endpoint.temperature,
            endpoint.max_tokens_param: request.max_tokens,
        }
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        return self._send(self.connect(endpoint, request.role), endpoint, request, kwargs)

    def _send(
        self, sdk: openai.OpenAI, endpoint: EndpointConfig, request: CacheKeyMaterial, kwargs: dict[str, Any]
    ) -> Answer | Failure:
        stream = self.streaming(endpoint)
        limit = endpoint.timeout_s if stream else self.wall_clock_s(endpoint, request.max_tokens)
        started = time.monotonic()
        try:
            with paid.sending():
                sent = _read(sdk, kwargs | {"timeout": limit}, stream)
        except openai.APIStatusError as exc:
            if stream and endpoint.stream == "auto" and _refuses_streaming(exc):
                log.warning(
                    "model=%s: the server refuses streaming (%s); whole answers from now on",
                    endpoint.model,
                    error_message(exc),
                )
                with self._lock:
                    self._stream_modes[_ident(endpoint)] = False
                return self._send(sdk, endpoint, request, kwargs)
            return _status_failure(exc, request.response_format is not None)
        except (openai.APITimeoutError, sdk_http.TimeoutException):
            what = "no token for" if stream else "no answer after"
            return Failure(retryable=True, reason=f"timed out: {what} {limit:g}s (timeout_s of this role)")
        except (openai.APIConnectionError, sdk_http.RequestError) as exc:
            # The HTTP library's own errors come from reading the body of a `stream: true` request, which the SDK
            # leaves to the caller: a reset mid-body is the same fault as a reset before it.
            return Failure(retryable=True, reason=f"connection error: {type(exc).__name__}: {exc}")
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            return Failure(retryable=True, reason=f"malformed response: {exc}")
        except openai.APIError as exc:
            # An error event inside a stream (the server failed after the 200 was sent).
            return Failure(retryable=True, reason=f"error in the answer: {exc}")
        if isinstance(sent, Answer) and isinstance(sent.text, str):
            self._measure(endpoint, sent, time.monotonic() - started)
        return sent

    def streaming(self, endpoint: EndpointConfig) -> bool:
        if isinstance(endpoint.stream, bool):
            return endpoint.stream
        with self._lock:
            return self._stream_modes.get(_ident(endpoint), True)

    def wall_clock_s(self, endpoint: EndpointConfig, max_tokens: int) -> float:
        """A whole (unstreamed) answer's limit: timeout_s, or longer when the measured speed says
        max_tokens take longer (twice the expected time: first-token delay and slow stretches)."""
        with self._lock:
            speed = self._speeds.get(_ident(endpoint))
        return endpoint.timeout_s if not speed else max(endpoint.timeout_s, 2 * max_tokens / speed)

    def speed(self, endpoint: EndpointConfig) -> float | None:
        """Measured completion tokens per second of the endpoint, if any answer was long enough."""
        with self._lock:
            return self._speeds.get(_ident(endpoint))

    def _measure(self, endpoint: EndpointConfig, answer: Answer, seconds: float) -> None:
        tokens = answer.completion_tokens or estimate_tokens(answer.text or "")
        if tokens >= 32 and seconds > 0:
            with self._lock:
                self._speeds[_ident(endpoint)] = tokens / seconds

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()


def _read(sdk: openai.OpenAI, kwargs: dict[str, Any], stream: bool) -> Answer | Failure:
    if not stream:
        return _check_response(sdk.chat.completions.create(**kwargs))
    text: list[str] = []
    finish: str | None = None
    model: str | None = None
    usage: Any = None
    chunks = sdk.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
    try:
        if "text/event-stream" not in chunks.response.headers.get("content-type", ""):
            return _whole_answer(chunks)  # the server ignored `stream` and sent one body
        for chunk in chunks:
            model = getattr(chunk, "model", None) or model
            usage = getattr(chunk, "usage", None) or usage
            for choice in getattr(chunk, "choices", None) or []:
                delta = getattr(choice, "delta", None)
                if delta is not None and isinstance(getattr(delta, "content", None), str):
                    text.append(delta.content)
                finish = getattr(choice, "finish_reason", None) or finish
    finally:
        chunks.close()  # a broken-off stream closes the connection, so the server stops generating
    # No content delta at all is a null content (a billed answer without text), not "".
    return Answer(
        text="".join(text) if text else None,
        finish_reason=finish,
        response_model=model,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
    )


def _status_failure(exc: openai.APIStatusError, sent_format: bool) -> Failure:
    status = exc.status_code
    message = error_message(exc)
    code = (
        exc.body.get("error", {}).get("code")
        if isinstance(exc.body, dict) and isinstance(exc.body.get("error"), dict)
        else None
    )
    retryable = status in _RETRYABLE_STATUS or status >= 500
    return Failure(
        retryable=retryable,
        reason=f"HTTP {status}: {message}",
        status=status,
        retry_after_s=retry_after(exc.response.headers) if retryable else None,
        transient=retryable or status in _OPERATOR_STATUS,
        format_refused=sent_format and status in (400, 422, 500) and bool(_FORMAT_REFUSAL.search(message)),
        context_exceeded=status in (400, 413, 422, 500)
        and (code == "context_length_exceeded" or bool(_CONTEXT_EXCEEDED.search(message))),
    )


def error_message(exc: openai.APIStatusError) -> str:
    """The server's own message (OpenAI-style `{"error": {"message": ...}}`), else the SDK's."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return exc.message


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass  # fall through to the standard header
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass  # not a number: maybe an HTTP date
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _refuses_streaming(exc: openai.APIStatusError) -> bool:
    return exc.status_code in (400, 422, 501) and "stream" in error_message(exc).lower()


def _whole_answer(chunks: Any) -> Answer | Failure:
    """A `stream: true` request answered with one JSON body (servers that ignore `stream`)."""
    body = chunks.response.read()
    try:
        raw = ChatCompletion.model_validate(json.loads(body))
    except (ValueError, ValidationError):
        return Failure(retryable=True, reason=f"malformed response: {body[:200]!r}")
    return _check_response(raw)


def _check_response(raw: object) -> Answer | Failure:
    """The SDK returns whatever the body parsed to (a str for text/plain, a hollow object for the
    wrong JSON); accept only a completion with a choice."""
    if not isinstance(raw, ChatCompletion) or not isinstance(raw.choices, list) or not raw.choices:
        return Failure(retryable=True, reason=f"malformed response: {str(raw)[:200]!r}")
    # The SDK builds responses without validation, so a wrong-shaped choice lacks attributes.
    choice = raw.choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        return Failure(retryable=True, reason=f"malformed response: choice without a message: {choice!r}"[:300])
    content = getattr(message, "content", None)
    refusal = getattr(message, "refusal", None)
    if not isinstance(content, str) and refusal:
        return Failure(retryable=False, transient=False, reason=f"model refused: {refusal}")
    usage = raw.usage
    return Answer(
        text=content if isinstance(content, str) else None,
        finish_reason=getattr(choice, "finish_reason", None),
        response_model=raw.model,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
    )


def _ident(endpoint: EndpointConfig) -> tuple[str, str]:
    return (endpoint.base_url, endpoint.model)
