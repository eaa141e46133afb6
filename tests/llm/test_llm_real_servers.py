"""The client against servers that behave like real local ones (llama.cpp, vLLM, proxies):
refused json_schema, no usage, content null, small windows, cut answers, streaming."""

from __future__ import annotations

import pytest
from llmkit import API_KEY, endpoint

from classforge_bench.pipeline.config import CostConfig
from classforge_bench.pipeline.llm.errors import BudgetExceeded, LLMCallFailed, PromptTooLong
from classforge_bench.pipeline.llm.tokens import estimate_prompt_tokens
from tests.fakes.openai_server import FakeOpenAIServer, NullContent, ServerProfile, Text, Truncated

MSGS = [{"role": "system", "content": "You judge tests."}, {"role": "user", "content": "Score these tests."}]
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
FORMAT = {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": SCHEMA}}


def call(h, ep, *, messages=MSGS, task_id="t1", role="judge-1", **kw):
    return h.client.complete(role, ep, messages, task_id=task_id, prompt_version="judge@v1", **kw)


def served(profile: ServerProfile, **kw) -> FakeOpenAIServer:
    return FakeOpenAIServer(api_key=API_KEY, profile=profile, **kw)


def test_auto_falls_back_to_json_object_with_the_schema_and_remembers(harness, tmp_path):
    with served(ServerProfile(json_schema=False), default='{"score": 10}') as srv:
        h = harness()
        ep = endpoint(srv.base_url)
        assert call(h, ep, response_format=FORMAT).text == '{"score": 10}'
        assert (
            call(
                h, ep, task_id="t2", messages=[*MSGS, {"role": "user", "content": "again"}], response_format=FORMAT
            ).text
            == '{"score": 10}'
        )
        sent = [r.body.get("response_format") for r in srv.chat_requests]
        # Refused once; from then on json_object carrying the schema, never json_schema again.
        assert sent == [FORMAT, {"type": "json_object", "schema": SCHEMA}, {"type": "json_object", "schema": SCHEMA}]
        assert srv.chat_requests[0].reply == "HTTPError"
    replay = harness(mode="replay")
    assert call(replay, endpoint("http://127.0.0.1:9/v1"), response_format=FORMAT).cached


def test_a_pinned_json_schema_mode_fails_once_as_a_deterministic_error(harness):
    with served(ServerProfile(json_schema=False), default="{}") as srv:
        h = harness()
        with pytest.raises(LLMCallFailed) as info:
            call(h, endpoint(srv.base_url, response_format="json_schema"), response_format=FORMAT)
        assert len(srv.chat_requests) == 1 and h.sleeps == []
        assert not info.value.transient and "json_object" in info.value.reason
        assert 'response_format = "none"' in info.value.reason


def test_mode_none_sends_no_response_format(harness):
    with served(ServerProfile(), default="{}") as srv:
        call(harness(), endpoint(srv.base_url, response_format="none"), response_format=FORMAT)
        assert "response_format" not in srv.chat_requests[0].body


def test_missing_usage_is_estimated_ledgered_and_the_budget_enforced_on_it(harness):
    with served(ServerProfile(usage=False), default="x" * 4000) as srv:
        h = harness(budget_usd=0.002, costs={"model-a": CostConfig(prompt_per_mtok=1.0, completion_per_mtok=1.0)})
        ep = endpoint(srv.base_url)
        first = call(h, ep)
        assert first.usage_estimated and first.completion_tokens == 1000
        assert first.prompt_tokens == estimate_prompt_tokens(MSGS)
        call(h, ep, task_id="t2", messages=[*MSGS, {"role": "user", "content": "more"}])
        with pytest.raises(BudgetExceeded):
            call(h, ep, task_id="t3", messages=[*MSGS, {"role": "user", "content": "and more"}])
        usage = h.ledger.summary().total
        assert usage.requests == 2 and usage.estimated_requests == 2 and usage.completion_tokens == 2000
        assert len(srv.chat_requests) == 2


def test_billed_null_content_is_ledgered_with_its_tokens(server, harness):
    server.add_rule(replies=[NullContent(prompt_tokens=120, completion_tokens=512)])
    h = harness()
    with pytest.raises(LLMCallFailed) as info:
        call(h, endpoint(server.base_url))
    assert "no text content" in info.value.reason and "632 tokens billed" in info.value.reason
    usage = h.ledger.summary().total
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (1, 120, 512)
    assert len(server.chat_requests) == 1


def test_a_prompt_that_cannot_fit_the_window_is_never_sent(server, harness):
    server.default = "x"
    h = harness()
    long = [{"role": "user", "content": "y" * 4000}]
    with pytest.raises(PromptTooLong) as info:
        call(h, endpoint(server.base_url, context_window=900, max_tokens=512), messages=long)
    assert info.value.prompt_tokens == 1004 and info.value.context_window == 900
    assert "1004 tokens" in str(info.value) and server.chat_requests == []


def test_a_tight_window_shrinks_the_answer_room_instead(server, harness):
    server.default = "x"
    h = harness()
    msgs = [{"role": "user", "content": "y" * 2000}]  # 504 tokens by the estimate
    out = call(h, endpoint(server.base_url, context_window=1000, max_tokens=800), messages=msgs)
    assert server.chat_requests[0].body["max_tokens"] == 496 and out.max_tokens == 496


def test_server_context_length_exceeded_is_prompt_too_long_not_retried(harness):
    with served(ServerProfile(context_window=300), default="x") as srv:
        h = harness()
        with pytest.raises(PromptTooLong) as info:
            call(h, endpoint(srv.base_url, max_tokens=256), messages=[{"role": "user", "content": "y" * 400}])
        # The refusal named the window (300): the prompt (104 tokens) leaves less than the
        # minimum answer room, so it is dropped with the counts and not sent again.
        assert "does not fit the context window of 300 tokens" in str(info.value)
        assert len(srv.chat_requests) == 1 and h.sleeps == []


def test_an_answer_cut_at_max_tokens_is_asked_once_more_with_more_room(server, harness):
    server.add_rule(replies=[Truncated("class A", completion_tokens=256), Text(text="class A: pass")])
    h = harness()
    out = call(h, endpoint(server.base_url, max_tokens=256))
    assert out.text == "class A: pass" and out.length_retried and not out.truncated
    assert [r.body["max_tokens"] for r in server.chat_requests] == [256, 512]


def test_a_second_cut_names_the_limit_that_cut_it(server, harness):
    server.add_rule(replies=[Truncated("a", completion_tokens=256), Truncated("ab", completion_tokens=512)])
    h = harness()
    out = call(h, endpoint(server.base_url, max_tokens=256))
    assert out.truncated and out.cut_by.startswith("max_tokens=512")


def test_a_cut_by_the_context_window_says_so_and_is_not_retried(server, harness):
    msgs = [{"role": "user", "content": "y" * 2000}]  # 504 tokens by the estimate
    server.add_rule(replies=[Truncated("a", prompt_tokens=504, completion_tokens=496)])
    h = harness()
    out = call(h, endpoint(server.base_url, max_tokens=2048, context_window=1000), messages=msgs)
    assert out.truncated and len(server.chat_requests) == 1
    assert out.cut_by.startswith("the context window of 1000 tokens (prompt 504 + answer 496")


def test_a_cut_below_max_tokens_is_a_server_side_limit(server, harness):
    server.add_rule(replies=[Truncated("a", prompt_tokens=50, completion_tokens=100)])
    out = call(harness(), endpoint(server.base_url, max_tokens=256))
    assert out.cut_by.startswith("a server-side limit at 100 answer tokens")


@pytest.mark.parametrize("usage", [True, False])
def test_streamed_answers_arrive_whole_with_usage_or_an_estimate(harness, usage):
    with served(ServerProfile(usage=usage), default="class Stack:\n    pass\n" * 5) as srv:
        h = harness()
        out = call(h, endpoint(srv.base_url, stream=True))
        assert out.text == "class Stack:\n    pass\n" * 5 and out.finish_reason == "stop"
        assert out.usage_estimated is (not usage)
        assert srv.chat_requests[0].body["stream"] is True


def test_a_slow_stream_is_not_cut_by_a_timeout_shorter_than_the_whole_answer(harness):
    # 8 chunks at 0.6 s: 4.8 s in all, with a 3 s timeout between chunks (5x a gap: room for a busy machine).
    with served(ServerProfile(chunk_delay_s=0.6), default="z" * 120) as srv:
        out = call(harness(), endpoint(srv.base_url, stream=True, timeout_s=3.0))
        assert out.text == "z" * 120


@pytest.mark.parametrize("llama_cpp", [False, True], ids=["openai-wording", "llama.cpp-wording"])
def test_a_window_named_in_the_servers_refusal_is_learnt_and_the_answer_room_fitted(harness, llama_cpp):
    # The server does not list its window; its 400 names it. The prompt fits, max_tokens did not.
    with served(ServerProfile(context_window=1000, report_window=False, llama_cpp=llama_cpp), default="x") as srv:
        h = harness()
        ep = endpoint(srv.base_url, max_tokens=900)
        msgs = [{"role": "user", "content": "y" * 1600}]  # 404 tokens by the estimate
        assert call(h, ep, messages=msgs).text == "x"
        assert [r.body["max_tokens"] for r in srv.chat_requests] == [900, 596]
        assert h.client.context_window(ep) == 1000
        with pytest.raises(PromptTooLong):  # now known: a prompt that cannot fit is never sent
            call(h, ep, messages=[{"role": "user", "content": "y" * 4000}])
        assert len(srv.chat_requests) == 2


def test_answers_stream_by_default(harness):
    with served(ServerProfile(), default="streamed answer") as srv:
        assert call(harness(), endpoint(srv.base_url)).text == "streamed answer"
        assert srv.chat_requests[0].body["stream"] is True


def test_a_server_refusing_streams_gets_whole_answers_from_then_on(harness):
    with served(ServerProfile(stream=False), default="whole answer") as srv:
        h = harness()
        ep = endpoint(srv.base_url)
        assert call(h, ep).text == "whole answer"
        assert call(h, ep, task_id="t2", messages=[*MSGS, {"role": "user", "content": "again"}]).text == "whole answer"
        assert [r.body.get("stream", False) for r in srv.chat_requests] == [True, False, False]
        assert srv.chat_requests[0].reply == "HTTPError"


def test_a_server_ignoring_stream_and_sending_one_body_is_understood(harness):
    # A proxy that drops `stream` and answers with a plain completion.
    with served(ServerProfile(ignore_stream=True), default="one body") as srv:
        out = call(harness(), endpoint(srv.base_url))
        assert out.text == "one body" and srv.chat_requests[0].body["stream"] is True


def test_a_whole_answers_limit_grows_with_the_measured_speed(harness):
    with served(ServerProfile(), default="w " * 200) as srv:
        h = harness()
        ep = endpoint(srv.base_url, stream=False, timeout_s=30, max_tokens=4096)
        assert h.client._wall_clock_s(ep, 4096) == 30  # nothing measured yet: timeout_s
        call(h, ep)
        limit = h.client._wall_clock_s(ep, 4096)
        speed = h.client._speeds[(ep.base_url, ep.model)]
        assert limit == max(30, 2 * 4096 / speed) and h.client._wall_clock_s(ep, 10**9) > 30
