"""The fake server itself, over raw HTTP: body shapes, rule order, errors, recording."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    HTTPError,
    Malformed,
    Text,
    Truncated,
    fake_token_count,
)


def post(base_url: str, body: dict, key: str = "k") -> tuple[int, dict | str, dict]:
    req = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw, status, headers = resp.read().decode(), resp.status, dict(resp.headers)
    except urllib.error.HTTPError as exc:
        raw, status, headers = exc.read().decode(), exc.code, dict(exc.headers)
    try:
        return status, json.loads(raw), headers
    except json.JSONDecodeError:
        return status, raw, headers


def chat(content: str, model: str = "m") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}]}


def test_completion_body_is_realistic():
    with FakeOpenAIServer(default="hello there") as srv:
        status, body, _ = post(srv.base_url, chat("say hi"))
    assert status == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-") and body["model"] == "m"
    assert isinstance(body["created"], int)
    (choice,) = body["choices"]
    assert choice == {
        "index": 0,
        "message": {"role": "assistant", "content": "hello there", "refusal": None},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert body["usage"] == {"prompt_tokens": fake_token_count("say hi"), "completion_tokens": 3, "total_tokens": 5}


def test_rules_match_in_order_then_fall_through_to_default():
    with FakeOpenAIServer(default="default") as srv:
        srv.add_rule(model="judge", pattern=r"score\s+this", replies=["10", Truncated("1")])
        srv.add_rule(pattern="score", respond=lambda body: Text(text=f"dyn:{body['model']}"))
        answers = [
            post(srv.base_url, chat(c, m))[1]
            for c, m in [
                ("score this", "judge"),
                ("score this", "judge"),
                ("score this", "judge"),
                ("score it", "judge"),
                ("hello", "judge"),
            ]
        ]
        texts = [(a["choices"][0]["message"]["content"], a["choices"][0]["finish_reason"]) for a in answers]
        assert texts == [
            ("10", "stop"),
            ("1", "length"),
            ("dyn:judge", "stop"),
            ("dyn:judge", "stop"),
            ("default", "stop"),
        ]
        assert srv.rules[0].remaining == 0 and srv.rules[0].hits == 2 and srv.rules[1].hits == 2
        assert [r.text for r in srv.chat_requests] == ["score this"] * 3 + ["score it", "hello"]


def test_unscripted_request_is_a_clear_400_and_recorded():
    with FakeOpenAIServer() as srv:
        status, body, _ = post(srv.base_url, chat("anything"))
        assert status == 400 and body["error"]["type"] == "unscripted_request"
        assert "no rule or default" in body["error"]["message"]
        assert len(srv.unmatched) == 1


def test_errors_carry_openai_shape_and_retry_after():
    with FakeOpenAIServer() as srv:
        srv.add_rule(
            replies=[
                HTTPError(status=429, message="rate", retry_after=1.5),
                HTTPError(status=500),
                Malformed(body="oops"),
            ]
        )
        s1, b1, h1 = post(srv.base_url, chat("x"))
        s2, b2, h2 = post(srv.base_url, chat("x"))
        s3, b3, _ = post(srv.base_url, chat("x"))
    assert s1 == 429 and b1["error"]["message"] == "rate" and b1["error"]["type"] == "rate_limit_exceeded"
    assert h1["Retry-After"] == "1.5"
    assert s2 == 500 and b2["error"]["type"] == "server_error" and "Retry-After" not in h2
    assert (s3, b3) == (200, "oops")


def test_api_key_and_models_endpoint():
    with FakeOpenAIServer(api_key="secret", default="x") as srv:
        srv.add_rule(model="judge-b", replies=["y"])
        status, body, _ = post(srv.base_url, chat("x"), key="wrong")
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
        assert post(srv.base_url, chat("x"), key="secret")[0] == 200
        req = urllib.request.Request(f"{srv.base_url}/models", headers={"Authorization": "Bearer secret"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            models = json.loads(resp.read())
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["judge-b"]


def test_base_url_needs_a_running_server():
    srv = FakeOpenAIServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = srv.base_url


def test_a_llama_cpp_server_refuses_above_one_slots_window_as_the_real_one_does():
    from tests.fakes.openai_server import ServerProfile

    # 8192 tokens over 2 slots: a request gets 4096; one of 6000 fits the whole context, not its slot.
    profile = ServerProfile(context_window=8192, llama_cpp=True, slots=2)
    with FakeOpenAIServer(default="ok", profile=profile) as srv:
        fits = dict(chat("x"), max_tokens=4000)
        over = dict(chat("x"), max_tokens=6000)
        (ok, _, _), (refused, body, _) = post(srv.base_url, fits), post(srv.base_url, over)
    assert ok == 200 and refused == 400, body
    assert body["error"]["type"] == "exceed_context_size_error" and "(4096 tokens)" in body["error"]["message"]
