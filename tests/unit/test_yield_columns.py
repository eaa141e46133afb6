"""`benchmarks/realmodel_yield.py` sorts the answers it reads from a build's cache into first tries,
retries for more room and repairs; a retry for room once counted as a repair."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from classforge_bench.pipeline.llm.cache import CacheEntry, CacheKeyMaterial, ResponseCache

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "realmodel_yield.py"
MODEL = "qwen2.5-coder-1.5b-instruct-q4"


def _yield_script():
    spec = importlib.util.spec_from_file_location("realmodel_yield", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _answer(cache: ResponseCache, task: str, version: str, max_tokens: int, text: str, model: str = MODEL) -> None:
    request = CacheKeyMaterial(
        role="composer",
        model=model,
        messages=[{"role": "user", "content": f"fuse the pair of {task}" + (" again" if "+" in version else "")}],
        temperature=0.0,
        max_tokens=max_tokens,
        prompt_version=version,
    )
    key = request.key()
    entry = CacheEntry(key=key, request=request, text=text, finish_reason="stop", model=model, task_id=task)
    cache.put(key, entry.model_copy(update={"prompt_tokens": 100, "completion_tokens": 10}))


def test_answers_sort_into_first_tries_retries_for_room_and_repairs(tmp_path):
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        _answer(cache, "cand-a", "compose@v1", 1536, "cut")  # cut at the limit ...
        _answer(cache, "cand-a", "compose@v1", 3072, "whole")  # ... asked again with more room
        _answer(cache, "cand-b", "compose@v1", 1536, "a copy")
        _answer(cache, "cand-b", "compose@v1+compose_reask@v2", 1536, "a fusion")  # re-asked
        _answer(cache, "cand-c", "compose@v1", 1536, "a fusion")
        _answer(cache, "cand-c", "compose@v1", 1536, "another model's", model="example-handwritten-composer")
    counts, prompt, completion = _yield_script().paid_answers(tmp_path / "llm.sqlite", MODEL)
    assert {key: dict(kinds) for key, kinds in counts.items()} == {
        ("cand-a", "compose"): {"first": 1, "room": 1},
        ("cand-b", "compose"): {"first": 1, "repair": 1},
        ("cand-c", "compose"): {"first": 1},
    }
    assert (prompt, completion) == (500, 50)
