"""`classforge check-endpoint` and the pre-flight of `evaluate`, run as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llmkit import API_KEY, dead_url
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app
from tests.fakes.openai_server import FakeOpenAIServer, ServerProfile

# The ClassEval release beside the checkout (../shared), looked up from a checkout or a worktree.
DATASET = next(
    (
        p / "shared/data/classeval/ClassEval_data.json"
        for p in Path(__file__).resolve().parents
        if (p / "shared/data/classeval/ClassEval_data.json").is_file()
    ),
    Path("/nonexistent"),
)


def _config(tmp_path: Path, base_url: str, **endpoint: object) -> Path:
    fields = {"base_url": base_url, "model": "model-a", "timeout_s": 5} | endpoint
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items())
    sections = ["composer", "test_writer", "solver"]
    text = "[llm]\npreflight_timeout_s = 5\ncache_path = " + json.dumps(str(tmp_path / "llm.sqlite")) + "\n"
    text += "".join(f"\n[llm.{s}]\n{body}\n" for s in sections)
    text += "".join(f"\n[[llm.judges]]\n{body}\n" for _ in range(3))
    text += f"\n[evaluate.endpoint]\n{body}\n"
    path = tmp_path / "classforge.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_check_endpoint_reports_a_llama_cpp_like_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    profile = ServerProfile(json_schema=False, usage=False, context_window=8192)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"], profile=profile) as srv:
        cfg = _config(tmp_path, srv.base_url)
        out = CliRunner().invoke(app, ["check-endpoint", "--config", str(cfg), "--json"])
        assert out.exit_code == 0, out.output
        (report,) = json.loads(out.output)
        assert report["roles"][0] == "composer" and "evaluate" in report["roles"]
        assert (report["response_format"], report["usage"], report["context_window"]) == ("json_object", False, 8192)
        table = CliRunner().invoke(
            app, ["check-endpoint", "--config", str(cfg), "--role", "solver"], terminal_width=200
        )
        assert table.exit_code == 0 and "json_object" in table.output and "estimated locally" in table.output


def test_check_endpoint_exits_1_on_an_unusable_endpoint(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(default="x") as srv:
        out = CliRunner().invoke(
            app, ["check-endpoint", "--config", str(_config(tmp_path, srv.base_url))], terminal_width=200
        )
        assert srv.requests == []
    assert out.exit_code == 1 and "OPENAI_API_KEY is not set" in out.output
    bad_role = CliRunner().invoke(
        app, ["check-endpoint", "--config", str(_config(tmp_path, "http://x/v1")), "--role", "nobody"]
    )
    assert bad_role.exit_code == 2 and "unknown role(s) nobody" in bad_role.output


@pytest.mark.parametrize("side", ["build", "evaluate"])
def test_check_endpoint_checks_only_the_side_the_configuration_sets_up(tmp_path, monkeypatch, side):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FakeOpenAIServer(api_key=API_KEY, default='{"ok": true}', models=["model-a"]) as srv:
        full = _config(tmp_path, srv.base_url).read_text(encoding="utf-8")
        evaluate_part = full[full.index("[evaluate.endpoint]") :]
        # One side only: the other side's defaults (api.openai.com) are never probed.
        text = full.replace(evaluate_part, "") if side == "build" else full.split("\n[llm.")[0] + "\n" + evaluate_part
        (tmp_path / "classforge.toml").write_text(text, encoding="utf-8")
        out = CliRunner().invoke(app, ["check-endpoint", "--config", str(tmp_path / "classforge.toml"), "--json"])
    assert out.exit_code == 0, out.output
    roles = [role for report in json.loads(out.output) for role in report["roles"]]
    assert ("evaluate" in roles) is (side == "evaluate") and ("composer" in roles) is (side == "build")


@pytest.mark.skipif(not DATASET.is_file(), reason="ClassEval data not found")
def test_evaluate_fails_fast_on_an_unreachable_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    cfg = _config(tmp_path, dead_url())
    out = CliRunner().invoke(
        app,
        [
            "evaluate",
            "--config",
            str(cfg),
            "--dataset",
            str(DATASET),
            "--max-tasks",
            "3",
            "--out",
            str(tmp_path / "results"),
        ],
        terminal_width=200,
    )
    assert out.exit_code == 2, out.output
    assert "endpoint check failed" in out.output and "unreachable" in out.output
    assert not (tmp_path / "results").exists()  # stopped before any work


@pytest.mark.skipif(not DATASET.is_file(), reason="ClassEval data not found")
def test_evaluate_with_the_key_unset_names_the_variable_and_sends_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(default="x") as srv:
        out = CliRunner().invoke(
            app,
            [
                "evaluate",
                "--config",
                str(_config(tmp_path, srv.base_url)),
                "--dataset",
                str(DATASET),
                "--max-tasks",
                "1",
                "--out",
                str(tmp_path / "r"),
            ],
            terminal_width=200,
        )
        assert srv.requests == []
    assert out.exit_code == 2 and "OPENAI_API_KEY is not set" in out.output


def test_build_fails_fast_before_prefect_on_an_unreachable_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    cfg = _config(tmp_path, dead_url())
    # "before Prefect" as an order, not a time: reaching Prefect's set-up fails the test
    monkeypatch.setattr(
        "classforge_bench.pipeline.cli.build._prefect_defaults", lambda: pytest.fail("Prefect was started")
    )
    out = CliRunner().invoke(app, ["build", "--config", str(cfg)], terminal_width=200)
    assert out.exit_code == 2, out.output
    assert out.output.count("endpoint check failed") == 1 and "unreachable" in out.output


def test_ctrl_c_during_evaluate_says_how_to_resume(tmp_path, monkeypatch):
    import classforge_bench.benchmark.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(classforge_bench.benchmark.runner, "evaluate", interrupted)
    out = CliRunner().invoke(
        app,
        ["evaluate", "--dataset", str(tmp_path / "any.json"), "--model", "reference", "--out", str(tmp_path / "r")],
        terminal_width=200,
    )
    assert out.exit_code == 130 and "interrupted; run the same command to resume" in out.output
