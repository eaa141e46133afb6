"""One conformance suite for every sandbox backend available here (see conftest.backend_case).

Isolation-specific checks run only where the backend claims that isolation; the default local
backend (bubblewrap) claims all of them, and the adversarial suite holds it to that.
"""

from __future__ import annotations

import socket
import time
import uuid

import pytest
from sandbox_support import leftover_processes

from classforge_bench.pipeline.sandbox.base import RunLimits, SandboxError
from classforge_bench.pipeline.sandbox.env import ALLOWED_NAMES

LIMITS = RunLimits(wall_s=10, memory_mb=1024, max_processes=32, output_cap_bytes=4096)


def run_py(case, code: str, limits: RunLimits = LIMITS, files: dict | None = None, outputs=(), env=None):
    backend = case.backend
    return backend.run(
        {"main.py": code, **(files or {})}, [backend.python, "main.py"], limits, outputs=outputs, env=env
    )


def test_files_in_outputs_out(backend_case):
    code = (
        "import pathlib\n"
        "data = pathlib.Path('in/data.txt').read_text()\n"
        "pathlib.Path('out').mkdir()\n"
        "pathlib.Path('out/result.txt').write_text(data.upper())\n"
        "pathlib.Path('plain.bin').write_bytes(bytes(range(256)))\n"
    )
    result = run_py(
        backend_case, code, files={"in/data.txt": "hello"}, outputs=["out/result.txt", "plain.bin", "absent.txt"]
    )
    assert result.exit_code == 0, result.stderr
    assert result.outputs == {"out/result.txt": b"HELLO", "plain.bin": bytes(range(256))}
    assert result.isolation == backend_case.backend.isolation


def test_exit_status_and_signal(backend_case):
    assert run_py(backend_case, "import sys; sys.exit(3)").exit_code == 3
    # A fault, not kill(): a PID-namespace init (unshare runs the command as PID 1) ignores
    # signals it sends itself, but not a forced SIGSEGV.
    crashed = run_py(backend_case, "import ctypes; ctypes.string_at(0)")
    assert crashed.exit_code is None and crashed.signal == 11


def test_output_is_capped_and_flagged(backend_case):
    result = run_py(backend_case, "import sys; sys.stdout.write('x' * 200000); sys.stderr.write('e' * 10)")
    assert result.exit_code == 0
    assert len(result.stdout) == LIMITS.output_cap_bytes and result.stdout_truncated
    assert result.stderr == "e" * 10 and not result.stderr_truncated


def test_wall_limit_kills_the_whole_tree(backend_case):
    marker = f"cfmark{uuid.uuid4().hex[:10]}"
    code = (
        "import subprocess, time\n"
        f"subprocess.Popen(['sh', '-c', 'trap \"\" TERM; sleep 300; echo {marker}'])\n"
        "time.sleep(300)\n"
    )
    started = time.monotonic()
    result = run_py(backend_case, code, limits=LIMITS.model_copy(update={"wall_s": 1.0}))
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 150  # killed, not left to its 300 s sleep (promptness: benchmarks/)
    time.sleep(0.2)
    assert leftover_processes(marker) == []


def test_environment_is_allow_listed(backend_case, monkeypatch):
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "HF_TOKEN", "SOME_HOST_VARIABLE"):
        monkeypatch.setenv(name, "secret-value-123")
    result = run_py(backend_case, "import os, json; print(json.dumps(dict(os.environ)))", env={"PYTHONHASHSEED": "7"})
    import json

    inside = json.loads(result.stdout)
    assert "secret-value-123" not in result.stdout
    assert set(inside) - {"PWD", "SHLVL", "_"} <= ALLOWED_NAMES
    assert inside["PYTHONHASHSEED"] == "7"


def test_secret_like_or_unknown_variables_are_refused(backend_case):
    with pytest.raises(SandboxError, match="credential"):
        run_py(backend_case, "pass", env={"OPENAI_API_KEY": "x"})
    with pytest.raises(SandboxError, match="allow-list"):
        run_py(backend_case, "pass", env={"RANDOM_NAME": "x"})


def test_each_run_gets_a_fresh_work_dir(backend_case):
    first = run_py(backend_case, "open('left.txt', 'w').write('x')")
    second = run_py(backend_case, "import os; print(sorted(os.listdir('.')))")
    assert first.exit_code == 0 and second.exit_code == 0
    assert "left.txt" not in second.stdout and "main.py" in second.stdout


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/passwd", "a/../../b", ""])
def test_file_names_must_stay_inside(backend_case, name):
    with pytest.raises(SandboxError):
        backend_case.backend.run({name: "x"}, ["true"], LIMITS)


def test_planted_symlink_is_not_read_back(backend_case):
    result = run_py(backend_case, "import os; os.symlink('/etc/passwd', 'report.json')", outputs=["report.json"])
    assert result.exit_code == 0
    assert result.outputs == {}


def test_resource_usage_is_reported(backend_case):
    code = "import time\nx = bytearray(150 * 1024 * 1024)\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    result = run_py(backend_case, code)
    assert result.exit_code == 0 and result.wall_s >= 0.3
    if result.cpu_s is not None:  # bubblewrap's reaper hides it; the harness measures itself there
        assert result.cpu_s >= 0.25
        assert result.peak_memory_mb >= 150


def test_memory_limit_applies(backend_case):
    if not backend_case.enforces_limits:
        pytest.skip(f"{backend_case.name} leaves limits to an engine it does not have")
    result = run_py(
        backend_case, "x = bytearray(600 * 1024 * 1024)", limits=LIMITS.model_copy(update={"memory_mb": 256})
    )
    assert result.exit_code != 0
    assert "MemoryError" in result.stderr or result.signal == 9


def test_filesystem_outside_the_work_dir_is_read_only(backend_case, tmp_path):
    if not backend_case.isolates_fs:
        pytest.skip(f"{backend_case.name} does not isolate the filesystem")
    target = tmp_path / "escape.txt"
    code = f"open({str(target)!r}, 'w').write('x')"
    result = run_py(backend_case, code)
    assert result.exit_code != 0
    assert not target.exists()


def test_no_network(backend_case):
    if not backend_case.isolates_net:
        pytest.skip(f"{backend_case.name} does not isolate the network")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        "s = socket.socket(); s.settimeout(2)\n"
        f"print('connect', s.connect_ex(('127.0.0.1', {port})))\n"
        "try:\n    socket.getaddrinfo('example.com', 80); print('dns ok')\nexcept OSError as e:\n    print('dns failed')\n"
    )
    result = run_py(backend_case, code)
    # A completed handshake would sit in the accept queue even though nobody accepted it.
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()
    assert "dns failed" in result.stdout
    assert "connect 0" not in result.stdout and "connect" in result.stdout
