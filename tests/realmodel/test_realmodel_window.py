"""The served window, read from the real llama.cpp server (opt-in: -m realmodel)."""

from __future__ import annotations

import openai
import pytest

from classforge_bench.pipeline.config import EndpointConfig
from classforge_bench.pipeline.llm.preflight import EndpointReport, _list_models
from classforge_bench.pipeline.llm.server_info import slot_window

pytestmark = pytest.mark.realmodel


def test_the_served_window_is_what_the_server_was_started_with(realmodel_server):
    base_url, ctx = realmodel_server["base_url"], realmodel_server["ctx"]
    assert slot_window(base_url, {}) == ctx  # --parallel 1: the slot holds the whole context
    ep = EndpointConfig(base_url=base_url, model=realmodel_server["model"])
    report = EndpointReport(roles=["composer"], base_url=base_url, model=ep.model)
    with openai.OpenAI(base_url=base_url, api_key="not-needed", timeout=60, max_retries=0) as sdk:
        assert _list_models(sdk, ep, report)
    # The listing's meta.n_ctx is served; its n_ctx_train (32768 for Qwen2.5-Coder) is not.
    assert (report.context_window, report.context_window_from) == (ctx, "/models meta.n_ctx")
