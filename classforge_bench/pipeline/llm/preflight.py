"""Know an endpoint before spending on it: one short check per distinct endpoint.

    reports = check_endpoints(endpoints_of_build(config), env, timeout_s=config.llm.preflight_timeout_s)

For each (base URL, model, key variable) it finds out, with a handful of tiny requests:
reachability, authentication, whether the model is served, the served context window (llama.cpp's
per-slot `n_ctx` from `/props`, else the `/models` entry: vLLM `max_model_len`, llama.cpp
`meta.n_ctx`, others `context_length`; never `n_ctx_train`, the weights' training window; else the
configuration; else the limit a refusal names, learned by the client), which `response_format` it honours (json_schema, else
json_object, else none), whether `usage` comes back, whether `n > 1` and `seed` are accepted.

A probe that times out is told apart: a server whose `/slots` (or `/health`) says every slot is
computing is *busy*, not dead (server_info.py).

A report with `problems` means the endpoint cannot be used: callers stop before the first paid
call, with the report's one-line message. `apply_reports` writes what was found into the
endpoint configs (`context_window` when unset, `response_format` when "auto"), so the stages adapt.

The probes are paid requests too: each report counts its answered probes and their tokens (the
server's `usage`, else the local estimate), and `probe_ledger_entries` turns them into usage-ledger
entries of role `preflight`, which `build` and `evaluate` add to the run's ledger, so the ledger
equals what the server counted. Refused probes (an HTTP 400 for `n > 1`) carry no tokens and are
not counted as failed calls: refusing is the answer the probe asks for. Every probe carries the
header `X-Classforge-Purpose: preflight`, so a proxy or a server log can tell probes apart.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Literal

import openai
from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import (
    Config,
    ConfigError,
    EndpointConfig,
    LLMConfig,
    MissingAPIKey,
    resolve_api_key,
)
from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.llm.ledger import LedgerEntry, UsageLedger
from classforge_bench.pipeline.llm.server_info import busy_state, slot_window
from classforge_bench.pipeline.llm.tokens import estimate_prompt_tokens, estimate_tokens

_PROBE = [{"role": "user", "content": 'Answer with the JSON object {"ok": true} and nothing else.'}]
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_PROBE_MAX_TOKENS = 16
PROBE_ROLE = "preflight"
# At most this many chat probes per endpoint: the first answer, two structured-output formats, n=2, seed.
PROBE_CHATS_MAX = 5
# Tokens a server may count beyond the probe's text (chat template, the schema): a margin for the bound.
_PROBE_OVERHEAD_TOKENS = 64
PROBE_HEADER = {"X-Classforge-Purpose": "preflight"}
_WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length")


class EndpointReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roles: list[str]
    base_url: str
    model: str
    reachable: bool = False
    authenticated: bool | None = None
    model_listed: bool | None = Field(None, description="None: the server has no /models listing")
    served_models: list[str] = Field(default_factory=list)
    context_window: int | None = None
    context_window_source: Literal["config", "server"] | None = None
    context_window_from: str | None = Field(None, description="which server field gave the window")
    busy: bool | None = Field(None, description="a probe timed out while the server said all its slots were busy")
    timed_out: bool = Field(
        False, description="a probe got no answer in time (the SDK's timeout error, whatever its wording)"
    )
    response_format: Literal["json_schema", "json_object", "none"] | None = Field(
        None, description="the mode JSON answers will use (the configured one, or what auto found)"
    )
    usage: bool | None = None
    n_above_1: bool | None = None
    seed: bool | None = None
    latency_s: float | None = Field(None, description="time of the first tiny chat request")
    probe_tokens: int = Field(0, description="prompt + completion tokens of the answered probes")
    probe_requests: int = Field(0, description="probe requests the server answered")
    probe_prompt_tokens: int = 0
    probe_completion_tokens: int = 0
    probe_estimated: int = Field(0, description="answered probes whose tokens were estimated (no usage sent)")
    problems: list[str] = Field(default_factory=list, description="why the endpoint cannot be used")
    notes: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        where = f"{'/'.join(self.roles)} ({self.model} at {self.base_url})"
        return f"{where}: {'; '.join(self.problems)}" if self.problems else f"{where}: ok"


class EndpointUnusable(InfrastructureError):
    """One or more endpoints failed the pre-flight check; the message lists each, one line each."""

    def __init__(self, reports: list[EndpointReport]) -> None:
        bad = [r for r in reports if not r.ok]
        super().__init__("endpoint check failed: " + " | ".join(r.line() for r in bad))
        self.reports = reports


def endpoints_of_build(config: Config) -> dict[str, EndpointConfig]:
    llm = config.llm
    roles = {"composer": llm.composer, "test_writer": llm.test_writer}
    roles |= {f"judge-{i + 1}": j for i, j in enumerate(llm.judges)}
    roles["solver"] = llm.solver
    return roles


def endpoints_of_evaluate(config: Config) -> dict[str, EndpointConfig]:
    return {"evaluate": config.evaluate.endpoint}


_BUILD_ROLES = ("composer", "test_writer", "judges", "solver")


def endpoints_configured(config: Config) -> dict[str, EndpointConfig]:
    """The endpoints the configuration sets up: the build's roles when it writes any of them, the
    evaluator's when it writes `[evaluate.endpoint]`; both when it writes neither (all defaults).
    A configuration for one side only is not failed for the other side's unused default."""
    build = any(role in config.llm.model_fields_set for role in _BUILD_ROLES)
    evaluate = "endpoint" in config.evaluate.model_fields_set
    if not build and not evaluate:
        build = evaluate = True
    return (endpoints_of_build(config) if build else {}) | (endpoints_of_evaluate(config) if evaluate else {})


def _distinct(endpoints: Mapping[str, EndpointConfig]) -> list[list[str]]:
    """The roles of each distinct endpoint (roles sharing base URL, model and key are checked once)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for role, ep in endpoints.items():
        groups.setdefault((ep.base_url, ep.model, ep.api_key_env), []).append(role)
    return list(groups.values())


def check_endpoints(
    endpoints: Mapping[str, EndpointConfig], env: Mapping[str, str], *, timeout_s: float = 60.0
) -> list[EndpointReport]:
    """One report per distinct endpoint."""
    return [check_endpoint(roles, endpoints[roles[0]], env, timeout_s=timeout_s) for roles in _distinct(endpoints)]


class ProbeBudgetTooSmall(ConfigError):
    """`llm.budget_usd` cannot pay for the endpoint checks; nothing was sent."""


def require_probe_budget(endpoints: Mapping[str, EndpointConfig], llm: LLMConfig) -> None:
    """Probes are paid requests: with a budget, stop before the first one unless the budget covers
    the most they can cost (unpriced models count 0 here; the client refuses them under a budget)."""
    if llm.budget_usd is None:
        return
    ledger = UsageLedger(llm.costs)
    prompt = estimate_prompt_tokens(_PROBE) + _PROBE_OVERHEAD_TOKENS
    groups = _distinct(endpoints)
    bound = sum(
        ledger.cost_of(endpoints[roles[0]].model, PROBE_CHATS_MAX * prompt, (PROBE_CHATS_MAX + 1) * _PROBE_MAX_TOKENS)
        for roles in groups
    )
    if llm.budget_usd <= 0 or bound > llm.budget_usd:
        raise ProbeBudgetTooSmall(
            f"llm.budget_usd = {llm.budget_usd} cannot cover the endpoint checks (up to {PROBE_CHATS_MAX * len(groups)} "
            f"requests to {len(groups)} endpoint(s), at most US${float(bound):.6f}); nothing was sent: raise "
            f"llm.budget_usd, or set llm.preflight = false to skip the checks"
        )


def probe_ledger_entries(reports: list[EndpointReport], task_id: str = PROBE_ROLE) -> list[LedgerEntry]:
    """The answered probes of `reports` as usage-ledger entries (role `preflight`), one per model."""
    cells: dict[str, dict[str, int]] = {}
    for r in reports:
        if not r.probe_requests:
            continue
        cell = cells.setdefault(
            r.model, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "estimated_requests": 0}
        )
        cell["requests"] += r.probe_requests
        cell["prompt_tokens"] += r.probe_prompt_tokens
        cell["completion_tokens"] += r.probe_completion_tokens
        cell["estimated_requests"] += r.probe_estimated
    return [
        LedgerEntry(role=PROBE_ROLE, task_id=task_id, model=model, counts=counts)
        for model, counts in sorted(cells.items())
    ]


def require_usable(reports: list[EndpointReport]) -> None:
    if any(not r.ok for r in reports):
        raise EndpointUnusable(reports)


def apply_reports(endpoints: Mapping[str, EndpointConfig], reports: list[EndpointReport]) -> None:
    """Write what the check found into the (mutable) endpoint configs so the stages adapt."""
    by_ident = {(r.base_url, r.model): r for r in reports}
    for ep in endpoints.values():
        report = by_ident.get((ep.base_url, ep.model))
        if report is None:
            continue
        if ep.context_window is None and report.context_window is not None:
            ep.context_window = report.context_window
        if ep.response_format == "auto" and report.response_format is not None:
            ep.response_format = report.response_format


def check_endpoint(
    roles: list[str], ep: EndpointConfig, env: Mapping[str, str], *, timeout_s: float = 60.0
) -> EndpointReport:
    report = EndpointReport(roles=list(roles), base_url=ep.base_url, model=ep.model)
    try:
        key = resolve_api_key(ep, env, "/".join(roles))
    except MissingAPIKey as exc:
        report.problems.append(str(exc))
        return report
    with openai.OpenAI(base_url=ep.base_url, api_key=key, timeout=min(timeout_s, ep.timeout_s), max_retries=0) as sdk:
        if not _list_models(sdk, ep, report):
            return _told_busy(report, ep, key)
        _served_window(ep, report, key)
        if not _first_chat(sdk, ep, report):
            return _told_busy(report, ep, key)
        _structured_output(sdk, ep, report)
        report.n_above_1 = _accepted(sdk, ep, report, n=2, expect_choices=2)
        report.seed = _accepted(sdk, ep, report, seed=1)
    if ep.context_window is not None:
        report.context_window, report.context_window_source = ep.context_window, "config"
        report.context_window_from = None  # no server field gave it
    elif report.context_window is None:
        report.notes.append(
            "the server does not report its context window; set context_window for this role "
            "to have long prompts dropped as prompt-too-long before they are sent"
        )
    if report.usage is False:
        report.notes.append(
            "no usage in answers: tokens are estimated locally (ceil(characters / 4)) for the ledger and the budget cap"
        )
    if report.n_above_1 is False:
        report.notes.append("n > 1 unsupported: samples are separate requests (they always are)")
    return report


def _auth(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _served_window(ep: EndpointConfig, report: EndpointReport, key: str | None) -> None:
    """llama.cpp's per-slot window wins over the model listing: with `--parallel N` a request gets
    1/N of the context the listing may state."""
    window = slot_window(ep.base_url, _auth(key))
    if window is not None:
        report.context_window, report.context_window_source = window, "server"
        report.context_window_from = "/props default_generation_settings.n_ctx (one slot)"


def _told_busy(report: EndpointReport, ep: EndpointConfig, key: str | None) -> EndpointReport:
    """A probe that timed out (its problem is the last): busy (the server says every slot computes)
    or not answering at all."""
    if not report.timed_out:
        return report
    busy = busy_state(ep.base_url, _auth(key))
    report.busy = busy is not None
    hint = (
        f"{busy}; it answers once they finish: wait, or raise llm.preflight_timeout_s"
        if busy
        else "the server accepted the connection but did not answer (hung, overloaded or dead)"
    )
    report.problems[-1] = f"{report.problems[-1]} - {hint}"
    return report


def _status_problem(exc: openai.APIStatusError, what: str) -> str:
    body = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else None
    message = body.get("message") if isinstance(body, dict) else None
    return f"{what}: HTTP {exc.status_code}: {message or exc.message}"


def _list_models(sdk: openai.OpenAI, ep: EndpointConfig, report: EndpointReport) -> bool:
    try:
        page = sdk.models.list()
    except openai.APIConnectionError as exc:
        report.timed_out = isinstance(exc, openai.APITimeoutError)
        report.problems.append(f"{'timed out' if report.timed_out else 'unreachable'}: {ep.base_url} ({exc})")
        return False
    except openai.AuthenticationError as exc:
        report.reachable, report.authenticated = True, False
        report.problems.append(
            _status_problem(exc, f"authentication refused (key from {ep.api_key_env or 'no variable'})")
        )
        return False
    except openai.APIStatusError as exc:
        report.reachable = True
        report.notes.append(_status_problem(exc, "no model listing"))
        return True
    report.reachable, report.authenticated = True, True
    items = list(page.data)
    report.served_models = sorted(m.id for m in items)
    report.model_listed = ep.model in report.served_models
    for item in items:
        if item.id == ep.model or len(items) == 1:
            window, field = _window(item.model_extra or {})
            if window is not None:
                report.context_window, report.context_window_source = window, "server"
                report.context_window_from = f"/models {field}"
    if not report.model_listed:
        report.notes.append(f"model {ep.model!r} is not in the server's list ({', '.join(report.served_models[:5])})")
    return True


def _window(extra: dict[str, Any]) -> tuple[int | None, str | None]:
    """The served window a `/models` entry states, and the field it came from. llama.cpp's
    `meta.n_ctx_train` is the weights' training window, not what the server serves: never used.
    llama.cpp's `meta.n_ctx` is its whole context, shared by its slots: with `--parallel N` a request
    gets 1/N of it, so this fallback (a server without `/props`) over-states the window N times; the
    client learns the real one from the server's first refusal."""
    for name in _WINDOW_FIELDS:
        if isinstance(extra.get(name), int) and extra[name] > 0:
            return int(extra[name]), name
    meta = extra.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("n_ctx"), int) and meta["n_ctx"] > 0:
        return int(meta["n_ctx"]), "meta.n_ctx"
    return None, None


def _chat(sdk: openai.OpenAI, ep: EndpointConfig, report: EndpointReport, **extra: Any) -> Any:
    # One mapping, as the client builds its calls: the token limit's keyword is configured (max_tokens
    # or max_completion_tokens), and the probes' extras (n, seed, response_format) never name it.
    params: dict[str, Any] = {"messages": _PROBE, ep.max_tokens_param: _PROBE_MAX_TOKENS, **extra}
    raw = sdk.chat.completions.create(model=ep.model, temperature=0, extra_headers=PROBE_HEADER, **params)
    _count_probe(report, raw)
    return raw


def _count_probe(report: EndpointReport, raw: Any) -> None:
    """An answered probe's tokens: the server's usage, else the client's stated estimate."""
    usage = getattr(raw, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if prompt is None or completion is None:
        choices = getattr(raw, "choices", None) or []
        text = "".join(
            getattr(getattr(c, "message", None), "content", None) or ""
            for c in choices
            if not isinstance(c, (str, bytes))
        )
        prompt = estimate_prompt_tokens(_PROBE) if prompt is None else prompt
        completion = estimate_tokens(text) if completion is None else completion
        report.probe_estimated += 1
    report.probe_requests += 1
    report.probe_prompt_tokens += int(prompt)
    report.probe_completion_tokens += int(completion)
    report.probe_tokens = report.probe_prompt_tokens + report.probe_completion_tokens


def _first_chat(sdk: openai.OpenAI, ep: EndpointConfig, report: EndpointReport) -> bool:
    start = time.monotonic()
    try:
        raw = _chat(sdk, ep, report)
    except openai.APIConnectionError as exc:
        report.timed_out = isinstance(exc, openai.APITimeoutError)
        report.problems.append(f"chat request failed: {exc}")
        return False
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            report.authenticated = False
        what = f"model {ep.model!r} not served" if exc.status_code == 404 else "chat request refused"
        report.problems.append(_status_problem(exc, what))
        return False
    report.latency_s = round(time.monotonic() - start, 3)
    report.authenticated = True
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list) or not choices:
        report.problems.append(f"chat answer is not an OpenAI completion: {str(raw)[:120]!r}")
        return False
    report.usage = getattr(raw, "usage", None) is not None
    return True


def _structured_output(sdk: openai.OpenAI, ep: EndpointConfig, report: EndpointReport) -> None:
    schema_format = {"type": "json_schema", "json_schema": {"name": "probe", "strict": True, "schema": _PROBE_SCHEMA}}
    candidates: list[tuple[Literal["json_schema", "json_object"], dict[str, Any]]] = [
        ("json_schema", schema_format),
        ("json_object", {"type": "json_object", "schema": _PROBE_SCHEMA}),
    ]
    wanted = ep.response_format
    if wanted == "none":
        report.response_format = "none"
        return
    tried = [c for c in candidates if wanted in ("auto", c[0])]
    for mode, fmt in tried:
        try:
            raw = _chat(sdk, ep, report, response_format=fmt)
        except openai.APIStatusError as exc:
            report.notes.append(_status_problem(exc, f"response_format {mode} refused"))
            continue
        except openai.APIConnectionError as exc:
            report.notes.append(f"response_format {mode} probe failed: {exc}")
            continue
        text = getattr(getattr(raw.choices[0], "message", None), "content", None) or ""
        if not _is_json_object(text):
            # Accepted but not honoured (or cut at the probe's tiny budget): say so, keep it.
            report.notes.append(f"response_format {mode} accepted, answer not JSON: {text[:60]!r}")
        report.response_format = mode
        return
    if wanted == "auto":
        report.response_format = "none"
        report.notes.append("no structured output: JSON answers use the schema in the prompt and a strict parser")
    else:
        report.problems.append(
            f"configured response_format {wanted!r} is refused by the server; "
            f'set response_format = "auto" or "none" for this role'
        )


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text.strip().removeprefix("```json").removesuffix("```")), dict)
    except ValueError:
        return False


def _accepted(
    sdk: openai.OpenAI, ep: EndpointConfig, report: EndpointReport, *, expect_choices: int = 1, **extra: Any
) -> bool | None:
    try:
        raw = _chat(sdk, ep, report, **extra)
    except openai.APIStatusError:
        return False
    except openai.APIConnectionError:
        return None
    choices = getattr(raw, "choices", None)
    return isinstance(choices, list) and len(choices) >= expect_choices
