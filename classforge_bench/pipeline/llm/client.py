"""The one LLM client of the project: cache first, then a budgeted, retried live call (the policy;
one request to one endpoint is `transport.Transport`'s, as inspect_ai's `Model` over `ModelAPI`).

Every stage and the evaluator call `LLMClient.complete(...)`. It:
1. hashes the request (`CacheKeyMaterial`) and serves a recorded response if there is one;
2. in `replay` mode stops there: a miss is a `CacheMiss` and the network is never touched;
3. otherwise checks the budget and sends the request through the transport, retrying what the
   transport classifies as retryable (rate limits, server errors, timeouts, connection errors
   before or while the answer is read, malformed bodies) with exponential backoff and jitter (a
   500/501 with the same body twice is deterministic and stops), and records every request sent
   in the ledger whatever became of it (tokens estimated when the server sends no usage), and
   the answer in the cache.

Around that: a prompt that cannot fit the role's context window raises `PromptTooLong` before it
is sent; an answer cut at `max_tokens` is asked once more with more room; a JSON request follows
the role's `response_format` mode (`auto` falls back json_schema -> json_object -> none when the
server refuses, and remembers it per endpoint).

Concurrent callers share one instance. Identical requests in flight at the same time are
coalesced (single flight), so the same key is never paid for twice.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.config import EndpointConfig, LLMConfig
from classforge_bench.pipeline.core.errors import ClassforgeError
from classforge_bench.pipeline.core.pool import Outcome, map_concurrently
from classforge_bench.pipeline.llm import paid
from classforge_bench.pipeline.llm.cache import CacheEntry, CacheKeyMaterial, ResponseCache
from classforge_bench.pipeline.llm.errors import BudgetExceeded, CacheMiss, LLMCallFailed, PromptTooLong, UnpricedModel
from classforge_bench.pipeline.llm.ledger import UsageLedger
from classforge_bench.pipeline.llm.tokens import estimate_prompt_tokens, estimate_tokens
from classforge_bench.pipeline.llm.transport import Answer, Failure, Transport

log = logging.getLogger(__name__)

# Statuses where "the same body twice" means the server will always answer so (llama.cpp's 500 for a
# json_schema it cannot take). 502-504 come from gateways and overloaded servers and stay transient.
_DETERMINISTIC_5XX = frozenset({500, 501})
# A 5xx body that blames the request (a validation error turned into a 500): a re-run repeats it.
_REQUEST_INVALID = re.compile(
    r"validation error|input should be|invalid|unsupported|not supported|unrecognized", re.IGNORECASE
)
# OpenAI's and vLLM's wording: "This model's maximum context length is 8192 tokens."; llama.cpp's:
# "request (9000 tokens) exceeds the available context size (8192 tokens)".
_WINDOW_IN_MESSAGE = re.compile(
    r"maximum context length is (\d+)|available context size \((\d+) tokens?\)", re.IGNORECASE
)
# Smallest answer room worth asking for when the context window forces max_tokens down.
MIN_ANSWER_TOKENS = 256


class Completion(BaseModel):
    """One model answer, live or from the cache."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    finish_reason: str | None
    model: str  # the requested model name (what costs and the cache key use)
    response_model: str | None = None  # what the server said it ran
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    cache_key: str
    role: str
    task_id: str
    prompt_version: str
    sample_index: int
    attempts: int = 0  # requests sent for this answer; 0 when served from the cache
    max_tokens: int | None = None  # the output budget this answer was asked with
    context_window: int | None = None  # the role's window when known
    usage_estimated: bool = False  # the server sent no usage; tokens are the client's estimate
    length_retried: bool = False  # the first answer was cut at max_tokens; this one had more room

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    @property
    def cut_by(self) -> str | None:
        """Which limit cut a truncated answer, with the counts; None if it was not cut."""
        if not self.truncated:
            return None
        p, c, m, w = self.prompt_tokens, self.completion_tokens, self.max_tokens, self.context_window
        if w is not None and p + c >= w - 16:
            return f"the context window of {w} tokens (prompt {p} + answer {c} tokens)"
        if m is not None and c >= m:
            return f"max_tokens={m} (answer {c} tokens, prompt {p} tokens)"
        window = f", context window {w}" if w is not None else ""
        return f"a server-side limit at {c} answer tokens (max_tokens={m}, prompt {p} tokens{window})"


class _FormatRefused(ClassforgeError):
    def __init__(self, failure: Failure, attempts: int) -> None:
        super().__init__(failure.reason)
        self.failure = failure
        self.attempts = attempts


def sent_formats(mode: str, response_format: dict[str, Any] | None) -> list[dict[str, Any] | None]:
    """The `response_format` values to try, in order, for a JSON answer under `mode`.

    json_object carries the schema beside it: llama.cpp's server turns that into a grammar, and
    servers that ignore the extra key still return JSON. The prompts always state the schema too,
    so `none` still gets JSON, checked by the stage's strict parser.
    """
    if response_format is None:
        return [None]
    as_object: dict[str, Any] = {"type": "json_object"}
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if schema is not None:
            as_object["schema"] = schema
    plan: dict[str, list[dict[str, Any] | None]] = {
        "json_schema": [response_format],
        "json_object": [as_object],
        "none": [None],
        "auto": [response_format, as_object, None],
    }
    return plan[mode]


class LLMClient:
    def __init__(
        self,
        config: LLMConfig,
        env: Mapping[str, str],
        cache: ResponseCache,
        ledger: UsageLedger,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self.ledger = ledger
        self.transport = Transport(env)
        self._sleep = sleep  # injected so tests see the waits without waiting
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._inflight: dict[str, list[Any]] = {}  # key -> [lock, waiters]
        self._inflight_lock = threading.Lock()
        self._owns_cache = False  # only a cache this client opened itself is closed with it
        self._learned_lock = threading.Lock()
        self._server_windows: dict[tuple[str, str], int] = {}
        self._format_modes: dict[tuple[str, str], str] = {}

    @classmethod
    def from_config(
        cls, config: LLMConfig, env: Mapping[str, str], *, load_exports: bool = False, **kw: Any
    ) -> LLMClient:
        """The one way the product opens a client: its own cache (at `config.cache_path`, closed with
        the client), a fresh ledger for this run and, for a build (`load_exports`), the shipped
        cache exports of `config.cache_imports` loaded first."""
        cache = ResponseCache(config.cache_path)
        try:
            if load_exports:
                cache.import_exports(config.cache_imports)
            client = cls(config, env, cache, UsageLedger(config.costs), **kw)
        except BaseException:
            cache.close()
            raise
        client._owns_cache = True
        return client

    # -- public API ---------------------------------------------------------------------------
    def complete(
        self,
        role: str,
        endpoint: EndpointConfig,
        messages: list[dict[str, Any]],
        *,
        task_id: str,
        prompt_version: str,
        sample_index: int = 0,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        """One answer. Raises `PromptTooLong` before sending a prompt that cannot fit the role's
        context window; an answer cut at `max_tokens` is asked once more with
        `length_retry_factor` times the room (within the window) and the second answer returned."""
        window = self.context_window(endpoint)
        max_tokens = self._fit(role, task_id, endpoint, messages, window)
        args = (role, endpoint, messages, task_id, prompt_version, sample_index, response_format, window)
        try:
            first = self._complete_once(*args, max_tokens)
        except PromptTooLong as exc:
            if window is not None or exc.context_window is None:
                raise
            # The server named its window in the refusal (OpenAI, vLLM): learn it and ask once
            # more with the answer room fitted to it, or drop the prompt if it cannot fit at all.
            self.learn(endpoint, context_window=exc.context_window)
            return self.complete(
                role,
                endpoint,
                messages,
                task_id=task_id,
                prompt_version=prompt_version,
                sample_index=sample_index,
                response_format=response_format,
            )
        if not first.truncated or first.completion_tokens < max_tokens:
            return first  # not cut, or cut by something more room cannot fix
        room = int(max_tokens * endpoint.length_retry_factor)
        if window is not None:
            room = min(room, window - estimate_prompt_tokens(messages))
        if room <= max_tokens:
            return first
        log.warning(
            "role=%s task=%s: answer cut at max_tokens=%d; asking once more with max_tokens=%d",
            role,
            task_id,
            max_tokens,
            room,
        )
        return self._complete_once(*args, room).model_copy(update={"length_retried": True})

    def context_window(self, endpoint: EndpointConfig) -> int | None:
        """The configured window, else the one the server reported to the pre-flight check."""
        if endpoint.context_window is not None:
            return endpoint.context_window
        with self._learned_lock:
            return self._server_windows.get(_ident(endpoint))

    def learn(
        self, endpoint: EndpointConfig, *, context_window: int | None = None, response_format: str | None = None
    ) -> None:
        """What a pre-flight check found: the server's window, the response_format mode it takes."""
        with self._learned_lock:
            if context_window is not None:
                self._server_windows[_ident(endpoint)] = context_window
            if response_format is not None:
                self._format_modes[_ident(endpoint)] = response_format

    def _fit(
        self, role: str, task_id: str, endpoint: EndpointConfig, messages: list[dict[str, Any]], window: int | None
    ) -> int:
        if window is None:
            return endpoint.max_tokens
        prompt = estimate_prompt_tokens(messages)
        room = window - prompt
        if room < min(endpoint.max_tokens, MIN_ANSWER_TOKENS):
            raise PromptTooLong(role, task_id, prompt, window, endpoint.max_tokens)
        return min(endpoint.max_tokens, room)

    def _complete_once(
        self,
        role: str,
        endpoint: EndpointConfig,
        messages: list[dict[str, Any]],
        task_id: str,
        prompt_version: str,
        sample_index: int,
        response_format: dict[str, Any] | None,
        window: int | None,
        max_tokens: int,
    ) -> Completion:
        with self._learned_lock:
            mode = self._format_modes.get(_ident(endpoint), endpoint.response_format)
        formats = sent_formats(mode, response_format)
        materials = [
            CacheKeyMaterial(
                role=role,
                model=endpoint.model,
                messages=messages,
                temperature=endpoint.temperature,
                max_tokens=max_tokens,
                response_format=f,
                prompt_version=prompt_version,
                sample_index=sample_index,
            )
            for f in formats
        ]
        extra = {"max_tokens": max_tokens, "context_window": window}
        # A recorded answer under any spelling of the format is the answer (replay needs no server).
        for material in materials:
            hit = self._from_cache(material.key(), role, task_id)
            if hit is not None:
                return hit.model_copy(update=extra)
        if self.config.mode == "replay":
            raise CacheMiss(role, task_id, materials[0].key())
        for i, material in enumerate(materials):
            key = material.key()
            with self._single_flight(key):
                # Another thread may have recorded this key while we waited for the flight lock.
                hit = self._from_cache(key, role, task_id)
                if hit is not None:
                    return hit.model_copy(update=extra)
                self._check_budget(role, task_id, endpoint.model)
                try:
                    return self._live(material, key, endpoint, task_id).model_copy(update=extra)
                except _FormatRefused as refused:
                    self._fall_back(refused, role, task_id, endpoint, material.response_format, formats[i + 1 :])
        raise AssertionError("unreachable: the last format returns or raises")

    def _fall_back(
        self,
        refused: _FormatRefused,
        role: str,
        task_id: str,
        endpoint: EndpointConfig,
        refused_format: dict[str, Any] | None,
        left: list[dict[str, Any] | None],
    ) -> None:
        """After the server refused a response_format: the next one is learned for the endpoint, or,
        when none is left, the call has failed for good."""
        if not left:
            raise LLMCallFailed(
                role,
                task_id,
                f"{refused.failure.reason} (the server refuses "
                f'response_format; set response_format = "none" for this role)',
                refused.attempts,
                refused.failure.status,
                transient=False,
            ) from None
        next_mode = "none" if left[0] is None else str(left[0].get("type"))
        log.warning(
            "role=%s model=%s: server refused response_format %s (%s); using %s from now on",
            role,
            endpoint.model,
            (refused_format or {}).get("type"),
            refused.failure.reason,
            next_mode,
        )
        self.learn(endpoint, response_format=next_mode)

    def map(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Outcome[Any, Any]]:
        """Run `fn` over `items` with `config.concurrency` threads; one `Outcome` per item, in order."""
        return map_concurrently(fn, items, self.config.concurrency)

    def close(self) -> None:
        """Close the transport, then an owned cache (whose close raises CacheWriteError when paid
        answers could not be stored), the cache whatever the transport did."""
        try:
            self.transport.close()
        finally:
            if self._owns_cache:
                self.cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- cache and budget ---------------------------------------------------------------------
    def _from_cache(self, key: str, role: str, task_id: str) -> Completion | None:
        entry = self.cache.get(key)
        if entry is None:
            return None
        self.ledger.record(
            role=role,
            task_id=task_id,
            model=entry.model,
            prompt_tokens=entry.prompt_tokens,
            completion_tokens=entry.completion_tokens,
            cached=True,
        )
        return _completion(entry, role=role, task_id=task_id, cached=True, attempts=0)

    def _check_budget(self, role: str, task_id: str, model: str) -> None:
        budget = self.config.budget_usd
        if budget is None:
            return
        if not self.ledger.is_priced(model):
            raise UnpricedModel(role, task_id, model)
        spent = self.ledger.spent_usd
        # Checked before each live call. Calls already in flight may finish past the cap, so the
        # overshoot is bounded by `concurrency` calls; finished work stays in the cache.
        if spent >= budget:
            raise BudgetExceeded(role, task_id, spent, budget)

    # -- the live call ------------------------------------------------------------------------
    def _live(self, material: CacheKeyMaterial, key: str, endpoint: EndpointConfig, task_id: str) -> Completion:
        role = material.role
        answer, attempts = self._call_with_retries(material, endpoint, task_id)
        prompt_tokens, completion_tokens, estimated = _tokens(answer, material.messages)
        if not isinstance(answer.text, str):
            self._billed_without_text(material, endpoint, task_id, answer, attempts)
        if estimated:
            log.info("role=%s task=%s: endpoint returned no usage; tokens estimated locally", role, task_id)
        entry = CacheEntry(
            key=key,
            request=material,
            text=answer.text or "",
            finish_reason=answer.finish_reason,
            model=endpoint.model,
            response_model=answer.response_model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            usage_estimated=estimated,
            task_id=task_id,
        )
        # Ledgered before the cache write: a paid answer is counted even if storing it fails.
        self.ledger.record(
            role=role,
            task_id=task_id,
            model=endpoint.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached=False,
            retries=attempts - 1,
            estimated=estimated,
        )
        # `put` returns the stored winner if another process recorded this key first; we use it
        # so that this run and any later replay see the same answer.
        with paid.storing(str(self.cache.path)):
            stored = self.cache.put(key, entry)
        return _completion(stored, role=role, task_id=task_id, cached=False, attempts=attempts).model_copy(
            update={
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "usage_estimated": estimated,
            }
        )

    def _call_with_retries(
        self, material: CacheKeyMaterial, endpoint: EndpointConfig, task_id: str
    ) -> tuple[Answer, int]:
        """The answer and the requests it took. Every request sent is in the ledger whatever became
        of it: a call that ends without an answer (retries spent, not retryable, or any exception
        on the way, a stop included) is recorded once, here, with its retries."""
        self.transport.connect(endpoint, material.role)  # a missing API key stops before any request
        sent = [0]
        try:
            return self._retry(material, endpoint, task_id, sent), sent[0]
        except BaseException:
            if sent[0]:
                self.ledger.record_failure(
                    role=material.role, task_id=task_id, model=endpoint.model, retries=sent[0] - 1
                )
            raise

    def _retry(self, material: CacheKeyMaterial, endpoint: EndpointConfig, task_id: str, sent: list[int]) -> Answer:
        role = material.role
        total = endpoint.max_retries + 1
        failure = Failure(retryable=False, reason="no attempt made")
        previous: Failure | None = None
        for attempt in range(1, total + 1):
            sent[0] = attempt
            answer = self.transport.send(endpoint, material)
            if isinstance(answer, Answer):
                return answer
            failure = self._settle(answer, previous, material, endpoint, task_id, attempt)
            previous = failure
            if attempt == total:
                break
            wait = self._backoff(endpoint, attempt, failure.retry_after_s)
            log.warning(
                "role=%s task=%s model=%s: attempt %d/%d failed (%s); retrying in %.2fs",
                role,
                task_id,
                endpoint.model,
                attempt,
                total,
                failure.reason,
                wait,
            )
            self._sleep(wait)
        raise LLMCallFailed(
            role,
            task_id,
            f"gave up after {total} attempts; last error: {failure.reason}",
            total,
            failure.status,
            transient=True,
        )

    def _billed_without_text(
        self, material: CacheKeyMaterial, endpoint: EndpointConfig, task_id: str, answer: Answer, attempts: int
    ) -> None:
        """A 200 without text (content null) was still billed: count it, then fail."""
        p, c, est = _tokens(answer, material.messages)
        self.ledger.record(
            role=material.role,
            task_id=task_id,
            model=endpoint.model,
            prompt_tokens=p,
            completion_tokens=c,
            cached=False,
            retries=attempts - 1,
            estimated=est,
        )
        raise LLMCallFailed(
            material.role,
            task_id,
            f"response has no text content (finish_reason={answer.finish_reason}); {p + c} tokens billed",
            attempts,
            200,
            transient=False,
        )

    def _settle(
        self,
        failure: Failure,
        previous: Failure | None,
        material: CacheKeyMaterial,
        endpoint: EndpointConfig,
        task_id: str,
        attempt: int,
    ) -> Failure:
        """Raise for a failure that retrying cannot fix; return a retryable one."""
        role = material.role
        if failure.format_refused:
            raise _FormatRefused(failure, attempt)
        if failure.context_exceeded:
            said = _WINDOW_IN_MESSAGE.search(failure.reason)
            window = int(said.group(1) or said.group(2)) if said else endpoint.context_window
            raise PromptTooLong(
                role,
                task_id,
                estimate_prompt_tokens(material.messages),
                window,
                material.max_tokens,
                source=f"estimate; server said: {failure.reason}",
            )
        if (
            failure.retryable
            and previous is not None
            and failure.status in _DETERMINISTIC_5XX
            and failure.status == previous.status
            and failure.reason == previous.reason
        ):
            # Stop paying for retries now; but only a request the server says is invalid is a
            # final verdict: a generic "server had an error" twice may still be an outage.
            failure = failure.model_copy(
                update={
                    "retryable": False,
                    "transient": not _REQUEST_INVALID.search(failure.reason),
                    "reason": f"{failure.reason} (the same error twice: deterministic, not retried)",
                }
            )
        if not failure.retryable:
            suffix = "" if "not retried" in failure.reason else " (not retryable)"
            raise LLMCallFailed(
                role, task_id, f"{failure.reason}{suffix}", attempt, failure.status, transient=failure.transient
            )
        return failure

    def _backoff(self, endpoint: EndpointConfig, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            # The server said when; waiting less only earns another 429.
            return min(max(retry_after_s, 0.0), endpoint.retry_after_max_s)
        ceiling = min(endpoint.backoff_base_s * 2 ** (attempt - 1), endpoint.backoff_max_s)
        with self._rng_lock:
            # "Equal jitter": at least half the exponential step, so concurrent retries spread out
            # without ever retrying immediately.
            return ceiling * (0.5 + 0.5 * self._rng.random())

    # -- single flight ------------------------------------------------------------------------
    def _single_flight(self, key: str) -> _Flight:
        return _Flight(self, key)


class _Flight:
    """Holds a per-key lock for the duration of a live call; the entry is dropped by the last user."""

    def __init__(self, client: LLMClient, key: str) -> None:
        self._client = client
        self._key = key

    def __enter__(self) -> None:
        c = self._client
        with c._inflight_lock:
            slot = c._inflight.setdefault(self._key, [threading.Lock(), 0])
            slot[1] += 1
        slot[0].acquire()

    def __exit__(self, *exc: object) -> None:
        c = self._client
        with c._inflight_lock:
            slot = c._inflight[self._key]
            slot[0].release()
            slot[1] -= 1
            if slot[1] == 0:
                del c._inflight[self._key]


def _tokens(answer: Answer, messages: list[dict[str, Any]]) -> tuple[int, int, bool]:
    """(prompt, completion, estimated): the server's counts, else the local estimate (see tokens.py)."""
    if answer.prompt_tokens is not None and answer.completion_tokens is not None:
        return int(answer.prompt_tokens), int(answer.completion_tokens), False
    prompt = int(answer.prompt_tokens) if answer.prompt_tokens is not None else estimate_prompt_tokens(messages)
    completion = (
        int(answer.completion_tokens) if answer.completion_tokens is not None else estimate_tokens(answer.text or "")
    )
    return prompt, completion, True


def _ident(endpoint: EndpointConfig) -> tuple[str, str]:
    return (endpoint.base_url, endpoint.model)


def _completion(entry: CacheEntry, *, role: str, task_id: str, cached: bool, attempts: int) -> Completion:
    return Completion(
        text=entry.text,
        finish_reason=entry.finish_reason,
        model=entry.model,
        response_model=entry.response_model,
        prompt_tokens=entry.prompt_tokens,
        completion_tokens=entry.completion_tokens,
        cached=cached,
        cache_key=entry.key,
        role=role,
        task_id=task_id,
        prompt_version=entry.request.prompt_version,
        sample_index=entry.request.sample_index,
        attempts=attempts,
        usage_estimated=entry.usage_estimated,
    )
