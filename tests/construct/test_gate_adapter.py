"""The solution stage's view of the real verification gate (classforge_bench.pipeline.sandbox.verify)."""

from __future__ import annotations

import construct_fixtures as fx
import pytest

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.construct.gate import GateUnavailable, SandboxGate
from classforge_bench.pipeline.construct.interface import interface_from_source
from classforge_bench.pipeline.construct.suite_checks import check_tests

sandbox = pytest.importorskip("classforge_bench.pipeline.sandbox")
CLASSES = check_tests(fx.TESTS, interface_from_source(fx.SKELETON, "TallyStack")).test_classes


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
        f"\n    def unused_{i}(self):\n        total = {i}\n        total += 1\n        return total\n"
        for i in range(4)
    )
    outcome = SandboxGate(SandboxConfig())(padded, fx.TESTS, CLASSES, item_id="cand-x")
    assert not outcome.passed and outcome.reason == "low-coverage" and outcome.line_coverage < 90


def test_sandbox_failure_is_not_a_verdict(monkeypatch):
    def broken(solution, tests, test_classes, config, *, item_id=""):
        return sandbox.GateVerdict(
            passed=False,
            reason=sandbox.GateReason.SANDBOX_ERROR,
            detail="bwrap missing",
            min_line_coverage=90.0,
            limit_s=60.0,
            item_id=item_id,
        )

    monkeypatch.setattr(sandbox, "verify", broken)
    with pytest.raises(GateUnavailable, match="cand-x: sandbox error: bwrap missing"):
        SandboxGate(SandboxConfig())(fx.SOLUTION, fx.TESTS, CLASSES, item_id="cand-x")


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda code: code.replace('raise IndexError("pop from empty stack")', "return None"), "test-failed"),
        (
            lambda code: (
                code
                + "".join(
                    f"\n    def unused_{i}(self):\n        total = {i}\n        total += 1\n        return total\n"
                    for i in range(4)
                )
            ),
            "low-coverage",
        ),
    ],
)
def test_build_with_the_real_gate_rejects_bad_solutions(tmp_path, mutate, reason):
    from construct_kit import MODELS, Run, as_class, intra_pair, make_config, scripted_server

    from classforge_bench.pipeline.core import reasons as R

    with scripted_server() as server:
        bad = mutate(as_class(fx.SOLUTION, "FusedTallyCounterBoundedStack"))
        server.add_rule(model=MODELS["solver"], replies=[fx.fenced(bad)])
        cfg = make_config(server.base_url, tmp_path)
        result = Run(cfg, SandboxGate(cfg.sandbox))(intra_pair(), tmp_path / "out")
    assert not result.tasks
    assert result.funnel.stages[R.SOLUTION].dropped == {reason: 1}
    (rejection,) = [r for r in result.rejections if r.stage == R.SOLUTION]
    assert rejection.reason == reason and rejection.detail


def _host_dependent(code: str) -> str:
    # Empty-pop behaviour that holds only on the sandbox's usual host name: a test catches it
    # only when the host name changes.
    return "import socket\n" + code.replace(
        'raise IndexError("pop from empty stack")',
        'if socket.gethostname() == "sandbox":\n                raise IndexError("pop from empty stack")\n            return None',
    )


def _bwrap_or_skip(config: SandboxConfig) -> None:
    from classforge_bench.pipeline.sandbox.local import LocalBackend

    if LocalBackend(config).isolation != "bwrap":
        pytest.skip("the host-name perturbation needs bubblewrap's UTS namespace")


def test_environment_dependent_solution_is_dropped_naming_the_perturbation(tmp_path):
    config = SandboxConfig()
    _bwrap_or_skip(config)
    outcome = SandboxGate(config, tmp_path / "env")(_host_dependent(fx.SOLUTION), fx.TESTS, CLASSES, item_id="cand-x")
    assert not outcome.passed and outcome.reason == "environment-dependent"
    assert outcome.detail.startswith("host-user: TallyStackTestPop.test_pop_empty"), outcome.detail
    assert outcome.environment["changed"]["host-user"] and "clock+365d" in outcome.environment["applied"]
    assert list((tmp_path / "env").rglob("*.json")), "the report is cached by content"


def test_clean_solution_passes_and_records_the_checks_applied():
    outcome = SandboxGate(SandboxConfig())(fx.SOLUTION, fx.TESTS, CLASSES, item_id="cand-x")
    assert outcome.passed and outcome.environment is not None
    assert not outcome.environment["changed"] and not outcome.environment["errors"]
    assert {"hash-seed", "cwd", "host-user", "network"} <= set(outcome.environment["applied"])


def test_checks_can_be_turned_off():
    config = SandboxConfig.model_validate({"environment_checks": {"enabled": False}})
    outcome = SandboxGate(config)(_host_dependent(fx.SOLUTION), fx.TESTS, CLASSES, item_id="cand-x")
    assert outcome.passed and outcome.environment is None


def test_build_drops_an_environment_dependent_task_and_stores_the_checks_on_kept_ones(tmp_path):
    from construct_kit import MODELS, Run, as_class, intra_pair, make_config, scripted_server

    from classforge_bench.pipeline.core import reasons as R

    _bwrap_or_skip(SandboxConfig())
    with scripted_server() as server:
        server.add_rule(
            model=MODELS["solver"],
            replies=[fx.fenced(_host_dependent(as_class(fx.SOLUTION, "FusedTallyCounterBoundedStack")))],
        )
        cfg = make_config(server.base_url, tmp_path)
        result = Run(cfg, SandboxGate(cfg.sandbox))(intra_pair(), tmp_path / "out")
    assert not result.tasks
    assert result.funnel.stages[R.SOLUTION].dropped == {R.ENVIRONMENT_DEPENDENT: 1}
    (rejection,) = [r for r in result.rejections if r.stage == R.SOLUTION]
    assert rejection.detail.startswith("host-user: ")

    with scripted_server() as server:
        server.add_rule(
            model=MODELS["solver"], replies=[fx.fenced(as_class(fx.SOLUTION, "FusedTallyCounterBoundedStack"))]
        )
        cfg = make_config(server.base_url, tmp_path / "clean")
        result = Run(cfg, SandboxGate(cfg.sandbox))(intra_pair(), tmp_path / "clean-out")
    (task,) = result.tasks
    assert task.environment_checks is not None and "host-user" in task.environment_checks["applied"]
