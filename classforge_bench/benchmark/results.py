"""The versioned schema of an evaluation run's results, and reading/writing them.

A run folder holds everything needed to re-grade it offline (`classforge evaluate --regrade DIR`):
`results.json`, a small summary (the tasks as they were scored, the reference pre-run, settings,
scores, usage, and the list of sample files), and one file per sample under `samples/` holding
that sample's one record (`classforge_bench.benchmark.record.SampleRecord`): its name (model,
strategy, task, index, dataset), then what generation filled in (the raw and extracted text of
every step, the program), what execution filled in (the run's limit, environment and content hash,
its figures, the per-test-class outcomes) and what scoring filled in (bucket, cause, error category).
Scores are derived from those records and nothing else. Each sample's file is written as soon as
the sample is final, so it is also the unit a killed run resumes from (`SampleFiles`);
`results.json` is written once, at the end. Schema version 4 split each sample file into request
and result; version 5 held a sample's identity once; version 6 holds the one record in the three
parts its phases fill (and the tokens once, in the steps). Versions 1 (everything in
`results.json`), 2 and 3 (one flat record per sample), 4 and 5 are still read
(`classforge_bench.benchmark.record_versions`): their copies must agree, else the file is refused by name.

Unscored samples (`record.UNSCORED_CAUSES`) are counted and listed, never silently dropped; a
resumed run retries those whose model or sandbox failed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field, ValidationError

from classforge_bench.benchmark.environment import EnvironmentInfo
from classforge_bench.benchmark.metrics import Estimate, MetricsReport
from classforge_bench.benchmark.record import Record, SampleRecord
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.store import write_json
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.formats.quirks import QuirkFix
from classforge_bench.pipeline.llm.ledger import UsageSummary

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 6
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6)
RESULTS_FILE = "results.json"
SAMPLES_DIR = "samples"

SPECIAL_MODELS: tuple[str, ...] = ("reference", "empty")
DIRECT = "direct"  # the strategy label of samples that were not generated step by step (special models)


class ReferenceRecord(Record):
    """The reference pre-run of one task: broken tasks are excluded from every score."""

    task_id: str
    broken: bool
    cause: str = ""
    suite_status: str
    wall_s: float
    cpu_s: float | None = Field(None, description="the reference run's CPU time, where the sandbox reports it")
    limit_s: float = Field(description="evaluation limit scaled from cpu_s (else wall_s), never below wall_s")
    timings: int = Field(1, description="runs timed (results before CPU-time limits timed a slow reference twice)")
    execution_key: str
    infrastructure: bool = Field(False, description="the sandbox failed, so the task could not be judged")


class DatasetInfo(Record):
    path: str
    format: str
    sha256: str
    n_tasks_loaded: int
    n_tasks_selected: int
    samples_left_out: list[str] = Field(
        default_factory=list, description="tasks of the samples file --task/--max-tasks left out"
    )
    fixes_applied: list[QuirkFix] = Field(default_factory=list)
    notices: list[QuirkFix] = Field(default_factory=list)
    shipped_references: str | None = Field(
        None, description="a release's shipped reference results: whether they were used, and if not why (one line)"
    )


class RunSettings(Record):
    models: list[str]
    strategies: list[str]
    n_samples: int | None = Field(description="None for pre-generated samples (their count is per task)")
    ks: list[int]
    levels_source: str
    temperature: float
    max_tokens: int
    base_url: str | None
    bootstrap_resamples: int
    bootstrap_seed: int
    scale_floor_s: float
    scale_factor: float
    scale_cap_s: float | None = Field(None, description="None in results written before the cap existed")
    grace_s: float | None = Field(None, description="a run is killed this long after its limit")
    hash_seed: int | None = Field(None, description="PYTHONHASHSEED of every run; `random` is seeded with it too")
    environment: EnvironmentInfo | None = Field(
        None, description="the environment code under test ran in; None: classforge's own"
    )
    reference_limit_s: float
    samples_file: str | None = None
    samples_file_sha256: str | None = None
    task_ids: list[str] | None = None


class DepScores(Record):
    dep_m: Estimate | None
    dep_f: Estimate | None
    method_hits: int
    method_total: int
    field_hits: int
    field_total: int


class GroupScores(Record):
    """Scores of one (model, strategy): ClassEval-Pro Table 4's row."""

    model: str
    strategy: str
    buckets: dict[str, int] = Field(description="samples per bucket; every bucket listed")
    n_samples: int
    n_scored: int
    tasks_scored: int
    tasks_unscored: list[str] = Field(
        default_factory=list, description="selected, non-broken tasks with no scored sample"
    )
    metrics: MetricsReport | None = None
    taxonomy: dict[str, int] = Field(default_factory=dict)
    dep: DepScores | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class RunStats(Record):
    sandbox_runs: int = Field(0, description="sandbox runs made by this invocation (reruns and retries included)")
    executions_reused: int = Field(0, description="executions served from the run's content store")
    llm_requests: int = 0
    samples_resumed: int = Field(
        0, description="samples read back from their files, finished by an earlier run that stopped"
    )
    seconds: dict[str, float] = Field(default_factory=dict, description="wall time per phase")


class HashSeedCheck(Record):
    """A sample that passes at class level, run again under other PYTHONHASHSEED values
    (`evaluate.hash_seeds`, classforge_bench.benchmark.hash_seeds)."""

    model: str
    strategy: str
    task_id: str
    sample_index: int
    seeds: list[int] = Field(description="the run's own seed first, then the others")
    passes: list[bool] = Field(description="per seed: the sample passes every test class")

    @property
    def holds(self) -> int:
        return sum(self.passes)

    @property
    def dependent(self) -> bool:
        """Its verdict depends on the hash seed: a pass under the run's seed that others do not repeat."""
        return not all(self.passes)

    def verdict(self) -> str:
        """In words, for the summary and the results page."""
        held = [s for s, p in zip(self.seeds, self.passes, strict=True) if p]
        return f"passes under {self.holds} of {len(self.seeds)} hash seeds ({', '.join(map(str, held))})"


class RunResults(Record):
    schema_version: Literal[1, 2, 3, 4, 5, 6] = SCHEMA_VERSION
    run_id: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    classforge_version: str
    dataset: DatasetInfo
    settings: RunSettings
    tasks: list[Task] = Field(description="the selected tasks, as scored (quirk fixes applied)")
    reference: list[ReferenceRecord]
    samples: list[SampleRecord]
    scores: list[GroupScores] = Field(default_factory=list)
    plus_scores: list[GroupScores] = Field(
        default_factory=list, description="the same samples against base + plus tests (tasks with a plus suite)"
    )
    plus_reference: list[ReferenceRecord] = Field(default_factory=list, description="the reference against base + plus")
    hash_seed_checks: list[HashSeedCheck] = Field(
        default_factory=list, description="class-level passes run again under other hash seeds (evaluate.hash_seeds)"
    )
    usage: UsageSummary | None = None
    stats: RunStats = Field(default_factory=RunStats)

    @property
    def broken_task_ids(self) -> list[str]:
        return [r.task_id for r in self.reference if r.broken]


# -- files -----------------------------------------------------------------------------------------


class ResultsError(InputError):
    """A results folder or file that cannot be read; the message says which and why."""


def sample_file(record: SampleRecord) -> str:
    """A sample's file, relative to the run folder: readable, and unique (the hash tells apart
    labels that slug the same, e.g. `org/model` and `org-model`)."""
    exact = json.dumps(list(record.key))
    tag = hashlib.sha256(exact.encode()).hexdigest()[:8]
    return (
        f"{SAMPLES_DIR}/{_slug(record.model)}/{_slug(record.strategy)}/"
        f"{_slug(record.task_id, 80)}__{record.sample_index}__{tag}.json"
    )


class SampleFiles:
    """The run folder's `samples/`: one file per sample, written when the sample is final, read
    back when a run resumes. A file that cannot be read or does not hold the sample its name says
    is ignored with a warning naming it, and the sample is done again."""

    # a resumed run does these again: the model or the sandbox failed, or the task was broken
    # (its reference is judged again by every run; a sandbox failure there may be gone)
    REDONE = ("generation_error", "sandbox_error", "task_broken")

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)

    def write(self, record: SampleRecord) -> str:
        name = sample_file(record)
        write_json(self.run_dir / name, record.model_dump(mode="json"))
        return name

    def finished(self) -> dict[tuple[str, str, str, int], SampleRecord]:
        """Samples a resumed run need not do again."""
        out = {}
        root = self.run_dir / SAMPLES_DIR
        for path in sorted(root.rglob("*.json")) if root.is_dir() else []:
            try:
                record = read_sample(path)
            except ResultsError as e:
                log.warning("%s; the sample is done again", e)
                continue
            if self.run_dir / sample_file(record) != path:
                log.warning("%s: holds another sample (%s), the sample is done again", path, sample_file(record))
                continue
            if record.bucket not in self.REDONE:
                out[record.key] = record
        return out


def save_results(run_dir: Path, results: RunResults, *, write_samples: bool = True) -> Path:
    """The summary that lists the sample files (and, with `write_samples`, every sample's file;
    a run that wrote them as they finished passes False)."""
    run_dir = Path(run_dir)
    files = SampleFiles(run_dir)
    names = [files.write(r) if write_samples else sample_file(r) for r in results.samples]
    summary = results.model_dump(mode="json", exclude={"samples"}) | {
        "schema_version": SCHEMA_VERSION,
        "sample_files": names,
    }
    path = run_dir / RESULTS_FILE
    write_json(path, summary)
    return path


def read_sample(path: Path) -> SampleRecord:
    """One sample's file, or a one-line `ResultsError` naming it (truncated, not JSON, not a record).
    Read with `json` rather than pydantic's parser: a program may hold a lone surrogate escape
    (a samples file's invalid UTF-8), which `json` reads back and pydantic's parser refuses."""
    data = _read_json(path)
    try:
        record = SampleRecord.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ResultsError(f"{path}: not a sample record: {where + ': ' if where else ''}{first['msg']}"[:400]) from e
    unfilled = [name for name in ("generation", "score") if getattr(record, name) is None]
    if unfilled:
        # a file is written when its sample is final: generated and scored (execution may be skipped)
        raise ResultsError(f"{path}: not a sample record: {', '.join(unfilled)}: never filled")
    return record


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ResultsError(f"{path}: not valid JSON: {e}") from e
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e}") from e


def load_results(run_dir_or_file: Path) -> RunResults:
    path = Path(run_dir_or_file)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.is_file():
        raise ResultsError(f"{path}: no results file")
    data = _read_json(path)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version not in READABLE_VERSIONS:
        raise ResultsError(
            f"{path}: results schema version {version!r}; this classforge reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    if version != 1:
        names = data.pop("sample_files", None)
        if not isinstance(names, list):
            raise ResultsError(f"{path}: no list of sample files")
        data["samples"] = [read_sample(path.parent / name) for name in names]
    try:
        return RunResults.model_validate(data)
    except ValueError as e:
        raise ResultsError(f"{path}: does not match the results schema: {e}") from e


# -- run identity ------------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    path = Path(path)
    files = (
        sorted(p for p in path.rglob("*") if p.is_file() and "data" in p.relative_to(path).parts[:1])
        if path.is_dir()
        else [path]
    )
    for f in files:
        digest.update(f.name.encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:limit] or "x"


def dataset_label(dataset: Path) -> str:
    """The dataset's name in a run id: a file's stem, a folder's whole name (a release folder is named
    by its version, 2026.11.26, whose last part is not a suffix)."""
    return dataset.name if dataset.is_dir() else dataset.stem


def run_id_for(dataset_name: str, identity: dict[str, Any]) -> str:
    """Readable and stable: the same dataset, models and settings give the same id, so a re-run
    resumes in the same folder; anything that changes the samples gives a new one."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:12]
    models = "+".join(identity.get("models", [])) or "none"
    return f"{_slug(dataset_name, 30)}__{_slug(models)}__{digest}"
