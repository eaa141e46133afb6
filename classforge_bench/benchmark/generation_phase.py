"""The generation phase: every sample of a run named as a record, and its generation part filled.

Samples are planned per (model, strategy, task, index) over the non-broken tasks (special models
answer once per task and index, as strategy `direct`), or come from a samples file's lines. Each
record gets its `Generation` once (`classforge_bench.benchmark.generation`): special models and
pre-generated answers need no client; LLM models go through the one client, concurrently
(`client.map`). Samples an earlier, interrupted run finished are left out but keep their place in
the run's order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.benchmark.generation import (
    LLMGenerator,
    failed_generation,
    pregenerated_sample,
    special_sample,
)
from classforge_bench.benchmark.progress import EvaluationError, PhaseCounter, Progress
from classforge_bench.benchmark.record import SampleRecord
from classforge_bench.benchmark.results import DIRECT, SPECIAL_MODELS
from classforge_bench.benchmark.samples_file import Answer
from classforge_bench.pipeline.config import EvaluateConfig, LLMConfig
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.llm.errors import LLMError
from classforge_bench.pipeline.llm.ledger import LedgerEntry, UsageSummary

if TYPE_CHECKING:  # the client (and the OpenAI SDK under it) is loaded only when a model is asked
    from classforge_bench.pipeline.llm.client import LLMClient

Key = tuple[str, str, str, int]


class GenerationPhase(BaseModel):
    """The run's generated records (and a samples file's records of broken tasks, set apart), the
    order of every sample of the run, and what the models cost."""

    model_config = ConfigDict(extra="forbid")

    records: list[SampleRecord]
    broken_records: list[SampleRecord] = Field(
        default_factory=list, description="pre-generated samples of broken tasks"
    )
    order: list[Key] = Field(default_factory=list, description="every sample of the run, in order")
    models: list[str]
    strategies: list[str]
    usage: UsageSummary | None = None


def plan_samples(
    models: list[str], cfg: EvaluateConfig, tasks: list[Task], broken: set[str], dataset_sha256: str | None = None
) -> list[SampleRecord]:
    """Every (model, strategy, task, index) of the non-broken tasks, named; a special model answers
    with the whole class, so it has the one strategy `direct`."""
    return [
        SampleRecord(model=model, strategy=strategy, task_id=t.task_id, sample_index=i, dataset_sha256=dataset_sha256)
        for model in models
        for strategy in ([DIRECT] if model in SPECIAL_MODELS else cfg.strategies)
        for t in tasks
        if t.task_id not in broken  # never paid for: a broken task cannot be scored
        for i in range(cfg.n_samples)
    ]


def generate_samples(
    records: list[SampleRecord],
    tasks: Mapping[str, Task],
    generator: LLMGenerator | None,
    client: LLMClient | None,
    progress: Progress | None,
) -> None:
    """Fill every record's generation part: special models here, LLM models through the client."""
    counter = PhaseCounter("generation", len(records), progress)
    llm = [r for r in records if r.model not in SPECIAL_MODELS]
    for r in records:
        if r.model in SPECIAL_MODELS:
            r.fill(special_sample(r, tasks[r.task_id]))
            counter.tick()
    if not llm:
        return
    assert generator is not None and client is not None  # evaluate() creates both when any LLM model is asked for

    def one(record: SampleRecord):
        try:
            return generator.generate(record, tasks[record.task_id])
        finally:
            counter.tick()

    for r, result in zip(llm, client.map(one, llm), strict=True):
        if result.error is None:
            r.fill(result.unwrap())
        elif isinstance(result.error, LLMError):  # already handled inside; kept for safety
            r.fill(failed_generation(result.error, str(result.error)))
        else:
            raise EvaluationError(
                f"task {r.task_id}: generating {r.model}/{r.strategy} sample {r.sample_index} "
                f"failed: {type(result.error).__name__}: {result.error}"
            ) from result.error


def generation_phase(
    models: list[str],
    cfg: EvaluateConfig,
    llm: LLMConfig,
    tasks: list[Task],
    broken: set[str],
    client: LLMClient | None,
    env: Mapping[str, str] | None,
    progress: Progress | None,
    done: Collection[Key] = (),
    keep_usage: Callable[[list[LedgerEntry]], None] | None = None,
    dataset_sha256: str | None = None,
) -> GenerationPhase:
    """Every planned sample not in `done` (finished by an earlier, interrupted run) generated; those
    in `done` keep their place in `order`. `keep_usage` receives what the client paid for, even
    when generation is interrupted."""
    planned = plan_samples(models, cfg, tasks, broken, dataset_sha256)
    records = [r for r in planned if r.key not in done]
    needs_llm = any(r.model not in SPECIAL_MODELS for r in records)  # not when every LLM sample is already done
    own_client = needs_llm and client is None
    if own_client:
        from classforge_bench.pipeline.llm.client import LLMClient

        client = LLMClient.from_config(llm, env or {})
    usage = None
    try:
        generator = _llm_generator(client, cfg) if needs_llm else None
        generate_samples(records, {t.task_id: t for t in tasks}, generator, client if needs_llm else None, progress)
    finally:
        # A client handed in may already hold what was spent before generation (the endpoint's
        # pre-flight probes): its usage is this run's even when every sample was finished earlier.
        # (An own client exists only when the run needs the model, so this is every client.)
        if client is not None:
            usage = client.ledger.summary()
            if keep_usage is not None:
                keep_usage(client.ledger.entries())
            if own_client:
                client.close()
    llm_models = any(m not in SPECIAL_MODELS for m in models)
    special = [DIRECT] if any(m in SPECIAL_MODELS for m in models) else []
    return GenerationPhase(
        records=records,
        order=[r.key for r in planned],
        models=list(models),
        strategies=(list(cfg.strategies) if llm_models else []) + special,
        usage=usage,
    )


def pregenerated_phase(
    answers: list[Answer], tasks: list[Task], broken: set[str], done: Collection[Key]
) -> GenerationPhase:
    """A samples file's answers read into their records (those in `done` left out, in `order`
    still); a broken task's are set apart."""
    by_id = {t.task_id: t for t in tasks}
    records = []
    for record, answer in answers:
        if record.key not in done:
            records.append(record.fill(pregenerated_sample(record, answer, by_id[record.task_id])))
    return GenerationPhase(
        records=[r for r in records if r.task_id not in broken],
        broken_records=[r for r in records if r.task_id in broken],
        order=[r.key for r, _ in answers],
        models=list(dict.fromkeys(r.model for r, _ in answers)),
        strategies=list(dict.fromkeys(r.strategy for r, _ in answers)),
    )


def _llm_generator(client: LLMClient | None, cfg: EvaluateConfig) -> LLMGenerator:
    assert client is not None, "a run that needs the model has a client: handed in, or made for the run"
    return LLMGenerator(client, cfg.endpoint, levels_source=cfg.levels_source)
