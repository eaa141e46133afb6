"""Generate one sample: a (model, strategy, sample index, task) turned into a program.

LLM models go through the project's one `LLMClient` (content-addressed cache, retries, ledger):
for each step of `plan(task, strategy)` the rendered prompt is sent, the step's output extracted,
and the methods produced so far fed to the next prompt; the program is then assembled into the
skeleton. The special models need no client: `reference` is the canonical solution and `empty`
the bare skeleton. Pre-generated samples (`--samples`) are whole-class completions, extracted and
assembled like a holistic answer, or per-method steps, read and assembled like live steps.

Each function here returns the sample's `Generation` part, which the generation phase fills into
the sample's record once. A sample whose output holds no code at all is `no_code` (nothing to run).
A model call that fails for good (`LLMError`) makes the sample a `generation_error`, reported and
never scored; the steps that did succeed are in the cache, so a resumed run only pays for the failed one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from classforge_bench.benchmark.levels import model_levels
from classforge_bench.benchmark.record import Generation, LevelsRecord, SampleRecord, SampleSource, StepRecord, Unrun
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
from classforge_bench.pipeline.llm.errors import BudgetExceeded, CacheMiss, LLMCallFailed, LLMError, PromptTooLong
from classforge_bench.pipeline.llm.extraction import Extraction, extract_code

EVAL_ROLE = "evaluate"

if TYPE_CHECKING:  # the OpenAI SDK under the client is loaded only when a model is asked
    from classforge_bench.pipeline.llm.client import LLMClient


def cause_of(error: LLMError) -> str:
    """The unscored cause of a model call that failed for good."""
    if isinstance(error, PromptTooLong):
        return "prompt-too-long"
    if isinstance(error, CacheMiss):
        return "replay-miss"
    if isinstance(error, BudgetExceeded):
        return "budget-reached"
    if isinstance(error, LLMCallFailed) and not error.transient:
        return "request-refused"
    return "llm-unavailable"


def failed_generation(
    error: LLMError, reason: str, steps: list[StepRecord] | None = None, levels: LevelsRecord | None = None
) -> Generation:
    """A model call failed for good: nothing to run, and why (the steps before it are kept)."""
    return Generation(
        source="llm",
        steps=steps or [],
        levels=levels,
        unrun="generation_error",
        reason=reason,
        cause=cause_of(error),
    )


def special_sample(record: SampleRecord, task: Task) -> Generation:
    """The `reference` or `empty` model's program."""
    if record.model == "reference":
        return Generation(source="reference", program=reference_program(task))
    if record.model == "empty":
        return Generation(source="empty", program=empty_program(task))
    raise ValueError(f"task {task.task_id}: {record.model!r} is not a special model")


def completion_sample(task: Task, completion: str) -> Generation:
    """A pre-generated whole-class completion, extracted and assembled like a holistic answer."""
    ex = extract_code(completion, class_name=task.class_name)
    step = StepRecord(
        index=0, kind="completion", targets=task.method_names, raw=completion, extracted=ex.code, extraction_how=ex.how
    )
    return finish_sample("samples_file", task, [step], None, {}, ex.code, holistic=True)


def step_record(step: GenerationStep, out: StepOutput, raw: str, **call: object) -> StepRecord:
    """What one step (live or pre-generated) answered and what was extracted from it; `call`: the
    model call's own fields (prompt, tokens, cache), for a live step."""
    extracted = out.class_code if step.kind == "class" else out.methods.get(step.target, "")
    ex = out.extraction
    code_how, method_how = (ex.how, None) if isinstance(ex, Extraction) else (ex.extraction.how, ex.how)
    return StepRecord.model_validate(
        dict(
            index=step.index,
            kind=step.kind,
            targets=step.targets,
            level=step.level,
            raw=raw,
            extracted=extracted or "",
            extraction_how=code_how,
            method_how=method_how,
        )
        | call
    )


def pregenerated_sample(record: SampleRecord, answer: PregeneratedSample, task: Task) -> Generation:
    """One line of a samples file (named by `record`, answered by `answer`) as a generated sample."""
    if answer.steps is not None:
        return steps_sample(record.strategy, task, answer.steps)
    assert answer.completion is not None  # a sample has one of the two shapes (samples_file checks it)
    return completion_sample(task, answer.completion)


def steps_sample(strategy: str, task: Task, answers: Sequence[PregeneratedStep]) -> Generation:
    """Pre-generated answers of a per-method strategy, read and assembled exactly as live answers
    are: each answer goes through its step's `read_step_output`, the methods through `assemble`.
    Answers name their method, or follow the strategy's order (`plan`)."""
    levels = (
        LevelsRecord(source="labels", levels=levels_from_labels(task))
        if strategy in ("bottom_up", "top_down")
        else None
    )
    planned = plan(task, strategy, levels.levels if levels else None)  # type: ignore[arg-type]
    by_method = {step.target: step for step in planned}
    pairs = [(by_method[a.method] if a.method is not None else planned[i], a.completion) for i, a in enumerate(answers)]
    generated: dict[str, str] = {}
    records: list[StepRecord] = []
    for step, raw in sorted(pairs, key=lambda pair: pair[0].index):
        out = read_step_output(task, step, raw)
        generated.update(out.methods)
        records.append(step_record(step, out, raw))
    return finish_sample("samples_file", task, records, levels, generated, None, holistic=False)


def finish_sample(
    source: SampleSource,
    task: Task,
    steps: list[StepRecord],
    levels: LevelsRecord | None,
    generated: Mapping[str, str],
    class_code: str | None,
    *,
    holistic: bool,
) -> Generation:
    """The program of a sample from what its steps produced, or `no_code` when there is nothing of
    the model's to run: no code at all, or a whole-class answer that defines no class."""

    def unrun(bucket: Unrun, reason: str) -> Generation:
        return Generation(source=source, steps=steps, levels=levels, unrun=bucket, reason=reason)

    def no_code(reason: str) -> Generation:
        return unrun("no_code", reason)

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
        return unrun("compile_error", f"task {task.task_id}: the code is not valid source text: {fault}")
    return Generation(source=source, steps=steps, levels=levels, program=program)


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

    def generate(self, record: SampleRecord, task: Task) -> Generation:
        endpoint = self.endpoint_for(record.model)
        levels: LevelsRecord | None = None
        steps: list[StepRecord] = []
        try:
            if record.strategy in ("bottom_up", "top_down"):
                levels = self.levels(record.model, task)
            planned = plan(task, record.strategy, levels.levels if levels else None)  # type: ignore[arg-type]
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
                    sample_index=record.sample_index,
                )
                out = read_step_output(task, step, reply.text)
                generated.update(out.methods)
                if step.kind == "class":
                    class_code = out.class_code
                steps.append(
                    step_record(
                        step,
                        out,
                        reply.text,
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
        except LLMError as exc:
            reason = f"task {task.task_id}: step {len(steps) + 1} failed: {exc}"
            return failed_generation(exc, reason, steps, levels)
        return finish_sample(
            "llm", task, steps, levels, generated, class_code, holistic=any(s.kind == "class" for s in steps)
        )
