"""Helpers for the construction tests: harvested classes from source, a config whose roles point
at a `FakeOpenAIServer`, a scripted responder per role, and a scripted gate."""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import construct_fixtures as fx

from classforge_bench.pipeline.config import Config, CostConfig, EndpointConfig
from classforge_bench.pipeline.construct.build import BuildResult, BuildSettings, build_tasks
from classforge_bench.pipeline.construct.composition import CompositionTrack
from classforge_bench.pipeline.construct.gate import GateOutcome
from classforge_bench.pipeline.core.records import HarvestedClass, RepoRef
from classforge_bench.pipeline.core.task import MutationReport, SurvivingMutant
from classforge_bench.pipeline.harvest.candidates import list_candidates, to_record
from classforge_bench.pipeline.llm.cache import ResponseCache
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.ledger import UsageLedger
from tests.fakes.openai_server import FakeOpenAIServer, Text, messages_text

MODELS = {
    "composer": "composer-m",
    "test_writer": "writer-m",
    "judge-1": "judge-a",
    "judge-2": "judge-b",
    "judge-3": "judge-c",
    "solver": "solver-m",
}
ENV = {"OPENAI_API_KEY": "sk-test"}


def harvested(source: str, domain: str, repo: str = "acme/tools", path: str = "tools/mod.py") -> HarvestedClass:
    """The record the harvest would keep for the first class of `source`."""
    ref = RepoRef(
        full_name=repo,
        clone_url=f"https://example.invalid/{repo}.git",
        license_spdx="MIT",
        head_commit="a" * 40,
        domains=[domain],
    )
    module = ast.parse(source)
    record = to_record(list_candidates(ref, path, source, module)[0])
    return record.model_copy(update={"domains": [domain], "first_seen_commit": "b" * 40})


def renamed(source: str, old: str, new: str) -> str:
    return source.replace(f"class {old}", f"class {new}")


def endpoint(base_url: str, model: str, **kw: Any) -> EndpointConfig:
    params: dict[str, Any] = {
        "base_url": base_url,
        "model": model,
        "timeout_s": 30.0,
        "max_retries": 1,
        "backoff_base_s": 0.0,
        "backoff_max_s": 0.0,
        "max_tokens": 4000,
    }
    params.update(kw)
    return EndpointConfig(**params)


def make_config(
    base_url: str,
    tmp: Path,
    *,
    intra: int = 1,
    cross: int = 0,
    max_reuse: int = 3,
    mode: str = "live",
    budget_usd: float | None = None,
    concurrency: int = 2,
    cache_name: str = "llm.sqlite",
    **construction: Any,
) -> Config:
    cfg = Config()
    llm = cfg.llm
    llm.mode = mode  # type: ignore[assignment]
    llm.cache_path = tmp / cache_name
    llm.concurrency = concurrency
    llm.budget_usd = budget_usd
    llm.composer = endpoint(base_url, MODELS["composer"])
    llm.test_writer = endpoint(base_url, MODELS["test_writer"])
    llm.judges = [endpoint(base_url, MODELS[f"judge-{i}"]) for i in (1, 2, 3)]
    llm.solver = endpoint(base_url, MODELS["solver"])
    if budget_usd is not None:
        llm.costs = {m: CostConfig(prompt_per_mtok=1.0, completion_per_mtok=1.0) for m in MODELS.values()}
    cfg.construction.pairing.intra_target = intra
    cfg.construction.pairing.cross_target = cross
    cfg.construction.pairing.max_reuse = max_reuse
    # Scripted gates judge no real code, so the real mutation gate would have nothing honest to
    # run: tests of the mutation stage pass `mutation=MutationConfig(...)` and a ScriptedMutator.
    cfg.construction.mutation.enabled = False
    for k, v in construction.items():
        setattr(cfg.construction, k, v)
    return cfg


def judge_json(score: int, reasons: str = "tests match the skeleton") -> str:
    return json.dumps({"score": score, "reasons": reasons, "problems": [] if score == 10 else ["a mismatch"]})


def prompt_text(body: dict[str, Any]) -> str:
    return messages_text(body.get("messages") or [])


def fused_name(body: dict[str, Any]) -> str:
    """A class name per pair, from the source classes named in the composer prompt, so candidates
    differ (and so do their judge prompts and cache keys)."""
    return "Fused" + "".join(re.findall(r"^Class `(\w+)`", prompt_text(body), re.M))


def class_in_prompt(body: dict[str, Any]) -> str:
    found = re.search(r"^class (\w+)", prompt_text(body), re.M)
    assert found, "the prompt quotes no skeleton"
    return found[1]


def as_class(code: str, name: str) -> str:
    return code.replace("TallyStack", name)


def good_replies() -> dict[str, Callable[[dict[str, Any]], str]]:
    """Default answer per model: a correct skeleton, suite, full-mark votes and a passing solution."""
    return {
        MODELS["composer"]: lambda body: fx.fenced(as_class(fx.SKELETON, fused_name(body))),
        MODELS["test_writer"]: lambda body: fx.fenced(as_class(fx.TESTS, class_in_prompt(body))),
        MODELS["judge-1"]: lambda body: judge_json(10),
        MODELS["judge-2"]: lambda body: judge_json(10),
        MODELS["judge-3"]: lambda body: judge_json(10),
        MODELS["solver"]: lambda body: fx.fenced(
            as_class(fx.SOLUTION, class_in_prompt(body)), before="Implementation:"
        ),
    }


def scripted_server() -> FakeOpenAIServer:
    """A server answering every role well by default; tests queue failures with `add_rule`."""
    replies = good_replies()

    def default(body: dict[str, Any]) -> Text:
        return Text(text=replies[body["model"]](body))

    return FakeOpenAIServer(default=default)


class ScriptedGate:
    """A gate with queued outcomes (default: pass at 100% coverage); records what it was asked."""

    def __init__(self, outcomes: list[GateOutcome] | None = None, raises: Exception | None = None) -> None:
        self.outcomes = list(outcomes or [])
        self.raises = raises
        self.calls: list[tuple[str, str, list[str], str]] = []

    def __call__(self, solution: str, tests: str, test_classes: list[str], *, item_id: str) -> GateOutcome:
        self.calls.append((solution, tests, list(test_classes), item_id))
        if self.raises is not None:
            raise self.raises
        if self.outcomes:
            return self.outcomes.pop(0)
        return GateOutcome(passed=True, line_coverage=100.0, branch_coverage=100.0, tests_run=15)


class ScriptedMutator:
    """A mutator with queued mutation reports (default: a perfect score); records what it was asked."""

    def __init__(self, reports: list[MutationReport] | None = None) -> None:
        self.reports = list(reports or [])
        self.calls: list[tuple[str, str, list[str], str, float | None]] = []

    def __call__(
        self, solution: str, tests: str, test_classes: list[str], *, item_id: str, reference_wall_s: float | None
    ) -> MutationReport:
        self.calls.append((solution, tests, list(test_classes), item_id, reference_wall_s))
        return self.reports.pop(0) if self.reports else mutation_report(10, 0)


def mutation_report(killed: int, survived: int, timed_out: int = 0, equivalent: int = 0) -> MutationReport:
    """A report with these counts (timeouts count as killed) and one stand-in diff per survivor."""
    scored = killed + survived + timed_out
    surviving = [
        SurvivingMutant(
            mutant_id=f"m{i:04d}",
            method="TallyStack.push",
            operator="constant",
            line=10 + i,
            description=f"{i} -> {i + 1}",
            diff=f"--- original\n+++ mutant\n@@ -{10 + i} +{10 + i} @@\n-x = {i}\n+x = {i + 1}\n",
        )
        for i in range(survived)
    ]
    return MutationReport(
        mutants=scored + equivalent,
        killed=killed,
        survived=survived,
        timed_out=timed_out,
        equivalent=equivalent,
        score=(killed + timed_out) / scored if scored else None,
        max_mutants_per_method=10,
        seed=0,
        surviving=surviving,
    )


class Run:
    """One build against the fake server: a fresh client per run, like a fresh process."""

    def __init__(self, cfg: Config, gate: Any = None, mutator: Any = None) -> None:
        self.cfg = cfg
        self.gate = gate or ScriptedGate()
        self.mutator = mutator
        self.sleeps: list[float] = []

    def __call__(self, classes: list[HarvestedClass], out_dir: Path) -> BuildResult:
        cache = ResponseCache(self.cfg.llm.cache_path)
        client = LLMClient(
            self.cfg.llm, ENV, cache, UsageLedger(self.cfg.llm.costs), sleep=self.sleeps.append, rng=random.Random(3)
        )
        try:
            track = CompositionTrack(classes, BuildSettings.of(self.cfg), out_dir, mutator=self.mutator)
            return build_tasks(track, client, self.gate, out_dir)
        finally:
            client.close()
            cache.close()


def intra_pair() -> list[HarvestedClass]:
    return [
        harvested(fx.COUNTER_SOURCE, "Utils", path="tools/counter.py"),
        harvested(fx.STACK_SOURCE, "Utils", path="tools/stack.py"),
    ]


def three_pairs() -> list[HarvestedClass]:
    """With intra=1, cross=2, max_reuse=2: counter+stack, and the wallet with each of them."""
    return [*intra_pair(), harvested(fx.WALLET_SOURCE, "Finance & E-commerce", repo="acme/pay", path="pay/wallet.py")]


def funnel_rows(result: BuildResult) -> dict[str, tuple[int, int, dict[str, int]]]:
    return {s: (c.seen, c.kept, dict(c.dropped)) for s, c in result.funnel.stages.items()}


def without_methods(skeleton: str, *names: str) -> str:
    """The skeleton with the named methods (signature and docstring) cut out."""
    for name in names:
        start = skeleton.index(f"    def {name}(")
        end = skeleton.find("\n    def ", start + 1)
        skeleton = skeleton[:start] + (skeleton[end + 1 :] if end != -1 else "")
    return skeleton.rstrip() + "\n"


# A fusion one method short (methods of both sources: not a copy of either).
FOUR_METHODS = without_methods(fx.SKELETON, "pop", "size")
