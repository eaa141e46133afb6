"""The app image's Dockerfile and entry point, checked without a Docker engine.

The entry point runs here against a checkout (CLASSFORGE_APP) and a tmp "volume" (CLASSFORGE_HOME);
the Dockerfile is read for what the container must do: run as a non-root user in a volume it owns.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINT = REPO / "scripts" / "docker-entrypoint.sh"


def _app_stage() -> str:
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    return text[text.index("FROM base AS app") :]


def test_app_image_runs_as_non_root_in_a_volume_it_owns() -> None:
    app = _app_stage()
    users = re.findall(r"^USER (\S+)", app, flags=re.M)
    assert users and users[-1] not in ("root", "0", "0:0")
    assert "chown classforge:classforge /data" in app and 'VOLUME ["/data"]' in app
    assert re.findall(r"^WORKDIR (\S+)", app, flags=re.M)[-1] == "/data"
    assert "CLASSFORGE_HOME=/data" in app and "HF_HOME=/data/" in app and "PREFECT_HOME=/data/" in app
    assert 'ENTRYPOINT ["classforge-entrypoint"]' in app and "scripts/docker-entrypoint.sh" in app


def _entry(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CLASSFORGE_APP": str(REPO),
        "CLASSFORGE_HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    return subprocess.run(["sh", str(ENTRYPOINT), *args], env=env, capture_output=True, text=True, timeout=600)


def test_first_start_seeds_the_volume_and_runs_classforge(tmp_path: Path) -> None:
    home = tmp_path / "data"
    home.mkdir()
    first = _entry(home, "--version")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("classforge ")
    assert (home / "examples" / "classforge.toml").is_file() and (home / "prefect.yaml").is_file()
    assert (home / "classforge_bench").resolve() == REPO / "classforge_bench"
    # A later start keeps what the volume holds (a user's edited configuration is never overwritten).
    (home / "examples" / "classforge.toml").write_text("# mine\n")
    again = _entry(home, "prefect", "--version")
    assert again.returncode == 0, again.stderr
    assert (home / "examples" / "classforge.toml").read_text() == "# mine\n"


def test_unwritable_volume_is_one_clear_line() -> None:
    """As the image's user would see a host folder it cannot write (run as nobody when the tests run as root)."""
    import shutil
    import tempfile

    # Neither pytest's tmp nor the clone may be reachable by `nobody` (a clone under root's 0700 home, a
    # `mktemp -d` folder), so the volume and a copy of the entry point live in a folder under /tmp (1777).
    outer = Path(tempfile.mkdtemp(prefix="classforge-ro-", dir="/tmp" if os.geteuid() == 0 else None))
    outer.chmod(0o755)
    entrypoint = outer / "docker-entrypoint.sh"
    shutil.copyfile(ENTRYPOINT, entrypoint)
    entrypoint.chmod(0o755)
    home = outer / "ro"
    home.mkdir(mode=0o555)
    home.chmod(0o555)
    try:
        _check_unwritable(home, entrypoint)
    finally:
        shutil.rmtree(outer)


def _check_unwritable(home: Path, entrypoint: Path) -> None:
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    env = {**os.environ, "CLASSFORGE_APP": str(REPO), "CLASSFORGE_HOME": str(home)}
    proc = subprocess.run(
        [*prefix, "sh", str(entrypoint), "--version"],
        env=env,
        capture_output=True,
        text=True,
        cwd=home.parent,
        timeout=600,
    )  # a cwd `nobody` can enter
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {home} is not writable by uid ") and "named volume" in line
    assert not (home / "examples").exists()


def test_app_image_carries_classeval_packages_and_libfaketime() -> None:
    """The app image runs the local sandbox backend: without ClassEval's declared packages its
    references that import numpy, pandas, bs4... would count as broken, and without libfaketime the
    clock checks would be skipped. It installs the same list as the sandbox image, and no compiler stays."""
    app = _app_stage()
    apt_installs = " ".join(re.findall(r"apt-get install[^&]*", app))
    assert "libfaketime" in apt_installs
    assert re.search(r"pip install -e \"\.\[all\]\" -r classforge_bench/benchmark/requirements/classeval\.txt", app)
    assert re.search(r"apt-get purge -y --auto-remove gcc libc6-dev", app)
    sandbox = (REPO / "Dockerfile").read_text(encoding="utf-8").split("FROM base AS app")[0]
    assert "ARG SANDBOX_REQUIREMENTS=classforge_bench/benchmark/requirements/classeval.txt" in sandbox


def test_app_image_has_the_plus_tiers_generator_where_the_code_looks_for_it() -> None:
    """The example builds with the plus tier on; the generator's interpreter is found beside the
    code (generate.DEFAULT_PYTHON), so the image installs the code in place at /app and makes
    /app/.venv-plus from the tier's own pins. (Read, not built: no Docker engine here.)"""
    from classforge_bench.pipeline.quality.plus.generate import DEFAULT_PYTHON

    app = _app_stage()
    assert DEFAULT_PYTHON.relative_to(REPO) == Path(".venv-plus/bin/python")  # beside the code
    assert re.search(r"^WORKDIR /app$", app, flags=re.M) and "COPY pipeline ./pipeline" in app
    assert re.search(r"pip install -e \"\.\[all\]\" ", app)  # the code stays at /app (a plain install moves it)
    assert "python -m venv /app/.venv-plus" in app
    assert "/app/.venv-plus/bin/pip install -r classforge_bench/pipeline/quality/plus/requirements.txt" in app


def test_the_volume_gets_the_configuration_template(tmp_path: Path) -> None:
    """The weekly deployment reads /data/classforge.toml: the template to copy it from is on the volume."""
    home = tmp_path / "data"
    home.mkdir()
    started = _entry(home, "sh", "-c", "cp classforge.example.toml classforge.toml")
    assert started.returncode == 0, started.stderr
    assert (home / "classforge.toml").read_text() == (REPO / "classforge.example.toml").read_text()
    assert "classforge.example.toml" in _app_stage()
