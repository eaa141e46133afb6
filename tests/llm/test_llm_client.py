"""LLMClient against the loopback fake server: caching, replay, retries, budget, threads."""

from __future__ import annotations

import json
import pickle
import threading
import time

import pytest
from llmkit import API_KEY, endpoint

from classforge_bench.pipeline.config import CostConfig, MissingAPIKey
from classforge_bench.pipeline.llm.errors import BudgetExceeded, CacheMiss, LLMCallFailed, UnpricedModel
from tests.fakes.openai_server import (
    Delay,
    Disconnect,
    FakeOpenAIServer,
    HTTPError,
    Malformed,
    Text,
    Truncated,
    fake_token_count,
)

MSGS = [{"role": "system", "content": "You write Python."}, {"role": "user", "content": "Write class Stack."}]


def call(h, ep, *, messages=MSGS, task_id="task-1", role="solver", prompt_version="holistic@v1", **kw):
    return h.client.complete(role, ep, messages, task_id=task_id, prompt_version=prompt_version, **kw)


def test_happy_path_returns_text_usage_and_sends_config(server, harness):
    server.add_rule(model="model-a", replies=["class Stack: pass"])
    h = harness()
    out = call(h, endpoint(server.base_url))
    assert out.text == "class Stack: pass"
    assert out.finish_reason == "stop"
    assert (out.cached, out.attempts, out.role, out.task_id) == (False, 1, "solver", "task-1")
    assert out.model == "model-a" and out.response_model == "model-a"
    assert out.prompt_tokens == fake_token_count("You write Python.\nWrite class Stack.")
    assert out.completion_tokens == fake_token_count("class Stack: pass")
    (req,) = server.chat_requests
    assert req.body["model"] == "model-a"
    assert req.body["messages"] == MSGS
    assert req.body["temperature"] == 0.2 and req.body["max_tokens"] == 256
    assert "response_format" not in req.body
    assert req.headers["authorization"] == f"Bearer {API_KEY}"
    assert len(h.cache) == 1 and h.sleeps == []


def test_second_identical_call_is_served_from_cache(server, harness):
    server.default = "answer"
    h = harness()
    ep = endpoint(server.base_url)
    first = call(h, ep)
    second = call(h, ep, task_id="task-2")
    assert len(server.chat_requests) == 1
    assert second.cached and not first.cached
    assert second.text == first.text and second.cache_key == first.cache_key
    assert second.attempts == 0
    summary = h.ledger.summary()
    assert summary.total.requests == 1 and summary.total.cached_hits == 1
    assert summary.by_task["task-2"].cached_hits == 1 and summary.by_task["task-2"].prompt_tokens == 0


@pytest.mark.parametrize(
    "change",
    [
        {"sample_index": 1},
        {"prompt_version": "holistic@v2"},
        {"role": "composer"},
        {"response_format": {"type": "json_object"}},
    ],
)
def test_key_changes_with_output_relevant_inputs(server, harness, change):
    server.default = "x"
    h = harness()
    # Pinned mode: under "auto" a JSON request may also be served by its no-format spelling.
    ep = endpoint(server.base_url, response_format="json_object")
    a = call(h, ep)
    b = call(h, ep, **change)
    assert a.cache_key != b.cache_key
    assert len(server.chat_requests) == 2 and not b.cached


@pytest.mark.parametrize("field,value", [("temperature", 0.8), ("max_tokens", 512), ("model", "model-b")])
def test_key_changes_with_generation_parameters(server, harness, field, value):
    server.default = "x"
    h = harness()
    a = call(h, endpoint(server.base_url))
    b = call(h, endpoint(server.base_url, **{field: value}))
    assert a.cache_key != b.cache_key and len(server.chat_requests) == 2


def test_key_ignores_base_url_timeouts_and_retries(server, harness):
    server.default = "recorded"
    h = harness()
    a = call(h, endpoint(server.base_url))
    with FakeOpenAIServer(api_key=API_KEY) as other:  # a different port, no script at all
        b = call(h, endpoint(other.base_url, timeout_s=9.0, max_retries=0, backoff_base_s=3.0))
        assert other.requests == []
    assert b.cached and b.cache_key == a.cache_key and b.text == "recorded"


def test_429_honours_retry_after(server, harness):
    server.add_rule(replies=[HTTPError(status=429, message="slow down", retry_after=2), "ok"])
    h = harness()
    out = call(h, endpoint(server.base_url))
    assert out.text == "ok" and out.attempts == 2
    assert h.sleeps == [2.0]
    assert [r.reply for r in server.chat_requests] == ["HTTPError", "Text"]
    assert h.ledger.summary().total.retries == 1


def test_500_then_success_backs_off_with_jitter(server, harness):
    server.add_rule(replies=[HTTPError(status=500), HTTPError(status=503), "ok"])
    h = harness()
    out = call(h, endpoint(server.base_url, backoff_base_s=0.5))
    assert out.text == "ok" and out.attempts == 3
    first, second = h.sleeps
    assert 0.25 <= first <= 0.5  # base * [0.5, 1]
    assert 0.5 <= second <= 1.0  # doubled
    assert len(server.chat_requests) == 3


def test_timeout_then_success(server, harness):
    # The delayed answer never comes in the test's lifetime; the timeout is long enough for any
    # quick answer on a busy machine.
    server.add_rule(replies=[Delay(seconds=600), "in time"])
    h = harness()
    start = time.monotonic()
    out = call(h, endpoint(server.base_url, timeout_s=3.0))
    assert out.text == "in time" and out.attempts == 2
    assert time.monotonic() - start < 300  # the slow answer was not waited for
    assert len(h.sleeps) == 1


def test_a_sub_second_timeout_is_named_as_it_is_set(server, harness):
    server.add_rule(replies=[Delay(seconds=600)])
    with pytest.raises(LLMCallFailed) as info:
        call(harness(), endpoint(server.base_url, timeout_s=0.5, max_retries=0))
    assert "0.5s (timeout_s of this role)" in info.value.reason, info.value.reason


def test_connection_drop_and_malformed_body_are_retried(server, harness):
    server.add_rule(replies=[Disconnect(), Malformed(), Malformed(body='{"unexpected": true}'), "fine"])
    h = harness()
    out = call(h, endpoint(server.base_url, max_retries=3))
    assert out.text == "fine" and out.attempts == 4
    assert len(h.sleeps) == 3


def test_gives_up_after_max_retries_naming_role_and_task(server, harness):
    server.add_rule(replies=[HTTPError(status=503, message="boom")] * 3)
    h = harness()
    with pytest.raises(LLMCallFailed) as info:
        call(h, endpoint(server.base_url, max_retries=2), role="judge_1", task_id="pair-7")
    err = info.value
    assert (err.role, err.task_id, err.attempts, err.status) == ("judge_1", "pair-7", 3, 503)
    assert "judge_1" in str(err) and "pair-7" in str(err) and "gave up after 3 attempts" in str(err)
    assert "HTTP 503: boom" in err.reason and err.transient
    assert len(server.chat_requests) == 3 and len(h.sleeps) == 2
    assert len(h.cache) == 0
    usage = h.ledger.summary().by_role["judge_1"]
    assert (usage.failed_requests, usage.retries, usage.requests) == (1, 2, 0)


def test_400_is_not_retried(server, harness):
    server.add_rule(replies=[HTTPError(status=400, message="bad schema"), "never sent"])
    h = harness()
    with pytest.raises(LLMCallFailed) as info:
        call(h, endpoint(server.base_url))
    assert info.value.status == 400 and info.value.attempts == 1
    assert "not retryable" in info.value.reason and "bad schema" in info.value.reason
    assert len(server.chat_requests) == 1 and h.sleeps == []


def test_wrong_api_key_fails_at_once_as_an_infrastructure_fault(server, harness):
    server.default = "x"
    h = harness()
    h.client._env["OTHER_KEY"] = "sk-wrong"
    with pytest.raises(LLMCallFailed) as info:
        call(h, endpoint(server.base_url, api_key_env="OTHER_KEY"))
    assert info.value.status == 401 and h.sleeps == [] and info.value.transient


def test_unset_api_key_stops_before_the_first_request_naming_the_variable(server, harness):
    server.default = "x"
    h = harness()
    with pytest.raises(MissingAPIKey, match="OTHER_KEY is not set"):
        call(h, endpoint(server.base_url, api_key_env="OTHER_KEY"))
    assert server.chat_requests == []


def test_a_server_without_keys_takes_an_empty_api_key_env(harness):
    with FakeOpenAIServer(default="x") as open_server:
        h = harness()
        assert call(h, endpoint(open_server.base_url, api_key_env="")).text == "x"


def test_the_same_500_twice_is_deterministic_and_not_retried_further(server, harness):
    server.add_rule(replies=[HTTPError(status=500, message="1 validation error: Input should be 'x'")] * 5)
    h = harness()
    with pytest.raises(LLMCallFailed) as info:
        call(h, endpoint(server.base_url, max_retries=4))
    assert len(server.chat_requests) == 2 and len(h.sleeps) == 1
    assert not info.value.transient and "the same error twice" in info.value.reason


def test_a_generic_500_twice_stops_retrying_but_stays_an_infrastructure_fault(server, harness):
    server.add_rule(replies=[HTTPError(status=500, message="The server had an error processing your request")] * 5)
    h = harness()
    with pytest.raises(LLMCallFailed) as info:
        call(h, endpoint(server.base_url, max_retries=4))
    assert len(server.chat_requests) == 2 and info.value.transient


def test_a_changing_500_is_retried_as_transient(server, harness):
    server.add_rule(
        replies=[HTTPError(status=500, message="overloaded 1"), HTTPError(status=500, message="overloaded 2"), "ok"]
    )
    h = harness()
    assert call(h, endpoint(server.base_url, max_retries=4)).text == "ok"


def test_truncated_output_is_returned_and_cached_as_such(server, harness):
    server.add_rule(replies=[Truncated("class Sta")])
    h = harness()
    ep = endpoint(server.base_url)
    out = call(h, ep)
    assert out.truncated and out.finish_reason == "length" and out.text == "class Sta"
    again = call(h, ep)
    assert again.cached and again.finish_reason == "length"


def test_structured_output_passes_response_format_through(server, harness):
    fmt = {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"score": {"type": "integer"}},
                "required": ["score"],
                "additionalProperties": False,
            },
        },
    }
    server.add_rule(when=lambda body: body.get("response_format") == fmt, replies=['{"score": 10}'])
    h = harness()
    out = call(h, endpoint(server.base_url), role="judge_0", response_format=fmt)
    assert out.text == '{"score": 10}'
    assert server.chat_requests[0].body["response_format"] == fmt


def test_max_completion_tokens_param(server, harness):
    server.default = "x"
    h = harness()
    call(h, endpoint(server.base_url, max_tokens_param="max_completion_tokens", max_tokens=99))
    body = server.chat_requests[0].body
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body


def test_replay_miss_raises_without_any_request(server, harness):
    h = harness(mode="replay")
    with pytest.raises(CacheMiss) as info:
        call(h, endpoint(server.base_url), role="composer", task_id="pair-3")
    assert "composer" in str(info.value) and "pair-3" in str(info.value) and "replay" in str(info.value)
    assert len(info.value.key) == 64
    assert server.requests == []


def test_replay_hit_works_with_the_server_stopped(tmp_path, harness):
    with FakeOpenAIServer(api_key=API_KEY, default="recorded answer") as srv:
        live = harness()
        ep = endpoint(srv.base_url)
        recorded = [call(live, ep, sample_index=i) for i in range(3)]
    live.close()
    replay = harness(mode="replay")
    replayed = [call(replay, ep, sample_index=i) for i in range(3)]
    assert [r.text for r in replayed] == [r.text for r in recorded]
    assert all(r.cached for r in replayed)
    assert replay.ledger.summary().total.cost_usd == 0.0


def test_budget_cap_stops_before_the_call(server, harness):
    server.default = Text(text="x", prompt_tokens=1_000_000, completion_tokens=0)
    h = harness(budget_usd=1.0, costs={"model-a": CostConfig(prompt_per_mtok=1.0, completion_per_mtok=2.0)})
    ep = endpoint(server.base_url)
    call(h, ep, sample_index=0)  # spends exactly US$1.00
    assert h.ledger.spent_usd == 1.0
    with pytest.raises(BudgetExceeded) as info:
        call(h, ep, sample_index=1, task_id="task-9")
    assert info.value.task_id == "task-9" and info.value.spent_usd == 1.0
    assert len(server.chat_requests) == 1
    # Finished work is kept and still served: cache hits cost nothing.
    assert call(h, ep, sample_index=0).cached


def test_budget_with_unpriced_model_refuses_to_call(server, harness):
    server.default = "x"
    h = harness(budget_usd=5.0)
    with pytest.raises(UnpricedModel):
        call(h, endpoint(server.base_url, model="mystery"))
    assert server.requests == []


def test_ledger_totals_and_costs_are_exact(server, harness):
    server.add_rule(model="model-a", respond=lambda body: Text(text="a", prompt_tokens=1000, completion_tokens=200))
    server.add_rule(model="model-b", respond=lambda body: Text(text="b", prompt_tokens=3000, completion_tokens=0))
    costs = {
        "model-a": CostConfig(prompt_per_mtok=2.5, completion_per_mtok=10.0),
        "model-b": CostConfig(prompt_per_mtok=0.15, completion_per_mtok=0.6),
    }
    h = harness(costs=costs)
    a, b = endpoint(server.base_url, "model-a"), endpoint(server.base_url, "model-b")
    call(h, a, role="composer", task_id="t1")
    call(h, a, role="composer", task_id="t2", sample_index=1)
    call(h, b, role="judge_0", task_id="t1")
    call(h, b, role="judge_0", task_id="t1")  # cache hit: free
    s = h.ledger.summary()
    # model-a: 2 x (1000 * 2.5 + 200 * 10) / 1e6 = 2 x 0.0045; model-b: 3000 * 0.15 / 1e6 = 0.00045
    assert s.by_model["model-a"].cost_usd == 0.009
    assert s.by_model["model-b"].cost_usd == 0.00045
    assert s.total.cost_usd == 0.00945 and h.ledger.spent_usd == 0.00945
    assert s.by_role["composer"].requests == 2 and s.by_role["composer"].prompt_tokens == 2000
    assert s.by_role["judge_0"].requests == 1 and s.by_role["judge_0"].cached_hits == 1
    assert s.by_role["judge_0"].cached_prompt_tokens == 3000
    assert s.by_task["t1"].cost_usd == 0.00495  # summed in Decimal: 0.0045 + 0.00045 in floats is 0.0049499999999999995
    assert s.by_task["t2"].completion_tokens == 200
    assert (s.total.prompt_tokens, s.total.completion_tokens, s.total.cached_hits) == (5000, 400, 1)
    assert s.unpriced_models == []


def test_concurrent_distinct_calls_are_each_sent_once(server, harness):
    server.default = lambda body: Text(text=f"answer to {body['messages'][-1]['content']}")
    h = harness(concurrency=8)
    ep = endpoint(server.base_url)
    items = list(range(40))
    outcomes = h.client.map(
        lambda i: call(
            h, ep, messages=[{"role": "user", "content": f"q{i % 20}"}], sample_index=i // 20, task_id=f"t{i}"
        ),
        items,
    )
    assert all(o.ok for o in outcomes)
    assert [o.value.text for o in outcomes] == [f"answer to q{i % 20}" for i in items]
    sent = sorted((r.text, r.body["messages"][-1]["content"]) for r in server.chat_requests)
    assert len(sent) == 40 and len(set(sent)) == 20  # 20 prompts x 2 sample indexes; each key sent once
    assert len(h.cache) == 40
    assert h.ledger.summary().total.requests == 40


def test_identical_concurrent_calls_are_coalesced(server, harness):
    # slow enough that all 8 callers arrive while the first is in flight, even on a busy machine
    server.default = Delay(seconds=2.0, then=Text(text="slow but single"))
    h = harness(concurrency=8)
    ep = endpoint(server.base_url, timeout_s=60.0)
    barrier = threading.Barrier(8)

    def one(i: int):
        barrier.wait()
        return call(h, ep, task_id=f"t{i}")

    outcomes = h.client.map(one, list(range(8)))
    assert [o.value.text for o in outcomes] == ["slow but single"] * 8
    assert len(server.chat_requests) == 1
    assert sorted(o.value.cached for o in outcomes) == [False] + [True] * 7
    total = h.ledger.summary().total
    assert (total.requests, total.cached_hits) == (1, 7)


def test_map_keeps_failures_per_item(server, harness):
    server.add_rule(pattern="bad", replies=[HTTPError(status=400)])
    server.default = "good"
    h = harness()
    ep = endpoint(server.base_url)
    outcomes = h.client.map(
        lambda p: call(h, ep, messages=[{"role": "user", "content": p}], task_id=p), ["ok1", "bad", "ok2"]
    )
    assert [o.ok for o in outcomes] == [True, False, True]
    assert isinstance(outcomes[1].error, LLMCallFailed) and outcomes[1].error.task_id == "bad"
    with pytest.raises(LLMCallFailed):
        outcomes[1].unwrap()


def test_errors_survive_pickling():
    for err in (
        LLMCallFailed("solver", "t1", "gave up", 3, 500),
        CacheMiss("judge_2", "t2", "ab" * 32),
        BudgetExceeded("composer", "t3", 1.5, 1.0),
        UnpricedModel("solver", "t4", "m"),
    ):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and back.task_id == err.task_id


def test_retry_after_forms_and_cap(server, harness):
    from email.utils import formatdate

    from classforge_bench.pipeline.llm.client import _retry_after

    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "3"}) == 3.0
    assert 5 < _retry_after({"retry-after": formatdate(time.time() + 10, usegmt=True)}) <= 10
    assert _retry_after({"retry-after": "soon"}) is None and _retry_after({}) is None
    server.add_rule(replies=[HTTPError(status=429, retry_after=3600), "ok"])
    h = harness()
    assert call(h, endpoint(server.base_url, retry_after_max_s=30.0)).text == "ok"
    assert h.sleeps == [30.0]


def test_refusal_is_not_retried(server, harness):
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "model-a",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": None, "refusal": "I can't help with that"},
            }
        ],
    }
    server.add_rule(replies=[Malformed(body=json.dumps(body)), "never"])
    h = harness()
    with pytest.raises(LLMCallFailed, match="model refused: I can't help with that"):
        call(h, endpoint(server.base_url))
    assert len(server.chat_requests) == 1


def test_from_config_builds_its_own_cache_and_ledger(server, tmp_path):
    from classforge_bench.pipeline.config import LLMConfig
    from classforge_bench.pipeline.llm.client import LLMClient

    server.default = "hi"
    config = LLMConfig(cache_path=tmp_path / "deep" / "cache.sqlite", solver=endpoint(server.base_url))
    with LLMClient.from_config(config, {"OPENAI_API_KEY": API_KEY}) as client:
        out = client.complete("solver", config.solver, MSGS, task_id="t", prompt_version="p@v1")
        assert out.text == "hi" and len(client.cache) == 1
        assert client.ledger.summary().total.requests == 1
    assert (tmp_path / "deep" / "cache.sqlite").exists()


def test_an_interrupt_cancels_queued_items_instead_of_waiting_for_them():
    from classforge_bench.pipeline.core.pool import map_concurrently

    started: list[int] = []
    finished: list[int] = []
    gate = threading.Event()

    def work(i: int) -> int:
        started.append(i)
        if i == 0:
            raise KeyboardInterrupt  # in a worker it is not captured: it reaches the caller
        gate.wait(600)  # held until the caller has its interrupt: an order, not a race against a clock
        finished.append(i)
        return i

    with pytest.raises(KeyboardInterrupt):
        map_concurrently(work, list(range(50)), 2)
    # the caller got the interrupt while the running item was still held: it waited for nothing
    assert finished == [] and len(started) < 10
    gate.set()
