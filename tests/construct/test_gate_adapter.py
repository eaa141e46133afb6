"""The solution stage's view of the real verification gate (pipeline.sandbox.verify)."""

from __future__ import annotations

import pytest

import construct_fixtures as fx
from pipeline.config import SandboxConfig
from pipeline.construct.gate import GateUnavailable, SandboxGate
from pipeline.construct.interface import interface_from_source
from pipeline.construct.suite_checks import check_tests

sandbox = pytest.importorskip("pipeline.sandbox")
CLASSES = check_tests(fx.TESTS, interface_from_source(fx.SKELETON)).test_classes


def test_correct_solution_passes_with_full_coverage():
    outcome = SandboxGate(SandboxConfig())(fx.SOLUTION, fx.TESTS, CLASSES, item_id="cand-x")
    assert outcome.passed and outcome.reason == "" and outcome.line_coverage == 100.0
    assert outcome.tests_run == 15 and not outcome.failures


def test_wrong_solution_fails_with_the_failing_test_named():
    wrong = fx.SOLUTION.replace('raise IndexError("pop from empty stack")', "return None")
    outcome = SandboxGate(SandboxConfig())(wrong, fx.TESTS, CLASSES, item_id="cand-x")
    assert not outcome.passed and outcome.reason == "test-failed"
    assert any(f.startswith("TallyStackTestPop.test_pop_empty: AssertionError") for f in outcome.failures)


def test_under_covering_solution():
    padded = fx.SOLUTION + "".join(
        f"\n    def unused_{i}(self):\n        total = {i}\n        total += 1\n        return total\n" for i in range(4))
    outcome = SandboxGate(SandboxConfig())(padded, fx.TESTS, CLASSES, item_id="cand-x")
    assert not outcome.passed and outcome.reason == "low-coverage" and outcome.line_coverage < 90


def test_sandbox_failure_is_not_a_verdict(monkeypatch):
    def broken(solution, tests, test_classes, config, *, item_id=""):
        return sandbox.GateVerdict(passed=False, reason=sandbox.GateReason.SANDBOX_ERROR, detail="bwrap missing",
                                   min_line_coverage=90.0, limit_s=60.0, item_id=item_id)

    monkeypatch.setattr(sandbox, "verify", broken)
    with pytest.raises(GateUnavailable, match="cand-x: sandbox error: bwrap missing"):
        SandboxGate(SandboxConfig())(fx.SOLUTION, fx.TESTS, CLASSES, item_id="cand-x")


@pytest.mark.parametrize("mutate, reason", [
    (lambda code: code.replace('raise IndexError("pop from empty stack")', "return None"), "test-failed"),
    (lambda code: code + "".join(f"\n    def unused_{i}(self):\n        total = {i}\n        total += 1\n"
                                 "        return total\n" for i in range(4)), "low-coverage"),
])
def test_build_with_the_real_gate_rejects_bad_solutions(tmp_path, mutate, reason):
    from construct_kit import MODELS, Run, as_class, intra_pair, make_config, scripted_server
    from pipeline.core import reasons as R

    with scripted_server() as server:
        bad = mutate(as_class(fx.SOLUTION, "FusedTallyCounterBoundedStack"))
        server.add_rule(model=MODELS["solver"], replies=[fx.fenced(bad)])
        cfg = make_config(server.base_url, tmp_path)
        result = Run(cfg, SandboxGate(cfg.sandbox))(intra_pair(), tmp_path / "out")
    assert not result.tasks
    assert result.funnel.stages[R.SOLUTION].dropped == {reason: 1}
    (rejection,) = [r for r in result.rejections if r.stage == R.SOLUTION]
    assert rejection.reason == reason and rejection.detail
