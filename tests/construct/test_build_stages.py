"""Stages 2-6 against a loopback OpenAI-compatible server: every failure path ends in the right
stage and reason, and the funnel, the rejects and the records agree."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import construct_fixtures as fx
import pytest
from construct_kit import (
    FOUR_METHODS,
    MODELS,
    Run,
    ScriptedGate,
    as_class,
    funnel_rows,
    intra_pair,
    judge_json,
    make_config,
    scripted_server,
    without_methods,
)

from classforge_bench.pipeline.construct.build import BuildResult
from classforge_bench.pipeline.construct.composition import CandidateResult
from classforge_bench.pipeline.construct.gate import GateOutcome
from classforge_bench.pipeline.core import reasons as R
from tests.fakes.openai_server import HTTPError, Malformed, Truncated

NAME = "FusedTallyCounterBoundedStack"  # what the scripted composer calls the fused class
LATER = (R.COMPOSE, R.TESTS, R.JUDGES, R.SOLUTION, R.TASK)


@pytest.fixture
def server():
    with scripted_server() as srv:
        yield srv


def build(server, tmp_path: Path, gate=None, **construction) -> BuildResult:
    cfg = make_config(server.base_url, tmp_path, **construction)
    return Run(cfg, gate)(intra_pair(), tmp_path / "out")


def assert_consistent(result: BuildResult) -> None:
    """Each stage sees what the one before kept; drops add up; rejects match the funnel."""
    rows = funnel_rows(result)
    present = [s for s in LATER if s in rows]
    for before, after in itertools.pairwise(present):
        assert rows[after][0] == rows[before][1], (before, after, rows)
    for stage, (seen, kept, dropped) in rows.items():
        assert seen == kept + sum(dropped.values()), stage
    from_rejects: dict[tuple[str, str], int] = {}
    for r in result.rejections:
        from_rejects[(r.stage, r.reason)] = from_rejects.get((r.stage, r.reason), 0) + 1
    from_funnel = {(s, reason): n for s, (_, _, d) in rows.items() for reason, n in d.items()}
    assert from_rejects == from_funnel
    on_disk = [json.loads(line) for line in (result.out_dir / "rejects.jsonl").read_text().splitlines()]
    assert len(on_disk) == len(result.rejections)
    assert json.loads((result.out_dir / "funnel.json").read_text()) == result.funnel.model_dump(mode="json")


def dropped_at(result: BuildResult, stage: str, reason: str) -> CandidateResult:
    assert_consistent(result)
    assert not result.tasks and not result.incomplete
    rows = funnel_rows(result)
    assert rows[stage] == (1, 0, {reason: 1}), rows
    assert all(s not in rows for s in LATER[LATER.index(stage) + 1 :])
    (rej,) = [r for r in result.rejections if r.stage != R.PAIRING]
    assert (rej.stage, rej.reason) == (stage, reason) and rej.item_id == result.pairing.pairs[0].candidate_id
    path = result.out_dir / "candidates" / f"{rej.item_id}.json"
    done = CandidateResult.model_validate_json(path.read_text())
    assert done.status == "rejected" and done.outcomes[-1].reason == reason
    return done


def built(result: BuildResult):
    assert_consistent(result)
    assert len(result.tasks) == 1 and not result.incomplete, (result.rejections, result.incomplete)
    assert funnel_rows(result)[R.TASK] == (1, 1, {})
    return result.tasks[0]


def requests_for(server, model: str):
    return [r for r in server.chat_requests if r.model == model]


# -- the good path -------------------------------------------------------------------------------


def test_good_path_builds_a_complete_record(server, tmp_path):
    task = built(build(server, tmp_path))
    assert task.class_name == NAME and task.task_id.startswith("cf-")
    assert task.test_classes[-1] == f"{NAME}TestMain" and len(task.test_classes) == 7
    assert [m.method_name for m in task.methods_info] == ["push", "pop", "peek", "size", "count_of", "most_common"]
    push = task.methods_info[0]
    assert push.test_class == f"{NAME}TestPush" and push.test_code.startswith(f"class {NAME}TestPush(")
    assert push.method_description.startswith('def push(self, value: str) -> int:\n        """')
    assert push.solution_code.startswith("def push(") and "self.tally[value] += 1" in push.solution_code
    assert push.dependencies.method_dependencies == ["size"] and not push.dependencies.standalone
    assert set(push.dependencies.field_dependencies) == {"self.capacity", "self.items", "self.tally"}
    assert task.fields == ["self.capacity", "self.items", "self.tally"]
    assert task.import_statement == ["from collections import Counter"]
    assert task.class_constructor.startswith(f"class {NAME}: \n    def __init__(self, capacity: int = 10):")
    assert task.judge_scores == [10, 10, 10] and task.coverage == 100.0
    assert task.composition_type == "intra-domain" and task.domain1 == task.domain2 == "Utils"
    assert [s.class_name for s in task.sources] == ["TallyCounter", "BoundedStack"] or [
        s.class_name for s in task.sources
    ] == ["BoundedStack", "TallyCounter"]
    assert all(s.license_spdx == "MIT" and len(s.commit) == 40 and s.first_seen_commit for s in task.sources)
    assert task.models == MODELS
    assert task.prompt_versions == {
        "compose": "compose@v1",
        "tests_writer": "tests_writer@v1",
        "judge": "judge@v1",
        "solve": "solve@v1",
    }
    assert task.metrics.method_count == 6 and task.metrics.dependency_depth == 2
    assert len(server.chat_requests) == 6
    # judges were asked for structured output
    judge_req = requests_for(server, "judge-a")[0]
    assert judge_req.body["response_format"]["type"] == "json_schema"


def test_record_loads_in_the_evaluator(server, tmp_path):
    datasets = pytest.importorskip("classforge_bench.pipeline.formats.loader")
    result = build(server, tmp_path)
    loaded = datasets.load_dataset(result.out_dir / "tasks.jsonl")
    (task,) = loaded.tasks
    assert task.task_id == result.tasks[0].task_id
    assert task.method_test_classes["most_common"] == f"{NAME}TestMostCommon"
    assert task.class_level_test_classes == [f"{NAME}TestMain"]
    assert not loaded.fixes_applied


# -- composition -----------------------------------------------------------------------------------


# BoundedStack's own interface under a new name: a copy of a source, not a fusion.
STACK_COPY = without_methods(fx.SKELETON, "count_of", "most_common")


def test_bad_skeleton_repaired_once(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(FOUR_METHODS)])
    task = built(build(server, tmp_path))
    assert task.prompt_versions["compose"] == "compose@v1+compose_repair@v3"
    first, repair = requests_for(server, MODELS["composer"])
    # Both source specs travel with the repair (a fusion cannot be repaired without them); the
    # first prompt's format example does not.
    assert [m["role"] for m in repair.messages] == ["system", "user"]
    user = repair.messages[-1]["content"]
    assert "Class `TallyCounter`" in user and "Class `BoundedStack`" in user
    assert "LoanLedger" in first.text and "LoanLedger" not in repair.text
    assert "def peek" in user and "[too-few-methods]" in user
    assert "at least 5 public methods" in user and "(this one has 4 public methods)" in user
    found = [m for m in re.findall(r"^    def (\w+)\(", FOUR_METHODS, re.M) if m != "__init__"]
    assert f"public methods found: {', '.join(found)}" in user


def test_private_methods_are_counted_apart_in_every_message(server, tmp_path):
    renamed = FOUR_METHODS.replace("def peek(", "def _peek(").replace("def push(", "def _push(")
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(renamed)] * 2)
    done = dropped_at(build(server, tmp_path), R.COMPOSE, R.TOO_FEW_METHODS)
    repair = requests_for(server, MODELS["composer"])[1].messages[-1]["content"]
    said = "2 public methods (and 2 private: _push, _peek)"
    assert f"(this one has {said})" in repair
    assert "public methods found: count_of, most_common" in repair
    assert said in done.outcomes[-1].detail


def test_copied_source_is_reasked_with_both_specs(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(STACK_COPY)])
    task = built(build(server, tmp_path))
    assert task.prompt_versions["compose"] == "compose@v1+compose_reask@v2"
    first, reask = requests_for(server, MODELS["composer"])
    user = reask.messages[-1]["content"]
    assert first.messages[-1]["content"] in user  # both specs, as first sent
    assert "reproduces a source class" in user and "Class B `BoundedStack`" in user
    assert "state from both Class A `TallyCounter`" in user and "LoanLedger" not in reask.text


def test_a_copy_cut_at_max_tokens_is_reasked_not_dropped_as_truncated(server, tmp_path):
    # What the 1.5B model did: both source classes, bodies and all, until the answer budget ran out.
    both = fx.COUNTER_SOURCE.rstrip() + "\n\n\n" + fx.STACK_SOURCE
    cut = "```python\n" + both[: both.index("def peek")]
    server.add_rule(model=MODELS["composer"], replies=[Truncated(cut), fx.fenced(fx.SKELETON)])
    task = built(build(server, tmp_path))
    assert task.prompt_versions["compose"] == "compose@v1+compose_reask@v2"
    reask = requests_for(server, MODELS["composer"])[1].messages[-1]["content"]
    assert "both source classes side by side" in reask


def test_a_copy_cut_at_the_full_limit_is_reasked_without_a_retry_for_more_room(server, tmp_path):
    # A real server reports the whole budget spent (1,536 of 1,536 for the 1.5B model's two classes
    # side by side); more room would only have bought a longer copy (3,072 more tokens).
    both = fx.COUNTER_SOURCE.rstrip() + "\n\n\n" + fx.STACK_SOURCE
    cut = "```python\n" + both[: both.index("def peek")]
    server.add_rule(model=MODELS["composer"], replies=[Truncated(cut, completion_tokens=4000), fx.fenced(fx.SKELETON)])
    task = built(build(server, tmp_path))
    first, reask = requests_for(server, MODELS["composer"])
    assert first.body["max_tokens"] == reask.body["max_tokens"] == 4000
    assert "both source classes side by side" in reask.messages[-1]["content"]
    assert task.prompt_versions["compose"] == "compose@v1+compose_reask@v2"


def test_both_sources_side_by_side_is_a_copy(server, tmp_path):
    side_by_side = fx.COUNTER_SOURCE.rstrip() + "\n\n\n" + fx.STACK_SOURCE
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(side_by_side)] * 2)
    done = dropped_at(build(server, tmp_path), R.COMPOSE, R.COPIED_SOURCE)
    assert "both source classes side by side" in done.outcomes[-1].detail
    assert "(attempt 2 repeats attempt 1 unchanged)" in done.outcomes[-1].detail
    reask = requests_for(server, MODELS["composer"])[1].messages[-1]["content"]
    assert "TallyCounter is Class A" in reask and "BoundedStack is Class B" in reask


def test_bad_skeleton_twice_is_rejected_with_its_reason(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(FOUR_METHODS), fx.fenced(FOUR_METHODS)])
    done = dropped_at(build(server, tmp_path), R.COMPOSE, R.TOO_FEW_METHODS)
    assert len(done.compose.attempts) == 2 and "after 2 attempt(s)" in done.outcomes[-1].detail


def test_no_repair_when_configured_off(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced("import numpy\n" + fx.SKELETON)])
    dropped_at(build(server, tmp_path, compose_repairs=0), R.COMPOSE, R.NON_STDLIB_IMPORT)
    assert len(requests_for(server, MODELS["composer"])) == 1


def test_prose_only_reply_is_no_code(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=["I would fuse them into a stack."] * 2)
    dropped_at(build(server, tmp_path), R.COMPOSE, R.NO_CODE)


def test_truncated_skeleton(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[Truncated("```python\nclass Half:\n    def a(self")])
    done = dropped_at(build(server, tmp_path), R.COMPOSE, R.TRUNCATED)
    assert "max_tokens=4000" in done.outcomes[-1].detail


def test_rate_limit_and_malformed_body_are_retried(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[HTTPError(status=429, retry_after=0)])
    server.add_rule(model=MODELS["solver"], replies=[Malformed()])
    cfg = make_config(server.base_url, tmp_path)
    run = Run(cfg)
    built(run(intra_pair(), tmp_path / "out"))
    assert len(requests_for(server, MODELS["composer"])) == 2 and len(requests_for(server, MODELS["solver"])) == 2


# -- tests ---------------------------------------------------------------------------------------


def test_tests_calling_a_missing_method(server, tmp_path):
    bad = as_class(fx.TESTS, NAME).replace('stack.count_of("a"), 2)', 'stack.frequency("a"), 2)')
    server.add_rule(model=MODELS["test_writer"], replies=[fx.fenced(bad)])
    done = dropped_at(build(server, tmp_path), R.TESTS, R.UNKNOWN_MEMBER)
    assert done.outcomes[-1].detail.count("uses 'frequency'") == done.tests.reply.count("frequency") == 2


def test_tests_without_a_method_test_class(server, tmp_path):
    bad = as_class(fx.TESTS, NAME).replace(f"class {NAME}TestPeek(", f"class {NAME}PeekCases(")
    server.add_rule(model=MODELS["test_writer"], replies=[fx.fenced(bad)])
    dropped_at(build(server, tmp_path), R.TESTS, R.MISSING_METHOD_TEST_CLASS)


def test_truncated_tests(server, tmp_path):
    server.add_rule(model=MODELS["test_writer"], replies=[Truncated("```python\nimport unittest\nclass A(")])
    dropped_at(build(server, tmp_path), R.TESTS, R.TRUNCATED)


# -- judges --------------------------------------------------------------------------------------


def test_judges_disagree_but_two_full_marks_advance(server, tmp_path):
    server.add_rule(model="judge-c", replies=[judge_json(6, "pop's tally claim is not documented")])
    task = built(build(server, tmp_path))
    assert task.judge_scores == [10, 10, 6]
    assert (
        task.judge_votes[2].reasons == "pop's tally claim is not documented" and task.judge_votes[2].model == "judge-c"
    )


def test_judges_disagree_too_few_full_marks(server, tmp_path):
    server.add_rule(model="judge-b", replies=[judge_json(7)])
    server.add_rule(model="judge-c", replies=[judge_json(6)])
    done = dropped_at(build(server, tmp_path), R.JUDGES, R.INSUFFICIENT_FULL_MARKS)
    assert [v.score for v in done.judges.votes] == [10, 7, 6]
    assert "1 of 3 judges gave full marks, 2 needed" in done.outcomes[-1].detail


def test_threshold_is_configurable(server, tmp_path):
    server.add_rule(model="judge-c", replies=[judge_json(9)])
    dropped_at(build(server, tmp_path, judge_min_full_marks=3), R.JUDGES, R.INSUFFICIENT_FULL_MARKS)


def test_judge_answer_not_json_is_retried_once(server, tmp_path):
    server.add_rule(model="judge-a", replies=["The tests look great, 10/10!"])
    task = built(build(server, tmp_path))
    assert task.judge_scores == [10, 10, 10] and task.judge_votes[0].attempts == 2
    assert "not valid JSON" in task.judge_votes[0].errors[0]
    assert task.prompt_versions["judge"] == "judge@v1+judge_retry@v1"
    retry = requests_for(server, "judge-a")[1]
    assert "not valid JSON" in retry.messages[-1]["content"] and retry.messages[-2]["role"] == "assistant"


def test_judge_malformed_twice_is_a_failed_vote(server, tmp_path):
    server.add_rule(model="judge-b", replies=['{"score": "ten"}', Truncated('{"score": 10, "reas')])
    task = built(build(server, tmp_path))
    assert task.judge_scores == [10, None, 10]
    vote = task.judge_votes[1]
    assert vote.status == "malformed" and vote.attempts == 2
    # 5 tokens of a 4000-token budget: not max_tokens, and the error says so.
    assert vote.errors[1].startswith("judge reply cut by a server-side limit at 5 answer tokens (max_tokens=4000")


def test_too_many_failed_votes(server, tmp_path):
    server.add_rule(model="judge-a", replies=["no", "still no"])
    server.add_rule(model="judge-b", replies=[HTTPError(status=400, message="unsupported")])
    done = dropped_at(build(server, tmp_path), R.JUDGES, R.JUDGE_VOTES_FAILED)
    assert [v.status for v in done.judges.votes] == ["malformed", "call-failed", "scored"]


def test_unreachable_judge_does_not_decide_alone(server, tmp_path):
    server.add_rule(model="judge-c", replies=[HTTPError(status=500), HTTPError(status=502)])
    task = built(build(server, tmp_path))
    assert task.judge_votes[2].status == "call-failed" and task.judge_scores == [10, 10, None]


# -- solution ------------------------------------------------------------------------------------


def test_failing_solution(server, tmp_path):
    gate = ScriptedGate(
        [
            GateOutcome(
                passed=False,
                reason="test-failed",
                detail="2 of 15 tests failed",
                line_coverage=96.0,
                failures=["TestPop.test_pop_empty: IndexError not raised"],
            )
        ]
    )
    done = dropped_at(build(server, tmp_path, gate=gate), R.SOLUTION, "test-failed")
    assert done.solution.gate.failures and len(gate.calls) == 1
    solution, tests, classes, item = gate.calls[0]
    assert f"class {NAME}" in solution and tests.startswith("import unittest") and len(classes) == 7
    assert item == done.candidate_id


def test_under_covering_solution(server, tmp_path):
    gate = ScriptedGate(
        [GateOutcome(passed=False, reason="low-coverage", detail="line coverage 71.4% < 90%", line_coverage=71.4)]
    )
    dropped_at(build(server, tmp_path, gate=gate), R.SOLUTION, "low-coverage")


def test_solution_missing_a_method_never_reaches_the_gate(server, tmp_path):
    code = as_class(fx.SOLUTION, NAME)
    code = code[: code.index("    def most_common(")].rstrip() + "\n"
    server.add_rule(model=MODELS["solver"], replies=[fx.fenced(code)])
    gate = ScriptedGate()
    dropped_at(build(server, tmp_path, gate=gate), R.SOLUTION, R.SOLUTION_MISSING_METHOD)
    assert gate.calls == []


def test_solution_changing_a_signature(server, tmp_path):
    code = as_class(fx.SOLUTION, NAME).replace("def pop(self) -> str:", "def pop(self, index=-1) -> str:")
    server.add_rule(model=MODELS["solver"], replies=[fx.fenced(code)])
    dropped_at(build(server, tmp_path), R.SOLUTION, R.SOLUTION_SIGNATURE_CHANGED)


def test_a_solver_that_repeats_the_skeleton_is_named_and_never_run(server, tmp_path):
    """The 1.5B model's answer in all 3 solver attempts of the real-model yield run."""
    server.add_rule(model=MODELS["solver"], replies=[fx.fenced(as_class(fx.SKELETON, NAME))])
    gate = ScriptedGate()
    rej = dropped_at(build(server, tmp_path, gate=gate), R.SOLUTION, R.SOLUTION_IS_SKELETON)
    assert "none of the 6 methods besides __init__ is implemented" in rej.outcomes[-1].detail
    assert gate.calls == []


def test_a_solution_with_one_no_op_method_still_goes_to_the_gate(server, tmp_path):
    code = as_class(fx.SOLUTION, NAME).replace(
        "        if not self.tally:\n            return None\n        return self.tally.most_common(1)[0][0]\n",
        "        pass\n",
    )
    assert code.count("pass\n") == 1
    server.add_rule(model=MODELS["solver"], replies=[fx.fenced(code)])
    gate = ScriptedGate()
    built(build(server, tmp_path, gate=gate))
    assert len(gate.calls) >= 1


def test_optional_repair_round(server, tmp_path):
    gate = ScriptedGate(
        [
            GateOutcome(
                passed=False,
                reason="test-failed",
                detail="1 failed",
                failures=["TestMostCommon.test_most_common_none: KeyError"],
            )
        ]
    )
    task = built(build(server, tmp_path, gate=gate, solver_repair=True))
    assert task.prompt_versions["solve"] == "solve@v1+solve_repair@v1" and len(gate.calls) == 2
    repair = requests_for(server, MODELS["solver"])[1]
    assert "test_most_common_none: KeyError" in repair.messages[-1]["content"]


def test_gate_infrastructure_failure_is_retried_next_run(server, tmp_path):
    cfg = make_config(server.base_url, tmp_path)
    broken = Run(cfg, ScriptedGate(raises=RuntimeError("bwrap: cannot create namespace")))
    first = broken(intra_pair(), tmp_path / "out")
    assert not first.tasks and [i.reason for i in first.incomplete] == [R.INCOMPLETE_ERROR]
    assert "bwrap" in first.incomplete[0].detail
    assert not (tmp_path / "out" / "candidates").exists() or not any((tmp_path / "out" / "candidates").iterdir())
    paid = len(server.chat_requests)
    second = Run(cfg)(intra_pair(), tmp_path / "out")
    assert len(second.tasks) == 1 and len(server.chat_requests) == paid  # every call came from the cache
