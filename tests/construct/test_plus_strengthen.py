"""Search-based strengthening before the LLM re-ask, and the plus tier on built tasks: a weak suite
that the plus tests lift over the threshold costs no LLM call (and build.json counts it); one they
do not lift goes on to the LLM as before; a built task carries its plus suite and the mutation
score base + plus reach together."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from construct_kit import (
    ENV,
    MODELS,
    ScriptedGate,
    ScriptedMutator,
    funnel_rows,
    intra_pair,
    make_config,
    mutation_report,
    scripted_server,
)

from classforge_bench.pipeline.config import MutationConfig
from classforge_bench.pipeline.construct.build import BuildSettings, build_tasks
from classforge_bench.pipeline.construct.composition import CompositionTrack
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.task import PlusSuite
from classforge_bench.pipeline.llm.cache import ResponseCache
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.ledger import UsageLedger

STRENGTHEN = r"You strengthen unittest test suites"


class ScriptedPlusMaker:
    def __init__(self, suite: PlusSuite) -> None:
        self.suite, self.calls = suite, []

    def __call__(self, solution, class_name, skeleton, *, item_id, base_tests=""):
        self.calls.append((class_name, item_id))
        test = self.suite.test.replace("CLASS", class_name)
        return self.suite.model_copy(
            update={"test": test, "test_classes": [c.replace("CLASS", class_name) for c in self.suite.test_classes]}
        )


SUITE = PlusSuite(
    test="import unittest\n\n\nclass CLASSTestMain(unittest.TestCase):\n    def test_main_1(self):\n"
    "        self.assertTrue(True)\n",
    test_classes=["CLASSTestMain"],
    tests=1,
    generated=3,
)


def _build(server, tmp_path: Path, mutator, plus_maker, *, strengthen_first=True):
    cfg = make_config(server.base_url, tmp_path, mutation=MutationConfig(min_score=0.7))
    cfg.plus.enabled, cfg.plus.strengthen_first = True, strengthen_first
    cache = ResponseCache(cfg.llm.cache_path)
    client = LLMClient(cfg.llm, ENV, cache, UsageLedger(cfg.llm.costs), sleep=lambda s: None, rng=random.Random(3))
    try:
        track = CompositionTrack(
            intra_pair(), BuildSettings.of(cfg), tmp_path / "out", mutator=mutator, plus_maker=plus_maker
        )
        return build_tasks(track, client, ScriptedGate(), tmp_path / "out")
    finally:
        client.close()
        cache.close()


@pytest.fixture
def server():
    with scripted_server() as srv:
        yield srv


def _strengthen_requests(server):
    return [
        r
        for r in server.chat_requests
        if r.model == MODELS["test_writer"] and STRENGTHEN in r.body["messages"][0]["content"]
    ]


def test_plus_tests_lift_a_weak_suite_without_an_llm_call(server, tmp_path):
    maker = ScriptedPlusMaker(SUITE)
    # weak (5/10), then base + plus (8/10), then the plus tier's own measurement (8/10)
    mutator = ScriptedMutator([mutation_report(5, 5), mutation_report(8, 2), mutation_report(8, 2)])
    result = _build(server, tmp_path, mutator, maker)
    (task,) = result.tasks
    assert _strengthen_requests(server) == []
    assert funnel_rows(result)[R.STRENGTHEN] == (1, 1, {})
    assert "# -- plus tier: tests no LLM wrote --" in task.test and task.test_classes[-1].endswith("TestMainPlus")
    assert "tests_strengthen" not in task.prompt_versions
    assert task.plus is not None and task.plus.tests == 1 and task.plus.mutation_score == pytest.approx(0.8)
    summary = json.loads((result.out_dir / "build.json").read_text())
    assert summary["strengthening"] == {"weak_suites": 1, "by_search_llm_calls_saved": 1, "by_llm": 0}


def test_plus_tests_that_do_not_lift_it_leave_the_llm_its_turn(server, tmp_path):
    maker = ScriptedPlusMaker(SUITE)
    # weak, base + plus still weak (6/10): on to the LLM, whose suite reaches 9/10
    mutator = ScriptedMutator([mutation_report(5, 5), mutation_report(6, 4), mutation_report(9, 1)])
    result = _build(server, tmp_path, mutator, maker)
    (task,) = result.tasks
    assert len(_strengthen_requests(server)) == 1 and "# -- plus tier" not in task.test
    assert json.loads((result.out_dir / "build.json").read_text())["strengthening"] == {
        "weak_suites": 1,
        "by_search_llm_calls_saved": 0,
        "by_llm": 1,
    }


def test_strengthen_first_off_goes_straight_to_the_llm(server, tmp_path):
    maker = ScriptedPlusMaker(SUITE)
    mutator = ScriptedMutator([mutation_report(5, 5), mutation_report(9, 1)])
    result = _build(server, tmp_path, mutator, maker, strengthen_first=False)
    assert len(_strengthen_requests(server)) == 1 and len(result.tasks) == 1
    # the plus tier still runs on the built task (one call, after the record)
    assert len(maker.calls) == 1 and result.tasks[0].plus is not None
