"""Load ClassEval-style datasets into `Task`s, fixing known quirks openly.

Formats (detected from the path):
- ClassEval JSON: a JSON list of tasks with `methods_info` (ClassEval_data.json).
- ClassEval-Pro-style JSON or JSONL: task_id, class_name, skeleton, test, test_classes,
  solution_code, composition_type, domain1, domain2, coverage, judge_scores; `methods_info` and
  even `test_classes` may be missing and are then derived from the sources.
- A classforge release folder: Parquet files under `data/` with ClassEval's columns plus extras;
  a Hub snapshot of ClassEval itself has the same layout. A single Parquet file works too.
  (Datasets by name, `classeval` or `hf:ORG/NAME@REV`, are resolved to such a folder by `classforge_bench.pipeline.formats.hub`.)

Every record is checked; a bad one raises `DatasetError` naming the file, the task and the fault.
Nothing is dropped silently: a task is either loaded (with its fixes listed) or the load fails.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of
from classforge_bench.pipeline.core.errors import InputError, ReleaseFormatError
from classforge_bench.pipeline.core.source import parse
from classforge_bench.pipeline.core.task import Method, Task, composition_type
from classforge_bench.pipeline.formats.derive import DeriveError, class_level_fields, derive_methods, test_name_key
from classforge_bench.pipeline.formats.quirks import (
    QuirkFix,
    defined_test_classes,
    fix_test_classes,
    repair_source,
    unwrap_string_skeleton,
)
from classforge_bench.pipeline.formats.release_rows import is_classforge_release, read_release_rows
from classforge_bench.pipeline.formats.textfiles import TextFileError, read_utf8, utf8_lines

DatasetFormat = Literal["classeval", "classeval-pro", "classforge-release"]

REQUIRED = ("task_id", "class_name", "skeleton", "test", "solution_code")
CLASS_LEVEL = ("import_statement", "class_description", "class_constructor", "fields")
KNOWN = (
    set(REQUIRED)
    | set(CLASS_LEVEL)
    | {"test_classes", "methods_info", "composition_type", "domain1", "domain2", "source", "plus"}
)


class DatasetError(InputError):
    """A dataset that cannot be loaded as it is; the message names file, task and fault."""


class LoadedDataset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    format: DatasetFormat
    tasks: list[Task]
    fixes_applied: list[QuirkFix] = Field(default_factory=list)
    notices: list[QuirkFix] = Field(default_factory=list, description="defects seen and deliberately left as published")
    all_task_ids: list[str] = Field(
        default_factory=list, description="every task id of the file, built or not (file order)"
    )

    def by_id(self) -> dict[str, Task]:
        return {t.task_id: t for t in self.tasks}


def load_dataset(path: str | Path, task_ids: Collection[str] | None = None) -> LoadedDataset:
    """Read any supported dataset; see the module docstring for the formats. With `task_ids`,
    only those tasks are built (the costly part: parsing, quirk fixes, derived fields); the file
    is still read whole, so the format and duplicate ids are checked as always."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"{path}: no such file or directory")
    path = single_file(path) or path
    if path.is_dir() and is_classforge_release(path):
        return _load_classforge_release(path, task_ids)
    if path.is_dir():
        # A Hub snapshot of ClassEval (or any other dataset) has data/*.parquet too, without our format key.
        records, fmt = _read_release(path), None
    elif path.suffix == ".parquet":
        records, fmt = _read_parquet(path), None
    elif path.suffix == ".jsonl":
        records, fmt = _read_jsonl(path), None
    elif path.suffix == ".json":
        records, fmt = _read_json(path), None
    else:
        raise DatasetError(
            f"{path}: unknown dataset format (expected .json, .jsonl, .parquet or a release folder with data/*.parquet)"
        )
    if fmt is None:
        fmt = "classeval" if records and all(r.get("methods_info") for _, r in records) else "classeval-pro"
    _check_unique_ids(path, records)
    all_ids = [str(r.get("task_id")) for _, r in records]
    if task_ids is not None:
        wanted = set(task_ids)
        records = [(where, r) for where, r in records if r.get("task_id") in wanted]
    tasks: list[Task] = []
    fixes: list[QuirkFix] = []
    notices: list[QuirkFix] = []
    for where, record in records:
        task, task_fixes, task_notices = task_from_record(record, where, default_source=fmt)
        tasks.append(task)
        fixes += task_fixes
        notices += task_notices
    return LoadedDataset(
        path=str(path), format=fmt, tasks=tasks, fixes_applied=fixes, notices=notices, all_task_ids=all_ids
    )


_DATASET_SUFFIXES = (".json", ".jsonl", ".parquet")


def single_file(folder: Path) -> Path | None:
    """The one dataset file of a folder that is neither a release nor a snapshot with data/ (what
    `classforge strengthen --out DIR` writes for a file dataset: DIR/ClassEval_data.json), else None."""
    if not folder.is_dir() or (folder / "data").is_dir():
        return None
    found = [p for p in sorted(folder.iterdir()) if p.is_file() and p.suffix in _DATASET_SUFFIXES]
    data = [p for p in found if p.name != "manifest.json"]
    return data[0] if len(data) == 1 else None


def _load_classforge_release(folder: Path, task_ids: Collection[str] | None) -> LoadedDataset:
    """A classforge release is read as written: rows are `Task.to_row()`, so no quirk repair applies."""
    try:
        rows = read_release_rows(folder)
    except ReleaseFormatError as e:
        raise DatasetError(str(e)) from e
    located = [(f"{folder} [row {i}]", row) for i, row in enumerate(rows)]
    _check_unique_ids(folder, located)
    tasks = []
    for where, row in located:
        if task_ids is not None and row.get("task_id") not in task_ids:
            continue
        try:
            tasks.append(Task.from_row(row, source="classforge-release"))
        except ValidationError as e:
            raise DatasetError(
                f"{where}: task {row.get('task_id')}: {e.errors()[0]['msg']} "
                f"at {'.'.join(str(p) for p in e.errors()[0]['loc'])}"
            ) from e
    return LoadedDataset(
        path=str(folder),
        format="classforge-release",
        tasks=tasks,
        all_task_ids=[str(row.get("task_id")) for _, row in located],
    )


# -- reading -----------------------------------------------------------------------------------


def read_records(path: Path) -> list[dict[str, Any]]:
    """The raw records of a JSON, JSONL or Parquet file, or of a folder's data/*.parquet, as stored."""
    path = Path(path)
    if path.is_dir():
        return read_release_rows(path) if is_classforge_release(path) else [r for _, r in _read_release(path)]
    reader = {".parquet": _read_parquet, ".jsonl": _read_jsonl, ".json": _read_json}.get(path.suffix)
    if reader is None:
        raise DatasetError(
            f"{path}: unknown dataset format (expected .json, .jsonl, .parquet or a folder with data/*.parquet)"
        )
    return [r for _, r in reader(path)]


Located = tuple[str, dict[str, Any]]  # ("file:line" or "file row n", record)


def _as_record(where: str, value: Any) -> Located:
    if not isinstance(value, dict):
        raise DatasetError(f"{where}: expected a JSON object per task, got {type(value).__name__}")
    return where, value


def _read_json(path: Path) -> list[Located]:
    try:
        data = json.loads(read_utf8(path))
    except TextFileError as e:
        raise DatasetError(str(e)) from e
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}:{e.lineno}: not valid JSON: {e}") from e
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of tasks, got {type(data).__name__}")
    return [_as_record(f"{path} [item {i}]", item) for i, item in enumerate(data)]


def _read_jsonl(path: Path) -> list[Located]:
    out = []
    try:
        for line in utf8_lines(path):
            try:
                value = json.loads(line.text)
            except json.JSONDecodeError as e:
                raise DatasetError(f"{path}:{line.number}: not valid JSON: {e}") from e
            out.append(_as_record(f"{path}:{line.number}", value))
    except TextFileError as e:
        raise DatasetError(str(e)) from e
    return out


def _read_release(folder: Path) -> list[Located]:
    files = sorted((folder / "data").rglob("*.parquet"))
    if not files:
        raise DatasetError(f"{folder}: no Parquet files under data/ (is this a classforge release folder?)")
    return [record for file in files for record in _read_parquet(file)]


def _read_parquet(file: Path) -> list[Located]:
    import pyarrow as pa  # only Parquet needs pyarrow; keep plain JSON loads light
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(file).to_pylist()
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DatasetError(f"{file}: cannot read Parquet: {e}") from e
    return [_as_record(f"{file} [row {i}]", row) for i, row in enumerate(rows)]


def _check_unique_ids(path: Path, records: list[Located]) -> None:
    seen: dict[str, str] = {}
    dups = []
    for where, record in records:
        tid = record.get("task_id")
        if tid in seen:
            dups.append(f"{tid!r} ({seen[tid]} and {where})")
        elif tid is not None:
            seen[tid] = where
    if dups:
        raise DatasetError(f"{path}: duplicate task ids: {'; '.join(dups)}")


# -- one record --------------------------------------------------------------------------------


def _parse(where: str, tid: str, field: str, text: str) -> ast.Module:
    try:
        return parse(text)
    except SyntaxError as e:
        raise DatasetError(f"{where}: task {tid}: {field} does not parse: {e.msg} (line {e.lineno})") from e


def _required_text(record: dict[str, Any], where: str) -> str:
    """The task id, after checking every required text column is a non-empty string."""
    tid = record.get("task_id")
    if not isinstance(tid, str) or not tid:
        raise DatasetError(f"{where}: task_id missing or not a string")
    for key in REQUIRED:
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise DatasetError(f"{where}: task {tid}: {key} missing or empty")
    return tid


def _runnable_test_classes(
    record: dict[str, Any], where: str, tid: str, notes: tuple[list[QuirkFix], list[QuirkFix]]
) -> list[str]:
    """The listed test classes that the test code defines and that run tests (derived when missing)."""
    fixes, notices = notes
    defined = defined_test_classes(_parse(where, tid, "test", record["test"]))
    listed = record.get("test_classes")
    if listed is None or listed == []:
        listed = [name for name, n in defined.items() if n > 0]
        fixes.append(
            QuirkFix(
                task_id=tid,
                kind="test_classes_derived",
                field="test_classes",
                detail=f"no test_classes given; using the {len(listed)} test classes the test code defines",
            )
        )
    elif not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
        raise DatasetError(f"{where}: task {tid}: test_classes must be a list of strings")
    test_classes, f, n = fix_test_classes(tid, list(listed), defined)
    fixes += f
    notices += n
    if not test_classes:
        raise DatasetError(f"{where}: task {tid}: no runnable test class (listed: {listed!r})")
    return test_classes


def _composition(record: dict[str, Any], tid: str, extras: dict[str, Any], notices: list[QuirkFix]):
    """The one spelling of the record's composition type; another dataset's own labels stay an extra."""
    kind = record.get("composition_type")
    if kind is None:
        return None
    try:
        return composition_type(kind)
    except ValueError:
        notices.append(
            QuirkFix(
                task_id=tid,
                kind="composition_type_unknown",
                field="composition_type",
                detail=f"{kind!r} is neither intra- nor cross-domain; kept as an extra column",
            )
        )
        extras["composition_type"] = kind
        return None


def task_from_record(
    record: dict[str, Any], where: str, default_source: str
) -> tuple[Task, list[QuirkFix], list[QuirkFix]]:
    """Map one raw record to a `Task`, returning (task, fixes applied, notices)."""
    tid = _required_text(record, where)
    class_name = record["class_name"]
    fixes: list[QuirkFix] = []
    notices: list[QuirkFix] = []
    skeleton, f = unwrap_string_skeleton(record["skeleton"], class_name, tid)
    fixes += f
    skeleton, f = repair_source(skeleton, tid, "skeleton")
    fixes += f
    skel_cls = find_class(_parse(where, tid, "skeleton", skeleton), class_name)
    sol_cls = find_class(_parse(where, tid, "solution_code", record["solution_code"]), class_name)
    if skel_cls is None or sol_cls is None:
        missing = "skeleton" if skel_cls is None else "solution_code"
        raise DatasetError(f"{where}: task {tid}: {missing} defines no class {class_name!r}")
    test_classes = _runnable_test_classes(record, where, tid, (fixes, notices))
    try:
        if record.get("methods_info"):
            methods, f, n = _methods_from_info(record, tid, skel_cls, test_classes)
        else:
            methods, n = derive_methods(
                tid, class_name, skeleton, record["solution_code"], record["test"], test_classes
            )
            f = []
        fixes += f
        notices += n
        derived = class_level_fields(skeleton, skel_cls, sol_cls)
    except (DeriveError, ValidationError) as e:
        raise DatasetError(f"{where}: task {tid}: {e}") from e
    if not methods:
        raise DatasetError(f"{where}: task {tid}: no method to generate (every skeleton method already has a body)")
    source = record.get("source") if isinstance(record.get("source"), str) else default_source
    extras = {k: v for k, v in record.items() if k not in KNOWN}
    if "source" in record and not isinstance(record["source"], str):
        extras["source"] = record["source"]
    kind = _composition(record, tid, extras, notices)
    try:
        task = Task(
            task_id=tid,
            class_name=class_name,
            skeleton=skeleton,
            test=record["test"],
            test_classes=test_classes,
            solution_code=record["solution_code"],
            **{k: record[k] if record.get(k) is not None else derived[k] for k in CLASS_LEVEL},
            methods_info=methods,
            composition_type=kind,
            domain1=record.get("domain1"),
            domain2=record.get("domain2"),
            source=source,
            extras=extras,
            plus=record.get("plus") or None,
        )
    except ValidationError as e:
        raise DatasetError(f"{where}: task {tid}: {e}") from e
    return task, fixes, notices


def _methods_from_info(
    record: dict[str, Any], tid: str, skel_cls: ast.ClassDef, test_classes: list[str]
) -> tuple[list[Method], list[QuirkFix], list[QuirkFix]]:
    """ClassEval's own `methods_info`, checked against the skeleton and the cleaned test classes."""
    info = record["methods_info"]
    if not isinstance(info, list):
        raise DeriveError("methods_info must be a list")
    skeleton_methods = methods_of(skel_cls)
    fixes: list[QuirkFix] = []
    notices: list[QuirkFix] = []
    methods = []
    convention = {}
    for raw in info:
        if not isinstance(raw, dict):
            raise DeriveError("each methods_info entry must be an object")
        item = dict(raw)
        name = item.get("method_name")
        if name not in skeleton_methods:
            raise DeriveError(f"methods_info names {name!r}, which the skeleton's class does not define")
        description, f = repair_source(
            item.get("method_description", ""), tid, f"methods[{name}].method_description", force=True
        )
        fixes += f
        item["method_description"] = description
        fixes += _fix_test_class(item, name, tid, test_classes)
        methods.append(Method.model_validate(item))
        convention[test_name_key(f"{record['class_name']}Test{name}")] = name
    position = {name: i for i, name in enumerate(skeleton_methods)}
    in_order = sorted(methods, key=lambda m: position[m.method_name])
    if in_order != methods:
        fixes.append(
            QuirkFix(
                task_id=tid,
                kind="methods_reordered",
                field="methods",
                detail="methods_info put in the skeleton's declaration order",
            )
        )
        methods = in_order
    notices += _mislabelled_test_classes(methods, convention, record["class_name"], tid)
    return methods, fixes, notices


def _fix_test_class(item: dict[str, Any], name: str, tid: str, test_classes: list[str]) -> list[QuirkFix]:
    """A method's `test_class` that names no runnable test class: trimmed when whitespace was the
    problem, else dropped (the method then counts at class level only). Changes `item` in place."""
    tc = item.get("test_class")
    if tc is None or tc in test_classes:
        return []
    clean = tc.strip()
    if clean in test_classes:
        item["test_class"] = clean
        return [
            QuirkFix(
                task_id=tid,
                kind="test_class_whitespace",
                field=f"methods[{name}].test_class",
                detail=f"{tc!r} -> {clean!r}",
            )
        ]
    item["test_class"] = None
    return [
        QuirkFix(
            task_id=tid,
            kind="method_test_class_missing",
            field=f"methods[{name}].test_class",
            detail=f"{tc!r} is not a runnable test class; the method counts at class level only",
        )
    ]


def _mislabelled_test_classes(
    methods: list[Method], convention: dict[str, str], class_name: str, tid: str
) -> list[QuirkFix]:
    """Notices (not fixes) for a method whose test class is, by its name, another method's."""
    notices = []
    for m in methods:
        key = test_name_key(m.test_class or "")
        owner = convention.get(key)
        own_key = test_name_key(f"{class_name}Test{m.method_name}")
        if owner is not None and key != own_key:
            notices.append(
                QuirkFix(
                    task_id=tid,
                    kind="method_test_class_mislabelled",
                    field=f"methods[{m.method_name}].test_class",
                    detail=f"labelled {m.test_class!r}, which by its name tests {owner!r}; kept as published",
                )
            )
    return notices
