"""The validity numbers every release states, computed from its own tasks and manifest.

- reference pass rate: 100% by construction (a task is released only when its solution passed the
  sandbox gate); the count says how many tasks carry the gate's figures;
- line and branch coverage of the solution by the tests, as distributions over the tasks;
- mutation score (the `mutation_score` column, when the build measured it; else "not measured");
- environment checks: which perturbations ran on how many tasks, and which were skipped, and why
  (the `environment_checks` column; "not measured" when absent);
- near-duplicate checks: the corpora the harvest checked and did not check (its
  decontamination record, copied into the manifest) and the earlier releases deduplicated against;
- post-cutoff share: tasks whose every source class was first seen on or after the cutoff, from
  each source's `first_seen_date`; tasks with an undated source count as unknown, never as fresh.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, Field

from classforge_bench.pipeline.release.tables import md_table


class Distribution(BaseModel):
    n: int
    mean: float
    median: float
    min: float
    p10: float
    max: float


class EnvironmentFacts(BaseModel):
    tasks_checked: int = 0
    applied: dict[str, int] = Field(default_factory=dict, description="perturbation -> tasks it ran on")
    skipped: dict[str, str] = Field(
        default_factory=dict, description="perturbation -> why it was skipped (first reason seen)"
    )
    skipped_tasks: dict[str, int] = Field(default_factory=dict)


class CutoffFacts(BaseModel):
    cutoff: str | None
    post_cutoff: int = 0
    pre_cutoff: int = 0
    unknown: int = 0


class ValidityFacts(BaseModel):
    tasks: int
    gate_figures: int = Field(description="tasks carrying the gate's coverage figure")
    line_coverage: Distribution | None = None
    branch_coverage: Distribution | None = None
    mutation_score: Distribution | None = None
    environment: EnvironmentFacts = Field(default_factory=EnvironmentFacts)
    decontamination: dict[str, list[str]] | None = None
    earlier_releases: list[str] | None = None
    cutoff: CutoffFacts


def distribution(values: Iterable[float | None]) -> Distribution | None:
    found = sorted(float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
    if not found:
        return None
    p10 = found[0] if len(found) < 2 else statistics.quantiles(found, n=10, method="inclusive")[0]
    return Distribution(
        n=len(found),
        mean=round(statistics.fmean(found), 2),
        median=round(statistics.median(found), 2),
        min=found[0],
        p10=round(p10, 2),
        max=found[-1],
    )


def _fractions_as_percent(values: Iterable[float | None]) -> list[float | None]:
    """Scores stored as fractions (all within 0..1) as percentages like the coverage, before any
    rounding (rounding the fractions first turned 95.2% into 95.0%)."""
    found = list(values)
    numbers = [v for v in found if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers and max(numbers) <= 1.0:
        return [100 * v if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in found]
    return found


def _environment(records: list[Mapping[str, Any]]) -> EnvironmentFacts:
    facts = EnvironmentFacts()
    applied: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    for rec in records:
        checks = rec.get("environment_checks")
        if not isinstance(checks, Mapping):
            continue
        facts.tasks_checked += 1
        applied.update(checks.get("applied") or [])
        for name, why in (checks.get("skipped") or {}).items():
            skipped[name] += 1
            facts.skipped.setdefault(name, str(why))
    facts.applied, facts.skipped_tasks = dict(sorted(applied.items())), dict(sorted(skipped.items()))
    return facts


def _as_date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
        except ValueError:
            return None
    return None


def _cutoff(records: list[Mapping[str, Any]], cutoff: str | None) -> CutoffFacts:
    facts = CutoffFacts(cutoff=cutoff)
    limit = _as_date(cutoff)
    for rec in records:
        listed = rec.get("sources")
        sources = listed if isinstance(listed, list) else []
        dates = [_as_date(s.get("first_seen_date")) if isinstance(s, Mapping) else None for s in sources]
        known = [d for d in dates if d is not None]
        if limit is None or not dates or len(known) < len(dates):
            facts.unknown += 1
        elif all(d >= limit for d in known):
            facts.post_cutoff += 1
        else:
            facts.pre_cutoff += 1
    return facts


def compute_validity(
    records: Iterable[Mapping[str, Any]],
    *,
    cutoff: str | None,
    decontamination: dict[str, list[str]] | None = None,
    earlier_releases: list[str] | None = None,
) -> ValidityFacts:
    """The facts over the release's task records (as written, or as read back)."""
    records = list(records)
    return ValidityFacts(
        tasks=len(records),
        gate_figures=sum(isinstance(r.get("coverage"), (int, float)) for r in records),
        line_coverage=distribution(r.get("coverage") for r in records),
        branch_coverage=distribution(r.get("branch_coverage") for r in records),
        mutation_score=distribution(_fractions_as_percent(r.get("mutation_score") for r in records)),
        environment=_environment(records),
        decontamination=decontamination,
        earlier_releases=earlier_releases,
        cutoff=_cutoff(records, cutoff),
    )


def _dist_cell(d: Distribution | None, unit: str = "%") -> tuple[str, str, str, str, str]:
    if d is None:
        return ("not measured", "-", "-", "-", "-")
    return (str(d.n), f"{d.mean:.1f}{unit}", f"{d.median:.1f}{unit}", f"{d.min:.1f}{unit}", f"{d.p10:.1f}{unit}")


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else "n/a"


def _environment_lines(env: EnvironmentFacts, tasks: int) -> list[str]:
    if env.tasks_checked == 0:
        return ["- Environment checks: not measured (no task records them)."]
    ran = ", ".join(f"{name} ({n})" for name, n in env.applied.items()) or "none"
    lines = [
        f"- Environment checks on {env.tasks_checked} of {tasks} tasks, each verdict unchanged under: {ran} "
        "(tasks per perturbation in brackets; a task whose verdict changed was not released)."
    ]
    for name, n in env.skipped_tasks.items():
        lines.append(f"  - **skipped** {name} on {n} task(s): {env.skipped[name]}")
    return lines


def _dedup_lines(facts: ValidityFacts) -> list[str]:
    if facts.decontamination is None:
        lines = ["- Near-duplicate checks against known corpora: not recorded for this release."]
    else:
        checked = "; ".join(facts.decontamination.get("checked") or []) or "nothing"
        lines = [f"- Near-duplicate checks (harvest): checked {checked}."]
        missing = facts.decontamination.get("not_checked") or []
        if missing:
            lines.append(f"  - **not checked**: {'; '.join(missing)}")
    if facts.earlier_releases is None:
        lines.append("- Deduplication against earlier releases: not recorded for this release.")
    else:
        earlier = ", ".join(facts.earlier_releases) or "none existed"
        lines.append(f"- Deduplicated against earlier releases (task ids, source-class pairs, solutions): {earlier}.")
    return lines


def validity_section(facts: ValidityFacts, heading: str = "##") -> str:
    """The card's and the report's validity section, in Markdown."""
    n, cut = facts.tasks, facts.cutoff
    rows = [
        ("line coverage", *_dist_cell(facts.line_coverage)),
        ("branch coverage", *_dist_cell(facts.branch_coverage)),
        ("mutation score", *_dist_cell(facts.mutation_score)),
    ]
    lines = [
        f"{heading} Validity",
        "",
        f"- Reference pass rate: 100% by construction: a task is released only when its canonical solution passed "
        f"every test in the sandbox gate ({facts.gate_figures} of {n} tasks carry the gate's figures).",
        "",
        md_table(("Measure", "Tasks", "Mean", "Median", "Min", "10th pct"), rows, "lrrrrr"),
        "",
        *_environment_lines(facts.environment, n),
        *_dedup_lines(facts),
        f"- Source classes first seen on or after the cutoff ({cut.cutoff or 'none configured'}), from each source's "
        f"first-seen date: {cut.post_cutoff} of {n} tasks ({_pct(cut.post_cutoff, n)}); {cut.pre_cutoff} with an "
        f"earlier source; {cut.unknown} undated or without a cutoff.",
    ]
    return "\n".join(lines)
