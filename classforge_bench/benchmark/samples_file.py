"""Pre-generated samples: completions produced by another inference stack, scored without an LLM.

One JSON object per line, in one of two shapes. A whole-class answer (holistic, or any stack's
single answer per task):

    {"task_id": "ClassEval_0", "completion": "```python\\nclass ...```"}
    {"task_id": "ClassEval_0", "completion": "...", "model": "my-model", "strategy": "holistic", "sample_index": 1}

The answers of a per-method strategy (`incremental`, `compositional`, `bottom_up`, `top_down`), one
per step, each either the method alone or the whole class as it stood after that step:

    {"task_id": "ClassEval_0", "strategy": "incremental", "steps": [
        {"method": "filter", "completion": "```python\\ndef filter(self, request): ...```"},
        {"method": "is_start_with", "completion": "..."}]}

`completion` answers are extracted as a holistic answer is. `steps` answers are read and assembled
by the same code as live generation (`read_step_output`, then `assemble`): each step's `method`
names the method it answers; without `method`, steps follow the strategy's own order (`plan`:
declaration order, or dependency levels from the dataset's labels for bottom_up/top_down). A
method with no step keeps its skeleton body, as a method the model failed to produce does live.
`model` defaults to the name given on the command line (else the file's stem), `strategy` to
"external" for `completion` lines (a `steps` line must name its strategy). Without `sample_index`,
samples of the same (model, strategy, task) are numbered in file order. Unknown task ids or
method names, and duplicate indices, are errors naming the line. Lines end at "\\n" only (a raw
U+2028 inside a JSON string is text). A line with invalid UTF-8, or a completion holding a lone
surrogate (`"\\ud800"`), is that sample's fault alone: it is scored as a compile error and the
rest of the file is read and scored.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from classforge_bench.benchmark.record import SampleRecord
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.formats.textfiles import utf8_lines

log = logging.getLogger(__name__)

EXTERNAL = "external"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/+-]*$")


class SamplesFileError(InputError):
    """A samples file that cannot be used as it is; the message names the file, line and fault."""


PER_METHOD_STRATEGIES = ("incremental", "compositional", "bottom_up", "top_down")


class PregeneratedStep(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    method: str | None = None
    completion: str


class PregeneratedSample(BaseModel):
    model_config = ConfigDict(extra="ignore")  # other stacks add their own columns (ids, timings...)

    task_id: str
    completion: str | None = None
    steps: list[PregeneratedStep] | None = Field(None, min_length=1)
    model: str | None = None
    strategy: str | None = None
    sample_index: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one_shape(self) -> PregeneratedSample:
        if (self.completion is None) == (self.steps is None):
            raise ValueError("give either 'completion' (a whole-class answer) or 'steps' (one answer per method)")
        return self


Answer = tuple[SampleRecord, PregeneratedSample]
"""One sample of the file: its record, named (model, strategy, task, index as numbered here) and not
yet filled, and the line's answer, which generation reads into the record."""


def _check_steps(where: str, s: PregeneratedSample, strategy: str, methods: Sequence[str] | None) -> None:
    if strategy not in PER_METHOD_STRATEGIES:
        raise SamplesFileError(
            f"{where}: 'steps' need a per-method strategy ({', '.join(PER_METHOD_STRATEGIES)}), got {strategy!r}"
        )
    assert s.steps is not None  # the caller checked the shape
    named = [st.method for st in s.steps if st.method is not None]
    if named and len(named) != len(s.steps):
        raise SamplesFileError(f"{where}: name the method of every step or of none")
    if methods is not None and not named and len(s.steps) > len(methods):
        raise SamplesFileError(f"{where}: {len(s.steps)} steps for task {s.task_id}, which has {len(methods)} methods")
    unknown = [m for m in named if methods is not None and m not in methods]
    if unknown:
        raise SamplesFileError(f"{where}: task {s.task_id} has no method(s) {', '.join(unknown)}")
    twice = sorted({m for m in named if named.count(m) > 1})
    if twice:
        raise SamplesFileError(f"{where}: method(s) {', '.join(twice)} answered twice")


def samples_task_ids(path: Path) -> list[str]:
    """The task ids a samples file names, in first-seen order, read leniently (a line that is not
    a JSON object with a string `task_id` is skipped here: `read_samples_file` names its fault),
    so that only these tasks need to be loaded and pre-run."""
    path = Path(path)
    if not path.is_file():
        raise SamplesFileError(f"{path}: no such samples file")
    seen: dict[str, None] = {}
    for line in utf8_lines(path, strict=False):
        try:
            record = json.loads(line.text)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("task_id"), str):
            seen.setdefault(record["task_id"])
    return list(seen)


def _parsed_lines(path: Path) -> list[tuple[int, PregeneratedSample]]:
    """(line number, sample) for every line of the file; a line that is not a valid sample is an
    error naming it, and so is a file without samples."""
    raw: list[tuple[int, PregeneratedSample]] = []
    for line in utf8_lines(path, strict=False):
        lineno = line.number
        if line.fault:
            # the bytes stay in the completion as lone surrogates: that sample becomes a compile
            # error of its own (see `finish_sample`) and every other line is still scored
            log.warning("%s:%d: %s; the sample on this line will not compile", path, lineno, line.fault)
        try:
            raw.append((lineno, PregeneratedSample.model_validate(json.loads(line.text))))
        except json.JSONDecodeError as e:
            raise SamplesFileError(f"{path}:{lineno}: not valid JSON: {e}") from e
        except ValidationError as e:
            first = e.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            raise SamplesFileError(f"{path}:{lineno}: {field + ': ' if field else ''}{first['msg']}") from e
    if not raw:
        raise SamplesFileError(f"{path}: no samples")
    return raw


def read_samples_file(
    path: Path,
    *,
    default_model: str | None,
    known_tasks: Collection[str],
    task_methods: Mapping[str, Sequence[str]] | None = None,
    selected: Collection[str] | None = None,
    dataset_sha256: str | None = None,
) -> list[Answer]:
    """Every sample of the file (see the module docstring); `task_methods` (task -> method names)
    lets per-method steps be checked against the tasks. With `selected`, samples of the other
    (known) tasks are left out: the caller says which and why. `dataset_sha256` names the dataset
    in each record."""
    path = Path(path)
    if not path.is_file():
        raise SamplesFileError(f"{path}: no such samples file")
    fallback_model = default_model or path.stem
    raw = _parsed_lines(path)
    out: list[Answer] = []
    used: dict[tuple[str, str, str], set[int]] = {}
    for lineno, s in raw:
        if s.task_id not in known_tasks:
            raise SamplesFileError(f"{path}:{lineno}: task {s.task_id!r} is not in the dataset")
        if selected is not None and s.task_id not in selected:
            continue
        model = s.model or fallback_model
        if s.steps is not None and s.strategy is None:
            raise SamplesFileError(
                f"{path}:{lineno}: a 'steps' sample must name its strategy ({', '.join(PER_METHOD_STRATEGIES)})"
            )
        strategy = s.strategy or EXTERNAL
        if s.steps is not None:
            _check_steps(f"{path}:{lineno}", s, strategy, task_methods.get(s.task_id) if task_methods else None)
        for label, value in (("model", model), ("strategy", strategy)):
            if not _LABEL.match(value):
                raise SamplesFileError(
                    f"{path}:{lineno}: {label} {value!r} must be a plain label (letters, digits, _.:/+-)"
                )
        taken = used.setdefault((model, strategy, s.task_id), set())
        index = (
            s.sample_index if s.sample_index is not None else next(i for i in range(len(taken) + 1) if i not in taken)
        )
        if index in taken:
            raise SamplesFileError(
                f"{path}:{lineno}: task {s.task_id}: sample {index} of {model}/{strategy} given twice"
            )
        taken.add(index)
        out.append(
            (
                SampleRecord(
                    model=model, strategy=strategy, task_id=s.task_id, sample_index=index, dataset_sha256=dataset_sha256
                ),
                s,
            )
        )
    return out
