"""The pre-flight check against loopback servers behaving like OpenAI, llama.cpp and broken set-ups."""

from __future__ import annotations

import pytest
from llmkit import API_KEY, ENV, dead_url, endpoint

from classforge_bench.pipeline.config import Config, EndpointConfig
from classforge_bench.pipeline.llm.preflight import (
    EndpointUnusable,
    apply_reports,
    check_endpoint,
    check_endpoints,
    endpoints_of_build,
    require_usable,
)
from tests.fakes.openai_server import FakeOpenAIServer, ServerProfile


def test_an_openai_like_server_passes_every_probe():
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"]) as srv:
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=5), ENV)
    assert r.ok and r.reachable and r.authenticated and r.model_listed
    assert (r.response_format, r.usage, r.n_above_1, r.seed) == ("json_schema", True, True, True)
    assert r.probe_tokens > 0 and r.latency_s is not None


def test_a_llama_cpp_like_server_is_found_out():
    profile = ServerProfile(json_schema=False, usage=False, n=False, seed=False, context_window=4096)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"], profile=profile) as srv:
        ep = endpoint(srv.base_url, timeout_s=5)
        r = check_endpoint(["judge-1"], ep, ENV)
    assert r.ok
    assert (r.response_format, r.usage, r.n_above_1, r.seed) == ("json_object", False, False, False)
    assert (r.context_window, r.context_window_source) == (4096, "server")
    assert any("estimated locally" in n for n in r.notes)
    apply_reports({"judge-1": ep}, [r])
    assert (ep.context_window, ep.response_format) == (4096, "json_object")


def test_a_pinned_refused_format_is_a_problem():
    with FakeOpenAIServer(api_key=API_KEY, default="{}", profile=ServerProfile(json_schema=False)) as srv:
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=5, response_format="json_schema"), ENV)
    assert not r.ok and "refused by the server" in r.problems[0]


def test_unreachable_fails_fast_with_one_line():
    ep = endpoint(dead_url(), timeout_s=5)
    r = check_endpoint(["composer"], ep, ENV)
    assert not r.ok and r.problems[0].startswith("unreachable")
    with pytest.raises(EndpointUnusable) as info:
        require_usable([r])
    assert "composer (model-a at http://127.0.0.1:" in str(info.value) and "\n" not in str(info.value)


def test_wrong_key_and_missing_key_and_unknown_model():
    with FakeOpenAIServer(api_key=API_KEY, default="x", models=["model-a"]) as srv:
        wrong = check_endpoint(["solver"], endpoint(srv.base_url, timeout_s=5), {"OPENAI_API_KEY": "sk-wrong"})
        sent = len(srv.requests)
        missing = check_endpoint(["solver"], endpoint(srv.base_url, timeout_s=5), {})
        assert len(srv.requests) == sent  # nothing is sent without the key
        unknown = check_endpoint(["solver"], endpoint(srv.base_url, model="nope", timeout_s=5), ENV)
    assert wrong.authenticated is False and "HTTP 401" in wrong.problems[0]
    assert "OPENAI_API_KEY is not set" in missing.problems[0]
    assert unknown.ok and unknown.model_listed is False and "not in the server's list" in unknown.notes[0]


def test_roles_sharing_an_endpoint_are_checked_once():
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}') as srv:
        cfg = Config()
        for ep in endpoints_of_build(cfg).values():
            ep.base_url, ep.timeout_s = srv.base_url, 5
        cfg.llm.solver = EndpointConfig(base_url=srv.base_url, model="other", timeout_s=5)
        reports = check_endpoints(endpoints_of_build(cfg), ENV)
    assert [r.roles for r in reports] == [["composer", "test_writer", "judge-1", "judge-2", "judge-3"], ["solver"]]


def test_the_served_window_is_one_slot_of_llama_cpp_never_the_training_window():
    # 8192 tokens served over 2 slots: a request gets 4096; the listing says 8192 and 32768 (n_ctx_train).
    profile = ServerProfile(context_window=8192, llama_cpp=True, slots=2)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"], profile=profile) as srv:
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=5), ENV)
    assert r.ok and (r.context_window, r.context_window_source) == (4096, "server")
    assert r.context_window_from.startswith("/props")


def test_a_window_the_configuration_sets_names_no_server_field():
    profile = ServerProfile(context_window=8192, llama_cpp=True, slots=2)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"], profile=profile) as srv:
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=5, context_window=2048), ENV)
    assert (r.context_window, r.context_window_source, r.context_window_from) == (2048, "config", None)


def test_a_listing_with_only_the_training_window_gives_the_served_one_or_none():
    profile = ServerProfile(context_window=8192, llama_cpp=True)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"], profile=profile) as srv:
        srv.llama_cpp_path = lambda path: None  # an older llama.cpp: no /props, /models meta only
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=5), ENV)
    assert (r.context_window, r.context_window_from) == (8192, "/models meta.n_ctx")


def _hold_the_slot(srv: FakeOpenAIServer) -> None:
    """Another client's request that the one-slot server computes for as long as the test runs."""
    import threading

    import httpx

    def send() -> None:
        try:
            httpx.post(f"{srv.base_url}/chat/completions", json={"model": "model-a", "messages": []}, timeout=120)
        except httpx.HTTPError:
            pass  # the server stops at the end of the test

    threading.Thread(target=send, daemon=True).start()
    for _ in range(400):
        if srv.answering:
            return
        import time

        time.sleep(0.05)
    raise AssertionError("the other client's request never reached the server")


@pytest.mark.parametrize("busy", [True, False])
def test_a_timed_out_probe_tells_a_busy_server_from_one_that_does_not_answer(busy):
    from tests.fakes.openai_server import Delay

    # Busy: llama.cpp's /slots says its one slot computes another client's request. Not busy: a
    # server that takes the request and never answers, and has nothing to say about itself.
    profile = ServerProfile(llama_cpp=busy, slots=1)
    with FakeOpenAIServer(default=Delay(seconds=600), models=["model-a"], profile=profile) as srv:
        if busy:
            _hold_the_slot(srv)
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=1), ENV)
    assert not r.ok and r.busy is busy
    assert ("all 1 slot(s) of the server are computing" in r.problems[0]) is busy
    assert ("did not answer (hung" in r.problems[0]) is not busy


def test_a_busy_server_is_told_whatever_the_sdk_calls_its_timeout(monkeypatch):
    import openai

    from tests.fakes.openai_server import Delay

    def reworded(self, request):  # a later openai release's wording
        openai.APIConnectionError.__init__(self, message="The read deadline passed.", request=request)

    monkeypatch.setattr(openai.APITimeoutError, "__init__", reworded)
    with FakeOpenAIServer(
        default=Delay(seconds=600), models=["model-a"], profile=ServerProfile(llama_cpp=True, slots=1)
    ) as srv:
        _hold_the_slot(srv)
        r = check_endpoint(["judge-1"], endpoint(srv.base_url, timeout_s=1), ENV)
    assert r.busy is True, r.problems
    assert "The read deadline passed. - busy: all 1 slot(s) of the server are computing" in r.problems[0]
    assert r.timed_out
