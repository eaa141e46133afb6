"""The dataset card (`README.md`): YAML front matter the Hub and `datasets` read, then prose."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from classforge_bench.pipeline.core.funnel import FunnelReport
from classforge_bench.pipeline.core.task import CORE_COLUMNS, column_meaning, column_origin
from classforge_bench.pipeline.core.tracks import Track
from classforge_bench.pipeline.formats.release_rows import DATA_GLOB, SPLIT
from classforge_bench.pipeline.release.manifest import SourceRepo
from classforge_bench.pipeline.release.privacy import PRIVATE_NOTE, is_private
from classforge_bench.pipeline.release.stats import DatasetStats
from classforge_bench.pipeline.release.tables import (
    domain_table,
    funnel_table,
    md_table,
    overall_yield,
    size_table,
    task_kinds,
)
from classforge_bench.pipeline.release.validity import ValidityFacts, validity_section

TAGS = ["code", "code-generation", "python", "class-level", "benchmark", "classeval", "post-cutoff"]


def size_category(n: int) -> str:
    """The Hub's size_categories bucket for n rows (the names `datasets` ships in its tag vocabulary)."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for limit, name in bounds:
        if n < limit:
            return name
    return "1M<n<10M"


def track_of(config: dict[str, Any]) -> str:
    """The release's track, as its configuration names it: the dataset's config name on the Hub."""
    return str(_dig(config, "construction.track", "composition"))


def card_data(
    version: str,
    n_tasks: int,
    license: str | None,
    *,
    track: str,
    features: list[dict[str, Any]] | None = None,
    dataset_bytes: int | None = None,
    download_bytes: int | None = None,
):
    """The card's metadata as the Hub's own type (`huggingface_hub.DatasetCardData`).

    The config is named after the track and `dataset_info` records the features and the split's size:
    `datasets` keys a local folder's cache on the folder's name (the version) and a hash of these, so
    two releases of one version, one per track, no longer share a cache entry (the second load used to
    return the first one's rows)."""
    from huggingface_hub import DatasetCardData

    info: dict[str, Any] = {"config_name": track}
    if features is not None:
        info["features"] = features
    info["splits"] = [
        {"name": SPLIT, "num_examples": n_tasks, **({"num_bytes": dataset_bytes} if dataset_bytes else {})}
    ]
    if download_bytes:
        info["download_size"] = download_bytes
    if dataset_bytes:
        info["dataset_size"] = dataset_bytes
    licence: dict[str, Any] = (
        {"license": license}
        if license
        # Tasks derive from many repositories, each under its own licence: no single SPDX id is true.
        else {"license": "other", "license_name": "per-source-repository", "license_link": "manifest.json"}
    )
    return DatasetCardData(
        **licence,
        language=["en"],
        task_categories=["text-generation"],
        tags=list(TAGS),
        pretty_name=f"classforge {version} ({track})",
        size_categories=[size_category(n_tasks)],
        configs=[{"config_name": track, "data_files": [{"split": SPLIT, "path": DATA_GLOB}]}],
        dataset_info=info,
    )


def card_metadata(version: str, n_tasks: int, license: str | None, *, track: str = "composition") -> dict[str, Any]:
    """The front matter as a plain mapping (what `card_data` holds)."""
    return card_data(version, n_tasks, license, track=track).to_dict()


def front_matter(meta: dict[str, Any]) -> str:
    import yaml  # a dependency of datasets and huggingface_hub; imported lazily

    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def _licence_section(sources: list[SourceRepo], license: str | None) -> str:
    counts = Counter((s.license_spdx or "unknown") for s in sources)
    lines = ["## Licence", ""]
    if not sources:
        lines.append("No source repositories were recorded for this release; check provenance before reuse.")
    else:
        summary = ", ".join(f"{lic} ({n})" for lic, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(
            f"The tasks derive from code in {_counted_origin(sources)}, each under its own licence "
            f"({summary}). Every repository is listed with the commits used and its licence in `manifest.json`, "
            "and every task's own provenance columns name its source repository, path, commit and licence. "
            "The `license` column gives each task's licence as an SPDX expression over its sources (joined with "
            "AND when a task combines code under different licences; NOASSERTION when a source's licence is "
            "unknown). Respect those licences when redistributing or training on this data."
        )
    if license:
        lines += ["", f"The card declares `{license}` for the dataset as a whole, as chosen by its publisher."]
    return "\n".join(lines)


def _dig(config: dict[str, Any], path: str, default: Any) -> Any:
    value: Any = config
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return default
        value = value[key]
    return value


def build_facts(config: dict[str, Any]) -> dict[str, Any]:
    """The gates the card describes, read from the release's own config (ClassEval-Pro's values as fallback)."""
    judges = _dig(config, "llm.judges", None)
    return {
        "min_methods": _dig(config, "harvest.filters.min_methods", 5),
        "min_lines": _dig(config, "harvest.filters.min_lines", 40),
        "max_lines": _dig(config, "harvest.filters.max_lines", 800),
        "judges": len(judges) if isinstance(judges, list) else 3,
        "judge_min": _dig(config, "construction.judge_min_full_marks", 2),
        "coverage": _dig(config, "sandbox.min_line_coverage", 90),
        "wall": _dig(config, "sandbox.wall_limit_s", 60),
        "mutation": _dig(config, "construction.mutation.enabled", False),
        "min_score": _dig(config, "construction.mutation.min_score", None),
        "real_source": _real_source(config),
        "llm_docstrings": _llm_docstrings(config),
    }


def _real_source(config: dict[str, Any]) -> bool:
    return _dig(config, "construction.track", Track.COMPOSITION) == Track.REAL_SOURCE


def _llm_docstrings(config: dict[str, Any]) -> bool:
    """A real-source build configured to have an LLM write docstrings too thin to ship."""
    return _dig(config, "construction.real_source.docstring_role", "none") != "none"


def _mutation_note(f: dict[str, Any]) -> str:
    """The mutation gate's sentence, when the release's build ran it."""
    if not f["mutation"] or not isinstance(f["min_score"], (int, float)):
        return ""
    second_chance = (
        "below that the class is dropped"
        if f["real_source"]
        else "below that the test writer gets the surviving mutants once, and the strengthened suite must pass "
        "the same sandbox gate and reach the threshold"
    )
    return (
        f"\nIts tests must then kill at least {100 * f['min_score']:g}% of the non-equivalent mutants of the "
        f"solution (mutation score; {second_chance})."
    )


def _construction_steps(f: dict[str, Any]) -> str:
    """What the build did after the harvest, by track: the card must not say an LLM composed, tested,
    judged or solved a task that is a harvested class with generated tests."""
    if not f["real_source"]:
        return f"""compose pairs of them (intra-domain and cross-domain)
into one class skeleton with an LLM; have an LLM write tests; keep a task only if at least
{f["judge_min"]} of {f["judges"]} LLM judges give the tests full marks; have a separate LLM write the solution and keep
the task only if it passes every test"""
    docstrings = (
        "the class's own docstrings (an LLM wrote those too thin to specify a method, and the first judge checked them)"
        if f["llm_docstrings"]
        else "the class's own docstrings (a class whose docstrings are too thin to specify it was dropped; no LLM took part)"
    )
    return f"""keep those under an allowed licence.
Each kept class is a task as it is: the class is the canonical solution, and the skeleton is its
signatures with {docstrings}; its tests are generated by search (Pynguin), with the returns and states
observed on the class asserted. A task is kept only if the class passes every test"""


def render_card(
    *,
    version: str,
    stats: DatasetStats,
    funnel: FunnelReport,
    cutoff: str | None,
    pipeline_version: str,
    models: dict[str, Any],
    prompt_versions: dict[str, Any],
    sources: list[SourceRepo],
    columns: dict[str, str],
    json_columns: list[str],
    config: dict[str, Any] | None = None,
    license: str | None = None,
    hub_repo_id: str | None = None,
    validity: ValidityFacts | None = None,
    example: dict[str, Any] | None = None,
    year: int | None = None,
) -> str:
    """The dataset card's Markdown body, section by section (the front matter is `card_metadata`)."""
    cut = cutoff or "the configured cutoff"
    repo = hub_repo_id or REPO_PLACEHOLDER
    return "".join(
        (
            _intro_section(version, cut, sources),
            f"{PRIVATE_NOTE}\n\n" if is_private(config) else "",
            _built_section(cut, build_facts(config or {}), pipeline_version, models, prompt_versions, config or {}),
            _contents_section(stats, validity),
            _funnel_section(funnel),
            _loading_section(repo, version),
            _columns_section(columns, json_columns),
            _example_section(example),
            _closing_sections(sources, license, repo, version, config or {}, stats, year),
        )
    )


def _origin_of(sources: list[SourceRepo]) -> str:
    """Where the code came from, as the sources say: a source has a URL only when its remote is public."""
    public = sum(1 for s in sources if s.clone_url)
    if public == len(sources) and sources:
        return "public repositories"
    if public == 0:
        return "local git repositories (no public URL recorded; see `manifest.json`)"
    return f"{public} public and {len(sources) - public} local git repositories"


def _counted_origin(sources: list[SourceRepo]) -> str:
    """'4 public repositories', '4 local git repositories' or '3 public and 1 local git repositories':
    a source is public only when its remote URL was recorded (the local example's are not)."""
    public = sum(1 for s in sources if s.clone_url)
    if public == len(sources):
        return f"{public} public repositories"
    if public == 0:
        return f"{len(sources)} local git repositories (no public URL recorded)"
    return f"{public} public and {len(sources) - public} local git repositories"


def _intro_section(version: str, cut: str, sources: list[SourceRepo]) -> str:
    return f"""
# classforge {version}

A class-level Python code-generation benchmark in [ClassEval](https://github.com/FudanSELab/ClassEval)'s
format, built automatically by classforge from code first committed to {_origin_of(sources)}
on or after **{cut}**, so that it post-dates the training cutoff of the models it is meant to test.
Each task gives a class skeleton (imports, class and method signatures with docstrings, no bodies);
a model writes the class, and the task's unittest suite (method-level and class-level test classes)
judges it. Every task ships a canonical solution that passes its tests.

"""


def _built_section(
    cut: str,
    f: dict[str, Any],
    pipeline_version: str,
    models: dict[str, Any],
    prompt_versions: dict[str, Any],
    config: dict[str, Any],
) -> str:
    model_rows = [(role, f"`{m}`") for role, m in sorted(models.items())] or [("-", "-")]
    prompt_rows = [(name, f"`{v}`") for name, v in sorted(prompt_versions.items())] or [("-", "-")]
    return f"""## How it was built

Following [ClassEval-Pro](https://arxiv.org/abs/2604.26923)'s {"pipeline up to its composition step" if f["real_source"] else "pipeline"}: harvest self-contained, standard-library-only classes
({f["min_methods"]}+ methods, {f["min_lines"]}-{f["max_lines"]} lines) whose first commit is on or after the cutoff, with
repository, path, commit, first-seen date and licence kept for each; deduplicate them against each
other, public benchmarks and earlier releases; {_construction_steps(f)} with at least {f["coverage"]}% line coverage within {f["wall"]} s in a sandbox.{_mutation_note(f)}
Every {"generated test suite and any LLM call" if f["real_source"] else "LLM call"} is cached by content, so the build can be replayed exactly. The full configuration
(secrets removed) is in `manifest.json`.

- classforge version: `{pipeline_version}`
- Cutoff: {cut}
{_replay_note(config)}
{md_table(("Role", "Model"), model_rows, "ll")}

{md_table(("Prompt", "Version"), prompt_rows, "ll")}

"""


def _contents_section(stats: DatasetStats, validity: ValidityFacts | None) -> str:
    return f"""## Contents

{stats.total} tasks in one split, `{SPLIT}`: {task_kinds(stats)}.

Domain distribution (each task counted under its primary domain, `domain1`; *Involved* also
counts cross-domain tasks whose `domain2` is the domain):

{domain_table(stats)}

Size and structure of the canonical solutions (LOC: physical lines of the class; dependency depth:
longest chain of intra-class method calls, 1 = none; methods include `__init__`, methods to
generate do not):

{size_table(stats)}
{_plus_note(stats)}
{_plots_section()}

Full statistics: `stats.json`.

{_validity(validity)}

"""


def _plus_note(stats: DatasetStats) -> str:
    """The plus tier in prose, when the release carries it (the table above has its figures)."""
    carried = [m for m in stats.per_task if m.plus_tests is not None]
    if not carried:
        return ""
    paired = [m for m in carried if m.mutation_score is not None and m.mutation_score_with_plus is not None]
    lift = ""
    if paired:
        before = sum(m.mutation_score or 0.0 for m in paired) / len(paired)  # both set in every paired task
        after = sum(m.mutation_score_with_plus or 0.0 for m in paired) / len(paired)
        lift = (
            f" On the {len(paired)} task(s) with both scores, the mutation score is {before:.1f}% with the base "
            f"tests and {after:.1f}% with base and plus tests together."
        )
    return (
        f"\n{len(carried)} of {stats.total} tasks carry a hidden `plus` suite, {sum(m.plus_tests or 0 for m in carried)} "
        "tests in all: unit tests made by search (Pynguin, in the sandbox), not by an LLM, each passing the "
        "reference solution three times and under every environment perturbation. `classforge evaluate` "
        f"scores base and base + plus side by side (column `plus`).{lift}\n"
    )


def _funnel_section(funnel: FunnelReport) -> str:
    return f"""## Funnel

Counts per stage and rejection reason, in pipeline order (full report: `funnel.json`). Each stage
counts one unit: repositories, files, classes, candidate pairs (one composed class each) or tasks.
Each unit from its first stage to its last: {overall_yield(funnel)}.

{funnel_table(funnel)}

"""


def _loading_section(repo: str, version: str) -> str:
    return f"""## Loading

```python
from datasets import load_dataset

ds = load_dataset("{repo}", revision="{version}", split="{SPLIT}")   # from the Hub, pinned by tag
ds = load_dataset("path/to/{version}", split="{SPLIT}")                # from a local copy of this folder
```

Without `datasets`:

```python
import json
import pyarrow.parquet as pq

rows = pq.read_table("data/test-00000-of-00001.parquet").to_pylist()
# or, one JSON object per line with every field decoded: tasks.jsonl
```

"""


def _columns_section(columns: dict[str, str], json_columns: list[str]) -> str:
    extra_cols = [c for c in columns if c not in CORE_COLUMNS]
    column_rows = [
        (
            f"`{name}`",
            f"`{typ}`",
            column_origin(name) + (" (JSON text)" if name in json_columns else ""),
            column_meaning(name) or "-",
        )
        for name, typ in columns.items()
    ]
    json_note = (
        (
            "Columns marked *JSON text* hold irregular nested values encoded as JSON: decode them with "
            "`json.loads` (`tasks.jsonl` has them decoded). "
        )
        if json_columns
        else ""
    )
    extras_note = ("Extra columns: " + ", ".join(f"`{c}`" for c in extra_cols) + ".") if extra_cols else ""
    return f"""## Columns

ClassEval's columns keep their names and types (`methods_info` is a list of structs with a nested
`dependencies` struct). {json_note}{extras_note}

{md_table(("Column", "Arrow type", "Origin", "Meaning"), column_rows, "llll")}

"""


def _closing_sections(
    sources: list[SourceRepo],
    license: str | None,
    repo: str,
    version: str,
    config: dict[str, Any],
    stats: DatasetStats,
    year: int | None,
) -> str:
    return f"""{_licence_section(sources, license)}

{_evaluate_section(repo, version)}

{_limitations_section(config, stats.total)}

{_citation(repo, version, year)}

## Files

- `data/test-00000-of-00001.parquet`: the tasks
- `tasks.jsonl`: the same tasks, one JSON object per line
- `funnel.json`: how many candidates each stage kept, and why it dropped the others
- `stats.json`, `plots/*.png`: dataset statistics
- `manifest.json`: pipeline version, configuration, models, prompt versions, source repositories
  with commits and licences, and the SHA-256 of every other file
"""


REPO_PLACEHOLDER = "ORG/NAME"
"""Stands for the Hub repository in a card written before anyone chose one; `export --repo` fills it in."""

PLOTS = (
    ("funnel.png", "Funnel: kept of seen at each stage"),
    ("domains.png", "Tasks per domain"),
    ("loc.png", "Lines of code per solution"),
    ("methods.png", "Methods per class"),
)

EXAMPLE_TEXT_CHARS = 400
"""Longer text fields of the example instance are cut here (the whole row is one `tasks.jsonl` line)."""


def _shortened(value: Any) -> Any:
    if isinstance(value, str) and len(value) > EXAMPLE_TEXT_CHARS:
        return value[:EXAMPLE_TEXT_CHARS] + f"... ({len(value) - EXAMPLE_TEXT_CHARS} more characters)"
    if isinstance(value, list):
        return [_shortened(v) for v in value[:3]] + ([f"... ({len(value) - 3} more)"] if len(value) > 3 else [])
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    return value


def _example_section(example: dict[str, Any] | None) -> str:
    if not example:
        return ""
    return f"""## Example instance

The first task of the split (`tasks.jsonl` line 1), its longer texts shortened:

```json
{json.dumps(_shortened(example), indent=1, ensure_ascii=False)}
```

"""


def _citation(repo: str, version: str, year: int | None) -> str:
    year_line = f"\n  year         = {{{year}}}," if year else ""
    return f"""## Citation

If you use this dataset, cite the release (its version tag pins the exact data) and the work it builds on:

```bibtex
@misc{{classforge_{version.replace(".", "_")},
  title        = {{classforge {version}: a post-cutoff class-level code-generation benchmark}},
  author       = {{{{classforge contributors}}}},{year_line}
  note         = {{Version {version}; built by classforge, configuration and sources in manifest.json}},
  howpublished = {{\\url{{https://huggingface.co/datasets/{repo}}}}}
}}
@article{{chen2026classevalpro,
  title   = {{ClassEval-Pro: A Cross-Domain Benchmark for Class-Level Code Generation}},
  author  = {{Chen, Yeheng and Xie, Chaoxiang and Shi, Yuling and Zeng, Wenhao and Wang, Yongpan and Zhang, Hongyu
             and Gu, Xiaodong}},
  journal = {{arXiv preprint arXiv:2604.26923}},
  year    = {{2026}}
}}
@article{{du2023classeval,
  title   = {{ClassEval: A Manually-Crafted Benchmark to Evaluate LLMs on Class-level Code Generation}},
  author  = {{Du, Xueying and Liu, Mingwei and Wang, Kaixin and Wang, Hanlin and Liu, Junwei and Chen, Yixuan
             and Feng, Jiayi and Sha, Chaofeng and Peng, Xin and Lou, Yiling}},
  journal = {{arXiv preprint arXiv:2308.01861}},
  year    = {{2023}}
}}
```"""


def _validity(validity: ValidityFacts | None) -> str:
    if validity is None:
        return "## Validity\n\nNot computed for this card."
    return validity_section(validity) + (
        "\n\nComputed from this release's tasks (`coverage`, `branch_coverage`, `mutation_score`, "
        "`environment_checks`, `sources[].first_seen_date`) and `manifest.json`; `classforge report` prints the same."
    )


def _plots_section() -> str:
    return "\n\n".join(f"![{title}](plots/{name})" for name, title in PLOTS)


def _replayed_llm_answers(config: dict[str, Any]) -> bool:
    """The build took LLM answers from prepared files. A real-source build without a docstring role
    has no LLM role at all: there, replay mode only guaranteed that no request could be sent."""
    if _dig(config, "llm.mode", "live") != "replay":
        return False
    return not _real_source(config) or _llm_docstrings(config)


def _replay_note(config: dict[str, Any]) -> str:
    """A build whose LLM answers were replayed from prepared files must say so: its model names label answers no model gave."""
    if not _replayed_llm_answers(config):
        return ""
    imports = _dig(config, "llm.cache_imports", []) or []
    files = ", ".join(f"`{p}`" for p in imports) or "a prepared cache"
    roles = "docstring-writer and judge" if _real_source(config) else "composer, test-writer, judge and solver"
    return (
        f"- **LLM answers prepared ahead, not generated during this build**: the build ran in replay mode, so every "
        f"{roles} answer came from {files}. For classforge's bundled example "
        "these answers were written by hand; the model names below label them, no model produced them. "
        "The sandbox gate (tests, coverage, time limit) did run on every task.\n"
    )


def _evaluate_section(repo: str, version: str) -> str:
    return f"""## How to evaluate

With classforge (generates with your model through an OpenAI-compatible endpoint, runs every sample
in a sandbox, reports class- and method-level pass@k with the five ClassEval/ClassEval-Pro strategies):

```bash
classforge evaluate --dataset hf:{repo}@{version} --model YOUR-MODEL --base-url http://localhost:8000/v1
classforge evaluate --dataset hf:{repo}@{version} --model reference --n 1   # the canonical solutions
```

In plain Python: a task passes when its `solution_code` (or a model's class) followed by its `test`
runs every test class in `test_classes` without failure. The tests do not import the class; like
ClassEval's, they expect it in the same module. Run untrusted code in a sandbox, not like this:

```python
import unittest
from datasets import load_dataset

task = load_dataset("{repo}", revision="{version}", split="test")[0]
namespace = {{"__name__": "task"}}
exec(compile(task["solution_code"] + "\\n\\n" + task["test"], "task.py", "exec"), namespace)
suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(namespace[name])
                           for name in task["test_classes"])
result = unittest.TextTestRunner(verbosity=0).run(suite)
print(task["task_id"], "pass" if result.wasSuccessful() and result.testsRun else "fail")
```"""


def _who_wrote_it(config: dict[str, Any]) -> str:
    if _real_source(config):
        return (
            "- Each task is a harvested class as its authors wrote it, bugs included. Its tests are generated by "
            "search and assert what the class was observed to do, so a test can hold a model to a detail the "
            "docstrings do not state. The sandbox gate (every test passes, line coverage) and the mutation score "
            "filter them, but do not prove that the tests capture every behaviour the docstrings promise."
        )
    return (
        "- Tasks, tests and solutions are written by LLMs from harvested code. The judges' vote and the sandbox "
        "gate (every test passes, line coverage) filter them, but do not prove that the tests capture every "
        "behaviour the skeleton's docstrings promise."
    )


def _limitations_section(config: dict[str, Any], n_tasks: int) -> str:
    lines = [
        "## Limitations",
        "",
        f"- {n_tasks} tasks: pass@k differences of a few points between models are within noise at this size; "
        "report confidence intervals (classforge evaluate prints them).",
        _who_wrote_it(config),
        '- Classes use the standard library only, and "post-cutoff" means first committed on or after the cutoff '
        "in the repository's history: code copied from older sources can still predate it. Deduplication against "
        "known corpora and earlier harvests reduces, but cannot exclude, such contamination.",
        "- Only Python, and only the domains the harvest's keyword matrix reaches; a domain label is a keyword "
        "match on the class's name, path and docstrings, not a reading of its code.",
    ]
    if _replayed_llm_answers(config):
        lines.append(
            "- This build's LLM answers were replayed from prepared files (see *How it was built*): "
            "it demonstrates the pipeline, it does not measure any model's ability to build tasks."
        )
    return "\n".join(lines)


def render_card_file(meta: dict[str, Any], body: str) -> str:
    return front_matter(meta) + body


def dataset_card(data: Any, body: str):
    """The whole card as the Hub's `DatasetCard`: its own YAML rendering of `data`, then the body."""
    from huggingface_hub import DatasetCard

    return DatasetCard(f"---\n{data.to_yaml()}\n---\n{body}")
