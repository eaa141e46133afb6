"""Build configurations pointed at a live loopback endpoint (either track): shared by the flow fault and stop tests."""

from __future__ import annotations

from pathlib import Path

ROLES = ("[llm.composer]", "[llm.test_writer]", "[[llm.judges]]", "[llm.solver]")


def live_config(example_config: Path, base_url: str, tmp_path: Path, *, preflight: bool = False) -> Path:
    """The example, but live against `base_url` with a fresh cache: nothing can be replayed.
    Without `preflight` the endpoint check is off: an outage that starts after it."""
    text = example_config.read_text().replace('mode = "replay"', f'mode = "live"\npreflight = {str(preflight).lower()}')
    text = "\n".join(line for line in text.splitlines() if not line.startswith("cache_imports"))
    for role in ROLES:
        text = text.replace(role, f'{role}\nbase_url = "{base_url}"\nmax_retries = 0\nbackoff_base_s = 0')
    assert text.count("[construction]") == 1
    text = text.replace("[construction]\n", "[construction]\ncandidate_retries = 1\ncandidate_retry_delay_s = 0\n")
    path = tmp_path / "live.toml"
    path.write_text(text)
    return path


def live_real_source_config(real_source_config: Path, base_url: str, tmp_path: Path) -> Path:
    """The real-source example, live against `base_url`, with the composer writing the docstrings
    too thin to ship (TextStatistics' ten properties: the one class of the 13 that needs an LLM)."""
    text = real_source_config.read_text().replace('mode = "replay"', 'mode = "live"\npreflight = false')
    text = text.replace('docstring_role = "none"', 'docstring_role = "composer"')
    text = text.replace("[construction]\n", "[construction]\ncandidate_retries = 1\ncandidate_retry_delay_s = 0\n")
    for role, model in (("[llm.composer]", "docs-writer"), ("[[llm.judges]]", "docs-judge")):
        text += f'\n{role}\nmodel = "{model}"\nbase_url = "{base_url}"\nmax_retries = 0\nbackoff_base_s = 0\n'
    path = tmp_path / "live-real-source.toml"
    path.write_text(text)
    return path
