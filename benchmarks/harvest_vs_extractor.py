"""Analysis wall time of classforge's harvest against ClassEval-Pro's simple extractor, on the same
already-cloned repositories.

Usage:
    python benchmarks/harvest_vs_extractor.py                  # generated corpus: 40 repos, ~500 files
    python benchmarks/harvest_vs_extractor.py --repos 80
    python benchmarks/harvest_vs_extractor.py --corpus DIR     # a folder of git repositories

The generated repositories have the shapes real ones have: packages with `__init__.py`, model
modules with several classes, long helper modules of functions only, services importing
third-party code, version-guarded imports, a `tests/` folder, `setup.py`, `docs/conf.py`, scripts,
and three dated commits (one before the cutoff) with renames and edits. Clones are made first and
not timed. Each timing is the median of `--rounds` runs. The extractor is a faithful
re-implementation of ClassEval-Pro's: parse every non-test file with `ast`, keep top-level classes
whose file imports only the standard library (no relative imports), with >= 5 methods and 40-800
lines, non-empty and free of HTML/XML artefacts, that compile, and whose names a scope visitor
resolves, and write their record (imports, docstrings, per-method signatures and source). It runs in one process, as theirs does; classforge runs in one process and with its
process pool (`harvest.workers`, default: every core).

Two tables, wall and CPU time side by side (CPU: this process and every child it waited for, git
and pool workers included), with the load average at start and end: the analysis of clones made
beforehand, and the whole harvest with its clones (the extractor after `git clone --depth 1`,
ClassEval-Pro's shallow clone; classforge's `run_harvest`: clone back to the cutoff, scan,
provenance, dedup, snapshot files). `--skip-clones` runs the first table only. A repository git
cannot clone is skipped and named.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harvest"))

CUTOFF = date(2025, 1, 1)

# ------------------------------------------------------------------------------------------------
# ClassEval-Pro's extractor, re-implemented (including the record it writes per kept class)

_TEST_PARTS = {"test", "tests", "testing"}
_ARTEFACT = re.compile(r"<(!DOCTYPE|html|head|body|div|span|script|\?xml)\b", re.I)
_BUILTINS = set(dir(builtins))


def _is_test(rel: Path) -> bool:
    return bool(_TEST_PARTS & set(rel.parts[:-1])) or rel.name.startswith("test_") or rel.name.endswith("_test.py")


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:
            names.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names


def _stdlib_only(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in sys.stdlib_module_names:
                return False
        elif isinstance(node, ast.Import) and any(
            a.name.split(".")[0] not in sys.stdlib_module_names for a in node.names
        ):
            return False
    return True


def _scope_ok(cls: ast.ClassDef, module_names: set[str]) -> bool:
    bound = set(module_names) | _BUILTINS | {"self", "cls", "__class__"}
    for node in ast.walk(cls):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
            isinstance(node, ast.ExceptHandler) and node.name
        ):
            bound.add(node.name)
    return all(n.id in bound for n in ast.walk(cls) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _record(text: str, tree: ast.Module, cls: ast.ClassDef) -> dict:
    """ClassEval-Pro's record: imports, docstrings, per-method signatures and source."""
    return {
        "class_name": cls.name,
        "source": ast.get_source_segment(text, cls),
        "docstring": ast.get_docstring(cls),
        "imports": [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))],
        "methods": [
            {
                "name": m.name,
                "signature": f"def {m.name}({ast.unparse(m.args)})",
                "docstring": ast.get_docstring(m),
                "source": ast.get_source_segment(text, m),
            }
            for m in cls.body
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
        ],
    }


def classeval_pro_extract(checkout: Path) -> int:
    kept = 0
    for path in sorted(checkout.rglob("*.py")):
        rel = path.relative_to(checkout)
        if rel.parts[0] == ".git" or _is_test(rel):
            continue
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            continue
        if not text.strip() or _ARTEFACT.search(text) or not _stdlib_only(tree):
            continue
        names = _module_names(tree)
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            lines = node.end_lineno - node.lineno + 1
            if len(methods) < 5 or not 40 <= lines <= 800:
                continue
            try:
                compile(ast.Module(body=[node], type_ignores=[]), str(rel), "exec")
            except (SyntaxError, ValueError):
                continue
            if _scope_ok(node, names):
                kept += bool(_record(text, tree, node))
    return kept


# ------------------------------------------------------------------------------------------------
# A corpus shaped like real repositories

_GUARD = "import sys\nif sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib\n"


def _helpers(n: int, seed: int) -> str:
    return "\n".join(
        f'def helper_{i}(value, factor={seed % 7 + 1}):\n    """Helper {i}."""\n'
        f"    total = value * factor + {i}\n    for step in range({i % 5 + 2}):\n"
        f"        total = (total + step) % {97 + seed}\n    return total\n"
        for i in range(n)
    )


def repo_files(r: int) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Three commits' files for repository r: before the cutoff, after it, a later edit."""
    from classgen import make_class

    pkg = f"pkg{r}"
    big = lambda name, m, b, imp="import json\n": make_class(f"{name}{r}", methods=m, body_lines=b, imports=imp)  # noqa: E731
    first = {
        f"{pkg}/__init__.py": f'"""Package {r}."""\n__version__ = "0.{r}.0"\n',
        f"{pkg}/legacy.py": big("Legacy", 7, 8),
        f"{pkg}/utils.py": "import math\nimport re\n\n" + _helpers(25, r),
        "setup.py": "from setuptools import setup\nsetup(name='x')\n",
    }
    second = {
        f"{pkg}/models.py": big("Order", 9, 9, "import json\nfrom dataclasses import dataclass\n")
        + "\n\n"
        + big("Customer", 4, 5, "").replace("import json\n", "")
        + "\n\n"
        + big("Invoice", 12, 12, ""),
        f"{pkg}/service.py": big("ApiClient", 8, 7, "import requests\nimport json\n"),
        f"{pkg}/compat.py": big("Settings", 6, 8, _GUARD + "import json\n"),
        f"{pkg}/core/engine.py": big("Engine", 14, 14, "import json\nimport heapq\nimport itertools\n"),
        f"{pkg}/core/__init__.py": "",
        f"{pkg}/core/handlers.py": big("Handler", 7, 6, f"from {pkg}.utils import helper_1\nimport json\n"),
        f"{pkg}/cli.py": "import argparse\n\n\ndef main(argv=None):\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--n', type=int)\n    return parser.parse_args(argv)\n",
        f"{pkg}/report.py": "import csv\nimport io\n\n" + _helpers(12, r + 3),
        "tests/test_engine.py": big("TestEngine", 8, 5, "import unittest\nimport json\n"),
        "docs/conf.py": "project = 'x'\nextensions = []\nhtml_theme = 'alabaster'\n",
        "scripts/migrate.py": "import sqlite3\n\n" + _helpers(6, r + 5),
    }
    third = {
        f"{pkg}/core/engine.py": second[f"{pkg}/core/engine.py"].replace("Start empty.", "Start with no state."),
        f"{pkg}/store.py": big("Store", 10, 10, "import sqlite3\nimport json\n"),
    }
    return first, second, third


def build_corpus(root: Path, repos: int) -> None:
    from classforge_bench.pipeline.harvest.repo_builder import CommitSpec, build_repo

    for r in range(repos):
        first, second, third = repo_files(r)
        build_repo(
            root / f"bench__repo{r:03d}",
            [
                CommitSpec(datetime(2024, 11, 2, tzinfo=UTC), "initial", dict(first)),
                CommitSpec(datetime(2025, 2, 10, tzinfo=UTC), "features", dict(second)),
                CommitSpec(datetime(2025, 4, 20, tzinfo=UTC), "engine edits", dict(third)),
            ],
        )


# ------------------------------------------------------------------------------------------------
# Measurement


def _scan(job: tuple[object, Path]) -> int:
    from classforge_bench.pipeline.config import FilterConfig
    from classforge_bench.pipeline.harvest.scan import scan_checkout

    ref, checkout = job
    return len(scan_checkout(ref, checkout, FilterConfig(), CUTOFF).classes)  # type: ignore[arg-type]


def clone_all(corpus: Path, work: Path) -> list[tuple[object, Path]]:
    """classforge's clones (history back to the cutoff); a repository git cannot clone is skipped."""
    from classforge_bench.pipeline.config import CloneConfig
    from classforge_bench.pipeline.harvest.clone import CloneFailure, clone_for_scan
    from classforge_bench.pipeline.harvest.local_source import expand_local_sources, local_repo_ref

    jobs = []
    for path in expand_local_sources([str(corpus)]):
        ref = local_repo_ref(path)
        try:
            jobs.append(
                (ref, clone_for_scan(ref.clone_url, ref.full_name, CloneConfig(workdir=work), CUTOFF, ref.head_commit))
            )
        except CloneFailure as exc:
            print(f"skipped {ref.full_name}: {exc.reason}")
    return jobs


def extractor_with_clones(urls: list[str], work: Path) -> int:
    """ClassEval-Pro's harvest after the search: a shallow clone of each repository, then the extractor."""
    kept = 0
    for i, url in enumerate(urls):
        dest = work / f"r{i}"
        subprocess.run(
            ["git", "clone", "-q", "--depth", "1", "--single-branch", "--no-tags", url, str(dest)], check=True
        )
        kept += classeval_pro_extract(dest)
    return kept


def classforge_with_clones(sources: list[str], work: Path, workers: int) -> int:
    """classforge's whole harvest: clone, scan, provenance, dedup, snapshot files."""
    from classforge_bench.pipeline.config import CloneConfig, HarvestConfig
    from classforge_bench.pipeline.harvest.run import run_harvest

    cfg = HarvestConfig(
        local_sources=sources, output_root=work / "out", clone=CloneConfig(workdir=work / "clones"), workers=workers
    )
    return run_harvest(cfg).classes


def measured(fn) -> tuple[float, float, int]:
    """(wall s, CPU s of this process and every child it waited for, result)."""
    before, start = os.times(), time.perf_counter()
    result = fn()
    wall, after = time.perf_counter() - start, os.times()
    cpu = sum(after[i] - before[i] for i in range(4))  # user, system, children user, children system
    return wall, cpu, result


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _table(title: str, rows: dict[str, list[tuple[float, float]]], kept: dict[str, int], base: str) -> None:
    wall0 = statistics.median(w for w, _ in rows[base])
    cpu0 = statistics.median(c for _, c in rows[base])
    print(f"\n{title}")
    print("run | median wall s | wall x extractor | median CPU s | CPU x extractor | classes kept")
    for name, samples in rows.items():
        wall, cpu = statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)
        print(f"{name} | {wall:.2f} | {wall / wall0:.2f} | {cpu:.2f} | {cpu / cpu0:.2f} | {kept[name]}", flush=True)


def _analysis_round(jobs, workers: int, rows, kept) -> None:
    def pooled() -> int:
        with ProcessPoolExecutor(workers) as pool:
            return sum(pool.map(_scan, jobs))

    for name, fn in (
        ("extractor", lambda: sum(classeval_pro_extract(c) for _, c in jobs)),
        ("classforge-1", lambda: sum(map(_scan, jobs))),
        (f"classforge-{workers}", pooled),
    ):
        wall, cpu, kept[name] = measured(fn)
        rows.setdefault(name, []).append((wall, cpu))


def _clones_round(sources: list[str], urls: list[str], tmp: Path, workers: int, rows, kept) -> None:
    for name, fn in (
        ("extractor + clones", lambda work: extractor_with_clones(urls, work)),
        ("classforge-1 + clones", lambda work: classforge_with_clones(sources, work, 1)),
        (f"classforge-{workers} + clones", lambda work: classforge_with_clones(sources, work, workers)),
    ):
        work = Path(tempfile.mkdtemp(dir=tmp))
        wall, cpu, kept[name] = measured(lambda fn=fn, work=work: fn(work))
        rows.setdefault(name, []).append((wall, cpu))
        shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="a folder of git repositories (default: generate one)")
    parser.add_argument("--repos", type=int, default=40, help="repositories to generate")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-clones", action="store_true", help="only the analysis of clones made beforehand")
    args = parser.parse_args()
    print(
        f"machine: {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores; "
        f"load average (1/5/15 min) at start {_load()}"
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        corpus = args.corpus.resolve() if args.corpus else tmp / "corpus"
        if not args.corpus:
            build_corpus(corpus, args.repos)
        jobs = clone_all(corpus, tmp / "clones")
        files = sum(1 for _, c in jobs for p in c.rglob("*.py") if ".git" not in p.parts)
        print(f"corpus: {len(jobs)} repositories, {files} .py files")
        # The with-clones runs take the same repositories (those git could clone), each from its URL.
        urls = [ref.clone_url for ref, _ in jobs]  # type: ignore[attr-defined]
        analysis: dict[str, list[tuple[float, float]]] = {}
        clones: dict[str, list[tuple[float, float]]] = {}
        kept: dict[str, int] = {}
        # Each table as soon as its rounds are done: on a busy machine the second can take long.
        for _ in range(args.rounds):
            _analysis_round(jobs, args.workers, analysis, kept)
        _table("clones made beforehand (analysis only)", analysis, kept, "extractor")
        print(f"load average (1/5/15 min) now {_load()}", flush=True)
        for _ in range(0 if args.skip_clones else args.rounds):
            _clones_round(urls, urls, tmp, args.workers, clones, kept)
        if clones:
            _table("whole harvest, clones included", clones, kept, "extractor + clones")
    print(
        f"\nload average (1/5/15 min) at end {_load()}; {args.rounds} rounds, medians. CPU counts the "
        "benchmark process and every child it waited for (git, pool workers)."
    )


if __name__ == "__main__":
    main()
