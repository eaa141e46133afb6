"""How a flow run ends when things go wrong: never `Completed` after an outage or with nothing to
release, one run per build folder, and parameters validated like the configuration file."""

from __future__ import annotations

import subprocess
import sys

import pytest
from flow_kit import live_config, live_real_source_config

from classforge_bench.pipeline.config import ConfigError
from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Text

HOLD_LOCK = """
import sys, time
from pathlib import Path
from classforge_bench.pipeline.core.folder_lock import FolderLock
FolderLock(Path(sys.argv[1]), "another build-benchmark run").acquire()
print("held", flush=True)
time.sleep(600)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("track", "first_model", "unfinished"),
    [("composition", "example-handwritten-composer", 3), ("real-source", "docs-writer", 1)],
)
def test_an_outage_ends_the_run_failed_after_retrying_each_candidate(
    prefect_harness, request, tmp_path, monkeypatch, track, first_model, unfinished
):
    from classforge_bench.flows.build_benchmark import build_benchmark

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(default=HTTPError(status=503)) as server:
        if track == "composition":
            config = live_config(request.getfixturevalue("example_config"), server.base_url, tmp_path)
        else:
            config = live_real_source_config(request.getfixturevalue("real_source_config"), server.base_url, tmp_path)
        state = build_benchmark(config_path=str(config), return_state=True)
        first_calls = [r for r in server.chat_requests if r.model == first_model]
    assert state.is_failed()
    assert (
        f"{unfinished} candidate(s) unfinished (infrastructure-fault)" in state.message
        and "run again to resume" in state.message
    ), state.message
    assert len(first_calls) == 2 * unfinished, "each unfinished candidate is tried twice (candidate_retries = 1)"
    summary = state.result(raise_on_failure=False)
    assert summary.incomplete == unfinished and summary.release is None
    snapshot = "example" if track == "composition" else "real-source"
    stored = list((tmp_path / "built" / snapshot / "candidates").glob("*.json"))
    # the unfinished are not stored as final; the real-source track's other 12 classes finished (dropped at `tests`)
    assert len(stored) == (12 if track == "real-source" else 0)


@pytest.mark.slow
def test_a_run_that_builds_nothing_ends_failed(prefect_harness, example_config, tmp_path, monkeypatch):
    from classforge_bench.flows.build_benchmark import build_benchmark

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(default=Text(text="I cannot help with that.")) as server:
        state = build_benchmark(
            config_path=str(live_config(example_config, server.base_url, tmp_path)), return_state=True
        )
    assert state.is_failed() and state.message.startswith(
        "released nothing: nothing to release: the build produced no tasks"
    )
    summary = state.result(raise_on_failure=False)
    assert summary.tasks == 0 and summary.incomplete == 0
    assert summary.funnel.stages["compose"].kept == 0


@pytest.mark.slow
def test_a_second_run_on_a_busy_build_folder_fails_naming_the_holder(prefect_harness, example_config, tmp_path):
    from classforge_bench.flows.build_benchmark import build_benchmark

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "built" / "example")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        state = build_benchmark(config_path=str(example_config), return_state=True)
    finally:
        holder.kill()
        holder.wait()
    assert state.is_failed()
    error = state.result(raise_on_failure=False)
    assert "another build-benchmark run" in str(error) and "is in use by" in str(error)
    assert not (tmp_path / "harvested" / "example" / "classes.jsonl").exists(), "it stopped before any work"


@pytest.mark.parametrize(
    "cutoff, snapshot, key",
    [
        (None, "../escape", "harvest.snapshot"),
        ("2999-01-01", None, "in the future"),
        ("2025-13-40", None, "harvest.cutoff"),
    ],
)
def test_parameters_are_validated_like_the_file(example_config, cutoff, snapshot, key):
    from classforge_bench.flows.build_benchmark import configure

    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        configure(str(example_config), cutoff, snapshot)


def test_a_missing_configuration_says_how_to_create_it(tmp_path):
    from classforge_bench.flows.build_benchmark import configure

    with pytest.raises(ConfigError, match="cp classforge.example.toml classforge.toml"):
        configure(str(tmp_path / "classforge.toml"), None, "auto")


@pytest.mark.slow
def test_a_cutoff_that_drops_a_pinned_class_fails_naming_it(prefect_harness, example_config):
    """`--param cutoff=...` on the example: the pinned pairs' classes may no longer be harvested."""
    from classforge_bench.flows.build_benchmark import build_benchmark

    state = build_benchmark(config_path=str(example_config), cutoff="2026-01-01", return_state=True)
    assert state.is_failed()
    error = str(state.result(raise_on_failure=False))
    assert "construction.pairing.pinned: no harvested class with id or name" in error
    assert "pin classes the harvest kept, or leave pinned empty" in error


@pytest.mark.slow
def test_github_without_a_token_fails_the_run_before_any_work(prefect_harness, example_config, monkeypatch):
    from classforge_bench.flows.build_benchmark import build_benchmark

    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    config = example_config.read_text().replace("[harvest.github]\nenabled = false", "[harvest.github]\nenabled = true")
    assert "enabled = true" in config
    example_config.write_text(config)
    state = build_benchmark(config_path=str(example_config), return_state=True)
    assert state.is_failed()
    assert not (example_config.parent / "harvested").exists()  # nothing harvested: it failed first
    assert "GITHUB_TOKEN is not set" in str(state.result(raise_on_failure=False))


@pytest.mark.slow
def test_an_unreachable_model_fails_a_deployment_run_before_any_work(
    prefect_harness, example_config, tmp_path, monkeypatch
):
    """A deployment run does not pass through the CLI's check: the flow checks the endpoints itself."""
    import socket

    from classforge_bench.flows.build_benchmark import build_benchmark

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # nothing listens once the socket closes
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    state = build_benchmark(
        config_path=str(live_config(example_config, dead, tmp_path, preflight=True)), return_state=True
    )
    assert state.is_failed()
    assert "endpoint check failed" in str(state.result(raise_on_failure=False))
    assert not (tmp_path / "harvested" / "example" / "classes.jsonl").exists(), "nothing was harvested"


@pytest.mark.slow
def test_reports_passed_by_the_cli_are_applied_without_probing_again(
    prefect_harness, example_config, tmp_path, monkeypatch
):
    """`classforge build` checks the endpoints before Prefect starts and hands the reports over."""
    import json

    from classforge_bench.flows.build_benchmark import build_benchmark

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(default=HTTPError(status=503)) as server:
        config = live_config(example_config, server.base_url, tmp_path, preflight=True)
        roles = ["composer", "test_writer", "judge-1", "judge-2", "judge-3", "solver"]
        reports = [
            {
                "roles": roles,
                "base_url": server.base_url,
                "model": "example-handwritten-composer",
                "reachable": True,
                "context_window": 4096,
                "context_window_source": "server",
                "response_format": "json_object",
            }
        ]
        state = build_benchmark(config_path=str(config), endpoint_reports=reports, return_state=True)
        probes = [
            r
            for r in server.requests
            if not r.path.endswith("/chat/completions")
            or (
                r.model == "example-handwritten-composer"
                and "max_tokens" in (r.body or {})
                and (r.body or {}).get("max_tokens", 0) < 64
            )
        ]
    assert state.is_failed() and "infrastructure-fault" in state.message  # the outage, not a check failure
    assert probes == [], [r.path for r in probes]
    recorded = json.loads((tmp_path / "built" / "example" / "endpoints.json").read_text())
    assert recorded[0]["context_window"] == 4096 and recorded[0]["response_format"] == "json_object"
