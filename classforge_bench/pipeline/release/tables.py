"""Markdown tables shared by the dataset card and the report, so both always show the same numbers."""

from __future__ import annotations

from collections.abc import Sequence

from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import FunnelReport, StageCounts, in_pipeline_order
from classforge_bench.pipeline.release.stats import DatasetStats, Summary


def md_table(header: Sequence[str], rows: Sequence[Sequence[object]], align: str | None = None) -> str:
    """A GitHub-flavoured Markdown table; `align` is one of l/r per column (default: l then r)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)


def _fmt(x: float) -> str:
    return f"{x:g}" if float(x).is_integer() else f"{x:.2f}"


def task_kinds(stats: DatasetStats) -> str:
    """What the tasks are, in words: compositions by kind, and real-source tasks when there are any."""
    parts = []
    if stats.intra or stats.cross or not stats.real:
        parts.append(f"{stats.intra} intra-domain and {stats.cross} cross-domain compositions")
    if stats.real:
        parts.append(f"{stats.real} real-source task{'s' if stats.real != 1 else ''} (a harvested class as it is)")
    return "; ".join(parts)


def domain_table(stats: DatasetStats, *, include_empty: bool = False) -> str:
    """ClassEval-Pro's Table 2 (tasks per domain, intra and cross), with a Real column when the release
    has real-source tasks, which are neither."""
    real = bool(stats.real)
    rows: list[tuple[str | int, ...]] = [
        (r.domain, r.tasks, r.intra, r.cross, *((r.real,) if real else ()), r.involved)
        for r in stats.domains
        if include_empty or r.involved
    ]
    rows.append(("**Total**", stats.total, stats.intra, stats.cross, *((stats.real,) if real else ()), "-"))
    return md_table(("Domain", "Tasks", "Intra", "Cross", *(("Real",) if real else ()), "Involved"), rows)


def size_table(stats: DatasetStats) -> str:
    def row(name: str, s: Summary | None) -> tuple:
        return (
            (name, "-", "-", "-", "-") if s is None else (name, _fmt(s.mean), _fmt(s.median), _fmt(s.min), _fmt(s.max))
        )

    rows = [
        row("LOC", stats.loc),
        row("Dependency depth", stats.dependency_depth),
        row("Methods", stats.methods),
        row("Methods to generate", stats.methods_to_generate),
    ]
    if stats.mutation_score is not None:
        scored = sum(m.mutation_score is not None for m in stats.per_task)
        rows.append(row(f"Mutation score, % ({scored} of {stats.total} tasks)", stats.mutation_score))
    if stats.plus_tests is not None:
        carried = sum(m.plus_tests is not None for m in stats.per_task)
        rows.append(row(f"Plus tests, hidden, no LLM ({carried} of {stats.total} tasks)", stats.plus_tests))
    if stats.mutation_score_with_plus is not None:
        scored = sum(m.mutation_score_with_plus is not None for m in stats.per_task)
        rows.append(
            row(f"Mutation score with plus tests, % ({scored} of {stats.total} tasks)", stats.mutation_score_with_plus)
        )
    return md_table(("Metric", "Mean", "Median", "Min", "Max"), rows)


# The unit each stage counts. The order is not this table's: `reasons.PIPELINE_ORDER` is the one order,
# and a FunnelReport keeps its stages in it (funnel.json is written with sorted keys).
STAGE_UNITS: dict[str, str] = {
    R.GITHUB_SEARCH: "repositories",
    R.CLONE: "repositories",
    R.SELECT: "files",
    R.CONTENT: "files",
    R.COMPILE: "files",
    R.STRUCTURE: "classes",
    R.IMPORTS: "classes",
    R.REFERENCES: "classes",
    R.TESTABILITY: "classes",
    R.PROVENANCE: "classes",
    R.DEDUP: "classes",
    R.PAIRING: "classes",
    # the real-source track counts candidate classes from its licence check to its task record
    R.LICENSE: "candidate classes",
    R.SKELETON: "candidate classes",
    R.DOCSTRINGS: "candidate classes",
    R.COMPOSE: "candidate pairs",
    R.TESTS: "candidate pairs",
    R.GENERATED_TESTS: "generated tests",
    R.STATE_CHECKS: "generated tests",
    R.JUDGES: "candidate pairs",
    R.SOLUTION: "candidate pairs",
    R.REFERENCE: "candidate classes",
    R.EXAMPLES: "candidate classes",
    R.MUTATION: "candidate pairs",
    R.STRENGTHEN: "candidate pairs",
    R.TASK: "tasks",
    R.RELEASE: "tasks",
}


def ordered_stages(funnel: FunnelReport) -> list[tuple[str, StageCounts]]:
    """Stages in pipeline order (the report keeps them so; see `funnel.in_pipeline_order`)."""
    return list(in_pipeline_order(funnel.stages).items())


# The stages both tracks share count candidate classes, not pairs, in a real-source build.
_REAL_SOURCE_SHARED = {"tests": "candidate classes", "mutation": "candidate classes"}


def stage_unit(stage: str, funnel: FunnelReport | None = None) -> str:
    if funnel is not None and "license" in funnel.stages and stage in _REAL_SOURCE_SHARED:
        return _REAL_SOURCE_SHARED[stage]
    return STAGE_UNITS.get(stage, "items")


def funnel_rows(funnel: FunnelReport) -> list[tuple]:
    rows = []
    for stage, c in ordered_stages(funnel):
        reasons = ", ".join(f"{r} x{n}" for r, n in sorted(c.dropped.items(), key=lambda kv: (-kv[1], kv[0])))
        rate = f"{100 * c.kept / c.seen:.1f}%" if c.seen else "-"
        rows.append((stage, stage_unit(stage, funnel), c.seen, c.kept, rate, reasons or "-"))
    return rows


def funnel_table(funnel: FunnelReport) -> str:
    if not funnel.stages:
        return "_No funnel counts were recorded._"
    return md_table(
        ("Stage", "Unit", "Seen", "Kept", "Yield", "Dropped (reason x count)"), funnel_rows(funnel), "llrrrl"
    )


def unit_yields(funnel: FunnelReport) -> list[tuple[str, int, int]]:
    """(unit, seen at the unit's first stage, kept at its last stage), in pipeline order: never across units."""
    spans: dict[str, list[int]] = {}
    for stage, c in ordered_stages(funnel):
        unit = stage_unit(stage, funnel)
        if unit not in spans:
            spans[unit] = [c.seen, c.kept]
        spans[unit][1] = c.kept
    return [(unit, seen, kept) for unit, (seen, kept) in spans.items()]


def overall_yield(funnel: FunnelReport) -> str:
    """'8 of 8 repositories (100.0%); 39 of 47 files (83.0%); ...': each unit from its first stage to its last."""
    parts = [
        f"{kept} of {seen} {unit} ({100 * kept / seen:.1f}%)" if seen else f"0 {unit}"
        for unit, seen, kept in unit_yields(funnel)
    ]
    return "; ".join(parts) or "n/a"
