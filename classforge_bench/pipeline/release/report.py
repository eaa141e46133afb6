"""Render a release's statistics and funnel as Markdown (`report.md`) plus PNG plots.

The report is written outside the release folder: the release is immutable and hashed, and an
extra file inside it would (rightly) fail verification.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.store import write_text
from classforge_bench.pipeline.formats.release_rows import read_release_rows
from classforge_bench.pipeline.release.errors import ReleaseError
from classforge_bench.pipeline.release.manifest import MANIFEST, Manifest
from classforge_bench.pipeline.release.plots import write_plots
from classforge_bench.pipeline.release.stats import DatasetStats, compute_stats
from classforge_bench.pipeline.release.tables import (
    domain_table,
    funnel_table,
    md_table,
    overall_yield,
    size_table,
    task_kinds,
)
from classforge_bench.pipeline.release.validity import ValidityFacts, compute_validity, validity_section


class ReportResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    version: str
    markdown: str
    report_path: Path
    plots: dict[str, Path]


def default_report_dir(folder: Path) -> Path:
    """`reports/<version>` under the working directory."""
    return Path("reports") / Path(folder).name


def _read_json(folder: Path, name: str) -> object:
    path = folder / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ReleaseError(f"release {folder.name}: {name} is missing from {folder}") from exc
    except json.JSONDecodeError as exc:
        raise ReleaseError(f"release {folder.name}: {name} is not valid JSON: {exc}") from exc


def load_release_summary(folder: Path) -> tuple[Manifest, DatasetStats, FunnelReport]:
    """Manifest, statistics and funnel of a release. Statistics missing from an older release are recomputed."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ReleaseError(f"release {folder.name}: {folder} is not a directory")
    try:
        manifest = Manifest.model_validate(_read_json(folder, MANIFEST))
        funnel = FunnelReport.model_validate(_read_json(folder, "funnel.json"))
        if (folder / "stats.json").is_file():
            stats = DatasetStats.model_validate(_read_json(folder, "stats.json"))
        else:
            stats = compute_stats(read_release_rows(folder))
    except ValidationError as exc:
        raise ReleaseError(f"release {folder.name}: unexpected content: {exc}") from exc
    return manifest, stats, funnel


_NO_VALIDITY = "## Validity\n\nNot computed."


def release_validity(folder: Path, manifest: Manifest) -> ValidityFacts:
    """The validity facts, recomputed from the release's own tasks and manifest."""
    return compute_validity(
        read_release_rows(folder),
        cutoff=manifest.cutoff,
        decontamination=manifest.decontamination,
        earlier_releases=manifest.earlier_releases,
    )


def render_markdown(
    manifest: Manifest,
    stats: DatasetStats,
    funnel: FunnelReport,
    plots: dict[str, str] | None = None,
    validity: ValidityFacts | None = None,
) -> str:
    """The report text; `plots` maps plot name -> path relative to the report (omitted if None)."""
    plots = plots or {}

    def img(name: str, alt: str) -> str:
        return f"\n\n![{alt}]({plots[name]})" if name in plots else ""

    licences = Counter((s.license_spdx or "unknown") for s in manifest.sources)
    lic_rows = [(lic, n) for lic, n in sorted(licences.items(), key=lambda kv: (-kv[1], kv[0]))] or [("-", 0)]
    model_rows = [(role, f"`{m}`") for role, m in sorted(manifest.models.items())] or [("-", "-")]
    prompt_rows = [(p, f"`{v}`") for p, v in sorted(manifest.prompt_versions.items())] or [("-", "-")]
    return f"""# classforge release {manifest.version}

- Tasks: **{stats.total}** ({task_kinds(stats)})
- Cutoff: {manifest.cutoff or "n/a"}
- classforge version: `{manifest.pipeline_version}`; written {manifest.created_at.isoformat()}
- Source repositories: {len(manifest.sources)}
- Funnel, each unit from its first stage to its last: {overall_yield(funnel)}

## Domain distribution (ClassEval-Pro Table 2)

Each task counts once under its primary domain (`domain1`); *Involved* also counts `domain2`.

{domain_table(stats)}{img("domains", "domain distribution")}

## Size and structure (ClassEval-Pro Table 3)

{size_table(stats)}{img("loc", "LOC histogram")}{img("methods", "methods histogram")}

{validity_section(validity) if validity is not None else _NO_VALIDITY}

## Funnel

Stages in pipeline order; each counts the unit named beside it.

{funnel_table(funnel)}{img("funnel", "funnel")}

## Models and prompts

{md_table(("Role", "Model"), model_rows, "ll")}

{md_table(("Prompt", "Version"), prompt_rows, "ll")}

## Source licences

{md_table(("Licence", "Repositories"), lic_rows)}
"""


def write_report(folder: Path, out_dir: Path | None = None) -> ReportResult:
    """Write `report.md` and the plots into `out_dir` (default `reports/<version>`)."""
    folder = Path(folder)
    out = Path(out_dir) if out_dir is not None else default_report_dir(folder)
    if out.resolve().is_relative_to(folder.resolve()):
        raise ReleaseError(
            f"release {folder.name}: the report cannot go inside the release folder ({out}); "
            "the release is immutable and hashed"
        )
    manifest, stats, funnel = load_release_summary(folder)
    plot_paths = write_plots(stats, out, funnel)
    markdown = render_markdown(
        manifest, stats, funnel, {k: p.name for k, p in plot_paths.items()}, release_validity(folder, manifest)
    )
    report_path = out / "report.md"
    write_text(report_path, markdown)
    return ReportResult(version=manifest.version, markdown=markdown, report_path=report_path, plots=plot_paths)
