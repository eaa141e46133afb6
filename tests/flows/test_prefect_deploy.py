"""Prefect as users deploy it: `prefect server start`, `prefect deploy --all` from the project root
with no environment variable set, a process worker, scheduled runs that really appear, and
`prefect deployment run build-benchmark/manual` running the example to a release."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).with_name("prefect"))


def test_sqlalchemy_is_pinned_below_2_1():
    """Prefect 3.8's scheduler never fires with SQLAlchemy 2.1 (the test below shows it working)."""
    major, minor = (int(x) for x in version("sqlalchemy").split(".")[:2])
    assert (major, minor) < (2, 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _project_copy(dest: Path) -> Path:
    """What a user's checkout holds of the deployment: prefect.yaml, the flow, the example."""
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("classforge_bench", "examples"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=ignore)
    shutil.copy(ROOT / "prefect.yaml", dest / "prefect.yaml")
    config = dest / "examples" / "classforge.toml"
    # Reference corpora outside the project are not part of a user's clone.
    # (the plus tier, on in the example, is off here: deployment is the subject)
    lines = [
        line if line != "enabled = true" else "enabled = false"
        for line in config.read_text().splitlines()
        if not line.startswith("reference_corpora")
    ]
    # This test is about deployment and scheduling; a small mutant sample keeps the gate in the path.
    config.write_text("\n".join(lines) + "\n\n[construction.mutation]\nmax_mutants_per_method = 2\n")
    return dest


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _healthy(api: str) -> bool:
    try:
        return httpx.get(f"{api}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _runs(api: str, deployment: str, state: str) -> list[dict]:
    deployments = httpx.post(
        f"{api}/deployments/filter", json={"deployments": {"name": {"any_": [deployment]}}}, timeout=60
    ).json()
    if not deployments:
        return []
    body = {"flow_runs": {"deployment_id": {"any_": [deployments[0]["id"]]}, "state": {"type": {"any_": [state]}}}}
    return httpx.post(f"{api}/flow_runs/filter", json=body, timeout=60).json()


@pytest.mark.slow
def test_deploy_schedule_and_run_as_users_do(tmp_path):
    project = _project_copy(tmp_path / "project")
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "CLASSFORGE_"))}
    env |= {
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",
    }
    logs = tmp_path / "logs"
    logs.mkdir()

    def prefect(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [PREFECT, "--no-prompt", *args], cwd=project, env=env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    server_log = open(logs / "server.log", "w")  # noqa: SIM115 - the server writes to it for its whole life
    server = subprocess.Popen(
        [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=server_log,
        stderr=subprocess.STDOUT,
    )
    worker = None
    try:
        _wait(lambda: _healthy(api), 600, "the Prefect server to start")  # bounds for a hang, room for a busy machine
        prefect("work-pool", "create", "classforge", "--type", "process")
        prefect("deploy", "--all")

        scheduled = _wait(lambda: _runs(api, "weekly-refresh", "SCHEDULED"), 600, "the scheduler to create runs")
        assert all(r["parameters"]["snapshot"] == "auto" for r in scheduled)
        assert "Can't evaluate bulk DML" not in (logs / "server.log").read_text()

        worker_log = open(logs / "worker.log", "w")  # noqa: SIM115 - as the server's
        worker = subprocess.Popen(
            [PREFECT, "worker", "start", "--pool", "classforge"],
            cwd=tmp_path,
            env=env,
            stdout=worker_log,
            stderr=subprocess.STDOUT,
        )
        prefect("deployment", "run", "build-benchmark/manual", "--watch", "--watch-timeout", "1800", timeout=1900)
        (run,) = _runs(api, "manual", "COMPLETED")
        assert run["state"]["message"].startswith("released 3 task(s)"), run["state"]
        releases = [p for p in (project / "benchmark" / "releases").iterdir() if not p.name.startswith(".")]
        assert len(releases) == 1 and (releases[0] / "manifest.json").exists()
    finally:
        for proc in (worker, server):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
