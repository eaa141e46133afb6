"""The pre-flight check against loopback servers behaving like OpenAI, llama.cpp and broken set-ups."""

from __future__ import annotations

import pytest

from llmkit import API_KEY, ENV, dead_url, endpoint
from pipeline.config import Config, EndpointConfig
from pipeline.llm.fake_server import FakeOpenAIServer, ServerProfile
from pipeline.llm.preflight import (
    EndpointUnusable,
    apply_reports,
    check_endpoint,
    check_endpoints,
    endpoints_of_build,
    require_usable,
)


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
