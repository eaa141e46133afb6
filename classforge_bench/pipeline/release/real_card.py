"""The dataset card's section for real-source tasks: what they are, their numbers beside ClassEval's
and ClassEval-Pro's published ones, and each task's provenance (repository, path, commit, licence).

Reads release rows only (`track == "real-source"`); a release without such tasks gets no section.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from classforge_bench.pipeline.core.tracks import Track
from classforge_bench.pipeline.release.stats import DatasetStats, TaskStats
from classforge_bench.pipeline.release.tables import md_table

TRACK = Track.REAL_SOURCE
# Published figures: ClassEval's from the ClassEval paper, ClassEval-Pro's from its paper's Table 3.
PUBLISHED = {"ClassEval": ("45.7", "1.77", "5"), "ClassEval-Pro": ("~117", "~3", "~9")}


def real_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in rows if r.get("track") == TRACK]


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.2f}" if values else "-"


def _count_tests(test: str) -> int:
    return sum(1 for line in test.splitlines() if line.lstrip().startswith("def test"))


def _size_table(real: Sequence[Mapping[str, Any]], per: list[TaskStats]) -> str:
    """The real-source tasks' size beside the published benchmarks'."""
    ours = (_mean([m.loc for m in per]), _mean([m.dependency_depth for m in per]), _mean([m.methods for m in per]))
    return md_table(
        ("Benchmark", "LOC (mean)", "Dependency depth (mean)", "Methods (mean)"),
        [
            (f"this release, real-source ({len(real)} tasks)", *ours),
            *((name, *figs) for name, figs in PUBLISHED.items()),
        ],
    )


def _quality_table(real: Sequence[Mapping[str, Any]], per: list[TaskStats]) -> str:
    return md_table(
        ("Measure", "Mean", "Tasks"),
        [
            (
                "Line coverage of the reference, %",
                _mean([float(r["coverage"]) for r in real if r.get("coverage") is not None]),
                len(real),
            ),
            (
                "Mutation score, %",
                _mean([m.mutation_score for m in per if m.mutation_score is not None]),
                sum(m.mutation_score is not None for m in per),
            ),
            ("Generated tests per task", _mean([float(_count_tests(r.get("test") or "")) for r in real]), len(real)),
        ],
    )


def _provenance_table(real: Sequence[Mapping[str, Any]]) -> str:
    """Where each real-source task comes from: repository, path, commit, licence, first seen."""
    return md_table(
        ("Task", "Class", "Repository", "Path", "Commit", "Licence", "First seen"),
        [
            (
                f"`{r['task_id']}`",
                f"`{r['class_name']}`",
                s.get("repo", "?"),
                f"`{s.get('path', '?')}`",
                f"`{str(s.get('commit', '?'))[:12]}`",
                s.get("license_spdx") or "NOASSERTION",
                str(s.get("first_seen_date") or "?")[:10],
            )
            for r in real
            for s in (r.get("sources") or [{}])[:1]
        ],
        "lllllll",
    )


def real_source_section(rows: Sequence[Mapping[str, Any]], stats: DatasetStats) -> str:
    """Markdown for the card (empty when the release holds no real-source task)."""
    real = real_rows(rows)
    if not real:
        return ""
    ids = {r["task_id"] for r in real}
    per = [m for m in stats.per_task if m.task_id in ids]
    written = sum(len(r.get("docstrings_llm_written") or []) for r in real)
    original = sum(len(r.get("docstrings_original") or []) for r in real)
    typed = sum(len(r.get("docstrings_from_annotations") or []) for r in real)
    given = sum(len(r.get("methods_given") or []) for r in real)
    generators = Counter(str(r.get("test_generator")) for r in real)
    size, quality, provenance = _size_table(real, per), _quality_table(real, per), _provenance_table(real)
    return f"""## Real-source tasks

{len(real)} task(s) are real classes, not compositions: the reference solution is the class as its
authors wrote it (with the module context it needs), the skeleton is derived from it deterministically
(bodies removed, docstrings normalised; `>>>` examples are runs the tests observe), and the tests were
generated without an LLM ({", ".join(f"`{g}` x{n}" for g, n in generators.items())}) and passed the same
sandbox gate and mutation gate as composed tasks. Docstrings: {original} as written by the authors,
{typed} completed from type annotations (a parameter or return the authors described only by its
type), {written} written by an LLM and checked by a judge for leaks. {given} private helper
method(s) ship implemented in the skeletons, as given code the model may call. A task is released only when its
repository's licence is on the allow-list; the licence and attribution of each are below.

{size}

{quality}

Provenance and licence of each real-source task (authors: the repository's contributors; see its
history at the commit named):

{provenance}

"""
