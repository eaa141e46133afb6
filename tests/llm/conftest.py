"""Fixtures for the LLM-layer tests: a fake OpenAI-compatible server and a client factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llmkit import API_KEY, Harness

from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=API_KEY) as srv:
        yield srv


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(**kw: object) -> Harness:
        h = Harness(tmp_path, **kw)  # type: ignore[arg-type]
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()
