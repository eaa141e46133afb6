"""The mutation gate and the strengthening round in the build: keep, drop, strengthen (kept, still
weak, failing the reference, invalid), resume without re-measuring, and one real sandboxed run."""

from __future__ import annotations

from pathlib import Path

import construct_fixtures as fx
import pytest
from construct_kit import (
    MODELS,
    Run,
    ScriptedGate,
    ScriptedMutator,
    as_class,
    funnel_rows,
    intra_pair,
    make_config,
    mutation_report,
    scripted_server,
)

from classforge_bench.pipeline.config import MutationConfig
from classforge_bench.pipeline.construct.composition import CandidateResult
from classforge_bench.pipeline.construct.gate import GateOutcome, SandboxGate
from classforge_bench.pipeline.core import reasons as R

NAME = "FusedTallyCounterBoundedStack"
EXTRA = """

class {name}TestStrengthened(unittest.TestCase):
    def test_capacity_is_kept(self):
        stack = {name}(1)
        stack.push("a")
        self.assertEqual(stack.size(), 1)
"""
STRENGTHEN = r"You strengthen unittest test suites"


@pytest.fixture
def server():
    with scripted_server() as srv:
        yield srv


def build(server, tmp_path: Path, mutator, gate=None, **mutation):
    cfg = make_config(server.base_url, tmp_path, mutation=MutationConfig(**mutation))
    return Run(cfg, gate, mutator)(intra_pair(), tmp_path / "out")


def strengthened_tests() -> str:
    return (as_class(fx.TESTS, NAME) + EXTRA.format(name=NAME)).strip()


def answer_strengthening(server, code: str | None = None) -> None:
    text = "No code here, sorry." if code == "" else fx.fenced(code or strengthened_tests())
    server.add_rule(model=MODELS["test_writer"], pattern=STRENGTHEN, replies=[text])


def strengthen_requests(server):
    return [
        r
        for r in server.chat_requests
        if r.model == MODELS["test_writer"] and STRENGTHEN in r.body["messages"][0]["content"]
    ]


def rejected(result, stage: str, reason: str) -> CandidateResult:
    assert not result.tasks and not result.incomplete
    (rej,) = [r for r in result.rejections if r.stage != R.PAIRING]
    assert (rej.stage, rej.reason) == (stage, reason), rej
    path = result.out_dir / "candidates" / f"{rej.item_id}.json"
    return CandidateResult.model_validate_json(path.read_text())


def test_strong_tests_pass_and_the_report_lands_on_the_task(server, tmp_path):
    mutator = ScriptedMutator([mutation_report(9, 1)])
    gate = ScriptedGate(
        [GateOutcome(passed=True, line_coverage=100.0, branch_coverage=100.0, tests_run=15, wall_s=0.25)]
    )
    result = build(server, tmp_path, mutator, gate, min_score=0.8)
    (task,) = result.tasks
    rows = funnel_rows(result)
    assert rows[R.MUTATION] == (1, 1, {}) and R.STRENGTHEN not in rows
    assert task.mutation_score == pytest.approx(0.9)
    assert task.mutation.survived == 1 and task.mutation.surviving[0].diff.startswith("--- original")
    (call,) = mutator.calls
    assert call[0] == task.solution_code and call[1] == task.test and call[2] == task.test_classes
    assert call[4] == 0.25  # the gate's run times the reference: no extra run for it
    assert not strengthen_requests(server) and "tests_strengthen" not in task.prompt_versions


def test_weak_tests_are_dropped_when_strengthening_is_off(server, tmp_path):
    result = build(server, tmp_path, ScriptedMutator([mutation_report(5, 5)]), min_score=0.7, strengthen=False)
    done = rejected(result, R.MUTATION, R.WEAK_TESTS)
    assert "50.0%" in done.outcomes[-1].detail and "70.0%" in done.outcomes[-1].detail
    assert not strengthen_requests(server)


def test_strengthened_tests_replace_the_weak_ones(server, tmp_path):
    answer_strengthening(server)
    gate = ScriptedGate()
    mutator = ScriptedMutator([mutation_report(5, 5), mutation_report(9, 1)])
    result = build(server, tmp_path, mutator, gate, min_score=0.7)
    (task,) = result.tasks
    rows = funnel_rows(result)
    assert rows[R.MUTATION] == (1, 1, {}) and rows[R.STRENGTHEN] == (1, 1, {})
    assert task.test.strip() == strengthened_tests() and f"{NAME}TestStrengthened" in task.test_classes
    assert (
        task.mutation_score == pytest.approx(0.9) and task.prompt_versions["tests_strengthen"] == "tests_strengthen@v1"
    )
    # The new suite went through the verification gate, then was measured again.
    assert gate.calls[-1][1].strip() == strengthened_tests() and mutator.calls[-1][1].strip() == strengthened_tests()
    (request,) = strengthen_requests(server)
    prompt = request.body["messages"][1]["content"]
    assert "lets 5 of 10 mutants" in prompt and "m0004" in prompt and "+x = 5" in prompt
    done = CandidateResult.model_validate_json(
        (result.out_dir / "candidates" / f"{task.candidate_id}.json").read_text()
    )
    assert done.mutation.first_report.score == pytest.approx(0.5) and done.mutation.strengthened is not None


def test_the_task_records_the_environment_checks_of_the_suite_it_ships(server, tmp_path):
    answer_strengthening(server)
    first = {"applied": ["cwd"], "skipped": {}, "errors": {}, "changed": {}, "isolation": "bwrap"}
    second = {**first, "applied": ["cwd", "host-user"]}
    gate = ScriptedGate(
        [
            GateOutcome(passed=True, line_coverage=100.0, environment=first),
            GateOutcome(passed=True, line_coverage=100.0, environment=second),
        ]
    )
    result = build(
        server, tmp_path, ScriptedMutator([mutation_report(5, 5), mutation_report(9, 1)]), gate, min_score=0.7
    )
    (task,) = result.tasks
    assert task.environment_checks == second  # the strengthened suite's checks, not the judged suite's


def test_still_weak_after_strengthening(server, tmp_path):
    answer_strengthening(server)
    result = build(server, tmp_path, ScriptedMutator([mutation_report(5, 5), mutation_report(6, 4)]), min_score=0.7)
    done = rejected(result, R.STRENGTHEN, R.WEAK_TESTS)
    assert "after strengthening" in done.outcomes[-1].detail and "(before: 50.0%)" in done.outcomes[-1].detail
    assert funnel_rows(result)[R.MUTATION] == (1, 1, {})


def test_strengthened_tests_that_fail_the_reference(server, tmp_path):
    answer_strengthening(server)
    gate = ScriptedGate(
        [
            GateOutcome(passed=True, line_coverage=100.0),
            GateOutcome(passed=False, reason="test-failed", detail="1 failed"),
        ]
    )
    mutator = ScriptedMutator([mutation_report(5, 5)])
    result = build(server, tmp_path, mutator, gate, min_score=0.7)
    done = rejected(result, R.STRENGTHEN, R.STRENGTHENED_TESTS_FAIL_REFERENCE)
    assert done.outcomes[-1].detail.startswith("[test-failed]")
    assert len(mutator.calls) == 1  # not measured again


@pytest.mark.parametrize(
    "code", ["", "import unittest\n\nclass Unrelated(unittest.TestCase):\n    def test_x(self):\n        pass\n"]
)
def test_strengthened_tests_that_are_not_a_valid_suite(server, tmp_path, code):
    answer_strengthening(server, code)
    gate = ScriptedGate()
    result = build(server, tmp_path, ScriptedMutator([mutation_report(5, 5)]), gate, min_score=0.7)
    rejected(result, R.STRENGTHEN, R.STRENGTHENED_TESTS_INVALID)
    assert len(gate.calls) == 1  # only the solution's own gate run


def test_resumed_build_neither_measures_nor_asks_again(server, tmp_path):
    answer_strengthening(server)
    first = build(server, tmp_path, ScriptedMutator([mutation_report(5, 5), mutation_report(10, 0)]), min_score=0.7)
    asked = len(server.chat_requests)
    again_mutator = ScriptedMutator([mutation_report(0, 10)])  # would drop it, were it asked
    second = build(server, tmp_path, again_mutator, min_score=0.7)
    assert second.resumed == 1 and not again_mutator.calls and len(server.chat_requests) == asked
    assert [t.model_dump() for t in second.tasks] == [t.model_dump() for t in first.tasks]


def test_real_sandbox_mutation_in_the_build(server, tmp_path):
    """The default mutator: the real sandbox, outcomes cached in the build folder."""
    cfg = make_config(
        server.base_url, tmp_path, mutation=MutationConfig(min_score=0.0, max_mutants_per_method=3, timeout_floor_s=2.0)
    )
    cfg.sandbox.workers = 2
    result = Run(cfg, SandboxGate(cfg.sandbox))(intra_pair(), tmp_path / "out")
    (task,) = result.tasks
    report = task.mutation
    assert report is not None and report.mutants > 0 and task.mutation_score == pytest.approx(report.score, abs=1e-4)
    assert report.mutants == report.killed + report.survived + report.timed_out + report.equivalent
    assert list((tmp_path / "out" / "mutation-cache").rglob("*.jsonl"))
