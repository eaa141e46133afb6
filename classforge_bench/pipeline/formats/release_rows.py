"""The task protocol a release accepts and the Parquet schema it publishes.

Schema decision (documented in every dataset card):
- ClassEval's keys plus `composition_type`, `domain1`, `domain2` have one fixed Arrow schema in every
  release: strings, `list<string>`, and `methods_info` as `list<struct<...>>` with a nested
  `dependencies` struct. They are regular, so native types let `datasets`, pyarrow, pandas and the
  Hub viewer see real nested records, and the evaluator reads them as the lists of dicts ClassEval has.
- Every other field (provenance, judge scores, models, prompt versions, coverage, ...) is an
  "extra" column, typed by a fixed rule over its values: all strings -> string, all booleans -> bool,
  all integers -> int64, all numbers -> float64, lists of strings -> list<string>, lists of integers
  (nulls allowed) -> list<int64>; anything else (objects, lists of objects, mixed) is stored as JSON
  text, because such fields are irregular (judge votes with free-text reasons, per-role dicts,
  provenance records that grow fields) and an inferred struct type would differ between releases.
  JSON columns are listed in the Parquet schema metadata (`classforge.json_columns`), the manifest
  and the card; `read_release_rows` decodes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from classforge_bench.pipeline.core.errors import ReleaseFormatError
from classforge_bench.pipeline.core.task import CORE_COLUMNS, Task, composition_type

FORMAT = "classforge-release/1"
JSON_COLUMNS_KEY = b"classforge.json_columns"
FORMAT_KEY = b"classforge.format"
DATA_FILE = "data/test-00000-of-00001.parquet"
DATA_GLOB = "data/test-*.parquet"
SPLIT = "test"


def composition_kind(value: str) -> Literal["intra", "cross"]:
    """'intra' or 'cross' for either accepted spelling of composition_type."""
    return "intra" if composition_type(value) == "intra-domain" else "cross"


def core_arrow_schema():
    """The fixed Arrow schema of the core columns (pyarrow imported lazily: no work at import)."""
    import pyarrow as pa

    strings = pa.list_(pa.string())
    deps = pa.struct(
        [
            ("Standalone", pa.bool_()),
            ("lib_dependencies", strings),
            ("field_dependencies", strings),
            ("method_dependencies", strings),
        ]
    )
    method = pa.struct(
        [
            ("method_name", pa.string()),
            ("method_description", pa.string()),
            ("test_class", pa.string()),
            ("test_code", pa.string()),
            ("solution_code", pa.string()),
            ("dependencies", deps),
        ]
    )
    types = {
        "test_classes": strings,
        "import_statement": strings,
        "fields": strings,
        "methods_info": pa.list_(method),
    }
    return pa.schema([(name, types.get(name, pa.string())) for name in CORE_COLUMNS])


def release_rows(tasks: Iterable[Task]) -> list[dict[str, Any]]:
    """Every task's release row (JSON-able), refusing a task id seen twice.

    Core columns come first in schema order, the rest after in sorted order, so output is deterministic.
    """
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task.task_id in seen:
            raise ReleaseFormatError(f"task id {task.task_id!r} appears twice (items {seen[task.task_id]} and {i})")
        seen[task.task_id] = i
        row = task.to_row()
        out.append({**{k: row[k] for k in CORE_COLUMNS}, **{k: row[k] for k in sorted(row) if k not in CORE_COLUMNS}})
    return out


def _extra_type(name: str, values: list[Any]):
    """(arrow type, is_json) for one extra column, by the rule in the module docstring."""
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if not present or all(isinstance(v, str) for v in present):
        return pa.string(), False
    if all(isinstance(v, bool) for v in present):
        return pa.bool_(), False
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64(), False
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64(), False
    if all(isinstance(v, list) for v in present):
        items = [x for v in present for x in v]
        if all(isinstance(x, str) for x in items):
            return pa.list_(pa.string()), False
        ints = [x for x in items if x is not None]
        if ints and all(isinstance(x, int) and not isinstance(x, bool) for x in ints):
            return pa.list_(pa.int64()), False
    return pa.string(), True


def to_arrow_table(records: list[dict[str, Any]]):
    """Normalized records -> (pyarrow.Table, json_columns)."""
    import pyarrow as pa

    core = core_arrow_schema()
    extras = sorted({k for r in records for k in r} - set(CORE_COLUMNS))
    fields = list(core)
    json_columns: list[str] = []
    columns: dict[str, list[Any]] = {name: [r.get(name) for r in records] for name in CORE_COLUMNS}
    for name in extras:
        values = [r.get(name) for r in records]
        typ, is_json = _extra_type(name, values)
        if is_json:
            json_columns.append(name)
            values = [None if v is None else json.dumps(v, sort_keys=True, ensure_ascii=False) for v in values]
        elif typ == pa.float64():
            values = [None if v is None else float(v) for v in values]
        fields.append(pa.field(name, typ))
        columns[name] = values
    schema = pa.schema(
        fields,
        metadata={
            FORMAT_KEY: FORMAT.encode(),
            JSON_COLUMNS_KEY: json.dumps(json_columns).encode(),
        },
    )
    try:
        table = pa.table([pa.array(columns[f.name], type=f.type) for f in fields], schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ReleaseFormatError(f"tasks do not fit the release schema: {exc}") from exc
    return table, json_columns


def is_classforge_release(folder: Path) -> bool:
    """Whether a folder's Parquet files were written by classforge (its format key in the schema metadata).

    A Hub snapshot of another dataset has the same `data/*.parquet` layout but not this key."""
    import pyarrow.parquet as pq

    files = sorted(Path(folder).glob(DATA_GLOB))
    try:
        return bool(files) and FORMAT_KEY in (pq.read_schema(files[0]).metadata or {})
    except OSError:
        return False


def read_release_rows(folder: Path) -> list[dict[str, Any]]:
    """Read a release's Parquet rows back as the dicts that were written (JSON columns decoded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    files = sorted(folder.glob(DATA_GLOB))
    if not files:
        raise ReleaseFormatError(f"release {folder.name}: no {DATA_GLOB} files in {folder}")
    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            table = pq.read_table(file)
        except (pa.ArrowException, OSError) as exc:
            raise ReleaseFormatError(f"release {folder.name}: cannot read {file.relative_to(folder)}: {exc}") from exc
        meta = table.schema.metadata or {}
        json_columns = json.loads(meta.get(JSON_COLUMNS_KEY, b"[]"))
        for row in table.to_pylist():
            for name in json_columns:
                if row.get(name) is not None:
                    row[name] = json.loads(row[name])
            rows.append(row)
    return rows


def short_type(typ) -> str:
    """A compact Arrow type name for tables: `list<struct>` instead of the full nested spelling."""
    import pyarrow as pa

    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return f"list<{short_type(typ.value_type)}>"
    if pa.types.is_struct(typ):
        return "struct"
    return str(typ)
