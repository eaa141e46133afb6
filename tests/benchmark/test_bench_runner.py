"""`classforge evaluate` end to end against the loopback fake OpenAI server, on real ClassEval tasks.

The fake model is an oracle: asked for a class it returns the canonical solution, asked for a
method it returns that method of the canonical solution. Faults are scripted in front of it per
prompt (each prompt names its strategy, task and method, so a fault hits exactly one step).
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from classforge_bench.benchmark.results import RunResults, load_results
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.strategies import STRATEGIES
from classforge_bench.pipeline.config import Config, EndpointConfig, EvalStrategy, EvaluateConfig, LLMConfig
from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of, span
from classforge_bench.pipeline.core.source import parse, slice_lines
from classforge_bench.pipeline.core.task import Task
from tests.fakes.openai_server import Delay, FakeOpenAIServer, HTTPError, Truncated, messages_text

TASKS = [
    "ClassEval_8",
    "ClassEval_11",
    "ClassEval_47",
]  # BankAccount, BitStatusUtil, IPAddress: small, fast, with method dependencies


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


def method_source(task: Task, name: str) -> str:
    module = parse(task.solution_code)
    fn = methods_of(find_class(module, task.class_name))[name]
    return slice_lines(task.solution_code, *span(fn))


class Oracle:
    """Answers every evaluation prompt with the canonical code it asks for."""

    def __init__(self, tasks: list[Task]) -> None:
        self.by_class = {t.class_name: t for t in tasks}

    def __call__(self, body: dict) -> str:
        text = messages_text(body["messages"])
        m = re.search(r"Please complete the method (\w+) within the following class (\w+)", text)
        if m:
            return "Here it is:\n" + fence(method_source(self.by_class[m[2]], m[1]))
        m = re.search(r"Please complete the class (\w+)", text)
        assert m, f"unexpected prompt: {text[:200]}"
        return fence(self.by_class[m[1]].solution_code)


def make_config(
    tmp_path: Path, base_url: str, *, n: int = 1, strategies: list[EvalStrategy] | None = None, **evaluate_kw: object
) -> Config:
    cfg = Config()
    cfg.llm = LLMConfig(cache_path=tmp_path / "llm.sqlite", concurrency=4)
    # api_key_env="": the loopback fake takes no key (an unset key variable now stops a live run).
    endpoint = EndpointConfig(
        base_url=base_url,
        model="fake-coder",
        api_key_env="",
        timeout_s=10.0,
        max_retries=2,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        max_tokens=2048,
    )
    cfg.evaluate = EvaluateConfig(
        endpoint=endpoint,
        n_samples=n,
        ks=[1, 3, 5],
        strategies=strategies or list(STRATEGIES),
        output_root=tmp_path / "results",
        bootstrap_resamples=200,
        **evaluate_kw,
    )
    return cfg


def request(classeval_path: Path, tasks: list[str] = TASKS, models: list[str] | None = None) -> EvaluationRequest:
    return EvaluationRequest(dataset=classeval_path, models=models or ["fake-coder"], task_ids=tasks)


def group(results: RunResults, strategy: str, model: str = "fake-coder"):
    return next(g for g in results.scores if g.strategy == strategy and g.model == model)


def sample(results: RunResults, strategy: str, task_id: str, index: int = 0):
    return next(
        s for s in results.samples if s.strategy == strategy and s.task_id == task_id and s.sample_index == index
    )


def class_pass1(results: RunResults, strategy: str) -> float:
    return group(results, strategy).metrics.class_level.full[1].value


@pytest.fixture
def tasks(classeval) -> list[Task]:
    by_id = classeval.by_id()
    return [by_id[t] for t in TASKS]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_five_strategies_with_scripted_faults_then_a_free_resume(classeval_path, tasks, tmp_path):
    with FakeOpenAIServer(default=Oracle(tasks)) as server:
        # holistic BankAccount: a rate limit and a server error, then the answer (retried inside the client)
        server.add_rule(
            pattern=r"Please complete the class BankAccount\b",
            replies=[HTTPError(status=429, retry_after=0), HTTPError(status=500)],
        )
        # holistic IPAddress: cut off at the token limit, inside an unclosed fence -> does not compile
        server.add_rule(
            pattern=r"Please complete the class IPAddress\b",
            replies=[
                Truncated(
                    "```python\nclass IPAddress:\n    def __init__(self, ip_address):\n        self.ip_address = ip_address\n\n"
                    "    def is_valid(self):\n        octets = self.ip_address.split('.')\n        if len("
                )
            ],
        )
        # incremental BitStatusUtil.has: an unclosed fence around a correct method, after reasoning
        has = method_source(tasks[1], "has")
        server.add_rule(
            pattern=r"method has within the following class BitStatusUtil\. Below are the class-level "
            r"information, the methods implemented so far",
            replies=[f"<think>check the bits</think>\n```python\n{has}\n"],
        )
        # compositional BankAccount.withdraw: the first attempt outlives the client's 10 s timeout
        server.add_rule(
            pattern=r"method withdraw within the following class BankAccount\. Below are the class-level "
            r"information, the signatures",
            replies=[Delay(seconds=600)],
        )
        # top_down BankAccount.transfer: a wrong method -> assertion failures in its own test class
        server.add_rule(
            pattern=r"method transfer within the following class BankAccount\. Methods are implemented top-down",
            replies=[fence("def transfer(self, other_account, amount):\n    return None")],
        )
        cfg = make_config(tmp_path, server.base_url, plots=True)
        first = evaluate(request(classeval_path), cfg, env={})
        sent = len(server.chat_requests)
        r = first.results

        assert not server.unmatched
        # requests: 3 holistic + 3 x 11 method steps for each of 4 method strategies, plus 2 + 1 retries
        steps = sum(len(t.methods_info) for t in tasks)
        assert sent == 3 + 4 * steps + 3
        assert r.reference and not r.broken_task_ids
        assert [g.strategy for g in r.scores] == list(STRATEGIES)

        # every sample is in exactly one bucket; nothing was dropped
        assert len(r.samples) == 5 * 3
        assert sum(sum(g.buckets.values()) for g in r.scores) == 15

        retried = sample(r, "holistic", "ClassEval_8")
        assert retried.bucket == "completed" and retried.score.error_category is None
        assert retried.generation.steps[0].attempts == 3
        truncated = sample(r, "holistic", "ClassEval_47")
        assert truncated.bucket == "compile_error" and truncated.score.error_category == "syntax"
        assert truncated.generation.steps[0].truncated and truncated.generation.steps[0].finish_reason == "length"
        assert truncated.generation.steps[0].extraction_how == "unclosed_fence"
        assert truncated.execution.suite_status is None  # a syntax error is found without running anything
        unclosed = sample(r, "incremental", "ClassEval_11")
        has_step = next(s for s in unclosed.generation.steps if s.targets == ["has"])
        assert has_step.extraction_how == "unclosed_fence" and "<think>" in has_step.raw
        assert unclosed.bucket == "completed" and unclosed.score.error_category is None
        slow = sample(r, "compositional", "ClassEval_8")
        assert next(s for s in slow.generation.steps if s.targets == ["withdraw"]).attempts == 2
        wrong = sample(r, "top_down", "ClassEval_8")
        assert wrong.bucket == "completed" and wrong.score.error_category == "logic"
        assert wrong.outcome.test_class_status("BankAccountTestTransfer") == "fail"
        assert wrong.outcome.test_class_status("BankAccountTestDeposit") == "success"  # other classes unaffected

        # scores follow: one of three tasks fails for holistic and for top_down
        assert class_pass1(r, "holistic") == pytest.approx(2 / 3)
        assert class_pass1(r, "top_down") == pytest.approx(2 / 3)
        for strategy in ("incremental", "compositional", "bottom_up"):
            assert class_pass1(r, strategy) == 1.0
        assert group(r, "top_down").metrics.method_level.full[1].value == pytest.approx(10 / 11)
        assert group(r, "holistic").taxonomy["syntax"] == 1 and group(r, "top_down").taxonomy["logic"] == 1
        assert group(r, "incremental").dep.dep_m.value == 1.0  # canonical methods reuse every dependency
        # only k <= n is reported
        assert group(r, "holistic").metrics.ks == [1]

        # prompt versions and orders are recorded per step
        for s in r.samples:
            assert {st.prompt_version for st in s.generation.steps} == {f"eval_{s.strategy}@v1"}
            assert all(st.prompt_sha256 and st.cache_key for st in s.generation.steps)
        bottom_up = sample(r, "bottom_up", "ClassEval_47")
        assert [st.targets[0] for st in bottom_up.generation.steps] == ["is_valid", "get_octets", "get_binary"]
        assert bottom_up.generation.levels.source == "labels"
        top_down = sample(r, "top_down", "ClassEval_47")
        assert [st.targets[0] for st in top_down.generation.steps] == ["get_binary", "get_octets", "is_valid"]
        assert r.usage.total.requests == 3 + 4 * steps and r.usage.total.retries == 3

        # outputs
        for name in ("results.json", "summary.md", "passk.png", "taxonomy.png"):
            assert (first.run_dir / name).is_file(), name
        assert "| top_down | fake-coder | 66.7 |" in first.summary

        # the same command again: every sample read back from its file, nothing asked or run
        second = evaluate(request(classeval_path), cfg, env={})
        assert len(server.chat_requests) == sent
        assert second.run_dir == first.run_dir
        assert second.results.stats.sandbox_runs == 0 and second.results.stats.samples_resumed == 15
        assert second.results.samples == r.samples
        assert [g.metrics for g in second.results.scores] == [g.metrics for g in r.scores]
        # without the sample files: every answer from the LLM cache, every execution from the store
        shutil.rmtree(first.run_dir / "samples")
        third = evaluate(request(classeval_path), cfg, env={})
        assert len(server.chat_requests) == sent
        assert third.results.stats.sandbox_runs == 0 and third.results.stats.executions_reused > 0
        assert third.results.stats.samples_resumed == 0
        assert all(st.cached for s in third.results.samples for st in s.generation.steps)
        assert [g.metrics for g in third.results.scores] == [g.metrics for g in r.scores]


def test_failed_generation_is_reported_unscored_and_retried_on_resume(classeval_path, tasks, tmp_path):
    with FakeOpenAIServer(default=Oracle(tasks)) as server:
        # three 503s: the client's attempts (1 + max_retries=2) run out for IPAddress, sample 1
        # (503, not 500: the same 500 body twice is taken as deterministic and stops retrying)
        failing = server.add_rule(
            pattern=r"Please complete the class IPAddress\b",
            replies=[Truncated("```python\nclass IPAddress:\n    pass\n```")] + [HTTPError(status=503)] * 3,
        )
        cfg = make_config(tmp_path, server.base_url, n=2, strategies=["holistic"])
        cfg.llm.concurrency = 1  # deterministic: sample 0 gets the first scripted reply
        first = evaluate(request(classeval_path), cfg, env={}).results
        assert failing.remaining == 0
        failed = sample(first, "holistic", "ClassEval_47", 1)
        assert failed.bucket == "generation_error" and not failed.scored and failed.outcome is None
        assert "ClassEval_47" in failed.score.reason and "503" in failed.score.reason
        holistic = group(first, "holistic")
        assert holistic.buckets["generation_error"] == 1 and holistic.n_scored == 5 and holistic.n_samples == 6
        # sample 0 (a class with no methods) fails at class level; the task still counts with its one scored sample
        assert holistic.tasks_scored == 3 and holistic.metrics.ks == [1]
        assert holistic.metrics.class_level.full[1].value == pytest.approx((1 + 1 + 0) / 3)
        assert "generation_error" in (Path(cfg.evaluate.output_root) / first.run_id / "summary.md").read_text()

        sent = len(server.chat_requests)
        second = evaluate(request(classeval_path), cfg, env={}).results
        # only the failed sample is asked again (and now answered); the rest comes from the cache
        assert len(server.chat_requests) == sent + 1
        assert sample(second, "holistic", "ClassEval_47", 1).bucket == "completed"
        assert group(second, "holistic").metrics.ks == [1]
        assert group(second, "holistic").n_scored == 6


def test_sample_index_is_part_of_the_request_identity(classeval_path, tasks, tmp_path):
    with FakeOpenAIServer(default=Oracle(tasks)) as server:
        cfg = make_config(tmp_path, server.base_url, n=3, strategies=["holistic"])
        r = evaluate(request(classeval_path, tasks=["ClassEval_8"]), cfg, env={}).results
        # three samples of one prompt are three requests (temperature > 0), but one identical program runs once
        assert len(server.chat_requests) == 3
        assert len({st.cache_key for s in r.samples for st in s.generation.steps}) == 3
        # the oracle answers with the canonical solution: its three programs reuse the reference pre-run
        assert r.stats.sandbox_runs == r.reference[0].timings
        assert group(r, "holistic").metrics.class_level.full[3].value == 1.0


def test_levels_from_the_model_with_a_recorded_fallback(classeval_path, tasks, tmp_path):
    with FakeOpenAIServer(default=Oracle(tasks)) as server:
        server.add_rule(
            pattern=r"Assign a dependency level.*class BankAccount\b",
            replies=['{"levels": {"deposit": 0, "withdraw": 0, "view_balance": 1, "transfer": 2}}'],
        )
        server.add_rule(
            pattern=r"Assign a dependency level.*class IPAddress\b", replies=['{"levels": {"is_valid": 0}}']
        )  # incomplete -> unusable
        cfg = make_config(tmp_path, server.base_url, strategies=["bottom_up", "top_down"], levels_source="model")
        r = evaluate(request(classeval_path, tasks=["ClassEval_8", "ClassEval_47"]), cfg, env={}).results
        level_requests = [q for q in server.chat_requests if "Assign a dependency level" in q.text]
        assert len(level_requests) == 2  # once per task, shared by both strategies
        bank_request = next(q for q in level_requests if "class BankAccount" in q.text)
        schema = bank_request.body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["levels"]["required"] == ["deposit", "withdraw", "view_balance", "transfer"]
        bank = sample(r, "bottom_up", "ClassEval_8")
        assert bank.generation.levels.source == "model" and bank.generation.levels.prompt_version == "eval_levels@v1"
        assert [st.targets[0] for st in bank.generation.steps] == ["deposit", "withdraw", "view_balance", "transfer"]
        assert [st.targets[0] for st in sample(r, "top_down", "ClassEval_8").generation.steps] == [
            "transfer",
            "view_balance",
            "deposit",
            "withdraw",
        ]
        ip = sample(r, "bottom_up", "ClassEval_47")
        assert (
            ip.generation.levels.source == "labels_fallback"
            and "no level for get_octets, get_binary" in ip.generation.levels.note
        )
        assert [st.targets[0] for st in ip.generation.steps] == ["is_valid", "get_octets", "get_binary"]
        assert all(g.metrics.class_level.full[1].value == 1.0 for g in r.scores)


def test_results_json_round_trips_and_carries_what_regrading_needs(classeval_path, tasks, tmp_path):
    with FakeOpenAIServer(default=Oracle(tasks)) as server:
        cfg = make_config(tmp_path, server.base_url, strategies=["holistic", "compositional"])
        out = evaluate(request(classeval_path, tasks=["ClassEval_8"]), cfg, env={})
    loaded = load_results(out.run_dir)
    assert loaded.model_dump(mode="json") == out.results.model_dump(mode="json")
    assert loaded.schema_version == 6 and [t.task_id for t in loaded.tasks] == ["ClassEval_8"]
    s = sample(loaded, "compositional", "ClassEval_8")
    assert s.program and ast.parse(s.program)
    assert set(s.outcome.test_classes) == set(tasks[0].test_classes)
    assert all(st.raw and st.extracted for st in s.generation.steps)
    assert loaded.settings.temperature == 0.2 and loaded.settings.base_url.startswith("http://127.0.0.1:")
