"""`classforge strengthen`: any dataset `evaluate` reads, written again with a `plus` suite per task.

The output has the input's format and every one of its columns as read, plus one: `plus` (an
object in JSON/JSONL, JSON text in Parquet, a JSON column in a classforge release). Each task's
suite is cached by content the moment it is finished, so an interrupted run loses nothing and a
re-run only makes what is missing; the dataset itself is written once, at the end, atomically.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.store import write_text
from classforge_bench.pipeline.core.task import PlusSuite, Task
from classforge_bench.pipeline.formats.loader import load_dataset, read_records
from classforge_bench.pipeline.quality.plus.suite import cached_suite, make_plus_suite, suite_key


class StrengthenSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dataset: str
    output: str
    tasks: int
    reused: int = Field(description="suites read from the cache")
    with_plus: int = Field(description="tasks with at least one plus test")
    plus_tests: int
    failed: list[str] = Field(default_factory=list, description="tasks whose generation produced nothing")
    dropped: dict[str, int] = Field(default_factory=dict)


def task_suite(task: Task, sandbox: SandboxConfig, plus: PlusConfig) -> tuple[PlusSuite, bool]:
    """(the task's plus suite, whether it came from the cache)."""
    # The task's own tests are part of its contract: the values they pass are in the domain.
    key = suite_key(
        task.solution_code,
        task.class_name,
        task.import_statement,
        sandbox,
        plus,
        task.skeleton,
        task.test,
        base_test_classes=task.test_classes,
    )
    cached = cached_suite(plus, key)
    if cached is not None:
        return cached.model_copy(update={"generation_s": 0.0}), True
    suite = make_plus_suite(
        task.solution_code,
        task.class_name,
        import_statement=task.import_statement,
        sandbox=sandbox,
        plus=plus,
        item_id=task.task_id,
        described=task.skeleton,
        base_tests=task.test,
        base_test_classes=task.test_classes,
    )
    return suite, False


def output_path(dataset: Path, out: Path) -> Path:
    """Where the strengthened copy goes: `out/<file name>` for a file, `out` itself for a folder."""
    return out if dataset.is_dir() else out / dataset.name


def _write_parquet_folder(dataset: Path, dest: Path, suites: dict[str, dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from classforge_bench.pipeline.formats.release_rows import JSON_COLUMNS_KEY

    shutil.copytree(dataset, dest, dirs_exist_ok=True)
    for file in sorted(dest.glob("data/**/*.parquet")):
        table = pq.read_table(file)
        texts = [json.dumps(suites.get(tid)) if tid in suites else None for tid in table.column("task_id").to_pylist()]
        if "plus" in table.column_names:
            table = table.drop_columns(["plus"])
        meta = dict(table.schema.metadata or {})
        if JSON_COLUMNS_KEY in meta:  # a classforge release: its reader decodes the listed JSON columns
            meta[JSON_COLUMNS_KEY] = json.dumps(sorted(set(json.loads(meta[JSON_COLUMNS_KEY])) | {"plus"})).encode()
        table = table.append_column("plus", pa.array(texts, pa.string())).replace_schema_metadata(meta)
        pq.write_table(table, file)


def write_strengthened(dataset: Path, out: Path, suites: dict[str, dict[str, Any]]) -> Path:
    """The dataset as read, each record with its `plus` column, in the input's format."""
    dest = output_path(dataset, out)
    if dataset.is_dir():
        _write_parquet_folder(dataset, dest, suites)
        return dest
    records = [dict(r, plus=suites[r["task_id"]]) if r.get("task_id") in suites else r for r in read_records(dataset)]
    if dataset.suffix == ".json":
        write_text(dest, json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    elif dataset.suffix == ".jsonl":
        write_text(dest, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [dict(r, plus=json.dumps(r["plus"]) if r.get("plus") is not None else None) for r in records]
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".partial")
        pq.write_table(pa.Table.from_pylist(rows), tmp)
        tmp.replace(dest)
    return dest


def strengthen_dataset(
    dataset: Path,
    out: Path,
    sandbox: SandboxConfig,
    plus: PlusConfig,
    *,
    task_ids: Collection[str] | None = None,
    on_task: Callable[[Task, PlusSuite, bool], None] | None = None,
    write: Callable[[Path, Path, dict[str, dict[str, Any]]], Path] = write_strengthened,
) -> StrengthenSummary:
    """Make (or reuse) every task's plus suite, then write the strengthened dataset under `out`
    (`write`: how; a release folder is written as a new version by classforge_bench.pipeline.release.plus_release)."""
    dataset, out = Path(dataset), Path(out)
    if out.resolve() == dataset.resolve() or (dataset.is_dir() and dataset.resolve() in out.resolve().parents):
        raise InputError(f"--out {out} would overwrite the dataset it reads ({dataset}); choose another folder")
    loaded = load_dataset(dataset, task_ids)
    suites: dict[str, dict[str, Any]] = {}
    summary = StrengthenSummary(
        dataset=str(dataset), output="", tasks=len(loaded.tasks), reused=0, with_plus=0, plus_tests=0
    )
    for task in loaded.tasks:
        suite, reused = task_suite(task, sandbox, plus)
        suites[task.task_id] = suite.model_dump(mode="json")
        summary.reused += reused
        summary.with_plus += suite.tests > 0
        summary.plus_tests += suite.tests
        if suite.failure:
            summary.failed.append(task.task_id)
        for reason, n in suite.dropped.items():
            summary.dropped[reason] = summary.dropped.get(reason, 0) + n
        if on_task is not None:
            on_task(task, suite, reused)
    summary.output = str(write(dataset, out, suites))
    return summary
