"""Are two evaluation results folders the same, apart from timing? Prints every difference.

Usage:
    python benchmarks/results_identity.py A B [--records] [--drop KEY ...] [--show 5] [--skip NAME ...]

`A` and `B` are results roots (`--out` of `classforge evaluate`) or run folders. Every file under
either is compared with the file at the same relative path under the other:

- JSON files (`results.json`, `samples/**`, `executions/**`) are parsed and compared value by value
  with the timing fields dropped wherever they occur (docs/performance.md, "Same results as before":
  `wall_s`, `cpu_s`, `duration_s`, `runs_wall_s`, `peak_memory_mb`, `seconds`, `sandbox_runs`, and
  `created_at`); `--drop` adds keys;
- other text files (`summary.md`, `results.html`) are compared line by line with the results
  page's "written <date> UTC" stamp and each run's day in its table (`created_at`) masked;
- `.classforge.lock` (the pid of the run that held the folder) is skipped, and so is any `--skip` name;
- with `--records`, folders written by two results schemas compare: each sample file under
  `samples/` is read as this checkout reads it (`classforge_bench.benchmark.results.read_sample`,
  every older schema into the current record) and compared as that record, and `schema_version`
  is dropped too.

It prints the counts (identical, differing, only in A, only in B), then for each differing file up
to `--show` differences as `path: A-value != B-value`, then each differing field (list positions
and test-class names generalised) with the number of files it differs in. It measures and prints; it is not a test.
Exit status 0 when everything compares equal, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TIMING_KEYS = frozenset(
    {"wall_s", "cpu_s", "duration_s", "runs_wall_s", "peak_memory_mb", "seconds", "sandbox_runs", "created_at"}
)
SKIPPED = frozenset({".classforge.lock"})
_STAMP = re.compile(r"written \d{4}-\d\d-\d\d \d\d:\d\d UTC")
_RUN_DAY = re.compile(r"<td>\d{4}-\d\d-\d\d</td>")  # a run's day on the results page: created_at


def files_under(root: Path, skip: frozenset[str]) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name not in skip}


def json_differences(a: Any, b: Any, drop: frozenset[str], where: str = "") -> Iterator[str]:
    """`where: a != b` for every leaf that differs, the `drop` keys left out at every depth."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted((a.keys() | b.keys()) - drop):
            here = f"{where}.{key}" if where else str(key)
            if key not in a or key not in b:
                yield f"{here}: {'missing' if key not in a else _short(a[key])} != {'missing' if key not in b else _short(b[key])}"
            else:
                yield from json_differences(a[key], b[key], drop, here)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from json_differences(x, y, drop, f"{where}[{i}]")
    elif a != b:
        yield f"{where or '(root)'}: {_short(a)} != {_short(b)}"


def _masked(text: str) -> list[str]:
    return _RUN_DAY.sub("<td><date></td>", _STAMP.sub("written <date> UTC", text)).splitlines()


def text_differences(a: str, b: str) -> Iterator[str]:
    left, right = _masked(a), _masked(b)
    if len(left) != len(right):
        yield f"{len(left)} lines != {len(right)} lines"
    for n, (x, y) in enumerate(zip(left, right, strict=False), 1):
        if x != y:
            yield f"line {n}: {_short(x)} != {_short(y)}"


def differences(a: Path, b: Path, drop: frozenset[str], records: bool = False) -> list[str]:
    if a.suffix == ".json":
        read = _record if records and "samples" in a.parts else _json
        try:
            return list(json_differences(read(a), read(b), drop))
        except ValueError as e:
            return [f"not readable: {e}"]
    try:
        return list(text_differences(a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")))
    except UnicodeDecodeError:
        return [] if a.read_bytes() == b.read_bytes() else ["binary files differ"]


def _field(difference: str) -> str:
    """A difference's field with list positions and test-class keys generalised, to count alike differences together."""
    where = difference.split(": ", 1)[0]
    return re.sub(r"\[\d+\]", "[]", re.sub(r"test_classes\.[^.]+", "test_classes.*", where))


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _record(path: Path) -> Any:
    """A sample file as the current record (any schema this checkout reads), as JSON data."""
    from classforge_bench.benchmark.results import ResultsError, read_sample

    try:
        return read_sample(path).model_dump(mode="json")
    except ResultsError as e:
        raise ValueError(str(e)) from e


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare(a: Path, b: Path, drop: frozenset[str], skip: frozenset[str], show: int, records: bool = False) -> int:
    left, right = files_under(a, skip), files_under(b, skip)
    common = sorted(left & right)
    differing = {name: found for name in common if (found := differences(a / name, b / name, drop, records))}
    print(f"A: {a}\nB: {b}\ndropped keys: {', '.join(sorted(drop))}")
    if records:
        print("sample files compared as the records this checkout reads them into")
    print(
        f"{len(common)} files in both: {len(common) - len(differing)} identical, {len(differing)} differ; "
        f"{len(left - right)} only in A, {len(right - left)} only in B"
    )
    for title, names in (("only in A", sorted(left - right)), ("only in B", sorted(right - left))):
        for name in names:
            print(f"{title}: {name}")
    for name, found in differing.items():
        print(f"differs: {name} ({len(found)} difference(s))")
        for line in found[:show]:
            print(f"    {line}")
    fields = Counter(field for found in differing.values() for field in {_field(line) for line in found})
    for field, files in fields.most_common():
        print(f"field {field}: differs in {files} file(s)")
    return 0 if not differing and left == right else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--drop", action="append", default=[], help="another key to leave out (repeatable)")
    parser.add_argument("--skip", action="append", default=[], help="another file name to skip (repeatable)")
    parser.add_argument("--show", type=int, default=5, help="differences shown per file")
    parser.add_argument("--records", action="store_true", help="compare sample files as records (two schemas)")
    args = parser.parse_args(argv)
    for folder in (args.a, args.b):
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder")
    drop = TIMING_KEYS | set(args.drop) | ({"schema_version"} if args.records else set())
    return compare(args.a, args.b, drop, SKIPPED | set(args.skip), args.show, args.records)


if __name__ == "__main__":
    sys.exit(main())
