"""One typed configuration, read at the edge: a TOML file plus environment variables for secrets.

Nothing below the CLI and the flows reads the environment; they pass a `Config` (or a section of
it) down. Unknown keys are errors, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.strategy_names import EvalStrategy
from classforge_bench.pipeline.core.tracks import Track

DOMAINS: tuple[str, ...] = (
    "Finance & E-commerce",
    "File Handling",
    "Management Systems",
    "Network & Web",
    "Database Operations",
    "Security & Crypto",
    "Natural Language Processing",
    "Game Development",
    "Mathematical Operations",
    "Utils",
    "Data Formatting",
)
# The label of a class no keyword places (ClassEval-Pro's catch-all).
FALLBACK_DOMAIN = "Utils"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GitHubConfig(Section):
    enabled: bool = Field(False, description="search GitHub (needs GITHUB_TOKEN and network)")
    base_url: str = Field("https://api.github.com", description="the REST API root (GitHub Enterprise: its /api/v3)")
    star_tiers: list[str] = Field(
        default_factory=lambda: ["100..500", "500..1000", ">1000"],
        description="stars: ranges searched one by one (ClassEval-Pro's three tiers)",
    )
    max_results_per_query: int = Field(1000, ge=1, description="the Search API's cap; queries at it are split by date")
    max_rate_limit_wait_s: float = Field(120.0, ge=0, description="longest single wait for a rate-limit reset")
    per_page: int = Field(100, ge=1, le=100, description="results per Search API page")
    max_repos: int | None = Field(None, ge=1, description="stop after this many unique repositories")
    max_retries: int = Field(
        5, ge=0, description="retries of one result page after a rate limit, server or network error"
    )
    secondary_rate_wait_s: float = Field(
        60.0, ge=0, description="wait after a secondary rate limit that names no Retry-After"
    )
    timeout_s: int = Field(30, ge=1, description="socket timeout of one API request (PyGithub takes whole seconds)")
    token: SecretStr | None = Field(None, description="from GITHUB_TOKEN, never from the file")


class CloneConfig(Section):
    workdir: Path = Field(Path(".cache/clones"), description="where repositories are cloned")
    timeout_s: float = Field(300.0, gt=0, description="a clone that takes longer is dropped as clone-timeout")
    max_size_mb: float = Field(500.0, gt=0, description="a checkout larger than this is dropped as too-large")
    keep: bool = Field(True, description="keep clones for provenance lookups and re-runs")


class FilterConfig(Section):
    min_methods: int = Field(5, ge=0, description="methods a class needs (def statements in its body)")
    min_lines: int = Field(40, ge=1, description="physical lines a class needs, decorators to last line")
    max_lines: int = Field(800, ge=1, description="longer classes are dropped as too-long")
    max_file_bytes: int = Field(1_000_000, ge=1, description="larger files are dropped as file-too-large")
    max_nesting_depth: int = Field(100, ge=1, description="deeper syntax trees are dropped as too-deeply-nested")


class DedupConfig(Section):
    near_threshold: float = Field(
        0.85, gt=0, le=1, description="MinHash Jaccard (containment for releases) at or above which a class is a copy"
    )
    num_perm: int = Field(128, ge=16, description="MinHash permutations")
    shingle_size: int = Field(5, ge=1, description="tokens per shingle (identifiers replaced by one placeholder)")
    reference_corpora: list[Path] = Field(default_factory=list, description="ClassEval-format JSON files")
    reference_datasets: list[str] = Field(
        default_factory=list,
        description="datasets by name (classeval, hf:ORG/NAME[@REV]), checked when in the local Hugging Face cache; "
        "a build never downloads them",
    )
    earlier_harvests: list[Path] = Field(default_factory=list, description="classes.jsonl of earlier snapshots")


class HarvestConfig(Section):
    cutoff: date = Field(
        date(2025, 1, 1), description="knowledge cutoff: classes first committed on or after it are kept"
    )
    snapshot: str = Field("default", description="folder name under output_root (a plain name)")
    output_root: Path = Field(Path("harvested"), description="where snapshots are written")
    local_sources: list[str] = Field(
        default_factory=list, description="directories of git repos, repo paths or file:// URLs"
    )
    spec_corpora: list[Path] = Field(
        default_factory=list,
        description="folders of declarative repo specs (the offline example), built into git repos first",
    )
    bundle_sources: list[Path] = Field(
        default_factory=list,
        description="git bundles (files or folders of *.bundle) of real repositories, unpacked first",
    )
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    clone: CloneConfig = Field(default_factory=CloneConfig)
    filters: FilterConfig = Field(default_factory=FilterConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    workers: int | None = Field(
        None, ge=1, description="repositories analysed in parallel (processes); default: the machine's cores"
    )

    @property
    def names_a_source(self) -> bool:
        """Whether anything is configured to harvest from: a folder, a corpus, a bundle or GitHub."""
        return bool(self.local_sources or self.spec_corpora or self.bundle_sources or self.github.enabled)

    @field_validator("snapshot")
    @classmethod
    def _safe_snapshot(cls, v: str) -> str:
        if not v or "/" in v or "\\" in v or v.startswith("."):
            raise ValueError(f"snapshot must be a plain folder name, got {v!r}")
        return v

    @field_validator("cutoff", mode="before")
    @classmethod
    def _cutoff_is_a_date(cls, v: object) -> object:
        # `cutoff = 2025` is a TOML integer, which pydantic reads as seconds since 1970 and then
        # refuses with a message about datetimes; say what is wanted instead.
        if isinstance(v, (int, float)) or (isinstance(v, str) and not _is_iso_date(v)):
            raise ValueError(f"cutoff must be a date like 2025-01-01, got {v!r}")
        return v

    @field_validator("cutoff")
    @classmethod
    def _cutoff_not_in_future(cls, v: date) -> date:
        # Nothing can have been written after a cutoff that has not happened yet: a typo, not a plan.
        if v > date.today():
            raise ValueError(f"cutoff {v} is in the future (today is {date.today()})")
        return v


def _is_iso_date(text: str) -> bool:
    try:
        date.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


def sources_replacing_the_files(sources: list[str]) -> dict[str, list[str]]:
    """The harvest keys a command line's `--source` sets: those folders replace every source the file
    names (local sources, spec corpora and bundles alike), so nothing else is harvested."""
    return {"local_sources": list(sources), "spec_corpora": [], "bundle_sources": []}


def harvest_overrides(harvest: HarvestConfig, *, sources: list[str] | None = None, **changes: object) -> HarvestConfig:
    """The harvest section with command-line values applied (None keeps the file's value), validated
    exactly like the file. `sources` replaces every local source of the file (spec corpora too);
    `github` switches the GitHub search on or off."""
    data = harvest.model_dump()
    if sources is not None:
        data.update(sources_replacing_the_files(sources))
    github = changes.pop("github", None)
    if github is not None:
        data["github"]["enabled"] = github
    data.update({k: v for k, v in changes.items() if v is not None})
    try:
        return HarvestConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors("the command line", exc).replace("\n  ", "\n  harvest.")) from exc


class SandboxConfig(Section):
    backend: Literal["local", "docker"] = Field(
        "local",
        description="local (bubblewrap, else unshare, else a "
        "plain subprocess) or docker (the Dockerfile's sandbox image)",
    )
    workers: int | None = Field(None, ge=1, description="parallel sandbox runs; default: the machine's cores")
    wall_limit_s: float = Field(60.0, gt=0, description="the verification gate's time limit for a task's tests")
    # Evaluation limits are CPU time (docs/evaluate.md, "Time limits"): no headroom for load is needed.
    # ClassEval's references: median 0.025 s of CPU, 95th percentile 0.1 s, slowest 6.3 s (task 35);
    # its published answers that pass use at most 1.6x their reference's CPU.
    scale_floor_s: float = Field(
        2.0, gt=0, description="evaluation limit (CPU s): factor x reference CPU time, at least the floor"
    )
    scale_factor: float = Field(5.0, gt=0, description="evaluation limit: this many times the reference's CPU time")
    scale_cap_s: float = Field(
        15.0, gt=0, description="evaluation limit (CPU s): at most this, however slow the reference ran"
    )
    wall_ceiling_factor: float = Field(
        5.0,
        gt=1,
        description="evaluation: a sample's limit is CPU time; the wall-clock safety net above it is this many "
        "times the limit (on the time the runner did not wait for a CPU), a stop there reported as such",
    )
    memory_mb: int = Field(2048, ge=64, description="address-space limit of a run")
    max_processes: int = Field(64, ge=1, description="process limit of a run")
    max_file_mb: int = Field(64, ge=1, description="largest file a run may write")
    output_cap_bytes: int = Field(65536, ge=1024, description="stdout and stderr kept per run")
    docker_image: str = Field(
        "classforge-sandbox:latest", description="docker backend: the image (Dockerfile target sandbox)"
    )
    min_line_coverage: float = Field(90.0, ge=0, le=100, description="the gate: line coverage of the solution, percent")
    isolation: Literal["auto", "bwrap", "unshare", "none"] = Field(
        "auto", description="local backend: strongest that works, or exactly this one"
    )
    python: str | None = Field(None, description="interpreter used inside the local sandbox; default: the running one")
    work_root: Path | None = Field(
        None, description="host directory for per-run work dirs; default: the system temp dir"
    )
    hide_paths: list[str] = Field(
        default_factory=lambda: ["/root", "/home"], description="bwrap: host directories replaced by empty ones"
    )
    tmp_size_mb: int = Field(256, ge=1, description="bwrap: size of the private /tmp")
    grace_s: float = Field(2.0, ge=0, description="host-side kill this long after the harness's own deadline")
    env: dict[str, str] = Field(default_factory=dict, description="extra variables set inside the sandbox")
    uid_base: int = Field(1_500_000_000, ge=65536, description="as root: each run gets its own uid from this range")
    uid_span: int = Field(100_000_000, ge=1, description="size of that uid range")
    traceback_cap_chars: int = Field(4000, ge=200, description="a failing test's traceback is kept up to this length")
    hash_seed: int = Field(
        0, ge=0, le=4294967295, description="PYTHONHASHSEED of a run; the gate's second run uses the next one"
    )
    docker_user: str = Field("10001:10001", description="non-root uid:gid inside the container")
    docker_base_url: str | None = Field(None, description="Docker API URL; default: the SDK's own discovery")
    environment_checks: EnvironmentChecksConfig = Field(default_factory=lambda: EnvironmentChecksConfig())  # noqa: PLW0108 - defined below


PerturbationName = Literal["hash-seed", "cwd", "timezone", "clock", "host-user", "network"]
ALL_PERTURBATIONS: tuple[PerturbationName, ...] = ("hash-seed", "cwd", "timezone", "clock", "host-user", "network")


class EnvironmentChecksConfig(Section):
    """Re-run a task's reference and tests under perturbed environments; a changed verdict drops it."""

    enabled: bool = Field(True, description="run the checks on every task that passes the gate")
    perturbations: list[PerturbationName] = Field(
        default_factory=lambda: list(ALL_PERTURBATIONS), description="which perturbations to apply"
    )
    hash_seed: int = Field(1_234_567, ge=0, le=4294967295, description="the other PYTHONHASHSEED (and random seed)")
    cwd: str = Field("cf-env/another dir", description="work-dir sub-folder the perturbed run starts in")
    # POSIX rules, not zone names: they need no tzdata, so the shift is never silently ignored.
    # +14 and -12 together put the local date off UTC's at every hour of the day.
    timezones: list[str] = Field(
        default_factory=lambda: ["<+14>-14", "<-12>12"], description="TZ values (POSIX rules) to run under"
    )
    # Both ways: a test written now can expect a date to be upcoming (+) or already past (-).
    clock_shifts_days: list[int] = Field(
        default_factory=lambda: [365, -365], description="libfaketime offsets from now, days"
    )
    faketime_library: str | None = Field(
        None, description="path of libfaketime.so.1; default: the usual library folders"
    )
    hostname: str = Field("cf-other-host", min_length=1, max_length=64, description="host name of the perturbed run")
    user: str = Field("root", min_length=1, description="USER/LOGNAME of the perturbed run")
    uid: int = Field(0, ge=0, description="uid inside a user namespace (0: root there, as in a CI container)")

    @field_validator("perturbations")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"perturbations listed twice: {v}")
        return v

    @field_validator("cwd")
    @classmethod
    def _relative(cls, v: str) -> str:
        parts = v.split("/")
        if not v or v.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"cwd must be a plain relative path: {v!r}")
        return v


class EndpointConfig(Section):
    """An OpenAI-compatible endpoint and the model used through it for one role."""

    base_url: str = Field("http://127.0.0.1:8000/v1", description="the endpoint's OpenAI-compatible /v1 URL")
    model: str = Field("gpt-4o-mini", description="the model name sent with every request")
    api_key_env: str = Field("OPENAI_API_KEY", description="name of the environment variable holding the key")
    temperature: float = Field(0.2, ge=0, le=2, description="sampling temperature")
    max_tokens: int = Field(4096, ge=1, description="output budget of one answer")
    context_window: int | None = Field(
        None,
        ge=1,
        description="tokens the model can hold (prompt + answer); default: what the server reports, else unchecked",
    )
    timeout_s: float = Field(
        600.0,
        gt=0,
        description="seconds one request may take (streamed: longest silence between chunks); "
        "sized for local models at 10-20 tokens/s with a long first-token delay",
    )
    stream: bool | Literal["auto"] = Field(
        "auto",
        description="stream answers, so timeout_s is the longest silence between tokens, not the whole "
        "answer's time; auto: stream, and fall back to whole answers where the server refuses or ignores streaming "
        "(then the limit grows with max_tokens at the measured tokens/s)",
    )
    response_format: Literal["auto", "json_schema", "json_object", "none"] = Field(
        "auto",
        description="how JSON answers are requested: OpenAI json_schema, json_object with the schema "
        "(llama.cpp), none (schema in the prompt only), or auto (json_schema, falling back on refusal)",
    )
    length_retry_factor: float = Field(
        2.0, ge=1, description="an answer cut at max_tokens is asked once more with this many times the room"
    )
    max_retries: int = Field(
        4,
        ge=0,
        description="retries of a request that failed for a reason worth retrying (rate limit, timeout, server error)",
    )
    backoff_base_s: float = Field(
        1.0, ge=0, description="first retry waits about this long, doubling each time (with jitter)"
    )
    backoff_max_s: float = Field(60.0, ge=0, description="cap on one backoff wait")
    retry_after_max_s: float = Field(300.0, ge=0, description="cap on honouring a server's Retry-After")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="request field carrying max_tokens; newer OpenAI models want max_completion_tokens"
    )


class CostConfig(Section):
    prompt_per_mtok: float = Field(0.0, ge=0, description="US$ per million prompt tokens")
    completion_per_mtok: float = Field(0.0, ge=0, description="US$ per million completion tokens")


class LLMConfig(Section):
    mode: Literal["live", "replay"] = Field(
        "live",
        description="live: call the endpoints; replay: answer from "
        "the cache only (a miss is an error naming the role and task)",
    )
    cache_path: Path = Field(Path(".cache/llm.sqlite"), description="the content-addressed response cache")
    concurrency: int = Field(4, ge=1, description="requests at a time (1 for a one-slot local server)")
    budget_usd: float | None = Field(None, ge=0, description="stop cleanly at this spend (priced with llm.costs)")
    composer: EndpointConfig = Field(default_factory=EndpointConfig)
    test_writer: EndpointConfig = Field(default_factory=EndpointConfig)
    judges: list[EndpointConfig] = Field(
        default_factory=lambda: [EndpointConfig(), EndpointConfig(), EndpointConfig()],
        description="the judges, meant to be different models",
    )
    solver: EndpointConfig = Field(default_factory=EndpointConfig)
    costs: dict[str, CostConfig] = Field(default_factory=dict, description="per model name")
    preflight: bool = Field(True, description="live mode: check every endpoint before the first paid call")
    preflight_timeout_s: float = Field(60.0, gt=0, description="timeout of each pre-flight probe request")
    cache_imports: list[Path] = Field(
        default_factory=list,
        description="JSONL cache exports loaded into the cache before a build (the offline example ships one)",
    )


class PairingConfig(Section):
    """How harvested classes are paired for composition (after ClassEval-Pro: 67 intra, 233 cross)."""

    seed: int = Field(20250101, description="seed of the pairing (the same seed gives the same pairs)")
    intra_target: int = Field(67, ge=0, description="same-domain pairs to build")
    cross_target: int = Field(233, ge=0, description="cross-domain pairs to build")
    max_reuse: int = Field(3, ge=1, description="most pairs one harvested class may appear in")
    pinned: list[tuple[str, str]] = Field(
        default_factory=list,
        description="pairs always built first (each class by id or by a class name unique in the snapshot); "
        "they count against the targets",
    )


class MutationConfig(Section):
    """Mutation testing of a task's reference solution: how strong its tests are (the score is
    killed / (mutants - equivalent)), the gate on it and one round of test strengthening."""

    enabled: bool = Field(True, description="compute each task's mutation report and gate on it")
    max_mutants_per_method: int = Field(10, ge=1, description="a method with more sites gets a seeded sample of them")
    seed: int = Field(0, description="seed of that sample")
    # ClassEval's own hand-written suites: lower quartile 86.1% (README, benchmarks/classeval_mutation.py).
    min_score: float = Field(
        0.86, ge=0, le=1, description="gate: tasks whose tests kill fewer mutants are strengthened, then dropped"
    )
    strengthen: bool = Field(True, description="give the test writer the surviving mutants once before dropping a task")
    max_surviving_in_prompt: int = Field(20, ge=1, description="surviving mutants shown to the test writer")
    timeout_factor: float = Field(
        10.0, gt=0, description="a mutant's wall limit: factor x the reference run, at least the floor"
    )
    timeout_floor_s: float = Field(5.0, gt=0, description="a mutant's wall limit is at least this")
    timeouts_count_as: Literal["killed", "survived", "excluded"] = Field(
        "killed", description="a mutant that runs past its limit: the tests noticed something (the usual convention)"
    )
    workers: int | None = Field(
        None, ge=1, description="mutants run in parallel; default: sandbox.workers, else the cores"
    )
    batch_size: int = Field(
        32, ge=0, description="mutants per sandbox run (one runner forked per mutant); 0: one sandbox run per mutant"
    )


# Licences that allow redistribution with attribution only (SPDX ids): the real-source default.
PERMISSIVE_LICENSES = (
    "MIT",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "0BSD",
    "Unlicense",
    "Zlib",
    "PSF-2.0",
)
DocstringRole = Literal["none", "composer", "test_writer", "solver", "judge"]


class RealSourceConfig(Section):
    """The real-source track: the harvested class itself is the reference solution."""

    license_allow: list[str] = Field(
        default_factory=lambda: list(PERMISSIVE_LICENSES),
        description="SPDX ids whose code may be redistributed in a release",
    )
    admit_unlicensed: bool = Field(
        False,
        description="also admit classes whose repository declares no licence (or NOASSERTION): for a private "
        "benchmark only; its release is marked private on the card and `classforge export` refuses it",
    )
    docstring_role: DocstringRole = Field(
        "none",
        description="LLM role that writes docstrings too thin to ship (the first judge checks them); none: drop such classes",
    )
    max_examples_per_method: int = Field(
        1, ge=1, le=5, description="observed `>>>` examples written into each docstring"
    )


class ConstructConfig(Section):
    """The LLM construction stages: pairing, composition, tests, judges, solution."""

    track: Track = Field(
        Track.COMPOSITION, description="composition: fuse pairs with LLMs; real-source: each harvested class is a task"
    )
    real_source: RealSourceConfig = Field(default_factory=RealSourceConfig)
    pairing: PairingConfig = Field(default_factory=PairingConfig)
    mutation: MutationConfig = Field(default_factory=MutationConfig)
    output_root: Path = Field(Path("built"), description="a build of snapshot S is written to <output_root>/S")
    min_methods: int = Field(5, ge=1, description="methods a fused skeleton needs, the constructor not counted")
    compose_repairs: int = Field(1, ge=0, le=3, description="repair requests for a skeleton that fails its checks")
    judge_full_mark: int = Field(10, ge=1, le=10, description="the score that counts as full marks")
    judge_min_full_marks: int = Field(2, ge=1, description="judges that must give full marks for a pair to advance")
    judge_retries: int = Field(1, ge=0, le=3, description="re-asks of a judge whose answer is not valid JSON")
    solver_repair: bool = Field(
        False, description="feed a failing solution's gate report back once (off, as in the paper)"
    )
    prompt_versions: dict[str, int] = Field(
        default_factory=dict, description="pin a prompt template version by name (default: the highest)"
    )
    candidate_retries: int = Field(
        2, ge=0, le=10, description="flow: re-runs of a candidate whose model calls or sandbox failed (an outage)"
    )
    candidate_retry_delay_s: float = Field(60.0, ge=0, description="flow: wait before such a re-run")


def _every_strategy() -> list[EvalStrategy]:
    return ["holistic", "incremental", "compositional", "bottom_up", "top_down"]


class EvaluateConfig(Section):
    """`classforge evaluate`: the model under test, how many samples, which strategies, how scores are made."""

    endpoint: EndpointConfig = Field(
        default_factory=lambda: EndpointConfig(temperature=0.2),
        description="the model under test; --model and --base-url override model and base_url",
    )
    n_samples: int = Field(5, ge=1, description="samples per task, strategy and model (ClassEval: 5)")
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5], description="pass@k reported for every k <= n")
    strategies: list[EvalStrategy] = Field(
        default_factory=_every_strategy, min_length=1, description="generation strategies to run (--strategy overrides)"
    )
    levels_source: Literal["labels", "model"] = Field(
        "labels", description="bottom_up/top_down levels: the dataset's dependency labels, or asked of the model"
    )
    bootstrap_resamples: int = Field(10_000, ge=1)
    bootstrap_seed: int = 0
    output_root: Path = Path("results")
    plots: bool = Field(
        False, description="draw passk.png and taxonomy.png into the run folder (matplotlib is loaded only then)"
    )
    shipped_references: bool = Field(
        True,
        description="use a release's shipped reference results (references.json) where its environment "
        "fingerprint matches this one's, instead of running those references (docs/evaluate.md)",
    )
    reference_cache: Path | None = Field(
        None,
        description="reference pre-runs kept by content (task, environment, limits) and shared by every "
        "results folder; default: the user's cache, $XDG_CACHE_HOME/classforge/references (~/.cache/...)",
    )
    workers: int | None = Field(
        None, ge=1, description="parallel sandbox runs; default: sandbox.workers, else the cores"
    )
    dask: str | None = Field(
        None,
        description="run the sandbox executions on a Dask cluster: tcp://HOST:PORT of its "
        "scheduler, or 'local' for worker processes on this machine",
    )
    sandbox_retries: int = Field(2, ge=0, description="re-runs of a run the sandbox itself failed; then it is reported")
    batch_size: int = Field(
        16,
        ge=0,
        description="samples per sandbox start (one isolated runner forked per sample, "
        "each with its own limits, folder and signed report); 0: one start each",
    )
    rerun_classes: bool = Field(
        True,
        description="after a timeout, crash or resource limit, run the test classes the sample did not reach "
        "in a fresh run with what is left of its limit, so one class cannot mask another",
    )
    environment: Literal["host", "dataset"] = Field(
        "host",
        description="code under test runs with classforge's interpreter (host) or in a virtual environment "
        "built once from the dataset's requirements (dataset)",
    )
    environment_root: Path = Field(
        Path(".cache/eval-envs"), description="where dataset environments are built and reused"
    )
    environment_extra: list[str] = Field(
        default_factory=list,
        description="requirements the dataset declares beyond the imports of its tasks (pip syntax)",
    )
    hash_seeds: int = Field(
        0,
        ge=0,
        le=50,
        description="run every sample that passes at class level again under this many other PYTHONHASHSEED "
        "values (1, 2, ...; the run's own skipped) and report those whose verdict moves (--hash-seeds)",
    )

    @field_validator("ks")
    @classmethod
    def _positive_ks(cls, v: list[int]) -> list[int]:
        if not v or any(k < 1 for k in v):
            raise ValueError(f"ks must be a non-empty list of positive integers, got {v}")
        return sorted(set(v))

    @field_validator("strategies")
    @classmethod
    def _unique_strategies(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))

    @field_validator("dask")
    @classmethod
    def _dask_address(cls, v: str | None) -> str | None:
        return None if v is None else dask_address(v)


def dask_address(v: str) -> str:
    """'local' or a scheduler address; checked before any work, since Dask's own parse of a bad
    port is a traceback."""
    if v == "local":
        return v
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(v if "://" in v else f"tcp://{v}")
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number or out of range, a broken [IPv6] host
        host, port = None, None
    if not host or port is None:
        raise ValueError(f"dask must be 'local' or a scheduler address like tcp://HOST:PORT, got {v!r}")
    return v


class ReleaseConfig(Section):
    """Where versioned releases are written and how new versions are named."""

    output_root: Path = Field(Path("benchmark/releases"), description="where release folders are written")
    version_scheme: Literal["date", "patch", "minor", "major"] = Field(
        "date",
        description="the next version: today's YYYY.MM.DD (-2, -3... when it exists), or the highest "
        "semver release bumped by patch, minor or major (first 0.1.0)",
    )
    license: str | None = Field(None, description="dataset licence on the card; default: per source repository")
    hub_repo_id: str | None = Field(None, description="ORG/NAME, shown in the card's loading example")
    ship_references: bool = Field(
        True,
        description="run the released tasks' references as the evaluator does and ship the results "
        "(references.json), for evaluators in the same environment to trust instead of running them",
    )


class PlusConfig(Section):
    """The plus tier: unit tests generated by search (Pynguin) in the sandbox, no LLM involved."""

    enabled: bool = Field(False, description="build: give every released task a hidden plus suite")
    strengthen_first: bool = Field(
        True, description="mutation gate: add generated tests that kill surviving mutants before any LLM re-ask"
    )
    python: Path | None = Field(
        None,
        description="interpreter of the generator's own virtualenv; default: the checkout's .venv-plus "
        "(scripts/setup.sh makes it from classforge_bench/pipeline/quality/plus/requirements.txt)",
    )
    seed: int = Field(0, ge=0, description="Pynguin's seed; with hash_seed and the iteration cap it fixes the tests")
    hash_seed: int = Field(0, ge=0, le=4294967295, description="PYTHONHASHSEED of the generation run")
    max_iterations: int = Field(
        40, ge=1, description="search iterations: the stopping rule that does not move with load"
    )
    # A safety net, not a stopping rule: a search it stops would have found other tests at another load,
    # so such a class gets no suite (plus-generator-time-cap) rather than a load-dependent one.
    budget_s: int = Field(
        600, ge=1, description="search time cap per task: a run that reaches it fails (plus-generator-time-cap)"
    )
    wall_limit_s: float = Field(
        900.0, gt=0, description="sandbox kill: search, assertion generation and export together"
    )
    memory_mb: int = Field(4096, ge=256, description="address-space limit of the generator's processes")
    # SIMPLE asserts every primitive result the reference returned (a regression oracle, as EvalPlus
    # compares outputs); MUTATION_ANALYSIS keeps only assertions that kill a mutant, and on ClassEval
    # classes left most tests with none (docs/plus-tier.md).
    assertions: Literal["MUTATION_ANALYSIS", "SIMPLE"] = Field("SIMPLE", description="Pynguin's assertion generator")
    max_tests: int = Field(40, ge=1, description="generated tests kept per task at most (first ones by name)")
    validation_runs: int = Field(
        3, ge=1, description="runs on the reference a test must pass, each with another hash seed"
    )
    # Pynguin asserts returned primitives and public fields after the constructor; state a method
    # changes and a property reports went unchecked (docs/real-source.md: half the mutants survived).
    observe_state: bool = Field(
        False,
        description="assert the reference's public attributes and properties after each call of every test "
        "(recorded in the sandbox twice; only what both runs agree on)",
    )
    observe_walks: int = Field(
        0,
        ge=0,
        le=200,
        description="with observe_state: extra seeded call sequences from the tests' own constructors "
        "and arguments, asserted the same way",
    )
    # EvalPlus's seed-input mutation at class level (quality/plus/seeds.py). Off in the build, whose base
    # tests an LLM wrote; `classforge strengthen` turns it on for a dataset's own tests.
    seeds: bool = Field(
        False,
        description="also make plus tests from the task's own base tests: literals mutated within the contract, "
        "call sequences spliced on one object, observed on the reference",
    )
    seed_mutants: int = Field(8, ge=0, le=50, description="with seeds: literal mutants per base test at most")
    seed_splices: int = Field(6, ge=0, le=50, description="with seeds: spliced pairs of tests per test class at most")
    select_by_mutants: bool = Field(
        False,
        description="keep only the plus tests that kill a mutant of the reference the base tests and the plus tests "
        "kept before them leave alive (mutation-guided selection; default MutationConfig's mutants)",
    )
    cache_dir: Path | None = Field(
        Path(".cache/plus"), description="generated and validated suites by content; None keeps nothing"
    )


class Config(Section):
    harvest: HarvestConfig = Field(default_factory=HarvestConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    release: ReleaseConfig = Field(default_factory=ReleaseConfig)
    construction: ConstructConfig = Field(default_factory=ConstructConfig)
    evaluate: EvaluateConfig = Field(default_factory=EvaluateConfig)
    plus: PlusConfig = Field(default_factory=PlusConfig)


class ConfigError(InputError):
    """A configuration file or value is wrong; the message says where."""


def _format_errors(source: str, exc: ValidationError) -> str:
    lines = [f"invalid configuration in {source}:"]
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"  {where}: {err['msg']}")
    return "\n".join(lines)


MISSING_CONFIG_HINT = (
    "create it from the template at the project root (cp classforge.example.toml classforge.toml, "
    "then set sources, cutoff and endpoints) or pass another file with --config / the config_path "
    "parameter"
)


def load_config(
    path: Path | None = None, env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> Config:
    """Read the TOML file (if any), apply `overrides` ({"harvest.snapshot": "x", ...}, validated like
    the file), resolve relative paths against the file's folder, then take secrets from `env`
    (default: the process environment)."""
    env = os.environ if env is None else env
    data: dict = {}
    source = "defaults"
    if path is not None:
        path = Path(path)
        source = str(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"configuration file not found: {path}; {MISSING_CONFIG_HINT}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
        if "token" in data.get("harvest", {}).get("github", {}):
            raise ConfigError(f"{path}: harvest.github.token must not be written in a file; set GITHUB_TOKEN")
    applied = {k: v for k, v in (overrides or {}).items() if v is not None}
    for key, value in applied.items():
        _set_dotted(data, key, value)
    if applied:
        source += " with " + ", ".join(f"{k}={v!r}" for k, v in applied.items())
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(source, exc)) from exc
    if path is not None:
        base = path.parent.absolute()
        map_paths(
            config, lambda p: p if p.is_absolute() else Path(os.path.normpath(base / p.expanduser())), only_set=True
        )
    if env.get("GITHUB_TOKEN"):
        config.harvest.github.token = SecretStr(env["GITHUB_TOKEN"])
    return config


def _set_dotted(data: dict, key: str, value: Any) -> None:
    *parents, leaf = key.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {key}: {part} is not a table in the configuration")
    node[leaf] = value


def _is_url(text: str) -> bool:
    return "://" in text


def map_paths(model: BaseModel, fn: Callable[[Path], Path], *, only_set: bool = False) -> None:
    """Apply `fn` to every filesystem path of a configuration, in place: the `Path` fields, and
    `harvest.local_sources` entries that are not URLs. One walk for resolving and for publishing.
    `only_set` leaves defaults alone (they are relative to the working directory, not to a file)."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            map_paths(value, fn, only_set=only_set)
            continue
        if only_set and name not in model.model_fields_set:
            continue
        if isinstance(value, Path):
            object.__setattr__(model, name, fn(value))
        elif isinstance(value, list) and value:
            if all(isinstance(v, BaseModel) for v in value):
                for v in value:
                    map_paths(v, fn, only_set=only_set)
            elif all(isinstance(v, Path) for v in value):
                object.__setattr__(model, name, [fn(v) for v in value])
            elif isinstance(model, HarvestConfig) and name == "local_sources":
                object.__setattr__(model, name, [v if _is_url(v) else str(fn(Path(v))) for v in value])


def require_sources(harvest: HarvestConfig) -> None:
    """Every local source the configuration names exists: a missing folder would otherwise harvest
    nothing, silently, and the build would end "released nothing" long after. Checked before any work."""
    from urllib.parse import unquote, urlparse

    named = [
        ("local_sources", unquote(urlparse(s).path) if s.startswith("file://") else s)
        for s in harvest.local_sources
        if not _is_url(s) or s.startswith("file://")
    ]
    named += [("spec_corpora", str(p)) for p in harvest.spec_corpora]
    missing = [f"harvest.{key}: {path} does not exist" for key, path in named if not Path(path).exists()]
    if missing:
        raise ConfigError("; ".join(missing))


def build_outputs(cfg: Config) -> dict[str, Path]:
    """Every place a build writes, by the key that sets it."""
    return {
        "harvest.output_root": cfg.harvest.output_root,
        "harvest.clone.workdir": cfg.harvest.clone.workdir,
        "construction.output_root": cfg.construction.output_root,
        "release.output_root": cfg.release.output_root,
        "llm.cache_path": cfg.llm.cache_path.parent,
    }


def require_writable(cfg: Config) -> None:
    """Every output location of a build can be written; checked before the first paid call."""
    from classforge_bench.pipeline.core.store import unwritable

    problems = [f"{key}: {why}" for key, folder in build_outputs(cfg).items() if (why := unwritable(folder))]
    if problems:
        raise ConfigError("cannot write the build's outputs: " + "; ".join(problems))


class MissingAPIKey(ConfigError):
    """Live mode needs a key from an environment variable that is not set."""

    def __init__(self, variable: str, role: str = "") -> None:
        where = f" for role {role}" if role else ""
        super().__init__(
            f"environment variable {variable} is not set: it holds the API key{where}; export it, or set "
            f'api_key_env = "" for a local server that needs no key'
        )
        self.variable = variable


def resolve_api_key(endpoint: EndpointConfig, env: Mapping[str, str], role: str = "") -> str:
    """The key for an endpoint, from the environment variable it names.

    `api_key_env = ""` means the server takes no key (local llama.cpp, Ollama, vLLM without
    --api-key); the SDK still needs a string, so a placeholder is sent. A named variable that is
    unset is an error: sending a placeholder would earn a 401 on every call.
    """
    if not endpoint.api_key_env:
        return "no-key"
    key = env.get(endpoint.api_key_env, "")
    if not key:
        raise MissingAPIKey(endpoint.api_key_env, role)
    return key
