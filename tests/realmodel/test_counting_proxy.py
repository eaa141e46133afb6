"""The counting proxy the real-model tests rely on, checked offline against the loopback fake."""

from __future__ import annotations

import openai
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Text, Truncated
from tests.realmodel.proxy import CountingProxy, _usage_of


def test_proxy_forwards_unchanged_and_counts_what_the_server_reported() -> None:
    replies = [
        Text(text="class A:\r\n    pass\r\n", prompt_tokens=120, completion_tokens=9),
        Truncated("def f(", prompt_tokens=80, completion_tokens=4),
        HTTPError(status=500, message="Input should be 'text' or 'json_object'"),
    ]
    with FakeOpenAIServer() as upstream, CountingProxy(upstream.base_url.removesuffix("/v1")) as proxy:
        upstream.add_rule(replies=replies)
        client = openai.OpenAI(base_url=proxy.base_url, api_key="k", max_retries=0)
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "y"}])
        with pytest.raises(openai.InternalServerError, match="json_object"):
            client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "z"}],
                response_format={"type": "json_schema", "json_schema": {"name": "v"}},
            )
        assert [m.id for m in client.models.list()]  # passes through, not a completion
        # The client saw the server's own answer, byte for byte where it matters.
        assert first.choices[0].message.content == "class A:\r\n    pass\r\n"
        assert second.choices[0].finish_reason == "length"
        assert [e.status for e in proxy.completions()] == [200, 200, 500]
        assert [e.finish_reasons for e in proxy.completions()] == [["stop"], ["length"], []]
        assert proxy.reported_tokens() == (200, 13)  # the failed request reported nothing
        assert len(upstream.chat_requests) == 3
        assert upstream.chat_requests[2].body["response_format"]["type"] == "json_schema"
        proxy.reset()
        assert proxy.completions() == [] and proxy.reported_tokens() == (0, 0)


def test_usage_is_read_from_the_last_event_of_a_stream() -> None:
    # The shape llama.cpp's server streams with stream_options.include_usage (CRLF line ends).
    body = (
        b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}\r\n\r\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}\r\n\r\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\n'
        b'data: {"choices":[],"usage":{"completion_tokens":10,"prompt_tokens":32,"total_tokens":42}}\r\n\r\n'
        b"data: [DONE]\r\n\r\n"
    )
    usage, reasons = _usage_of(body, "text/event-stream")
    assert usage == {"completion_tokens": 10, "prompt_tokens": 32, "total_tokens": 42}
    assert reasons == ["stop"]
    assert _usage_of(b"<html>502 Bad Gateway</html>", "application/json") == (None, [])
