"""Every ClassEval reference solution through the sandboxed harness.

All pass except the environment-dependent tasks, and those must fail for their real reason, not
vanish: 17 compares with today's date, 48 expects the authors' host name, 51 uses np.mat (gone in
NumPy 2), 52 downloads NLTK data at import (no network), 69 lists a fixture base class without
tests. 50 expects a permission error that only a non-root process gets: it passes where the sandbox
drops to a uid of its own. 97 lists a test class with a leading space: matched after stripping.
58 places mines with the unseeded `random` module and fails by chance; the harness seeds `random`
per run (seed 0 here), so it passes here reproducibly (seeds 2 and 5, for example, fail it).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from sandbox_support import make_config

from classforge_bench.pipeline.sandbox import ClassStatus, SuiteRequest, SuiteStatus, run_suites

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "classeval" / "ClassEval_data.json"

# task -> (the test class that shows it, a phrase of the real cause)
ENVIRONMENT_DEPENDENT = {
    17: ("CalendarTestGetUpcomingEvents", "AssertionError"),
    48: ("IpUtilTestGetHostname", "LAPTOP-2CS86KUM"),
    51: ("KappaCalculatorTestKappa", "np.mat"),
    52: ("LemmatizationTestLemmatizeSentence", "punkt"),
    69: ("TestPDFHandler", "no test ran"),
}


def _needs(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


@pytest.mark.slow
def test_every_reference_solution(local_backend):
    if not DATA.exists():
        pytest.skip(f"ClassEval data not found at {DATA}")
    missing = [
        m
        for m in ("numpy", "pandas", "docx", "openpyxl", "bs4", "gensim", "PIL", "nltk", "PyPDF2", "reportlab")
        if _needs(m)
    ]
    if missing:
        pytest.skip(f"ClassEval's third-party packages are not installed: {missing}")
    tasks = json.loads(DATA.read_text(encoding="utf-8"))
    config = make_config(wall_limit_s=60, memory_mb=2048, max_processes=64)
    requests = [
        # 60 s of CPU, as the evaluator counts it, not of wall time: at load 45 task 35 (8 s of CPU)
        # ran past a 60 s wall limit
        SuiteRequest(
            item_id=t["task_id"],
            solution=t["solution_code"],
            tests=t["test"],
            test_classes=t["test_classes"],
            limit_s=60.0,
            wall_ceiling_s=3600.0,
        )
        for t in tasks
    ]
    results = run_suites(requests, config, backend=local_backend)
    by_task = {int(r.item_id.rsplit("_", 1)[1]): r for r in results}

    non_root = local_backend.plan.dedicated_uid
    expected_failures = set(ENVIRONMENT_DEPENDENT) | (set() if non_root else {50})
    failed = {n for n, r in by_task.items() if not r.passed}
    assert failed == expected_failures, {n: by_task[n].detail[:200] for n in failed ^ expected_failures}

    for number, (test_class, cause) in ENVIRONMENT_DEPENDENT.items():
        result = by_task[number]
        assert result.status is SuiteStatus.FAILED and result.tamper == []
        shown = next(c for c in result.classes if c.name.strip() == test_class)
        text = " ".join([shown.error or ""] + [f"{m.exc_type} {m.message}" for m in shown.methods])
        assert not shown.passed and cause in text, (number, text[:300])
    assert by_task[69].classes[0].status is ClassStatus.ZERO_TESTS
    assert "stripping whitespace" in next(c.note for c in by_task[97].classes if c.note)
    assert all(r.tamper == [] for r in results)

    coverage = {n: r.line_coverage for n, r in by_task.items()}
    assert all(v is not None for v in coverage.values())
    passing = [coverage[n] for n in by_task if n not in expected_failures]
    assert statistics.median(passing) == 100.0 and min(passing) > 80.0
    _print_coverage(by_task)


def _print_coverage(by_task) -> None:
    rows = sorted(by_task.items(), key=lambda kv: (kv[1].line_coverage, kv[0]))
    values = [r.line_coverage for _, r in rows]
    print(
        f"\nClassEval line coverage: median {statistics.median(values):.1f}%, mean {statistics.mean(values):.1f}%, "
        f"min {values[0]:.1f}% (task {rows[0][0]}); below 100%:"
    )
    for number, result in rows:
        if result.line_coverage < 100:
            branch = result.branch_coverage
            print(
                f"  ClassEval_{number}: line {result.line_coverage:.1f}%  branch {branch:.1f}%  {result.status.value}"
            )
