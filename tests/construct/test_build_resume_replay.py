"""Resume, budget stop, concurrency and record-then-replay of whole builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from construct_kit import MODELS, Run, judge_json, make_config, scripted_server, three_pairs

from classforge_bench.pipeline.config import ConfigError
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.llm.cache import ResponseCache
from tests.fakes.openai_server import HTTPError

OUTPUT_FILES = ("tasks.jsonl", "rejects.jsonl", "funnel.json")


def outputs(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUT_FILES}


def script_mixed_outcomes(server) -> None:
    """Of three candidates: one dropped by the judges, one with retried errors along the way."""
    server.add_rule(pattern=r"FusedCoinWalletTallyCounter", model="judge-b", replies=[judge_json(4)])
    server.add_rule(pattern=r"FusedCoinWalletTallyCounter", model="judge-c", replies=[judge_json(5)])
    server.add_rule(pattern=r"CoinWallet", model=MODELS["composer"], replies=[HTTPError(status=429, retry_after=0)])
    server.add_rule(pattern=r"FusedCoinWalletBoundedStack", model="judge-a", replies=["not json"])


def test_record_then_replay_is_byte_identical(tmp_path):
    with scripted_server() as server:
        script_mixed_outcomes(server)
        live = Run(make_config(server.base_url, tmp_path, intra=1, cross=2, concurrency=3, max_reuse=2))
        recorded = live(three_pairs(), tmp_path / "live")
        live_requests = len(server.chat_requests)
        answered = sum(r.reply == "Text" for r in server.chat_requests)
        base_url = server.base_url
    # the server is gone: replay must not need it
    assert len(recorded.tasks) == 2 and funnel_reason(recorded, R.JUDGES) == {R.INSUFFICIENT_FULL_MARKS: 1}
    assert live_requests > 0 and not recorded.incomplete

    replay_cfg = make_config(base_url, tmp_path, intra=1, cross=2, concurrency=3, mode="replay", max_reuse=2)
    replayed = Run(replay_cfg)(three_pairs(), tmp_path / "replay")
    assert not replayed.incomplete and outputs(tmp_path / "replay") == outputs(tmp_path / "live")
    assert live_requests > answered  # the 429 was retried live
    assert replayed.usage.total.requests == 0 and replayed.usage.total.cached_hits == answered

    # the shipped form: export the cache as JSONL, load it into a fresh cache on another machine
    export = tmp_path / "llm_cache.jsonl"
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        cache.export_jsonl(export)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with ResponseCache(fresh / "llm.sqlite") as cache:
        assert cache.import_jsonl(export) > 0
    shipped_cfg = make_config(base_url, fresh, intra=1, cross=2, mode="replay", max_reuse=2)
    Run(shipped_cfg)(three_pairs(), fresh / "out")
    assert outputs(fresh / "out") == outputs(tmp_path / "live")


def funnel_reason(result, stage):
    return result.funnel.stages[stage].dropped


def test_replay_miss_leaves_the_candidate_unfinished(tmp_path):
    cfg = make_config("http://127.0.0.1:9/v1", tmp_path, mode="replay")
    result = Run(cfg)(three_pairs()[:2], tmp_path / "out")
    assert not result.tasks and [i.reason for i in result.incomplete] == [R.INCOMPLETE_CACHE_MISS]
    assert (
        "role=composer" in result.incomplete[0].detail
        and result.incomplete[0].candidate_id in result.incomplete[0].detail
    )
    assert R.COMPOSE not in result.funnel.stages  # nothing was decided about it
    assert not (tmp_path / "out" / "candidates").exists()


def test_resume_skips_finished_candidates_and_pays_nothing(tmp_path):
    with scripted_server() as server:
        script_mixed_outcomes(server)
        cfg = make_config(server.base_url, tmp_path, intra=1, cross=2, max_reuse=2)
        first = Run(cfg)(three_pairs(), tmp_path / "out")
        before = outputs(tmp_path / "out")
        paid = len(server.chat_requests)
        again = Run(cfg)(three_pairs(), tmp_path / "out")
        assert again.resumed == 3 and len(server.chat_requests) == paid
        assert outputs(tmp_path / "out") == before and again.funnel == first.funnel

        # a lost result file is rebuilt from the cache, still without a request
        victim = first.pairing.pairs[1].candidate_id
        (tmp_path / "out" / "candidates" / f"{victim}.json").unlink()
        third = Run(cfg)(three_pairs(), tmp_path / "out")
        assert third.resumed == 2 and len(server.chat_requests) == paid and outputs(tmp_path / "out") == before

        # changed settings invalidate finished candidates; only work never done before is paid
        cfg.construction.judge_min_full_marks = 1
        looser = Run(cfg)(three_pairs(), tmp_path / "out")
        assert looser.resumed == 0 and len(looser.tasks) == 3 and R.JUDGES not in {r.stage for r in looser.rejections}
        new = server.chat_requests[paid:]
        assert [r.model for r in new] == [MODELS["solver"]]  # the candidate the judges had stopped


def test_budget_stop_keeps_finished_work_and_resumes(tmp_path):
    with scripted_server() as server:
        # 1 US$ per Mtok; one candidate's six calls take about 12 thousand tokens, so a budget of
        # 0.015 US$ lets the first candidate finish and stops the build inside the second.
        cfg = make_config(server.base_url, tmp_path, intra=1, cross=2, max_reuse=2, concurrency=1, budget_usd=0.015)
        stopped = Run(cfg)(three_pairs(), tmp_path / "out")
        assert stopped.stopped == R.INCOMPLETE_BUDGET
        reasons = [i.reason for i in stopped.incomplete]
        assert reasons[0] == R.INCOMPLETE_BUDGET and set(reasons[1:]) <= {R.INCOMPLETE_NOT_STARTED}
        assert "budget reached" in stopped.incomplete[0].detail
        finished = len(stopped.tasks)
        assert finished == 1 and len(stopped.incomplete) == 2, stopped.usage.by_task
        assert len((tmp_path / "out" / "tasks.jsonl").read_text().splitlines()) == finished
        assert json.loads((tmp_path / "out" / "build.json").read_text())["stopped"] == R.INCOMPLETE_BUDGET
        paid = len(server.chat_requests)

        cfg.llm.budget_usd = 100.0
        resumed = Run(cfg)(three_pairs(), tmp_path / "out")
        assert resumed.stopped is None and len(resumed.tasks) == 3 and resumed.resumed == finished
        keys = [(r.model, json.dumps(r.messages, sort_keys=True)) for r in server.chat_requests]
        assert len(keys) == len(set(keys))  # no request was ever sent twice
        assert len(server.chat_requests) > paid


def test_concurrency_does_not_change_the_result(tmp_path):
    with scripted_server() as server:
        script_mixed_outcomes(server)
        serial = Run(make_config(server.base_url, tmp_path / "a", intra=1, cross=2, max_reuse=2, concurrency=1))
        serial(three_pairs(), tmp_path / "a" / "out")
    with scripted_server() as server:
        script_mixed_outcomes(server)
        parallel = Run(make_config(server.base_url, tmp_path / "b", intra=1, cross=2, max_reuse=2, concurrency=4))
        parallel(three_pairs(), tmp_path / "b" / "out")
    assert outputs(tmp_path / "a" / "out") == outputs(tmp_path / "b" / "out")


def test_config_mismatches_fail_before_any_call(tmp_path):
    cfg = make_config("http://127.0.0.1:9/v1", tmp_path, judge_min_full_marks=4)
    with pytest.raises(ConfigError, match="judge_min_full_marks=4 but only 3 judge"):
        Run(cfg)(three_pairs(), tmp_path / "out")
    cfg = make_config("http://127.0.0.1:9/v1", tmp_path, budget_usd=1.0)
    cfg.llm.costs.pop("judge-b")
    with pytest.raises(ConfigError, match="no price for: judge-b"):
        Run(cfg)(three_pairs(), tmp_path / "out")
