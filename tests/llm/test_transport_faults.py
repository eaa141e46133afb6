"""Transport faults while an answer is read (issue 33): a connection reset mid-body, whole or
streamed, is retried like any connection error, ends as a named transient failure when retries run
out, and every request the server saw is in the usage ledger."""

from __future__ import annotations

import pytest
from llmkit import API_KEY, endpoint

from classforge_bench.pipeline.llm.errors import LLMCallFailed
from tests.fakes.openai_server import FakeOpenAIServer, ResetMidBody, ServerProfile

MSGS = [{"role": "user", "content": "Write a class."}]

# (server profile, endpoint `stream`): a whole body for a `stream: true` request (a proxy that
# ignores `stream`), a server-sent-event stream, and a plain non-streamed request.
CASES = {
    "whole body of a stream request": (ServerProfile(ignore_stream=True), True),
    "event stream": (ServerProfile(), True),
    "non-streamed": (ServerProfile(), False),
}


def _call(h, ep):
    return h.client.complete("solver", ep, MSGS, task_id="t1", prompt_version="solve@v1")


def _sent_in_ledger(h) -> int:
    total = h.ledger.summary().total
    return total.requests + total.failed_requests + total.retries


@pytest.mark.parametrize("case", list(CASES))
def test_a_reset_mid_body_is_retried_and_every_request_is_ledgered(harness, case):
    profile, stream = CASES[case]
    with FakeOpenAIServer(api_key=API_KEY, profile=profile) as srv:
        srv.add_rule(replies=[ResetMidBody(), "whole answer"])
        h = harness()
        out = _call(h, endpoint(srv.base_url, stream=stream))
        assert out.text == "whole answer" and out.attempts == 2
        assert len(h.sleeps) == 1  # one backoff before the second request
        assert len(srv.chat_requests) == 2 == _sent_in_ledger(h)


@pytest.mark.parametrize("case", list(CASES))
def test_resets_on_every_attempt_end_as_a_named_transient_failure(harness, case):
    profile, stream = CASES[case]
    with FakeOpenAIServer(api_key=API_KEY, profile=profile) as srv:
        srv.add_rule(replies=[ResetMidBody()] * 3)
        h = harness()
        with pytest.raises(LLMCallFailed) as info:
            _call(h, endpoint(srv.base_url, stream=stream, max_retries=2))
        err = info.value
        assert err.transient and err.attempts == 3
        assert "gave up after 3 attempts" in err.reason and "connection error" in err.reason
        total = h.ledger.summary().total
        assert (total.requests, total.failed_requests, total.retries) == (0, 1, 2)
        assert len(srv.chat_requests) == 3 == _sent_in_ledger(h)


def test_a_stop_during_a_request_still_ledgers_it(harness, monkeypatch):
    """Whatever ends a call (here an interrupt from inside the transport), its request is counted."""
    with FakeOpenAIServer(api_key=API_KEY) as srv:
        srv.default = "never read"
        h = harness()

        def interrupted(endpoint, request):
            raise KeyboardInterrupt

        monkeypatch.setattr(h.client.transport, "send", interrupted)
        with pytest.raises(KeyboardInterrupt):
            _call(h, endpoint(srv.base_url))
        assert h.ledger.summary().total.failed_requests == 1
