"""The docker backend against a fake SDK client: the container it asks for, its life cycle, and a
whole harness run through its bootstrap. (Against a real engine: the conformance suite.)"""

from __future__ import annotations

import os
import sys

import pytest
import requests
from fake_docker import FakeContainer, FakeDockerClient
from sandbox_support import make_config

from classforge_bench.pipeline.sandbox import SandboxError, SuiteStatus, run_suite
from classforge_bench.pipeline.sandbox.base import RunLimits
from classforge_bench.pipeline.sandbox.docker_backend import DockerBackend

LIMITS = RunLimits(wall_s=5, memory_mb=300, max_processes=20, max_file_mb=8)


@pytest.fixture
def client():
    return FakeDockerClient()


@pytest.fixture
def backend(client):
    backend = DockerBackend(
        make_config(backend="docker", docker_image="classforge-sandbox:test"), client=client, python=sys.executable
    )
    # The fake runs containers as plain host processes: nothing is contained, so nothing may be swept.
    backend.isolates_processes = False
    return backend


def test_container_is_locked_down(backend, client):
    result = backend.run({"main.py": "print('hi')"}, [backend.python, "main.py"], LIMITS)
    assert result.exit_code == 0 and result.stdout == "hi\n" and result.isolation == "docker"
    (container,) = client.containers.created
    opts = container.options
    assert opts["image"] == "classforge-sandbox:test"
    assert opts["network_mode"] == "none" and "network_disabled" not in opts
    assert opts["read_only"] is True and set(opts["tmpfs"]) == {"/work", "/tmp"} and opts["working_dir"] == "/work"
    assert opts["cap_drop"] == ["ALL"] and opts["security_opt"] == ["no-new-privileges"]
    assert opts["user"] == "10001:10001" and not opts["user"].startswith("0")
    assert opts["mem_limit"] == "300m" and opts["memswap_limit"] == "300m" and opts["pids_limit"] == 24
    ulimits = {u["Name"]: u["Soft"] for u in opts["ulimits"]}
    assert ulimits == {
        "cpu": 6,
        "fsize": 8 * 1024 * 1024,
        "data": 300 * 1024 * 1024,
        "core": 0,
        "nofile": 1024,
        "nproc": 4096,
    }
    assert container.started and container.removed


def test_environment_carries_only_the_payload(backend, client, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-travel")
    result = backend.run({"main.py": "import os; print(sorted(os.environ))"}, [backend.python, "main.py"], LIMITS)
    (container,) = client.containers.created
    assert all(name.startswith("CF_PAYLOAD_") for name in container.options["environment"])
    assert "sk-should-not-travel" not in str(container.options) and "OPENAI_API_KEY" not in result.stdout
    assert "CF_PAYLOAD_N" not in result.stdout  # the command never sees the bootstrap's payload


def test_large_payloads_are_split_across_variables(backend, client):
    blob = os.urandom(400_000)  # incompressible: needs several 100 kB variables
    result = backend.run(
        {"blob.bin": blob, "main.py": "print(len(open('blob.bin','rb').read()))"},
        [backend.python, "main.py"],
        LIMITS,
        outputs=["blob.bin"],
    )
    assert result.stdout.strip() == "400000" and result.outputs["blob.bin"] == blob
    assert int(client.containers.created[0].options["environment"]["CF_PAYLOAD_N"]) > 1


def test_bootstrap_deadline_and_signal(backend):
    slow = backend.run(
        {"main.py": "import time; time.sleep(30)"},
        [backend.python, "main.py"],
        LIMITS.model_copy(update={"wall_s": 0.5}),
    )
    assert slow.timed_out and slow.signal == 9 and slow.wall_s < 15  # killed, not left to its 30 s sleep


class _HangingContainer(FakeContainer):
    def wait(self, timeout=None):
        raise requests.exceptions.ReadTimeout("engine did not answer")


def test_host_side_timeout_kills_and_removes(backend, client, monkeypatch):
    monkeypatch.setattr(
        client.containers,
        "create",
        lambda **o: client.containers.created.append(_HangingContainer(o)) or client.containers.created[-1],
    )
    result = backend.run({"main.py": "import time; time.sleep(30)"}, [backend.python, "main.py"], LIMITS)
    (container,) = client.containers.created
    assert result.timed_out and container.killed and container.removed


def test_unreachable_engine_is_a_sandbox_error():
    broken = DockerBackend(make_config(backend="docker", docker_base_url="unix:///nonexistent/docker.sock"))
    with pytest.raises(SandboxError, match="Docker"):
        broken.run({"main.py": "pass"}, ["python", "main.py"], LIMITS)


def test_harness_runs_through_the_docker_code_path(backend):
    solution = "class Pair:\n    def swap(self, a, b):\n        return b, a\n"
    tests = "import unittest\nclass PairTest(unittest.TestCase):\n    def test_swap(self):\n        self.assertEqual(Pair().swap(1, 2), (2, 1))\n"
    result = run_suite(solution, tests, ["PairTest"], config=make_config(), backend=backend)
    assert result.status is SuiteStatus.PASSED, result.detail
    assert result.isolation == "docker" and result.line_coverage == 100.0
    failing = run_suite(solution.replace("b, a", "a, b"), tests, ["PairTest"], config=make_config(), backend=backend)
    assert failing.status is SuiteStatus.FAILED


def test_the_interpreter_inside_the_image_comes_from_the_config(client):
    # the evaluator's declared environment names it there; without it, the image's `python`
    assert DockerBackend(make_config(backend="docker"), client=client).python == "python"
    backend = DockerBackend(make_config(backend="docker", python=sys.executable), client=client)
    backend.isolates_processes = False
    assert backend.run({"main.py": "print('hi')"}, [backend.python, "main.py"], LIMITS).stdout == "hi\n"
    assert client.containers.created[-1].options["command"][0] == sys.executable


def test_an_evaluation_in_the_declared_environment_runs_the_images_interpreter(client, tmp_path, monkeypatch):
    """environment = "dataset" with the docker backend: the environment is the image (named in the
    results), and every container runs the environment's interpreter."""
    import json

    import classforge_bench.benchmark.environment
    from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
    from classforge_bench.pipeline.config import Config, EvaluateConfig
    from classforge_bench.pipeline.sandbox import registry

    # the fake engine runs containers as host processes: the image's interpreter is this one
    monkeypatch.setattr(classforge_bench.benchmark.environment, "IMAGE_PYTHON", sys.executable)

    def fake_docker(config):
        backend = DockerBackend(config, client=client)
        backend.isolates_processes = False
        return backend

    monkeypatch.setitem(registry._factories, "docker", fake_docker)
    monkeypatch.setattr(registry, "_instances", {})
    solution = "class Pair:\n    def swap(self, a, b):\n        return b, a\n"
    tests = "import unittest\nclass PairTestSwap(unittest.TestCase):\n    def test_swap(self):\n        self.assertEqual(Pair().swap(1, 2), (2, 1))\n"
    dataset = tmp_path / "pairs.jsonl"
    dataset.write_text(
        json.dumps(
            {
                "task_id": "P0",
                "class_name": "Pair",
                "test": tests,
                "test_classes": ["PairTestSwap"],
                "skeleton": 'class Pair:\n    def swap(self, a, b):\n        """Swap."""\n',
                "solution_code": solution,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    cfg = Config()
    cfg.sandbox = make_config(backend="docker")
    cfg.evaluate = EvaluateConfig(
        output_root=tmp_path / "results",
        environment="dataset",
        n_samples=1,
        bootstrap_resamples=20,
        environment_root=tmp_path / "envs",
    )
    out = evaluate(EvaluationRequest(dataset=dataset, models=["reference"]), cfg, env={})
    env = out.results.settings.environment
    assert env.kind == "image" and env.path == f"docker image {cfg.sandbox.docker_image}"
    assert env.declared_in == "classforge_bench/benchmark/requirements/classeval.txt" and "numpy" in env.requirements
    assert out.results.samples[0].bucket == "completed" and out.results.broken_task_ids == []
    assert client.containers.created and {c.options["command"][0] for c in client.containers.created} == {
        sys.executable
    }
    assert not (tmp_path / "envs").exists()  # no virtual environment on the host
    assert "docker image" in out.summary
