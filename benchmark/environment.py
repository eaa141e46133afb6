"""The Python environment code under test runs in, built from the dataset's declared requirements.

Run with classforge's own interpreter, a program sees classforge's dependency tree: PyJWT (pulled
in by PyGithub) makes a ClassEval task pass that fails where only the dataset's requirements are
installed. With `evaluate.environment = "dataset"` the sandbox runs a virtual environment of its
own instead, holding exactly:

- the dataset's requirements: for every third-party module the selected tasks import (in their
  solutions, tests, skeletons and import statements), its distribution (`_DISTRIBUTIONS` maps
  import names that differ, e.g. `jwt` -> PyJWT, `PIL` -> pillow); ClassEval declares no versions,
  so pip resolves the newest, and the versions it installed are recorded;
- the sandbox harness's own needs (`coverage`).

It is built once per (requirements, Python version) under `evaluate.environment_root`, by
`python -m venv` and pip (which reuses its download cache), in a temporary folder renamed into
place when complete, so an interrupted build is never used; later runs reuse it. Its name, path
and installed versions are written into the results' settings.
"""

from __future__ import annotations

import ast
import hashlib
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

from pydantic import BaseModel, ConfigDict

from pipeline.core.source import parse
from pipeline.core.task import Task
from pipeline.core.class_analysis import is_stdlib_module
from pipeline.core.errors import InfrastructureError

log = logging.getLogger(__name__)

HARNESS_REQUIREMENTS = ("coverage",)
MARKER = "classforge-environment.json"
# import name -> distribution, where they differ (the rest install under their import name)
_DISTRIBUTIONS = {
    "PIL": "pillow", "docx": "python-docx", "bs4": "beautifulsoup4", "jwt": "PyJWT", "cv2": "opencv-python",
    "sklearn": "scikit-learn", "yaml": "PyYAML", "dateutil": "python-dateutil", "Crypto": "pycryptodome",
    "pptx": "python-pptx", "fitz": "PyMuPDF", "attr": "attrs", "serial": "pyserial",
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


def dataset_requirements(tasks: Iterable[Task]) -> list[str]:
    """The distributions the tasks need beyond the standard library, sorted."""
    third_party = {name for t in tasks for name in imported_modules(t) if not is_stdlib_module(name)}
    return sorted({_DISTRIBUTIONS.get(name, name) for name in third_party}, key=str.lower)


def environment_name(requirements: list[str]) -> str:
    material = json.dumps({"requirements": sorted(requirements, key=str.lower), "python": platform.python_version()})
    return "env-" + hashlib.sha256(material.encode()).hexdigest()[:12]


Runner = Callable[..., subprocess.CompletedProcess]


def ensure_environment(requirements: list[str], root: Path, *, base_python: str | None = None,
                       run: Runner = subprocess.run) -> EnvironmentInfo:
    """The environment for `requirements` (plus the harness's), built now if it does not exist."""
    wanted = sorted(set(requirements) | set(HARNESS_REQUIREMENTS), key=str.lower)
    name = environment_name(wanted)
    root = Path(root).resolve()
    folder = root / name
    marker = folder / MARKER
    if marker.is_file():
        return EnvironmentInfo.model_validate_json(marker.read_text(encoding="utf-8"))
    partial = root / f".{name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    log.info("building the evaluation environment %s (%s)", name, ", ".join(wanted))
    try:
        _build(partial, wanted, base_python, run)
        python = folder / "bin" / "python"
        freeze = run([str(partial / "bin" / "python"), "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                     check=True)
        info = EnvironmentInfo(name=name, path=str(folder), python=str(python), requirements=wanted,
                               installed=sorted(line for line in freeze.stdout.splitlines() if line.strip()))
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
        raise EnvironmentBuildError(f"cannot build the evaluation environment {name} ({', '.join(wanted)}): "
                                f"{str(detail).strip().splitlines()[-1] if str(detail).strip() else e}") from e
    return info


def _build(folder: Path, requirements: list[str], base_python: str | None, run: Runner) -> None:
    if base_python is None or Path(base_python).resolve() == Path(sys.executable).resolve():
        # the base interpreter, not classforge's venv: the environment must not see classforge's packages
        venv.EnvBuilder(with_pip=True, symlinks=True).create(folder)
    else:
        run([base_python, "-m", "venv", str(folder)], capture_output=True, text=True, check=True)
    python = str(folder / "bin" / "python")
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *requirements],
        capture_output=True, text=True, check=True)
