"""Environment checks: each kind of dependence is flagged by the perturbation that exposes it, a clean
class by none, and a perturbation that cannot be applied is reported as skipped, never passed."""

from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import threading

import pytest

from classforge_bench.pipeline.config import EnvironmentChecksConfig, SandboxConfig
from classforge_bench.pipeline.quality.environment_checks import check_environment
from classforge_bench.pipeline.sandbox.base import Perturbation, RunLimits, SandboxError
from classforge_bench.pipeline.sandbox.docker_backend import container_options, perturbed_options
from classforge_bench.pipeline.sandbox.local import LocalBackend
from classforge_bench.pipeline.sandbox.perturb import find_libfaketime

CLASS = """
import datetime, os, socket, time


class Probe:
    def year(self):
        return datetime.date.today().year

    def utc_offset(self):
        return time.strftime("%z")

    def host(self):
        return socket.gethostname()

    def is_root(self):
        return os.getuid() == 0

    def word_order(self):
        return list({"apple", "banana", "cherry", "damson", "elder", "fig", "grape"})

    def where(self):
        return os.getcwd()

    def fetch(self, port):
        with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
            return conn.recv(16).decode()
"""


def _tests(body: str) -> str:
    return f"import os\nimport unittest\n\n\nclass ProbeTest(unittest.TestCase):\n{body}"


def _hash_order_at_seed(seed: int) -> list[str]:
    code = 'print(repr(list({"apple", "banana", "cherry", "damson", "elder", "fig", "grape"})))'
    out = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONHASHSEED": str(seed)}, capture_output=True, text=True, check=True
    )
    return eval(out.stdout)  # noqa: S307 - our own repr of a list of str


CASES = {
    "date": ("    def test_year(self):\n        self.assertEqual(Probe().year(), {year})\n", {"clock"}),
    "timezone": ("    def test_offset(self):\n        self.assertEqual(Probe().utc_offset(), '+0000')\n", {"timezone"}),
    "hostname": ("    def test_host(self):\n        self.assertEqual(Probe().host(), 'sandbox')\n", {"host-user"}),
    "user": ("    def test_not_root(self):\n        self.assertFalse(Probe().is_root())\n", {"host-user"}),
    "hash-order": (
        "    def test_order(self):\n        self.assertEqual(Probe().word_order(), {order})\n",
        {"hash-seed"},
    ),
    "cwd": ("    def test_where(self):\n        self.assertNotIn(' ', Probe().where())\n", {"cwd"}),
    "clean": ("    def test_year_is_int(self):\n        self.assertIsInstance(Probe().year(), int)\n", set()),
}


@pytest.fixture(scope="module")
def bwrap_config() -> SandboxConfig:
    config = SandboxConfig(wall_limit_s=20.0)
    try:
        isolation = LocalBackend(config).isolation
    except SandboxError as exc:
        pytest.skip(f"no sandbox here: {exc}")
    if isolation != "bwrap":
        pytest.skip(f"host name and cwd perturbations need bubblewrap (isolation here: {isolation})")
    if find_libfaketime() is None:
        pytest.skip("libfaketime is not installed (apt-get install libfaketime)")
    return config


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_dependence_is_flagged_by_its_perturbation(case, bwrap_config):
    body, expected = CASES[case]
    body = body.format(year=datetime.date.today().year, order=_hash_order_at_seed(bwrap_config.hash_seed))
    report = check_environment(CLASS, _tests(body), ["ProbeTest"], bwrap_config, item_id=case)
    assert report.baseline_status == "passed", report.baseline_failures
    assert {p.kind for p in report.flagged} == expected, report.model_dump_json(indent=1)
    assert not report.summary().skipped and not report.summary().errors
    for p in report.flagged:
        assert any("ProbeTest." in c and "passed then failed" in c for c in p.changed), p.changed
        assert p.name in report.drop_detail()


def test_network_is_the_baseline_under_bwrap(bwrap_config):
    report = check_environment(CLASS, _tests(CASES["clean"][0]), ["ProbeTest"], bwrap_config)
    network = next(p for p in report.perturbations if p.kind == "network")
    assert "baseline ran without network too (bwrap)" in network.applied["network"]
    assert network.skipped is None and not network.changed


@pytest.fixture
def loopback_server():
    """A one-answer TCP server on the host's loopback; the sandbox reaches it only with host networking."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def test_network_dependence_is_flagged_where_the_baseline_has_network(loopback_server):
    if (
        os.geteuid() != 0
        and subprocess.run(["unshare", "--net", "--map-current-user", "true"], capture_output=True).returncode
    ):
        pytest.skip("no network namespaces for this user")
    checks = EnvironmentChecksConfig(perturbations=["network", "timezone"])
    config = SandboxConfig(isolation="none", wall_limit_s=20.0, environment_checks=checks)
    body = f"    def test_fetch(self):\n        self.assertEqual(Probe().fetch({loopback_server}), 'hello')\n"
    report = check_environment(CLASS, _tests(body), ["ProbeTest"], config)
    assert report.isolation == "none" and report.baseline_status == "passed", report.baseline_failures
    assert [p.kind for p in report.flagged] == ["network"], report.model_dump_json(indent=1)
    assert "unshare --net" in report.flagged[0].applied["network"]


def test_missing_libfaketime_is_reported_as_skipped(tmp_path):
    checks = EnvironmentChecksConfig(
        perturbations=["clock"], clock_shifts_days=[365], faketime_library=str(tmp_path / "libfaketime.so.1")
    )
    config = SandboxConfig(wall_limit_s=20.0, environment_checks=checks)
    body = CASES["date"][0].format(year=datetime.date.today().year)
    report = check_environment(CLASS, _tests(body), ["ProbeTest"], config)
    clock = report.perturbations[0]
    assert clock.name == "clock+365d" and clock.skipped and "libfaketime not found" in clock.skipped
    assert report.summary().skipped == {"clock+365d": clock.skipped}
    assert report.summary().applied == [] and not report.flagged


def test_reports_are_cached_by_content(tmp_path, bwrap_config):
    checks = EnvironmentChecksConfig(perturbations=["timezone"])
    config = bwrap_config.model_copy(update={"environment_checks": checks})
    body = CASES["timezone"][0]
    first = check_environment(CLASS, _tests(body), ["ProbeTest"], config, item_id="a", cache_dir=tmp_path)
    assert len(list(tmp_path.rglob("*.json"))) == 1

    class Refuses(LocalBackend):
        def run(self, *args, **kwargs):
            raise AssertionError("a cached report must not run the sandbox")

    again = check_environment(
        CLASS, _tests(body), ["ProbeTest"], config, item_id="b", cache_dir=tmp_path, backend=Refuses(config)
    )
    assert again.item_id == "b" and again.perturbations == first.perturbations and again.flagged
    other = check_environment(CLASS, _tests(CASES["clean"][0]), ["ProbeTest"], config, cache_dir=tmp_path)
    assert not other.flagged and len(list(tmp_path.rglob("*.json"))) == 2


def test_docker_backend_applies_a_perturbation_through_container_options():
    config = SandboxConfig(backend="docker")
    base = container_options(config, RunLimits(), {}, "python")
    spec = Perturbation(cwd="a b/c", hostname="elsewhere", user="root", uid=0, clock_shift_days=-30, no_network=True)
    options, prefix, applied = perturbed_options(base, spec)
    assert options["working_dir"] == "/work/a b/c" and options["hostname"] == "elsewhere" and options["user"] == "0:0"
    assert options["network_mode"] == "none" and options["cap_drop"] == ["ALL"]
    assert prefix[:2] == ["env", "LD_PRELOAD=/opt/classforge/libfaketime.so.1"] and prefix[2] == "FAKETIME=-30d"
    assert set(applied) == {"cwd", "hostname", "user", "uid", "clock", "network"}
    assert base["hostname"] == "sandbox" and base["working_dir"] == "/work"  # the baseline is untouched
