"""The Python environment code under test runs in, built from the dataset's declared requirements.

Run with classforge's own interpreter, a program sees classforge's dependency tree: PyJWT (pulled
in by PyGithub) makes a ClassEval task pass that fails where only the dataset's requirements are
installed. With `evaluate.environment = "dataset"` the sandbox runs a virtual environment of its
own instead, holding exactly:

- the dataset's requirements: for a ClassEval dataset, the list in
  `classforge_bench/benchmark/requirements/classeval.txt` (the one file the docker backend's image installs too);
  for any other dataset, for every third-party module the selected tasks import (in their
  solutions, tests, skeletons and import statements), its distribution (`_DISTRIBUTIONS` maps
  import names that differ, e.g. `jwt` -> PyJWT, `PIL` -> pillow). No versions are declared, so
  pip resolves the newest, and the versions it installed are recorded;
- the sandbox harness's own needs (`coverage`).

With the docker backend the environment is the sandbox image itself: the `Dockerfile`'s `sandbox`
target installs the same requirements file, and the results name the image (`image_environment`).

It is built once per (requirements, Python version) under `evaluate.environment_root`, by
`python -m venv` and pip (which reuses its download cache), in a temporary folder renamed into
place when complete, so an interrupted build is never used; later runs reuse it. Its name, path
and installed versions are written into the results' settings.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.resources
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.core.class_analysis import is_stdlib_module
from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.core.source import parse
from classforge_bench.pipeline.core.task import Task

log = logging.getLogger(__name__)

HARNESS_REQUIREMENTS = ("coverage",)
MARKER = "classforge-environment.json"
# the datasets whose requirements are declared in a file of classforge_bench/benchmark/requirements/ (format -> file)
DECLARED = {"classeval": "classeval.txt"}
IMAGE_REQUIREMENTS = "classeval.txt"  # what the Dockerfile's sandbox target installs (ARG SANDBOX_REQUIREMENTS)
IMAGE_PYTHON = "python"  # the image's interpreter, where the requirements are installed
# import name -> distribution, where they differ (the rest install under their import name)
_DISTRIBUTIONS = {
    "PIL": "pillow",
    "docx": "python-docx",
    "bs4": "beautifulsoup4",
    "jwt": "PyJWT",
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "yaml": "PyYAML",
    "dateutil": "python-dateutil",
    "Crypto": "pycryptodome",
    "pptx": "python-pptx",
    "fitz": "PyMuPDF",
    "attr": "attrs",
    "serial": "pyserial",
}


class EnvironmentBuildError(InfrastructureError):
    """The environment could not be built; the message names the requirement set and why."""


class EnvironmentInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    path: str
    python: str
    requirements: list[str]
    installed: list[str]  # `pip freeze` of the environment
    kind: Literal["venv", "image"] = Field(
        "venv", description="a virtual environment (local backend) or the docker image"
    )
    declared_in: str | None = Field(
        None, description="the requirements file the list comes from; None: the tasks' imports"
    )


def imported_modules(task: Task) -> set[str]:
    """Top-level names of the absolute imports in a task's code (sources that do not parse are skipped)."""
    names: set[str] = set()
    for source in (task.solution_code, task.test, task.skeleton, "\n".join(task.import_statement)):
        try:
            module = parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(module):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def distribution_of(module: str) -> str:
    """The distribution that installs the top-level module `module` (its own name unless `_DISTRIBUTIONS` says otherwise)."""
    return _DISTRIBUTIONS.get(module, module)


def dataset_requirements(tasks: Iterable[Task]) -> list[str]:
    """The distributions the tasks need beyond the standard library, sorted."""
    third_party = {name for t in tasks for name in imported_modules(t) if not is_stdlib_module(name)}
    return sorted({distribution_of(name) for name in third_party}, key=str.lower)


def requirements_file(name: str) -> Path:
    return Path(str(importlib.resources.files("classforge_bench.benchmark").joinpath("requirements", name)))


def read_requirements(path: Path) -> list[str]:
    """Requirement lines of a requirements file (comments and blank lines dropped)."""
    lines = (line.split("#", 1)[0].strip() for line in Path(path).read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def declared_requirements(dataset_format: str, tasks: Iterable[Task]) -> tuple[list[str], str | None]:
    """The dataset's requirements and the file they are declared in: a ClassEval dataset's file,
    plus any import of its tasks the file misses (a modified dataset); otherwise the imports."""
    derived = dataset_requirements(tasks)
    if dataset_format not in DECLARED:
        return derived, None
    path = requirements_file(DECLARED[dataset_format])
    declared = read_requirements(path)
    known = {r.lower() for r in declared}
    return declared + [
        r for r in derived if r.lower() not in known
    ], f"classforge_bench/benchmark/requirements/{path.name}"


def image_environment(requirements: list[str], image: str) -> EnvironmentInfo:
    """The docker backend's environment: its image, which installs `IMAGE_REQUIREMENTS` (see the
    Dockerfile). Requirements the image does not carry are an error naming them."""
    carried = read_requirements(requirements_file(IMAGE_REQUIREMENTS))
    known = {r.lower() for r in carried} | set(HARNESS_REQUIREMENTS)
    missing = [r for r in requirements if r.lower() not in known]
    if missing:
        raise EnvironmentBuildError(
            f"the docker image {image} carries classforge_bench/benchmark/requirements/{IMAGE_REQUIREMENTS} only, not {', '.join(missing)}: "
            f'build it with --build-arg SANDBOX_EXTRAS="{" ".join(missing)}", or use the local backend'
        )
    wanted = sorted(set(carried) | set(HARNESS_REQUIREMENTS), key=str.lower)
    digest = hashlib.sha256(json.dumps(wanted).encode()).hexdigest()[:12]
    return EnvironmentInfo(
        name=f"image-{digest}",
        path=f"docker image {image}",
        python=IMAGE_PYTHON,
        requirements=wanted,
        installed=[],
        kind="image",
        declared_in=f"classforge_bench/benchmark/requirements/{IMAGE_REQUIREMENTS}",
    )


def environment_name(requirements: list[str]) -> str:
    material = json.dumps({"requirements": sorted(requirements, key=str.lower), "python": platform.python_version()})
    return "env-" + hashlib.sha256(material.encode()).hexdigest()[:12]


Runner = Callable[..., subprocess.CompletedProcess]


def ensure_environment(
    requirements: list[str],
    root: Path,
    *,
    base_python: str | None = None,
    run: Runner = subprocess.run,
    declared_in: str | None = None,
) -> EnvironmentInfo:
    """The environment for `requirements` (plus the harness's), built now if it does not exist."""
    wanted = sorted(set(requirements) | set(HARNESS_REQUIREMENTS), key=str.lower)
    name = environment_name(wanted)
    root = Path(root).resolve()
    folder = root / name
    marker = folder / MARKER
    if marker.is_file():
        found = EnvironmentInfo.model_validate_json(marker.read_text(encoding="utf-8"))
        return found.model_copy(update={"declared_in": declared_in})
    partial = root / f".{name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    log.info("building the evaluation environment %s (%s)", name, ", ".join(wanted))
    try:
        _build(partial, wanted, base_python, run)
        python = folder / "bin" / "python"
        freeze = run(
            [str(partial / "bin" / "python"), "-m", "pip", "freeze", "--all"],
            capture_output=True,
            text=True,
            check=True,
        )
        info = EnvironmentInfo(
            name=name,
            path=str(folder),
            python=str(python),
            requirements=wanted,
            installed=sorted(line for line in freeze.stdout.splitlines() if line.strip()),
            declared_in=declared_in,
        )
        (partial / MARKER).write_text(info.model_dump_json(indent=2), encoding="utf-8")
        try:
            partial.rename(folder)
        except OSError:
            if not marker.is_file():  # not another build finishing first
                raise
            shutil.rmtree(partial, ignore_errors=True)
            return EnvironmentInfo.model_validate_json(marker.read_text(encoding="utf-8"))
    except (OSError, subprocess.CalledProcessError) as e:
        shutil.rmtree(partial, ignore_errors=True)
        detail = getattr(e, "stderr", "") or str(e)
        raise EnvironmentBuildError(
            f"cannot build the evaluation environment {name} ({', '.join(wanted)}): "
            f"{str(detail).strip().splitlines()[-1] if str(detail).strip() else e}"
        ) from e
    return info


def _build(folder: Path, requirements: list[str], base_python: str | None, run: Runner) -> None:
    if base_python is None or Path(base_python).resolve() == Path(sys.executable).resolve():
        # the base interpreter, not classforge's venv: the environment must not see classforge's packages
        venv.EnvBuilder(with_pip=True, symlinks=True).create(folder)
    else:
        run([base_python, "-m", "venv", str(folder)], capture_output=True, text=True, check=True)
    python = str(folder / "bin" / "python")
    run(
        [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *requirements],
        capture_output=True,
        text=True,
        check=True,
    )
