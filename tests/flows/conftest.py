"""Fixtures for the flow tests: Prefect's test harness and the example configuration in a tmp folder."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory):
    import os

    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    from prefect.testing.utilities import prefect_test_harness

    harness = prefect_test_harness(
        server_startup_timeout=int(os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"])
    )
    try:
        harness.__enter__()
    except RuntimeError as exc:
        _stop_stray_server()
        pytest.fail(f"Prefect's test server did not start: {str(exc)[:500]}", pytrace=False)
    try:
        yield
    finally:
        harness.__exit__(None, None, None)


def _stop_stray_server() -> None:
    """A harness that timed out leaves its server process running, and Prefect stops it only at
    interpreter exit, logging to a stream pytest has closed by then (an unrelated 'I/O operation on
    closed file' traceback). Stop it now, while logging still works."""
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer._instances.pop(None, None)
    if server is not None:
        server.stop()


@pytest.fixture
def example_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example configuration with outputs redirected into the test's folder.

    The Hugging Face cache is an empty tmp folder, so the example's `classeval` decontamination is
    "not checked" whatever this machine has cached (tests/release covers the cached case).
    """
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-hub"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-hub"))  # for task runners in other processes (Dask)
    text = (ROOT / "examples" / "classforge.toml").read_text()
    text = text.replace('output_root = "../harvested"', f'output_root = "{tmp_path / "harvested"}"')
    text = text.replace('workdir = "../.cache/clones"', f'workdir = "{tmp_path / "clones"}"')
    text = text.replace('spec_corpora = ["corpus"]', f'spec_corpora = ["{ROOT / "examples" / "corpus"}"]')
    text = text.replace(
        'cache_imports = ["llm_cache.jsonl"]', f'cache_imports = ["{ROOT / "examples" / "llm_cache.jsonl"}"]'
    )
    text = text.replace('cache_path = "../.cache/llm-example.sqlite"', f'cache_path = "{tmp_path / "llm.sqlite"}"')
    text = text.replace('output_root = "../built"', f'output_root = "{tmp_path / "built"}"')
    text += f'\n[release]\noutput_root = "{tmp_path / "releases"}"\n'
    # The flow tests check orchestration; a small mutant sample keeps the mutation gate in the path
    # at a fraction of its cost (tests/quality and tests/construct cover the engine and the stage).
    text += "\n[construction.mutation]\nmax_mutants_per_method = 2\n"
    # The plus tier (on in the example) is covered by tests/construct/test_example_plus.py and the
    # fresh-clone `make run`; here it would only add a search per task to every orchestration test.
    assert "\nenabled = true\n" in text, "the example's [plus] section changed"
    text = text.replace("\nenabled = true\n", "\nenabled = false\n")

    for kept in ('"../harvested"', '"../.cache/clones"', '"corpus"', '"llm_cache.jsonl"', '"../built"'):
        assert kept not in text, f"the example configuration changed: {kept} is no longer redirected"
    path = tmp_path / "classforge.toml"
    path.write_text(text)
    return path


@pytest.fixture
def real_source_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """examples/real-source.toml with outputs redirected into the test's folder and no test
    generator (`plus.python` names no interpreter): each of the 13 shipped classes runs its stages
    up to `tests` in seconds, where it is dropped with `no-test-generator` (tests/flows/
    test_real_source_build.py runs the generator). The flow tests check orchestration."""
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-hub"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-hub"))  # for task runners in other processes (Dask)
    text = (ROOT / "examples" / "real-source.toml").read_text()
    replaced = {
        'output_root = "../harvested/real-source-track"': f'output_root = "{tmp_path / "harvested"}"',
        'bundle_sources = ["real-repos"]': f'bundle_sources = ["{ROOT / "examples" / "real-repos"}"]',
        'workdir = "../.cache/clones"': f'workdir = "{tmp_path / "clones"}"',
        'cache_path = "../.cache/llm-real-source.sqlite"': f'cache_path = "{tmp_path / "llm.sqlite"}"',
        'output_root = "../benchmark/releases-real-source"': f'output_root = "{tmp_path / "releases"}"',
        'output_root = "../built"': f'output_root = "{tmp_path / "built"}"',
        'cache_dir = "../.cache/plus"': f'cache_dir = "{tmp_path / "plus"}"\npython = "{tmp_path / "no-plus" / "python"}"',
    }
    for old, new in replaced.items():
        assert old in text, f"the real-source example configuration changed: {old} is no longer redirected"
        text = text.replace(old, new)
    path = tmp_path / "real-source.toml"
    path.write_text(text)
    return path
