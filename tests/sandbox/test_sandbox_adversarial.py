"""Code under test that attacks the sandbox or the harness must never produce a pass.

Every case pairs an attack with a suite the honest solution *fails* (Target().answer() is 41, the
test wants 42), so a forged pass would show. Each case must end with its expected non-pass status
within the limit plus a small margin, leave no process behind and write nothing outside the work
dir.
"""

from __future__ import annotations

import os
import time

import pytest
from attacks import ATTACKS, HOST_TARGETS, LIMIT_S, MARK, Attack, bait, config  # noqa: F401 - config is a fixture
from sandbox_support import leftover_processes

from classforge_bench.pipeline.sandbox import run_suite

# An attack that ends by itself (a bomb hits its resource limit within milliseconds of CPU) gets a
# limit it never reaches on a working sandbox however busy the machine: with 2 s, load 15-35 turned
# resource and failure verdicts into timeouts. Only the attacks that run forever wait for LIMIT_S.


@pytest.fixture(scope="module")
def backend(local_backend):
    if local_backend.isolation != "bwrap":
        pytest.skip(
            f"the adversarial suite needs full isolation (bubblewrap); this machine has {local_backend.isolation}"
        )
    return local_backend


@pytest.mark.parametrize("case", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_never_passes(case: Attack, config, backend, monkeypatch):  # noqa: F811
    secret, listener = bait(monkeypatch)
    tests = case.tests.replace("PORT", str(listener.getsockname()[1]))
    result = run_suite(
        case.solution,
        tests,
        case.classes,
        config=config,
        backend=backend,
        limit_s=case.limit_s,
        mode=case.mode,
        module_name="target" if case.mode == "import" else "solution",
    )
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing ever connected
    listener.close()

    assert result.status in case.expect, f"{result.status}: {result.detail} {result.tamper}"
    assert not result.passed
    assert case.says in result.detail + " ".join(result.tamper)
    assert secret not in result.model_dump_json()
    for path in HOST_TARGETS:
        assert not os.path.exists(path), f"{path} was written from inside the sandbox"
    time.sleep(0.1)
    assert leftover_processes(MARK) == []
