"""Why samples are unscored, in summary.md and on the terminal (issue 14, item 6).

Against the loopback fake OpenAI server: one task's prompt is refused as too long for the context
(HTTP 400 `context_length_exceeded`, which a re-run repeats), another's keeps failing with 503 (an
outage, which a re-run may not meet). The CLI must not tell the user to run again for the first.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from classforge_bench.benchmark.results import load_results
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.summary import unscored_advice
from classforge_bench.pipeline.cli import app
from classforge_bench.pipeline.config import Config, EndpointConfig, EvaluateConfig, LLMConfig
from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, messages_text

TASKS = ["ClassEval_8", "ClassEval_11", "ClassEval_47"]  # BankAccount, BitStatusUtil, IPAddress
TOO_LONG = HTTPError(
    status=400,
    code="context_length_exceeded",
    type="invalid_request_error",
    message="This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.",
)


def oracle(classeval):
    by_class = {t.class_name: t for t in classeval.tasks if t.task_id in TASKS}

    def answer(body: dict) -> str:
        m = re.search(r"Please complete the class (\w+)", messages_text(body["messages"]))
        return f"```python\n{by_class[m[1]].solution_code}\n```" if m else '{"ok": true}'  # the rest: endpoint probes

    return answer


def scripted(server: FakeOpenAIServer) -> None:
    server.add_rule(pattern=r"Please complete the class BankAccount\b", replies=[TOO_LONG] * 10)
    server.add_rule(pattern=r"Please complete the class IPAddress\b", replies=[HTTPError(status=503)] * 3)


def test_unscored_samples_say_why_and_whether_a_rerun_repeats_it(classeval, classeval_path, tmp_path):
    with FakeOpenAIServer(default=oracle(classeval)) as server:
        scripted(server)
        cfg = Config()
        cfg.llm = LLMConfig(cache_path=tmp_path / "llm.sqlite")
        cfg.evaluate = EvaluateConfig(
            endpoint=EndpointConfig(
                base_url=server.base_url,
                model="fake-coder",
                api_key_env="",
                timeout_s=5.0,
                max_retries=2,
                backoff_base_s=0.01,
                backoff_max_s=0.05,
                max_tokens=512,
            ),
            n_samples=1,
            strategies=["holistic"],
            output_root=tmp_path / "results",
            bootstrap_resamples=100,
        )
        out = evaluate(EvaluationRequest(dataset=classeval_path, models=["fake-coder"], task_ids=TASKS), cfg, env={})
    by_task = {s.task_id: s for s in out.results.samples}
    too_long, outage, fine = by_task["ClassEval_8"], by_task["ClassEval_47"], by_task["ClassEval_11"]
    assert (too_long.bucket, too_long.score.cause, too_long.score.repeats) == (
        "generation_error",
        "prompt-too-long",
        True,
    )
    assert (outage.bucket, outage.score.cause, outage.score.repeats) == (
        "generation_error",
        "llm-unavailable",
        False,
    )
    assert fine.bucket == "completed" and fine.score.cause is None and fine.score.repeats is None
    assert "context_length_exceeded" in too_long.score.reason or "maximum context length" in too_long.score.reason

    summary = out.summary
    section = summary.split("### Why samples are unscored", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in section.splitlines() if line.startswith("| holistic")]
    assert len(rows) == 2
    long_row = next(r for r in rows if "prompt-too-long" in r)
    assert "the prompt does not fit the model's context window" in long_row
    assert "| 1 | yes |" in long_row and "ClassEval_8 #0" in long_row
    assert "| 1 | no |" in next(r for r in rows if "llm-unavailable" in r)

    advice = unscored_advice(out.results)
    assert advice.startswith("2 sample(s) could not be scored (")
    assert "1 prompt-too-long" in advice and "1 llm-unavailable" in advice
    assert "retries 1; the other 1 would fail the same way" in advice

    # the record survives the round trip through its sample file
    assert (
        next(s for s in load_results(out.run_dir).samples if s.task_id == "ClassEval_8").score.cause
        == "prompt-too-long"
    )

    # a resumed run retries both, and the refused one is refused again: only it is left
    with FakeOpenAIServer(default=oracle(classeval)) as server:
        server.add_rule(pattern=r"Please complete the class BankAccount\b", replies=[TOO_LONG] * 10)
        cfg.evaluate.endpoint.base_url = server.base_url
        again = evaluate(EvaluationRequest(dataset=classeval_path, models=["fake-coder"], task_ids=TASKS), cfg, env={})
    assert [s.task_id for s in again.results.samples if not s.scored] == ["ClassEval_8"]
    assert unscored_advice(again.results) == (
        "1 sample(s) could not be scored (1 prompt-too-long); a re-run would "
        "fail the same way: fix the cause first (see summary.md)."
    )


def _config_file(tmp_path: Path, base_url: str) -> Path:
    endpoint = {
        "base_url": base_url,
        "model": "fake-coder",
        "api_key_env": "",
        "timeout_s": 5,
        "max_retries": 0,
        "max_tokens": 512,
    }
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in endpoint.items())
    text = (
        f"[llm]\npreflight_timeout_s = 5\ncache_path = {json.dumps(str(tmp_path / 'llm.sqlite'))}\n\n"
        f'[evaluate]\nn_samples = 1\nstrategies = ["holistic"]\nbootstrap_resamples = 100\n\n'
        f"[evaluate.endpoint]\n{body}\n"
    )
    path = tmp_path / "classforge.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_cli_does_not_offer_a_rerun_for_a_refused_prompt(classeval, classeval_path, tmp_path):
    with FakeOpenAIServer(default=oracle(classeval)) as server:
        server.add_rule(pattern=r"Please complete the class BankAccount\b", replies=[TOO_LONG] * 10)
        args = [
            "evaluate",
            "--config",
            str(_config_file(tmp_path, server.base_url)),
            "--dataset",
            str(classeval_path),
            "--out",
            str(tmp_path / "results"),
        ] + [x for t in TASKS[:2] for x in ("--task", t)]
        out = CliRunner().invoke(app, args, terminal_width=250)
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "1 sample(s) could not be scored (1 prompt-too-long)" in text
    assert "a re-run would fail the same way" in text and "run the same command again" not in text


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
