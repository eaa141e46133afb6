"""The install: one import root under a free distribution name, the version written once, extras.

A wheel built from the checkout is installed (not editable) into a fresh virtualenv and used from a
folder outside the checkout, as a user would: the old top-level names (`pipeline`, `flows`,
`benchmark`, which PyPI distributions of those names also install) must not be importable there.
The fresh virtualenv borrows this interpreter's third-party packages through one .pth file (no
download); it has no classforge of its own but the wheel's."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.extras import EXTRA_OF, MissingExtra, require

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _third_party_sites() -> list[str]:
    return [p for p in sys.path if p.endswith("-packages")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("install")
    # A copy of what a distribution is built from: setuptools builds in-tree (build/, *.egg-info).
    src = tmp / "src"
    shutil.copytree(ROOT / "classforge_bench", src / "classforge_bench", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    wheels = tmp / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = wheels.glob("*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies only: .pth lines are plain path entries, so the editable install's finder
    # in this interpreter's site-packages (a .pth of its own there) is not loaded in the new venv.
    Path(site, "deps.pth").write_text("\n".join(_third_party_sites()) + "\n", encoding="utf-8")
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    away = tmp / "elsewhere"
    away.mkdir()
    return {"wheel": wheel, "python": python, "bin": venv / "bin", "cwd": away}


def _py(installed: dict, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(installed["python"]), "-I", "-c", code],
        cwd=installed["cwd"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_wheel_holds_one_import_root(installed: dict) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"classforge_bench"}
    # package data travels with the code (prompts, the plus tier's requirements, the evaluator's)
    assert "classforge_bench/pipeline/prompts/compose.v1.md" in names
    assert "classforge_bench/benchmark/requirements/classeval.txt" in names


@pytest.mark.slow
def test_a_fresh_install_imports_the_root_and_not_the_old_names(installed: dict) -> None:
    root = _py(installed, "import classforge_bench, classforge_bench.pipeline.cli as c; print(c.__file__)")
    assert root.returncode == 0, root.stderr
    assert str(ROOT) not in root.stdout and "site-packages" in root.stdout
    for old in ("pipeline", "flows", "benchmark"):
        gone = _py(installed, f"import {old}")
        assert gone.returncode != 0 and "ModuleNotFoundError" in gone.stderr, (old, gone.stdout, gone.stderr)


@pytest.mark.slow
def test_the_version_comes_from_the_metadata(installed: dict) -> None:
    got = _py(installed, "import classforge_bench; print(classforge_bench.__version__)")
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == PYPROJECT["project"]["version"]
    cli = subprocess.run(
        [str(installed["bin"] / "classforge"), "--version"], cwd=installed["cwd"], capture_output=True, text=True
    )
    assert cli.stdout.strip() == f"classforge {PYPROJECT['project']['version']}", cli.stderr


@pytest.mark.slow
def test_the_console_script_answers_help_there(installed: dict) -> None:
    run = subprocess.run(
        [str(installed["bin"] / "classforge"), "--help"], cwd=installed["cwd"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "evaluate" in run.stdout and "build" in run.stdout


def test_the_version_is_written_once() -> None:
    """pyproject.toml holds it; the code reads the metadata (no `__version__ = "..."`, no old dist name)."""
    written = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "classforge_bench").rglob("*.py")
        if re.search(r"__version__\s*=\s*[\"']|version\([\"']classforge[\"']\)", p.read_text(encoding="utf-8"))
    ]
    assert written == []


def test_the_distribution_name_is_not_the_taken_one() -> None:
    # PyPI's `classforge` (checked 2026-11-28: versions 0.1-0.92) installs an import name `classforge`.
    assert PYPROJECT["project"]["name"] == "classforge-bench"


def test_heavy_services_are_extras_not_requirements() -> None:
    required = " ".join(PYPROJECT["project"]["dependencies"]).lower()
    for optional in ("prefect", "dask", "docker", "matplotlib", "datasets", "pytest", "fastapi"):
        assert optional not in required, optional
    extras = PYPROJECT["project"]["optional-dependencies"]
    for module, extra in EXTRA_OF.items():
        assert extra in extras, (module, extra)
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == {"build", "dask", "docker", "hub", "plots"}


def test_a_missing_extra_is_one_line_naming_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "prefect" else real(name, *a))
    with pytest.raises(MissingExtra) as caught:
        require("prefect", "classforge build")
    message = str(caught.value)
    assert isinstance(caught.value, InputError) and "\n" not in message
    assert "classforge build needs prefect" in message and "classforge-bench[build]" in message
    monkeypatch.undo()
    require("prefect", "classforge build")  # installed here ([all]): no raise
