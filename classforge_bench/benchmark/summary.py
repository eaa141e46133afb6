"""`summary.md` of a run, laid out like ClassEval-Pro's Table 4.

Rows are strategy x model; columns class level and method level, each full and partial success,
each pass@1/3/5 (in %): only the ks some row reports (a run with one sample per task has no
pass@3 column); a pass@k undefined for one row (k > its n) shows as "-". Below it: the 95%
bootstrap intervals of the headline numbers, DEP, the sample buckets, the error taxonomy, the
broken tasks with their causes, and the dataset fixes applied.
"""

from __future__ import annotations

from collections import Counter

from classforge_bench.benchmark.leaderboard import short_path
from classforge_bench.benchmark.metrics import Estimate
from classforge_bench.benchmark.record import BUCKETS, UNSCORED_CAUSES, SampleRecord, Score
from classforge_bench.benchmark.results import (
    SPECIAL_MODELS,
    GroupScores,
    ReferenceRecord,
    RunResults,
    RunSettings,
)
from classforge_bench.benchmark.taxonomy import CATEGORIES

LEVELS = (("class_level", "Class"), ("method_level", "Method"))
KINDS = (("full", "Full"), ("partial", "Partial"))


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _estimate(g: GroupScores, level: str, kind: str, k: int) -> Estimate | None:
    if g.metrics is None:
        return None
    return getattr(getattr(g.metrics, level), kind).get(k)


def table4_header(ks: list[int]) -> list[str]:
    return ["Strategy", "Model"] + [
        f"{lname} {kname} pass@{k}" for _, lname in LEVELS for _, kname in KINDS for k in ks
    ]


def table4_rows(results: RunResults) -> list[list[str]]:
    """Strategy x model rows (strategies in configured order, then models), values in %, one
    column per reported k."""
    ks = reported_ks(results)
    strategy_rank = {s: i for i, s in enumerate(results.settings.strategies)}
    model_rank = {m: i for i, m in enumerate(results.settings.models)}
    groups = sorted(
        results.scores,
        key=lambda g: (
            strategy_rank.get(g.strategy, len(strategy_rank)),
            g.strategy,
            model_rank.get(g.model, len(model_rank)),
            g.model,
        ),
    )
    rows = []
    for g in groups:
        cells = [g.strategy, g.model]
        for level, _ in LEVELS:
            for kind, _ in KINDS:
                for k in ks:
                    e = _estimate(g, level, kind, k)
                    cells.append(pct(e.value if e else None))
        rows.append(cells)
    return rows


def plus_header() -> list[str]:
    return ["Strategy", "Model", "tasks"] + [
        f"{lname} {kname} pass@1 base / plus" for _, lname in LEVELS for _, kname in KINDS
    ]


def plus_rows(results: RunResults) -> list[list[str]]:
    """Base next to plus pass@1 (%) per strategy and model: how much of a score the plus tests take away."""
    plus = {(g.strategy, g.model): g for g in results.plus_scores}
    rows = []
    for g in results.scores:
        p = plus.get((g.strategy, g.model))
        if p is None:
            continue
        row = [g.strategy, g.model, f"{g.tasks_scored} / {p.tasks_scored}"]
        for level, _ in LEVELS:
            for kind, _ in KINDS:
                base, more = _estimate(g, level, kind, 1), _estimate(p, level, kind, 1)
                row.append(f"{pct(base.value if base else None)} / {pct(more.value if more else None)}")
        rows.append(row)
    return rows


def plus_section(results: RunResults) -> list[str]:
    if not results.plus_scores:
        return []
    failing = [r for r in results.plus_reference if r.broken]
    with_plus = sum(1 for t in results.tasks if t.plus is not None and t.plus.tests)
    return [
        "",
        "## Base vs plus pass@1 (%)",
        "",
        f"{with_plus} tasks carry a plus suite ({sum(t.plus.tests for t in results.tasks if t.plus)} tests no LLM wrote); "
        "plus = the base tests and the plus tests together. "
        f"The reference fails base + plus on {len(failing)} task(s)"
        + (f" ({', '.join(r.task_id for r in failing[:10])}), excluded from the plus column." if failing else "."),
        "",
        *_md_table(plus_header(), plus_rows(results)),
    ]


def hash_seed_section(results: RunResults) -> list[str]:
    """The class-level passes run again under other hash seeds (evaluate.hash_seeds), and those that did not hold."""
    checks = results.hash_seed_checks
    if not checks:
        return []
    moved = [c for c in checks if c.dependent]
    lines = [
        "",
        "## Verdicts that depend on PYTHONHASHSEED",
        "",
        f"{len(checks)} class-level passes run again under {len(checks[0].seeds) - 1} other hash seeds: "
        f"**{len(moved)} do not hold under every seed** (the scores above count them as the run's seed made them).",
    ]
    if moved:
        lines += [""] + [
            f"- {c.model} / {c.strategy}, {c.task_id} sample {c.sample_index}: {c.verdict()}" for c in moved
        ]
    return lines


def reported_ks(results: RunResults) -> list[int]:
    """The configured ks that some row actually reports (k <= n)."""
    found = {k for g in results.scores if g.metrics for k in g.metrics.ks}
    return [k for k in results.settings.ks if k in found] or results.settings.ks[:1]


def compact_header(results: RunResults) -> list[str]:
    ks = "/".join(str(k) for k in reported_ks(results))
    return ["Strategy", "Model"] + [f"{lname} {kname.lower()} pass@{ks}" for _, lname in LEVELS for _, kname in KINDS]


def compact_rows(results: RunResults) -> list[list[str]]:
    """Table 4 folded for a terminal: one cell per level and kind holding pass@k for every k."""
    width = len(reported_ks(results))
    rows = []
    for row in table4_rows(results):
        cells = row[:2]
        values = row[2:]
        for block in range(len(LEVELS) * len(KINDS)):
            cells.append(" / ".join(values[block * width : (block + 1) * width]))
        rows.append(cells)
    return rows


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|",
    ]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _ci(e: Estimate | None) -> str:
    return "-" if e is None else f"{pct(e.value)} [{pct(e.ci_low)}, {pct(e.ci_high)}]"


def _limits(s: RunSettings) -> str:
    """Time limits and determinism, as run (older results lack the cap, grace and seed)."""
    text = (
        f" Time limit per run: {s.scale_factor:g} x the reference's CPU time (its wall time where the sandbox "
        f"cannot see CPU time), never below the reference's wall time, at least {s.scale_floor_s:g} s"
    )
    if s.scale_cap_s is not None:
        text += f", at most {s.scale_cap_s:g} s"
    if s.grace_s is not None:
        text += f", killed {s.grace_s:g} s after it"
    text += "."
    if s.hash_seed is not None:
        text += f" Every run has PYTHONHASHSEED={s.hash_seed} and `random` seeded with it."
    return text + " " + _environment(s)


def _environment(s: RunSettings) -> str:
    env = s.environment
    if env is None:
        return 'Code under test ran with classforge\'s own interpreter and packages (`evaluate.environment = "host"`).'
    # a path of the user's machine is shown by its last parts only (summary.md is meant to be shared)
    source = f"`{short_path(env.declared_in)}`" if env.declared_in else "the tasks' imports"
    if env.kind == "image":
        return f"Code under test ran in the {env.path} (`{env.name}`), which installs {source}."
    return (
        f"Code under test ran in the virtual environment `{env.name}` built from {source} "
        f"({len(env.requirements)} requirements; installed versions in results.json)."
    )


def _how(results: RunResults) -> str:
    s = results.settings
    if s.samples_file:
        return (
            f"Pre-generated samples from `{short_path(s.samples_file)}` (sha256 {(s.samples_file_sha256 or '')[:12]})."
            + _limits(s)
        )
    text = f"n = {s.n_samples} samples per task"
    if any(m not in SPECIAL_MODELS for m in s.models):
        text += f", temperature {s.temperature}, max tokens {s.max_tokens}, endpoint {s.base_url}"
        if any(x in s.strategies for x in ("bottom_up", "top_down")):
            text += f"; bottom-up/top-down levels from the {s.levels_source}"
    return text + "." + _limits(s)


def _cell(text: str, limit: int = 200) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:limit]


def _unscored(results: RunResults) -> list[tuple[SampleRecord, Score]]:
    """The unscored samples of a run, each with its score (every sample of a run's results has one)."""
    return [(r, r.score) for r in results.samples if not r.scored and r.score is not None]


def _unscored_causes(results: RunResults) -> list[str]:
    """Why the unscored samples are unscored: per group and cause, the count, whether running
    again repeats it, and the first sample's reason in full."""
    groups: dict[tuple[str, str, str], list[tuple[SampleRecord, Score]]] = {}
    for r, score in _unscored(results):
        groups.setdefault((r.strategy, r.model, score.cause or "unknown"), []).append((r, score))
    if not groups:
        return []
    rows = []
    for (strategy, model, cause), records in groups.items():
        repeats = {score.repeats for _, score in records}
        again = (
            "yes"
            if repeats == {True}
            else "no"
            if repeats == {False}
            else "unknown (written before causes were recorded)"
        )
        what = UNSCORED_CAUSES.get(cause, ("not recorded", False))[0]
        first, first_score = records[0]
        rows.append(
            [
                strategy,
                model,
                f"{cause}: {what}",
                str(len(records)),
                again,
                f"{first.task_id} #{first.sample_index}: {_cell(first_score.reason, 300)}",
            ]
        )
    return [
        "",
        "### Why samples are unscored",
        "",
        *_md_table(["Strategy", "Model", "cause", "samples", "a re-run repeats it", "first sample's reason"], rows),
    ]


def unscored_advice(results: RunResults) -> str | None:
    """One line for the terminal about unscored samples: how many, why, and whether running the
    same command again can help (it retries only what a re-run can change)."""
    unscored = [score for _, score in _unscored(results)]
    if not unscored:
        return None
    causes = Counter(score.cause or "unknown" for score in unscored)
    why = ", ".join(f"{n} {cause}" for cause, n in causes.most_common())
    retried = sum(1 for score in unscored if score.repeats is not True)
    if retried == len(unscored):
        advice = "run the same command again to retry them"
    elif retried:
        advice = (
            f"running the same command again retries {retried}; the other {len(unscored) - retried} "
            "would fail the same way until their cause is fixed"
        )
    else:
        advice = "a re-run would fail the same way: fix the cause first (see summary.md)"
    return f"{len(unscored)} sample(s) could not be scored ({why}); {advice}."


def _headline_table(results: RunResults) -> list[str]:
    """Per group: pass@1 of every level and kind, and DEP, each with its 95% bootstrap interval."""
    head = (
        ["Strategy", "Model", "tasks"]
        + [f"{lname} {kname} pass@1" for _, lname in LEVELS for _, kname in KINDS]
        + ["DEP(M)", "DEP(F)"]
    )
    rows = []
    for g in results.scores:
        row = [g.strategy, g.model, str(g.tasks_scored)]
        row += [_ci(_estimate(g, level, kind, 1)) for level, _ in LEVELS for kind, _ in KINDS]
        row += [_ci(g.dep.dep_m if g.dep else None), _ci(g.dep.dep_f if g.dep else None)]
        rows.append(row)
    return _md_table(head, rows)


def _buckets_section(results: RunResults) -> list[str]:
    lines = [
        "",
        "## Samples by outcome bucket",
        "",
        "Every sample is in exactly one bucket. Unscored buckets: generation_error (the model call failed for good), "
        "sandbox_error (the sandbox failed), task_broken (a pre-generated sample of a broken task).",
        "",
    ]
    used = [b for b in BUCKETS if any(g.buckets.get(b) for g in results.scores)] or ["completed"]
    return lines + _md_table(
        ["Strategy", "Model", "samples", "scored", *used],
        [
            [g.strategy, g.model, str(g.n_samples), str(g.n_scored), *(str(g.buckets.get(b, 0)) for b in used)]
            for g in results.scores
        ],
    )


def _broken_section(broken: list[ReferenceRecord]) -> list[str]:
    lines = ["", f"## Broken tasks ({len(broken)})", ""]
    if broken:
        return lines + _md_table(
            ["task", "cause"], [[r.task_id, r.cause.replace("|", "\\|").replace("\n", " ")[:300]] for r in broken]
        )
    return [*lines, "None: every reference solution passes its tests."]


def render_summary(results: RunResults) -> str:
    broken = [r for r in results.reference if r.broken]
    lines = [
        f"# Evaluation {results.run_id}",
        "",
        f"Dataset `{short_path(results.dataset.path)}` ({results.dataset.format}, sha256 {results.dataset.sha256[:12]}): "
        f"{results.dataset.n_tasks_selected} tasks selected, **{len(broken)} broken** (reference fails; excluded from every score), "
        f"{results.dataset.n_tasks_selected - len(broken)} scored. " + _how(results),
        "",
        "## Table 4: pass@k (%)",
        "",
        *_md_table(table4_header(reported_ks(results)), table4_rows(results)),
        "",
        "## Headline numbers with 95% bootstrap intervals (%)",
        "",
    ]
    lines += _headline_table(results)
    lines += plus_section(results)
    lines += hash_seed_section(results)
    lines += _buckets_section(results)
    lines += _unscored_causes(results)
    unscored = [(g, t) for g in results.scores for t in g.tasks_unscored]
    if unscored:
        lines += [
            "",
            "Tasks with no scored sample (left out of that row's scores): "
            + "; ".join(f"{g.model}/{g.strategy}: {t}" for g, t in unscored),
        ]
    lines += ["", "## Error taxonomy of failed samples", ""]
    lines += _md_table(
        ["Strategy", "Model", *CATEGORIES],
        [[g.strategy, g.model, *(str(g.taxonomy.get(c, 0)) for c in CATEGORIES)] for g in results.scores],
    )
    lines += _broken_section(broken)
    if results.dataset.shipped_references:
        lines += ["", f"Shipped reference results: {results.dataset.shipped_references}."]
    fixes = Counter(f.kind for f in results.dataset.fixes_applied)
    lines += ["", "## Dataset fixes applied while loading", ""]
    lines.append(", ".join(f"{k} x{n}" for k, n in sorted(fixes.items())) if fixes else "None.")
    if results.stats.samples_resumed:
        lines += [
            "",
            f"Resumed: {results.stats.samples_resumed} of {len(results.samples)} samples were finished by an "
            "earlier run of the same command that stopped (read back from `samples/`).",
        ]
    if results.usage is not None:
        u = results.usage.total
        lines += [
            "",
            f"Tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion sent live "
            f"({u.requests} requests, {u.retries} retries, {u.failed_requests} failed); "
            f"{u.cached_hits} answers from the cache.",
        ]
    return "\n".join(lines) + "\n"
