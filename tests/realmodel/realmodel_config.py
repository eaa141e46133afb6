"""The configuration of a build and an evaluation whose every role is the real local model.

Shared by the end-to-end test and `benchmarks/realmodel_yield.py`. Budgets are sized for a small
model on one shared core (5-12 generated tokens/s, 20-70 prompt tokens/s measured): long timeouts,
one request at a time, answers capped well inside the 8,192-token window and short enough that a
model rambling to the cap costs minutes, not an hour.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CORPUS = REPO / "examples" / "corpus"
# The example corpus's composable pairs (those of examples/classforge.toml) and their kind; the
# targets must equal the pinned counts, or the pairing draws more pairs than asked for.
EXAMPLE_PAIRS = [
    ("ShoppingCart", "InvoiceCalculator", "intra"),
    ("CsvLogRotator", "LibraryInventory", "cross"),
    ("UrlRouter", "ResponseCache", "cross"),
]


def _role(table: str, base_url: str, model: str, max_tokens: int) -> str:
    return (
        f'{table}\nbase_url = "{base_url}"\nmodel = "{model}"\nmax_tokens = {max_tokens}\n'
        "timeout_s = 1800\nmax_retries = 1\nbackoff_base_s = 1\n"
    )


# The example's answers, written by hand (examples/llm_responses), as recorded in its cache, by role:
# served from there in live mode (the key holds role, model, messages, temperature and max_tokens,
# so such a role keeps the example's model name and default max_tokens), and sent to the local
# model only if they were not.
EXAMPLE_MODELS = {"composer": "example-handwritten-composer", "test_writer": "example-handwritten-test-writer"}


def _example_role(role: str, base_url: str) -> str:
    return (
        f'[llm.{role}]\nbase_url = "{base_url}"\nmodel = "{EXAMPLE_MODELS[role]}"\n'
        "timeout_s = 1800\nmax_retries = 1\nbackoff_base_s = 1\n"
    )


def build_config(
    base_url: str, model: str, pairs: list[tuple[str, str, str]], handwritten: frozenset[str] = frozenset()
) -> str:
    """TOML for `classforge build` over the bundled example corpus with exactly `pairs` built;
    the roles in `handwritten` (composer, test_writer) answer with the example's handwritten
    answers, every other role is the local model."""
    unknown = set(handwritten) - set(EXAMPLE_MODELS)
    if unknown:
        raise ValueError(f"no handwritten answers for {sorted(unknown)}; there are for {sorted(EXAMPLE_MODELS)}")
    pinned = ", ".join(f'["{a}", "{b}"]' for a, b, _ in pairs)
    intra = sum(kind == "intra" for *_, kind in pairs)
    imports = f'cache_imports = ["{REPO / "examples" / "llm_cache.jsonl"}"]\n' if handwritten else ""
    roles = "\n".join(
        [
            _example_role("composer", base_url)
            if "composer" in handwritten
            else _role("[llm.composer]", base_url, model, 1536),
            _example_role("test_writer", base_url)
            if "test_writer" in handwritten
            else _role("[llm.test_writer]", base_url, model, 1536),
            *(_role("[[llm.judges]]", base_url, model, 384) for _ in range(3)),
            _role("[llm.solver]", base_url, model, 1536),
        ]
    )
    return f"""\
[harvest]
cutoff = "2025-01-01"
snapshot = "realmodel"
output_root = "harvested"
spec_corpora = ["{EXAMPLE_CORPUS}"]

[harvest.github]
enabled = false

[harvest.clone]
workdir = ".cache/clones"

[llm]
mode = "live"
cache_path = ".cache/llm.sqlite"
concurrency = 1
# A one-slot server answers a probe only after the request it is computing (minutes, when another
# client shares it): the default 60 s would refuse to start.
preflight_timeout_s = 1800
{imports}
{roles}
[construction]
output_root = "built"

[construction.pairing]
intra_target = {intra}
cross_target = {len(pairs) - intra}
max_reuse = 1
pinned = [{pinned}]

[evaluate]
output_root = "results"
n_samples = 1
ks = [1]
bootstrap_resamples = 100

[evaluate.endpoint]
base_url = "{base_url}"
model = "{model}"
max_tokens = 512
timeout_s = 1800
max_retries = 1

[release]
output_root = "releases"
"""
