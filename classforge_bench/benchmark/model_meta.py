"""What a leaderboard says about each model beyond its scores: display name, size, training
cutoff, open or closed weights, and the day it was evaluated.

Read from a small TOML or JSON file (docs/results-page.md shows both), one table per model label
as the runs name it, and overridden per model by `classforge leaderboard --cutoff MODEL=DATE`:

    [models."qwen2.5-coder-7b"]
    name = "Qwen2.5-Coder 7B"
    size = "7B"
    cutoff = 2024-09-01
    open = true

Every key is optional. A model the file does not name has no metadata; its date evaluated is the
run's own date either way unless the file gives one.
"""

from __future__ import annotations

import json
import tomllib
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.benchmark.results import ResultsError


class ModelMeta(BaseModel):
    """One model's metadata; every field optional."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="the name to show; the run's model label when absent")
    size: str | None = Field(None, description='parameters as the vendor states them, e.g. "7B"; free text')
    cutoff: date | None = Field(None, description="training-data cutoff: tasks first seen after it are unseen")
    open: bool | None = Field(None, description="open weights (true) or closed (false)")
    evaluated: date | None = Field(None, description="the day it was evaluated; the run's date when absent")


class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelMeta] = Field(default_factory=dict)


def load_model_meta(path: Path | None) -> dict[str, ModelMeta]:
    """The file's models by label, or a one-line `ResultsError` naming the file and what is wrong."""
    if path is None:
        return {}
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
        return ModelsFile.model_validate(data).models
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        # ValidationError is a ValueError; keep only its first problem so the message stays one line
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        why = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc).splitlines()[0]
        raise ResultsError(f"{path}: not a model metadata file ({why})") from exc


def parse_cutoffs(pairs: list[str]) -> dict[str, date]:
    """`MODEL=YYYY-MM-DD` pairs (the `--cutoff` flag) as model label -> cutoff date."""
    out = {}
    for pair in pairs:
        model, sep, day = pair.rpartition("=")
        try:
            out[model] = date.fromisoformat(day.strip())
        except ValueError:
            model = ""
        if not sep or not model:
            raise ResultsError(f"--cutoff {pair!r}: expected MODEL=YYYY-MM-DD")
    return out


def with_cutoffs(meta: dict[str, ModelMeta], cutoffs: dict[str, date]) -> dict[str, ModelMeta]:
    """The metadata with each flag's cutoff replacing the file's."""
    out = dict(meta)
    for model, day in cutoffs.items():
        out[model] = out.get(model, ModelMeta()).model_copy(update={"cutoff": day})
    return out
