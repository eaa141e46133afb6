"""Pre-generated samples: completions produced by another inference stack, scored without an LLM.

One JSON object per line:

    {"task_id": "ClassEval_0", "completion": "```python\\nclass ...```"}
    {"task_id": "ClassEval_0", "completion": "...", "model": "my-model", "strategy": "holistic", "sample_index": 1}

`completion` is the model's whole-class output (fences, prose and reasoning tags are fine; the
code is extracted as for a holistic answer). `model` defaults to the name given on the command
line (else the file's stem), `strategy` to "external". Without `sample_index`, samples of the
same (model, strategy, task) are numbered in file order. Unknown task ids and duplicate indices
are errors naming the line. Lines end at "\\n" only (a raw U+2028 inside a JSON string is text). A
line with invalid UTF-8, or a completion holding a lone surrogate (`"\\ud800"`), is that sample's
fault alone: it is scored as a compile error and the rest of the file is read and scored.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.core.textfiles import utf8_lines

log = logging.getLogger(__name__)

EXTERNAL = "external"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/+-]*$")


class SamplesFileError(ValueError):
    """A samples file that cannot be used as it is; the message names the file, line and fault."""


class PregeneratedSample(BaseModel):
    model_config = ConfigDict(extra="ignore")  # other stacks add their own columns (ids, timings...)

    task_id: str
    completion: str
    model: str | None = None
    strategy: str | None = None
    sample_index: int | None = Field(None, ge=0)


class NumberedSample(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int
    task_id: str
    model: str
    strategy: str
    sample_index: int
    completion: str


def read_samples_file(path: Path, *, default_model: str | None, known_tasks: set[str]) -> list[NumberedSample]:
    path = Path(path)
    if not path.is_file():
        raise SamplesFileError(f"{path}: no such samples file")
    fallback_model = default_model or path.stem
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
            raise SamplesFileError(f"{path}:{lineno}: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from e
    if not raw:
        raise SamplesFileError(f"{path}: no samples")
    out: list[NumberedSample] = []
    used: dict[tuple[str, str, str], set[int]] = {}
    for lineno, s in raw:
        if s.task_id not in known_tasks:
            raise SamplesFileError(f"{path}:{lineno}: task {s.task_id!r} is not in the dataset")
        model = s.model or fallback_model
        strategy = s.strategy or EXTERNAL
        for label, value in (("model", model), ("strategy", strategy)):
            if not _LABEL.match(value):
                raise SamplesFileError(f"{path}:{lineno}: {label} {value!r} must be a plain label (letters, digits, _.:/+-)")
        taken = used.setdefault((model, strategy, s.task_id), set())
        index = s.sample_index if s.sample_index is not None else next(i for i in range(len(taken) + 1) if i not in taken)
        if index in taken:
            raise SamplesFileError(f"{path}:{lineno}: task {s.task_id}: sample {index} of {model}/{strategy} given twice")
        taken.add(index)
        out.append(NumberedSample(line=lineno, task_id=s.task_id, model=model, strategy=strategy,
                                  sample_index=index, completion=s.completion))
    return out
