"""Faults of `classforge build` that must end as one line before any work, or as one line after
it, never as a Prefect traceback (issue 26)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app
from classforge_bench.pipeline.config import CostConfig

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "40"})


def _no_prefect(monkeypatch) -> None:
    """The order "before any work": reaching Prefect's set-up fails the test."""
    monkeypatch.setattr(
        "classforge_bench.pipeline.cli.build._prefect_defaults", lambda: pytest.fail("Prefect was started")
    )


@pytest.mark.parametrize("key", ["spec_corpora", "local_sources"])
def test_a_configured_source_that_does_not_exist_is_named_before_any_work(example_config, tmp_path, monkeypatch, key):
    missing = tmp_path / "moved-away"
    text = example_config.read_text()
    if key == "spec_corpora":
        text = text.replace(f'spec_corpora = ["{ROOT / "examples" / "corpus"}"]', f'spec_corpora = ["{missing}"]')
    else:
        text = text.replace("local_sources = []", f'local_sources = ["{missing}"]')
    assert str(missing) in text
    example_config.write_text(text)
    _no_prefect(monkeypatch)
    for command in ("build", "harvest"):
        done = run(command, "--config", str(example_config))
        assert done.exit_code == 2, done.output
        (line,) = [line for line in done.output.splitlines() if line.strip()]
        assert line == f"error: harvest.{key}: {missing} does not exist", line
    assert not (tmp_path / "harvested").exists() and not (tmp_path / "built").exists()


def test_a_deployment_run_refuses_a_missing_source_too(example_config, tmp_path):
    from classforge_bench.flows.build_benchmark import configure
    from classforge_bench.pipeline.config import ConfigError

    missing = tmp_path / "nowhere"
    example_config.write_text(
        example_config.read_text().replace("local_sources = []", f'local_sources = ["file://{missing}"]')
    )
    with pytest.raises(ConfigError, match=f"harvest.local_sources: {missing} does not exist"):
        configure(str(example_config), None, None)


def _cli(args: list[str], cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        HF_HUB_OFFLINE="1",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"],
        HF_HUB_CACHE=str(tmp_path / "hf-hub"),
        PYTHONPATH=str(ROOT),
        COLUMNS="60",
    )
    return subprocess.run(
        [sys.executable, "-m", "classforge_bench.pipeline.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.mark.slow
def test_a_failure_inside_the_flow_is_one_line_and_the_log_keeps_the_traceback(example_config, tmp_path):
    """A pinned class the snapshot does not hold (a cutoff that drops it): the flow raises. The
    terminal got 116 lines and two Prefect tracebacks before the CLI's line; now one error line."""
    done = _cli(["build", "--config", str(example_config), "--cutoff", "2026-01-01"], tmp_path, tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    log = tmp_path / "built" / "example" / "build.log"
    assert errors == [
        f"error: construction.pairing.pinned: no harvested class with id or name 'ShoppingCart' among "
        f"the snapshot's 0 kept classes; pin classes the harvest kept, or leave pinned empty (log: {log})"
    ]
    assert "Traceback" not in done.stderr + done.stdout
    assert "ERROR" not in done.stderr  # Prefect's own failure lines went to the log, not the terminal
    assert "Traceback" in log.read_text() and "PairingError" in log.read_text()


def test_the_build_folder_stays_held_through_the_endpoint_probes(example_config, tmp_path, monkeypatch):
    """Two builds started together on one folder: the second used to pass the early check, probe
    every endpoint (paid twice) and fail inside the flow. The folder is now held from the check on."""
    folder = tmp_path / "built" / "example"
    seen: list[subprocess.CompletedProcess[str]] = []

    def second_build_tries_the_folder(cfg, endpoints, out_file=None):
        seen.append(
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys\nfrom classforge_bench.pipeline.core.folder_lock import FolderLock, FolderBusy\n"
                    f"try:\n    FolderLock({str(folder)!r}, 'second build').acquire()\nexcept FolderBusy as e:\n"
                    "    print(e)\n    sys.exit(3)\n",
                ],
                cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                text=True,
                timeout=600,
            )
        )
        raise SystemExit(9)  # stop the first build here; the probes are what matters

    monkeypatch.setattr("classforge_bench.pipeline.cli.build._preflight", second_build_tries_the_folder)
    done = run("build", "--config", str(example_config))
    (other,) = seen or [done.output]
    assert other.returncode == 3, other.stdout + other.stderr
    assert f"{folder} is in use by classforge build (pid {os.getpid()}" in other.stdout
    # released when the command ended: the next build may take it
    from classforge_bench.pipeline.core.folder_lock import FolderLock

    FolderLock(folder, "after").acquire().release()


MODELS = (
    "example-handwritten-composer",
    "example-handwritten-test-writer",
    "example-handwritten-judge-a",
    "example-handwritten-judge-b",
    "example-handwritten-judge-c",
    "example-handwritten-solver",
)


def _priced_live_config(example_config: Path, base_url: str, tmp_path: Path, budget_usd: float) -> Path:
    from flow_kit import live_config

    path = live_config(example_config, base_url, tmp_path, preflight=True)
    text = path.read_text().replace("preflight = true", f"preflight = true\nbudget_usd = {budget_usd}", 1)
    text += "".join(f"\n[llm.costs.{m}]\nprompt_per_mtok = 1000.0\ncompletion_per_mtok = 1000.0\n" for m in MODELS)
    path.write_text(text)
    return path


@pytest.mark.parametrize("budget", [0, 0.001])
def test_a_budget_that_cannot_pay_the_probes_stops_before_the_first(example_config, tmp_path, monkeypatch, budget):
    """`llm.budget_usd = 0` sent every endpoint probe (24 paid requests) before stopping."""
    from tests.fakes.openai_server import FakeOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _no_prefect(monkeypatch)
    with FakeOpenAIServer(default='{"ok": true}', models=list(MODELS)) as srv:
        cfg = _priced_live_config(example_config, srv.base_url, tmp_path, budget)
        done = run("build", "--config", str(cfg))
        assert srv.requests == []
    assert done.exit_code == 2, done.output
    (line,) = [line for line in done.output.splitlines() if line.strip()]
    assert line.startswith(
        f"error: llm.budget_usd = {float(budget)} cannot cover the endpoint checks (up to 30 requests to 6"
    )
    assert "nothing was sent" in line


def test_the_probe_bound_covers_what_the_probes_cost(example_config, tmp_path):
    """The bound is what decides; it must not be below what the probes really cost."""
    from classforge_bench.pipeline.config import load_config
    from classforge_bench.pipeline.llm.ledger import UsageLedger
    from classforge_bench.pipeline.llm.preflight import (
        ProbeBudgetTooSmall,
        check_endpoints,
        endpoints_of_build,
        probe_ledger_entries,
        require_probe_budget,
    )
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(default='{"ok": true}', models=list(MODELS)) as srv:
        cfg = load_config(_priced_live_config(example_config, srv.base_url, tmp_path, 1.0))
        endpoints = endpoints_of_build(cfg)
        reports = check_endpoints(endpoints, {"OPENAI_API_KEY": "sk-test"}, timeout_s=60)
    ledger = UsageLedger(cfg.llm.costs)
    ledger.absorb(probe_ledger_entries(reports))
    paid = ledger.spent_usd
    assert paid > 0
    cfg.llm.budget_usd = paid  # exactly what they cost: must be accepted only if the bound is not below it...
    with pytest.raises(ProbeBudgetTooSmall):  # ...it is an upper bound, so this budget is refused
        require_probe_budget(endpoints, cfg.llm)
    cfg.llm.budget_usd = paid * 10
    require_probe_budget(endpoints, cfg.llm)


def test_the_probes_count_against_the_runs_budget(example_config, monkeypatch):
    """In the flow the probes' usage is in the client's ledger before the first candidate's call."""
    from types import SimpleNamespace

    from classforge_bench.flows import build_benchmark as fb
    from classforge_bench.pipeline.config import load_config
    from classforge_bench.pipeline.llm.ledger import LedgerEntry, UsageLedger

    monkeypatch.setattr(
        fb,
        "open_construction",
        lambda cfg, env, run_id: SimpleNamespace(
            client=SimpleNamespace(ledger=UsageLedger(cfg.llm.costs)), close=lambda: None
        ),
    )

    cfg = load_config(example_config)
    cfg.llm.costs = {MODELS[0]: CostConfig(prompt_per_mtok=1000.0, completion_per_mtok=1000.0)}
    probes = [
        LedgerEntry(
            role="preflight",
            task_id="preflight",
            model=MODELS[0],
            counts={"requests": 5, "prompt_tokens": 500, "completion_tokens": 80},
        )
    ]
    fb._probe_usage["run-k"] = probes
    try:
        built = fb._construction(fb._config_json(cfg), "run-k")
        assert built.client.ledger.spent_usd == pytest.approx((500 + 80) * 1000.0 / 1e6)
    finally:
        fb._close_construction(fb._config_json(cfg), "run-k")
    assert "run-k" not in fb._probe_usage


@pytest.mark.parametrize("how", ["under a file", "read-only"])
def test_an_unwritable_output_folder_is_refused_before_any_paid_call(example_config, tmp_path, monkeypatch, how):
    """A read-only release folder was found only after the whole paid build (120 requests)."""
    releases = tmp_path / "releases"
    if how == "under a file":
        releases.write_text("a file where the release folder should be")
        target, why = releases / "sub", f"{releases} is a file, not a folder"
    else:
        releases.mkdir(mode=0o555)
        try:
            (releases / "probe").touch()
        except PermissionError:
            pass
        else:  # root with CAP_DAC_OVERRIDE writes through 0555 (a read-only mount would stop it)
            pytest.skip(
                "this user writes through a 0555 folder (root); run as a user, or as root without "
                "CAP_DAC_OVERRIDE (setpriv --bounding-set=-dac_override,-dac_read_search)"
            )
        target, why = releases, f"{releases} is not writable (Permission denied)"
    example_config.write_text(
        example_config.read_text().replace(f'output_root = "{releases}"', f'output_root = "{target}"')
    )
    monkeypatch.setattr(
        "classforge_bench.pipeline.cli.build._preflight", lambda *a, **k: pytest.fail("an endpoint was probed")
    )
    _no_prefect(monkeypatch)
    done = run("build", "--config", str(example_config))
    assert done.exit_code == 2, done.output
    (line,) = [line for line in done.output.splitlines() if line.strip()]
    assert line == f"error: cannot write the build's outputs: release.output_root: {why}", line
    assert not (tmp_path / "harvested").exists()


def test_the_terminal_gets_one_line_per_record_and_the_log_file_the_tracebacks(tmp_path):
    import io
    import logging

    from classforge_bench.pipeline.cli.flowlog import flow_log

    terminal = io.StringIO()
    handler = logging.StreamHandler(terminal)
    root, prefect_logger = logging.getLogger(), logging.getLogger("prefect")
    level = prefect_logger.level
    prefect_logger.setLevel(logging.INFO)  # as Prefect's logging configuration sets it
    root.addHandler(handler)
    try:
        with flow_log(tmp_path / "built") as log_path:
            try:
                raise ValueError("boom")
            except ValueError:
                logging.getLogger("prefect.flow_runs").exception("Encountered exception during execution")
                logging.getLogger("prefect.task_runs").warning("candidate x failed", exc_info=True)
            logging.getLogger("prefect.flow_runs").info(
                "Finished in state Failed('Flow run encountered an exception: x')"
            )
        logging.getLogger("prefect.flow_runs").error("after the build: shown as before")
    finally:
        root.removeHandler(handler)
        prefect_logger.setLevel(level)
    shown = terminal.getvalue().splitlines()
    assert shown == [
        "candidate x failed (ValueError: boom; traceback in build.log)",
        "after the build: shown as before",
    ]
    text = log_path.read_text()
    assert log_path == tmp_path / "built" / "build.log"
    assert (
        text.count("Traceback") == 2
        and "Encountered exception during execution" in text
        and "Finished in state" in text
    )
    assert "after the build" not in text  # detached on the way out


def test_a_traceback_on_a_logger_that_keeps_its_records_from_the_root_is_cut_too(tmp_path):
    """Prefect's `prefect._internal` (and uvicorn's loggers) have handlers of their own and do not
    propagate: a client timeout logged there printed a whole traceback on the terminal mid-build."""
    import io
    import logging

    from classforge_bench.pipeline.cli.flowlog import flow_log

    terminal = io.StringIO()
    handler = logging.StreamHandler(terminal)
    internal = logging.getLogger("classforge-test-internal")
    internal.addHandler(handler)
    internal.propagate = False
    try:
        with flow_log(tmp_path / "built") as log_path:
            try:
                raise TimeoutError("timed out")
            except TimeoutError:
                logging.getLogger("classforge-test-internal.events").exception("events worker failed")
    finally:
        internal.removeHandler(handler)
        internal.propagate = True
    assert terminal.getvalue().splitlines() == [
        "events worker failed (TimeoutError: timed out; traceback in build.log)"
    ]
    text = log_path.read_text()
    assert "Traceback" in text and "events worker failed" in text
    assert internal.handlers == []  # the log file was detached on the way out


def test_the_embedded_servers_stderr_goes_to_the_build_log(tmp_path, monkeypatch, capfd):
    """The uvicorn subprocess Prefect starts for the build inherits stderr: its SQLite 'database is
    locked' tracebacks printed mid-build. Spawned inside `flow_log`, it writes to the build log."""
    import subprocess
    import sys

    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from classforge_bench.pipeline.cli.flowlog import flow_log

    # Another flow test in the session may have entered Prefect's harness, which points
    # PREFECT_API_URL at its own server; this test is about a build that starts the embedded one.
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    server_says = "sqlite3.OperationalError: database is locked"

    def fake_uvicorn(self):  # stands in for Prefect 3.8's spawn, whose name the product relies on
        return subprocess.Popen([sys.executable, "-c", f"import sys; sys.stderr.write({server_says!r})"])

    assert callable(SubprocessASGIServer.__dict__.get("_run_uvicorn_command")), "Prefect renamed its spawn"
    monkeypatch.setattr(SubprocessASGIServer, "_run_uvicorn_command", fake_uvicorn)
    with temporary_settings(restore_defaults={PREFECT_API_URL}), flow_log(tmp_path / "built") as log_path:
        assert PREFECT_API_URL.value() is None
        assert SubprocessASGIServer()._run_uvicorn_command().wait(timeout=120) == 0
    print("the CLI's own stderr still reaches the terminal", file=sys.stderr)
    captured = capfd.readouterr()
    assert server_says in log_path.read_text() and server_says not in captured.err
    assert "the CLI's own stderr still reaches the terminal" in captured.err
    # Outside a build the spawn is Prefect's own again.
    assert "_run_uvicorn_command" not in SubprocessASGIServer().__dict__


def test_with_the_users_own_prefect_server_nothing_is_patched(tmp_path, monkeypatch):
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from classforge_bench.pipeline.cli.flowlog import flow_log

    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:4200/api"}), flow_log(tmp_path / "built"):
        assert "_run_uvicorn_command" not in SubprocessASGIServer().__dict__
