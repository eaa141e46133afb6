"""The endpoint pre-flight's probes are paid requests: they are in the usage ledger of the build and
of the evaluation, so the ledger equals what the server itself counted (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llmkit import API_KEY
from typer.testing import CliRunner

from classforge_bench.pipeline.config import EndpointConfig
from classforge_bench.pipeline.llm.ledger import UsageLedger
from classforge_bench.pipeline.llm.preflight import PROBE_ROLE, check_endpoints, probe_ledger_entries
from tests.fakes.openai_server import FakeOpenAIServer, ServerProfile

ROOT = Path(__file__).resolve().parents[2]
CLASSFORGE = Path(sys.executable).with_name("classforge")
DATASET = next(
    (
        p / "shared/data/classeval/ClassEval_data.json"
        for p in Path(__file__).resolve().parents
        if (p / "shared/data/classeval/ClassEval_data.json").is_file()
    ),
    Path("/nonexistent"),
)


def _endpoint(base_url: str, model: str = "model-a") -> EndpointConfig:
    return EndpointConfig(base_url=base_url, model=model, timeout_s=5)


def _ledger_total(entries) -> tuple[int, int, int]:
    ledger = UsageLedger()
    ledger.absorb(entries)
    total = ledger.summary().total
    return total.requests, total.prompt_tokens, total.completion_tokens


def test_probe_entries_equal_what_the_server_answered():
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a", "model-b"]) as srv:
        reports = check_endpoints(
            {"composer": _endpoint(srv.base_url), "solver": _endpoint(srv.base_url, "model-b")},
            {"OPENAI_API_KEY": API_KEY},
            timeout_s=5,
        )
        billed = srv.billed()
        probes = [r for r in srv.chat_requests if r.headers.get("x-classforge-purpose") == "preflight"]
    entries = probe_ledger_entries(reports)
    assert {e.model for e in entries} == {"model-a", "model-b"} and {e.role for e in entries} == {PROBE_ROLE}
    # first chat, json_schema, n=2, seed: four answered probes per endpoint, every one marked as a probe
    assert billed[0] == 8 and len(probes) == 8
    assert _ledger_total(entries) == billed
    assert sum(r.probe_tokens for r in reports) == billed[1] + billed[2]


def test_refused_probes_cost_nothing_and_missing_usage_is_estimated():
    """A llama.cpp-like server: n > 1 refused (HTTP 400), json_schema refused, no usage sent."""
    profile = ServerProfile(n=False, json_schema=False, usage=False)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', profile=profile) as srv:
        (report,) = check_endpoints({"judge-1": _endpoint(srv.base_url)}, {"OPENAI_API_KEY": API_KEY}, timeout_s=5)
        answered, _, _ = srv.billed()
        refused = [r for r in srv.chat_requests if r.reply == "HTTPError"]
    assert len(refused) == 2, [r.reply for r in srv.chat_requests]  # json_schema and n=2
    (entry,) = probe_ledger_entries([report])
    # Answered: the first chat, json_object and seed; the refusals are not failed calls.
    assert entry.counts["requests"] == answered == 3 and "failed_requests" not in entry.counts
    assert entry.counts["estimated_requests"] == 3 and report.probe_estimated == 3
    assert entry.counts["prompt_tokens"] > 0 and entry.counts["completion_tokens"] > 0


def test_an_unusable_endpoint_contributes_no_entry():
    reports = check_endpoints(
        {"composer": _endpoint("http://127.0.0.1:9/v1")}, {"OPENAI_API_KEY": API_KEY}, timeout_s=1
    )
    assert not reports[0].ok and probe_ledger_entries(reports) == []


def _eval_config(tmp_path: Path, base_url: str) -> Path:
    body = f'base_url = "{base_url}"\nmodel = "model-a"\ntimeout_s = 10\nmax_retries = 0\n'
    text = (
        f'[llm]\npreflight_timeout_s = 5\ncache_path = "{tmp_path / "llm.sqlite"}"\n'
        f'\n[evaluate]\noutput_root = "{tmp_path / "results"}"\nn_samples = 1\nks = [1]\n'
        f'bootstrap_resamples = 10\nstrategies = ["holistic"]\n\n[evaluate.endpoint]\n{body}'
    )
    path = tmp_path / "classforge.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.skipif(not DATASET.is_file(), reason="ClassEval data not found")
def test_evaluate_ledgers_the_probes_and_equals_the_server_count(tmp_path, monkeypatch):
    from classforge_bench.pipeline.cli import app

    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    args = [
        "evaluate",
        "--config",
        None,
        "--dataset",
        str(DATASET),
        "--task",
        "ClassEval_6",
        "--model",
        "model-a",
        "--n",
        "1",
    ]
    with FakeOpenAIServer(api_key=API_KEY, default="```python\nclass Nothing:\n    pass\n```") as srv:
        args[2] = str(_eval_config(tmp_path, srv.base_url))
        first = CliRunner().invoke(app, args, terminal_width=200)
        assert first.exit_code == 0, first.output
        after_first = srv.billed()
        second = CliRunner().invoke(app, args, terminal_width=200)  # resumes: only the probes are sent
        assert second.exit_code == 0, second.output
        after_second = srv.billed()
    (run_dir,) = [p for p in (tmp_path / "results").iterdir() if (p / "results.json").is_file()]
    results = json.loads((run_dir / "results.json").read_text())
    probes = results["usage"]["by_role"][PROBE_ROLE]
    total = results["usage"]["total"]
    # The latest run (a resume) paid for its probes only.
    assert (total["requests"], total["prompt_tokens"], total["completion_tokens"]) == tuple(
        b - a for a, b in zip(after_first, after_second)
    )
    assert probes["requests"] == total["requests"] == 4
    # Every run's usage together equals everything the server answered.
    every = json.loads((run_dir / "usage.json").read_text())["total"]
    assert (every["requests"], every["prompt_tokens"], every["completion_tokens"]) == after_second
    assert after_first[0] > 4, "the first run generated samples besides the probes"


@pytest.mark.slow
def test_build_ledgers_the_probes_and_equals_the_server_count(tmp_path):
    """`classforge build` as a user runs it: usage.json holds every answered request, probes included,
    across a paying run and a replay (which sends nothing but the probes)."""
    from tests.realmodel.realmodel_config import EXAMPLE_PAIRS, build_config

    env = dict(
        os.environ,
        OPENAI_API_KEY=API_KEY,
        PREFECT_HOME=str(tmp_path / "prefect"),
        COLUMNS="200",
        HF_HUB_CACHE=str(tmp_path / "hf-hub"),
    )
    with FakeOpenAIServer(api_key=API_KEY, default="I cannot help with that.") as srv:
        (tmp_path / "classforge.toml").write_text(build_config(srv.base_url, "model-a", EXAMPLE_PAIRS[:1]))
        runs = []
        for _ in range(2):
            done = subprocess.run(
                [str(CLASSFORGE), "build", "--config", "classforge.toml"],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
            assert done.returncode == 1 and "released nothing" in done.stderr, done.stderr[-2000:]
            runs.append(srv.billed())
        probes = [r for r in srv.chat_requests if r.headers.get("x-classforge-purpose") == "preflight"]
    out = tmp_path / "built" / "realmodel"
    usage = json.loads((out / "usage.json").read_text())
    total = usage["total"]
    assert (total["requests"], total["prompt_tokens"], total["completion_tokens"]) == runs[1]
    assert usage["by_role"][PROBE_ROLE]["requests"] == len(probes) == 8  # 4 probes per run, one endpoint
    last = json.loads((out / "usage-last-run.json").read_text())["total"]
    assert last["requests"] == runs[1][0] - runs[0][0] == 4, "the replay sent the probes and nothing else"
