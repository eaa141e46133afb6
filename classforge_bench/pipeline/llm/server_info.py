"""What a local server says about itself beyond the OpenAI API: its served window, whether it is busy.

llama.cpp's server answers `GET /props` with `default_generation_settings.n_ctx` (the window of
one slot: the `--ctx-size` divided among `--parallel` slots, what one request really gets) and
`GET /slots` with each slot's `is_processing`; its `/v1/models` entry carries `meta.n_ctx` (served)
beside `meta.n_ctx_train` (what the weights were trained for, often 4x larger: never the served
window). vLLM lists `max_model_len` in `/v1/models`. These paths live at the server's origin (the
base URL without `/v1`). Every read here is best-effort: a server without them says nothing.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

# A short look: these paths answer at once even while every slot computes.
INFO_TIMEOUT_S = 10.0


def origin_of(base_url: str) -> str:
    """`http://host:8080/v1` -> `http://host:8080` (the paths below are not under /v1)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _get_json(url: str, headers: dict[str, str], timeout_s: float) -> Any:
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def slot_window(base_url: str, headers: dict[str, str], timeout_s: float = INFO_TIMEOUT_S) -> int | None:
    """llama.cpp's per-slot context window from `/props`, None when the server has no such path."""
    props = _get_json(f"{origin_of(base_url)}/props", headers, timeout_s)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


def busy_state(base_url: str, headers: dict[str, str], timeout_s: float = INFO_TIMEOUT_S) -> str | None:
    """A sentence when the server says it is busy (every `/slots` entry processing, or `/health`
    answering 503 "no slot available"); None when it says it is idle or says nothing."""
    origin = origin_of(base_url)
    slots = _get_json(f"{origin}/slots", headers, timeout_s)
    if isinstance(slots, list) and slots and all(isinstance(s, dict) for s in slots):
        working = sum(bool(s.get("is_processing")) for s in slots)
        if working == len(slots):
            return f"busy: all {len(slots)} slot(s) of the server are computing other requests (its /slots)"
        return None
    try:
        health = httpx.get(f"{origin}/health", headers=headers, timeout=timeout_s)
    except httpx.HTTPError:
        return None
    if health.status_code == 503 and "slot" in health.text.lower():
        return f"busy: the server's /health says {health.text.strip()[:120]}"
    return None
