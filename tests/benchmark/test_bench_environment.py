"""Code under test runs in an environment built from the dataset's requirements (issue 15, item 3).

The environment is built once per test session by `python -m venv` + pip, which reuses pip's
download cache (PyJWT and coverage are small); the first build took about 15-40 s here.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from classforge_bench.benchmark.environment import (
    HARNESS_REQUIREMENTS,
    IMAGE_PYTHON,
    IMAGE_REQUIREMENTS,
    EnvironmentBuildError,
    dataset_requirements,
    declared_requirements,
    ensure_environment,
    environment_name,
    image_environment,
    read_requirements,
    requirements_file,
)
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig

SOLUTION = "class Token:\n    def encode(self, payload):\n        import jwt\n        return jwt.encode(payload, 'k', algorithm='HS256')\n"
GITHUB = "class Token:\n    def encode(self, payload):\n        import github\n        return str(payload)\n"
TESTS = (
    "import unittest\n\nclass TokenTestEncode(unittest.TestCase):\n    def test_encode(self):\n"
    "        self.assertTrue(Token().encode({'a': 1}).count('.') == 2 or Token().encode({'a': 1}) == \"{'a': 1}\")\n"
)


@pytest.fixture(scope="session")
def env_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("envs")


@pytest.fixture(scope="session")
def jwt_env(env_root):
    t0 = time.perf_counter()
    try:
        info = ensure_environment(["PyJWT"], env_root)
    except EnvironmentBuildError as e:  # no package index reachable: nothing here can be checked
        pytest.skip(str(e))
    print(f"environment built in {time.perf_counter() - t0:.1f} s")
    return info


def _dataset(tmp_path: Path, solution: str) -> Path:
    path = tmp_path / "tokens.jsonl"
    skeleton = 'class Token:\n    def encode(self, payload):\n        """Encode."""\n'
    path.write_text(
        json.dumps(
            {
                "task_id": "T0",
                "class_name": "Token",
                "skeleton": skeleton,
                "test": TESTS,
                "test_classes": ["TokenTestEncode"],
                "solution_code": solution,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def test_requirements_come_from_the_tasks_imports(classeval):
    reqs = dataset_requirements(classeval.tasks)
    # measured on ClassEval 1.0: the third-party imports of its solutions and tests (netifaces: task 48)
    assert reqs == [
        "beautifulsoup4",
        "gensim",
        "netifaces",
        "nltk",
        "numpy",
        "openpyxl",
        "pandas",
        "pillow",
        "PyPDF2",
        "python-docx",
        "reportlab",
    ]
    assert environment_name(reqs) == environment_name(list(reversed(reqs)))


def test_environment_is_built_once_holds_only_what_was_asked_and_is_reused(jwt_env, env_root):
    installed = {line.split("==")[0].lower() for line in jwt_env.installed}
    assert {"pyjwt", *HARNESS_REQUIREMENTS} <= installed
    assert "pygithub" not in installed and "pydantic" not in installed  # classforge's own tree is not there
    probe = subprocess.run(
        [jwt_env.python, "-c", "import jwt, coverage\ntry:\n import github\nexcept ImportError: print('no github')"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "no github"
    t0 = time.perf_counter()
    again = ensure_environment(["PyJWT"], env_root)
    assert again == jwt_env and time.perf_counter() - t0 < 1.0  # reused, not rebuilt
    assert not [p for p in env_root.iterdir() if p.name.startswith(".")]  # no partial build left behind


def test_code_under_test_runs_in_the_dataset_environment_named_in_the_results(jwt_env, env_root, tmp_path):
    cfg = Config()
    cfg.evaluate = EvaluateConfig(
        output_root=tmp_path / "results",
        bootstrap_resamples=20,
        n_samples=1,
        environment="dataset",
        environment_root=env_root,
    )
    dataset = _dataset(tmp_path, SOLUTION)
    # the task's own import declares PyJWT: its reference passes in the dataset's environment, and
    # an answer that imports something only classforge's tree has (PyGithub) fails there
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        json.dumps({"task_id": "T0", "completion": f"```python\n{GITHUB}```", "model": "m"}) + "\n", encoding="utf-8"
    )
    r = evaluate(EvaluationRequest(dataset=dataset, samples_file=samples), cfg, env={}).results
    assert r.settings.environment is not None and r.settings.environment.name == jwt_env.name
    assert r.broken_task_ids == []
    [sample] = r.samples
    assert sample.bucket == "completed" and sample.outcome.test_class_status("TokenTestEncode") == "error"
    assert "No module named 'github'" in json.dumps(sample.outcome.model_dump())
    # on the host (classforge's interpreter) the same answer passes: the verdict depended on the tree
    cfg.evaluate.environment = "host"
    host = evaluate(EvaluationRequest(dataset=dataset, samples_file=samples), cfg, env={}).results
    assert host.settings.environment is None
    assert host.samples[0].outcome.test_class_status("TokenTestEncode") == "success"


def test_the_docker_backend_needs_an_image_that_carries_the_requirements(tmp_path):
    from classforge_bench.benchmark.runner import EvaluationError

    cfg = Config()
    cfg.sandbox.backend = "docker"
    cfg.evaluate = EvaluateConfig(
        output_root=tmp_path / "results", environment="dataset", environment_root=tmp_path / "envs"
    )
    # the task imports jwt: the image installs ClassEval's list, which has no PyJWT
    with pytest.raises(
        EvaluationError,
        match=r"the docker image classforge-sandbox:latest carries "
        r"classforge_bench/benchmark/requirements/classeval.txt only, not PyJWT: build it with "
        r"--build-arg SANDBOX_EXTRAS=\"PyJWT\"",
    ):
        evaluate(EvaluationRequest(dataset=_dataset(tmp_path, SOLUTION), models=["reference"]), cfg, env={})
    assert not (tmp_path / "envs").exists()  # nothing was built on the host


# -- one list for both backends ------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def test_classeval_declares_its_requirements_in_the_one_file(classeval):
    path = requirements_file("classeval.txt")
    assert path.resolve() == (REPO / "classforge_bench" / "benchmark" / "requirements" / "classeval.txt").resolve()
    # the file holds exactly what ClassEval's tasks import (cross-checked against the data)
    assert read_requirements(path) == dataset_requirements(classeval.tasks)
    assert declared_requirements("classeval", classeval.tasks[:2]) == (
        read_requirements(path),
        "classforge_bench/benchmark/requirements/classeval.txt",
    )
    # a dataset of another format declares nothing: its tasks' imports are its requirements
    assert declared_requirements("classforge-release", classeval.tasks[:2]) == (
        dataset_requirements(classeval.tasks[:2]),
        None,
    )


def test_the_dockerfile_sandbox_image_installs_that_same_file():
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    sandbox = dockerfile.split("FROM base AS sandbox", 1)[1].split("\nFROM ", 1)[0]
    default = re.search(r"^ARG SANDBOX_REQUIREMENTS=(\S+)$", sandbox, re.MULTILINE)
    assert default and (REPO / default[1]).resolve() == requirements_file(IMAGE_REQUIREMENTS).resolve()
    assert "COPY ${SANDBOX_REQUIREMENTS} /opt/classforge/requirements.txt" in sandbox
    assert re.search(r"pip install [^\n]*-r /opt/classforge/requirements.txt", sandbox)


def test_the_image_environment_is_named_from_the_file():
    image = image_environment(["numpy", "PyPDF2", "coverage"], "classforge-sandbox:latest")
    carried = read_requirements(requirements_file(IMAGE_REQUIREMENTS))
    assert (
        image.kind == "image"
        and image.python == IMAGE_PYTHON
        and image.path == "docker image classforge-sandbox:latest"
    )
    assert image.requirements == sorted([*carried, "coverage"], key=str.lower)
    assert image.declared_in == "classforge_bench/benchmark/requirements/classeval.txt" and image.name.startswith(
        "image-"
    )
    with pytest.raises(EnvironmentBuildError, match="not PyYAML, torch"):
        image_environment(["numpy", "PyYAML", "torch"], "img")
