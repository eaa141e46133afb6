"""Dataset statistics in ClassEval-Pro's terms (its Table 2 and Table 3).

Definitions (also written into stats.json, so the numbers can be recomputed):
- Domain distribution: each task counts once, under its primary domain (`domain1`), split into
  intra- and cross-domain compositions, as ClassEval-Pro's per-domain counts sum to its 300 tasks.
  `involved` additionally counts tasks whose `domain2` is the domain (a cross task touches two).
- LOC: physical lines of the solution's class statement, decorators included (the harvest's and
  the task record's `loc`; imports and module-level code are not counted).
- Dependency depth: `class_analysis.dependency_depth` of the solution class (1 = no method calls
  another; ClassEval averages 1.77 by this measure).
- Methods: `def`s in the solution class body, `__init__` included, as the harvest's `method_count`
  (ClassEval averages 4.97, the paper's "5"). `methods_to_generate` counts `methods_info` entries
  (the constructor excluded), as ClassEval's task records and `Task.metrics` do (ClassEval: 4.1).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from classforge_bench.pipeline.config import DOMAINS
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core.ast_helpers import class_methods, find_class, span
from classforge_bench.pipeline.core.class_analysis import analyse_class, dependency_depth, import_aliases
from classforge_bench.pipeline.formats.release_rows import composition_kind
from classforge_bench.pipeline.release.errors import ReleaseError

DEFINITIONS = {
    "domains": "each task counted once under domain1; 'involved' also counts domain2 of cross tasks",
    "loc": "physical lines of the solution's class statement, decorators included",
    "methods_to_generate": "entries of methods_info (the constructor excluded)",
    "dependency_depth": "class_analysis.dependency_depth of the solution class (1 = no intra-class calls)",
    "methods": "def statements in the solution class body, __init__ included",
    "mutation_score": "percent of the solution's non-equivalent mutants its tests kill (classforge_bench.pipeline.quality; "
    "timeouts count as killed); tasks without a measured score are left out",
    "plus_tests": "tests in the task's hidden plus suite: search-generated (Pynguin), no LLM, validated on the reference",
    "mutation_score_with_plus": "the mutation score of the base and plus tests together",
}


class Summary(BaseModel):
    mean: float
    median: float
    min: float
    max: float


class DomainRow(BaseModel):
    domain: str
    tasks: int = Field(description="tasks whose primary domain (domain1) is this one")
    intra: int
    cross: int
    real: int = Field(0, description="real-source tasks (a harvested class as it is, no composition)")
    involved: int = Field(description="tasks with this domain as domain1 or domain2")


class TaskStats(BaseModel):
    """One task's row of the statistics (stats.json `per_task`)."""

    task_id: str
    composition_type: str = Field(
        description="'intra' or 'cross', whichever spelling the task used; "
        "'real' for a real-source task (no composition)"
    )
    domain1: str
    domain2: str | None = None
    loc: int
    dependency_depth: int
    methods: int
    methods_to_generate: int
    mutation_score: float | None = Field(None, description="percent; None when the task carries none")
    plus_tests: int | None = Field(None, description="None when the task carries no plus suite")
    mutation_score_with_plus: float | None = None


class DatasetStats(BaseModel):
    total: int
    intra: int
    cross: int
    real: int = Field(0, description="real-source tasks: one real class each, no composition")
    domains: list[DomainRow]
    loc: Summary | None
    dependency_depth: Summary | None
    methods: Summary | None
    methods_to_generate: Summary | None
    mutation_score: Summary | None = None
    plus_tests: Summary | None = None
    mutation_score_with_plus: Summary | None = None
    per_task: list[TaskStats]
    definitions: dict[str, str] = Field(default_factory=lambda: dict(DEFINITIONS))


def task_stats(task: Mapping[str, Any]) -> TaskStats:
    """LOC, dependency depth and method count of one task's solution.

    A classforge task carries its LOC and dependency depth (`metrics`, measured when it was built);
    they are taken from there. Tasks of other datasets are measured here the same way."""
    tid = task.get("task_id", "?")
    code = task["solution_code"]
    try:
        module = parsing.parse(code)
    except SyntaxError as exc:
        raise ReleaseError(f"task {tid!r}: solution_code does not parse: {exc.msg} (line {exc.lineno})") from exc
    cls = find_class(module, task["class_name"], top_level_only=True)
    if cls is None:
        raise ReleaseError(f"task {tid!r}: solution_code defines no top-level class {task['class_name']!r}")
    metrics = task.get("metrics")
    held = metrics if isinstance(metrics, Mapping) else {}
    first, last = span(cls)
    loc = held.get("loc") or last - first + 1
    depth = held.get("dependency_depth") or dependency_depth(analyse_class(cls, import_aliases(module)))
    return TaskStats(
        task_id=tid,
        composition_type=composition_kind(task["composition_type"]) if task.get("composition_type") else "real",
        domain1=task["domain1"],
        domain2=task.get("domain2"),
        loc=loc,
        dependency_depth=depth,
        methods=len(class_methods(cls)),
        methods_to_generate=len(task.get("methods_info") or []),
        mutation_score=_percent(task.get("mutation_score")),
        **_plus_stats(task.get("plus")),
    )


def _plus_stats(plus: object) -> dict[str, Any]:
    if isinstance(plus, str) and plus.strip():
        plus = json.loads(plus)
    if not isinstance(plus, Mapping):
        return {}
    return {"plus_tests": int(plus.get("tests") or 0), "mutation_score_with_plus": _percent(plus.get("mutation_score"))}


def _percent(score: object) -> float | None:
    return round(100 * float(score), 2) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def summarize(values: list[float]) -> Summary | None:
    if not values:
        return None
    return Summary(
        mean=round(statistics.fmean(values), 2),
        median=float(statistics.median(values)),
        min=float(min(values)),
        max=float(max(values)),
    )


def domain_rows(metrics: list[TaskStats]) -> list[DomainRow]:
    """Every known domain (zeros included, for comparison with the paper), then any others; busiest first."""
    names = list(DOMAINS) + sorted({d for m in metrics for d in (m.domain1, m.domain2) if d} - set(DOMAINS))
    rows = []
    for name in names:
        primary = [m for m in metrics if m.domain1 == name]
        rows.append(
            DomainRow(
                domain=name,
                tasks=len(primary),
                intra=sum(m.composition_type == "intra" for m in primary),
                cross=sum(m.composition_type == "cross" for m in primary),
                real=sum(m.composition_type == "real" for m in primary),
                involved=sum(name in (m.domain1, m.domain2) for m in metrics),
            )
        )
    order = {name: i for i, name in enumerate(names)}
    return sorted(rows, key=lambda r: (-r.tasks, -r.involved, order[r.domain]))


def compute_stats(tasks: Iterable[Mapping[str, Any]]) -> DatasetStats:
    """Statistics over release rows (`classforge_bench.pipeline.formats.release_rows.release_rows`)."""
    metrics = [task_stats(t) for t in tasks]
    return DatasetStats(
        total=len(metrics),
        intra=sum(m.composition_type == "intra" for m in metrics),
        cross=sum(m.composition_type == "cross" for m in metrics),
        real=sum(m.composition_type == "real" for m in metrics),
        domains=domain_rows(metrics),
        loc=summarize([m.loc for m in metrics]),
        dependency_depth=summarize([m.dependency_depth for m in metrics]),
        methods=summarize([m.methods for m in metrics]),
        methods_to_generate=summarize([m.methods_to_generate for m in metrics]),
        mutation_score=summarize([m.mutation_score for m in metrics if m.mutation_score is not None]),
        plus_tests=summarize([m.plus_tests for m in metrics if m.plus_tests is not None]),
        mutation_score_with_plus=summarize(
            [m.mutation_score_with_plus for m in metrics if m.mutation_score_with_plus is not None]
        ),
        per_task=metrics,
    )
