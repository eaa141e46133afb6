"""Generate one sample: a (model, strategy, sample index, task) turned into a program.

LLM models go through the project's one `LLMClient` (content-addressed cache, retries, ledger):
for each step of `plan(task, strategy)` the rendered prompt is sent, the step's output extracted,
and the methods produced so far fed to the next prompt; the program is then assembled into the
skeleton. The special models need no client: `reference` is the canonical solution and `empty`
the bare skeleton. Pre-generated samples (`--samples`) are whole-class completions, extracted and
assembled like a holistic answer, or per-method steps, read and assembled like live steps.

A sample whose output holds no code at all is `no_code` (nothing to run). A model call that fails
for good (`LLMError`) makes the sample a `generation_error`, reported and never scored; the steps
that did succeed are in the cache, so a resumed run only pays for the failed one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from classforge_bench.benchmark.levels import model_levels
from classforge_bench.benchmark.results import (
    DIRECT,
    Bucket,
    LevelsRecord,
    SampleRequest,
    SampleResult,
    SampleSource,
    StepRecord,
    cause_of,
)
from classforge_bench.benchmark.samples_file import PregeneratedSample, PregeneratedStep
from classforge_bench.benchmark.strategies import (
    GenerationStep,
    StepOutput,
    assemble,
    assemble_holistic,
    defines_class,
    empty_program,
    levels_from_labels,
    plan,
    read_step_output,
    reference_program,
    render_step,
)
from classforge_bench.pipeline.config import EndpointConfig
from classforge_bench.pipeline.core.source import lone_surrogate
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.llm.errors import LLMError
from classforge_bench.pipeline.llm.extraction import Extraction, extract_code

EVAL_ROLE = "evaluate"

if TYPE_CHECKING:  # the OpenAI SDK under the client is loaded only when a model is asked
    from classforge_bench.pipeline.llm.client import LLMClient


Sampled = tuple[SampleRequest, SampleResult | None]
"""A generated sample: its request with the program, and a result only when there is nothing to run."""


def _unrun(bucket: Bucket, reason: str, cause: str | None = None) -> SampleResult:
    return SampleResult(bucket=bucket, reason=reason, cause=cause)


def special_sample(unit: SampleRequest, task: Task) -> Sampled:
    """The `reference` or `empty` model's program."""
    if unit.model == "reference":
        return unit.model_copy(update={"source": "reference", "program": reference_program(task)}), None
    if unit.model == "empty":
        return unit.model_copy(update={"source": "empty", "program": empty_program(task)}), None
    raise ValueError(f"task {task.task_id}: {unit.model!r} is not a special model")


def completion_sample(unit: SampleRequest, task: Task, completion: str) -> Sampled:
    """A pre-generated whole-class completion, extracted and assembled like a holistic answer."""
    ex = extract_code(completion, class_name=task.class_name)
    step = StepRecord(
        index=0, kind="completion", targets=task.method_names, raw=completion, extracted=ex.code, extraction_how=ex.how
    )
    return finish_sample(unit, "samples_file", task, [step], None, {}, ex.code, holistic=True)


def step_record(step: GenerationStep, out: StepOutput, raw: str) -> StepRecord:
    """What one step (live or pre-generated) answered and what was extracted from it."""
    extracted = out.class_code if step.kind == "class" else out.methods.get(step.target, "")
    ex = out.extraction
    code_how, method_how = (ex.how, None) if isinstance(ex, Extraction) else (ex.extraction.how, ex.how)
    return StepRecord(
        index=step.index,
        kind=step.kind,
        targets=step.targets,
        level=step.level,
        raw=raw,
        extracted=extracted or "",
        extraction_how=code_how,
        method_how=method_how,
    )


def pregenerated_sample(unit: SampleRequest, answer: PregeneratedSample, task: Task) -> Sampled:
    """One line of a samples file (its request and its answer) as a generated sample."""
    if answer.steps is not None:
        return steps_sample(unit, task, answer.steps)
    assert answer.completion is not None  # a sample has one of the two shapes (samples_file checks it)
    return completion_sample(unit, task, answer.completion)


def steps_sample(unit: SampleRequest, task: Task, answers: Sequence[PregeneratedStep]) -> Sampled:
    """Pre-generated answers of a per-method strategy, read and assembled exactly as live answers
    are: each answer goes through its step's `read_step_output`, the methods through `assemble`.
    Answers name their method, or follow the strategy's order (`plan`)."""
    levels = (
        LevelsRecord(source="labels", levels=levels_from_labels(task))
        if unit.strategy in ("bottom_up", "top_down")
        else None
    )
    planned = plan(task, unit.strategy, levels.levels if levels else None)  # type: ignore[arg-type]
    by_method = {step.target: step for step in planned}
    pairs = [(by_method[a.method] if a.method is not None else planned[i], a.completion) for i, a in enumerate(answers)]
    generated: dict[str, str] = {}
    records: list[StepRecord] = []
    for step, raw in sorted(pairs, key=lambda pair: pair[0].index):
        out = read_step_output(task, step, raw)
        generated.update(out.methods)
        records.append(step_record(step, out, raw))
    return finish_sample(unit, "samples_file", task, records, levels, generated, None, holistic=False)


def finish_sample(
    unit: SampleRequest,
    source: SampleSource,
    task: Task,
    steps: list[StepRecord],
    levels: LevelsRecord | None,
    generated: Mapping[str, str],
    class_code: str | None,
    *,
    holistic: bool,
) -> Sampled:
    """The program of a sample from what its steps produced, or `no_code` when there is nothing of
    the model's to run: no code at all, or a whole-class answer that defines no class."""
    asked = unit.model_copy(update={"source": source, "steps": steps, "levels": levels})

    def no_code(reason: str) -> Sampled:
        return asked, _unrun("no_code", reason)

    if holistic:
        if not (class_code and class_code.strip()):
            return no_code("no code could be extracted from the answer")
        if not defines_class(class_code, task.class_name):
            return no_code(f"the answer defines no class {task.class_name}")
        program = assemble_holistic(task, class_code)
    elif not any(c.strip() for c in generated.values()):
        return no_code(f"no code could be extracted from any of the {len(steps)} answers")
    else:
        program = assemble(task, generated)
    fault = lone_surrogate(program)
    if fault:
        # not text Python can compile (an unpaired "\ud800" escape, or invalid UTF-8 in the
        # samples file); this sample alone is a compile error, and it must never reach a file as code
        return asked, _unrun("compile_error", f"task {task.task_id}: the code is not valid source text: {fault}")
    return asked.model_copy(update={"program": program}), None


class LLMGenerator:
    """Drives the strategies for LLM models through one client; thread-safe (`client.map` calls it)."""

    def __init__(self, client: LLMClient, endpoint: EndpointConfig, *, levels_source: str = "labels") -> None:
        self.client = client
        self.endpoint = endpoint
        self.levels_source = levels_source
        self._levels: dict[tuple[str, str], LevelsRecord] = {}
        self._levels_lock = threading.Lock()

    def endpoint_for(self, model: str) -> EndpointConfig:
        return self.endpoint if self.endpoint.model == model else self.endpoint.model_copy(update={"model": model})

    def levels(self, model: str, task: Task) -> LevelsRecord:
        """Once per (model, task); concurrent callers wait for the first (the client coalesces too)."""
        if self.levels_source != "model":
            return LevelsRecord(source="labels", levels=levels_from_labels(task))
        key = (model, task.task_id)
        with self._levels_lock:
            found = self._levels.get(key)
        if found is None:
            found = model_levels(self.client, self.endpoint_for(model), task)
            with self._levels_lock:
                found = self._levels.setdefault(key, found)
        return found

    def generate(self, unit: SampleRequest, task: Task) -> Sampled:
        endpoint = self.endpoint_for(unit.model)
        levels: LevelsRecord | None = None
        steps: list[StepRecord] = []
        try:
            if unit.strategy in ("bottom_up", "top_down"):
                levels = self.levels(unit.model, task)
            planned = plan(task, unit.strategy, levels.levels if levels else None)  # type: ignore[arg-type]
            generated: dict[str, str] = {}
            class_code: str | None = None
            for step in planned:
                prompt = render_step(task, step, generated)
                reply = self.client.complete(
                    EVAL_ROLE,
                    endpoint,
                    prompt.messages,
                    task_id=task.task_id,
                    prompt_version=prompt.prompt_version,
                    sample_index=unit.sample_index,
                )
                out = read_step_output(task, step, reply.text)
                generated.update(out.methods)
                if step.kind == "class":
                    class_code = out.class_code
                steps.append(
                    step_record(step, out, reply.text).model_copy(
                        update=dict(
                            prompt_version=prompt.prompt_version,
                            prompt_sha256=prompt.sha256,
                            finish_reason=reply.finish_reason,
                            truncated=reply.truncated,
                            prompt_tokens=reply.prompt_tokens,
                            completion_tokens=reply.completion_tokens,
                            cached=reply.cached,
                            attempts=reply.attempts,
                            cache_key=reply.cache_key,
                        )
                    )
                )
        except LLMError as exc:
            done = len(steps)
            asked = unit.model_copy(update={"source": "llm", "steps": steps, "levels": levels})
            return asked, _unrun(
                "generation_error", f"task {task.task_id}: step {done + 1} failed: {exc}", cause_of(exc)
            )
        return finish_sample(
            unit, "llm", task, steps, levels, generated, class_code, holistic=any(s.kind == "class" for s in steps)
        )


def direct_unit(model: str, task_id: str, sample_index: int, dataset_sha256: str | None = None) -> SampleRequest:
    """A special model's sample: it has no strategy of its own."""
    return SampleRequest(
        model=model, strategy=DIRECT, task_id=task_id, sample_index=sample_index, dataset_sha256=dataset_sha256
    )
