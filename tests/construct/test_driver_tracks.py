"""One driver for both construction tracks: on the composition and the real-source track alike, a
stop keeps the usage of the call a candidate already paid for, a budget that cannot be priced is
refused before any call, and every stage a candidate starts is reported as it starts."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from construct_kit import ENV, ScriptedGate, harvested, make_config, scripted_server, three_pairs

from classforge_bench.pipeline.config import Config, ConfigError
from classforge_bench.pipeline.construct.build import BuildPlan, BuildSettings, BuildTrack, build_candidate, build_tasks
from classforge_bench.pipeline.construct.composition import CompositionTrack
from classforge_bench.pipeline.construct.real_candidate import RealSourceTrack
from classforge_bench.pipeline.core.stop_hooks import run_stop_hooks
from classforge_bench.pipeline.core.task import Track
from classforge_bench.pipeline.llm.cache import ResponseCache
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.ledger import UsageLedger
from tests.fakes.openai_server import FakeOpenAIServer, Text, messages_text

TRACKS = [Track.COMPOSITION, Track.REAL_SOURCE]
# who makes a candidate's first call: the composer; on the real-source track the docstring writer
FIRST_MODEL = {Track.COMPOSITION: "composer-m", Track.REAL_SOURCE: "writer-m"}

# Two methods with no docstring: on the real-source track each needs a written one (a writer
# call, then a judge call), so the class makes paid calls before its tests.
UNDOCUMENTED = '''class Tally:
    """Counts of named things."""

    def __init__(self):
        self.counts = {}

    def add(self, name):
        self.counts[name] = self.counts.get(name, 0) + 1

    def get(self, name):
        return self.counts.get(name, 0)

    def names(self):
        """Every name counted, in first-seen order.

        :return: list of str
        """
        return list(self.counts)
'''


def _config(base_url: str, tmp: Path, track: Track, **kw) -> Config:
    cfg = make_config(base_url, tmp, intra=1, cross=2, max_reuse=2, concurrency=1, **kw)
    cfg.construction.track = track
    cfg.construction.real_source.docstring_role = "test_writer"
    return cfg


def _track(cfg: Config, out: Path) -> BuildTrack:
    if cfg.construction.track == Track.REAL_SOURCE:
        # no test generator: the class stops at `tests`, after its paid docstring calls
        return RealSourceTrack([harvested(UNDOCUMENTED, "Utilities")], BuildSettings.of(cfg), out, None)
    return CompositionTrack(three_pairs(), BuildSettings.of(cfg), out)


def _answer(body) -> Text:
    """An answer each track's first stages accept or repair: docstrings and a judge's verdict on
    the real-source track; a composer answer without code (a repair follows) on the composition track."""
    text = messages_text(body["messages"])
    if "You write docstrings" in text:
        return Text(text=json.dumps({"description": "Count one more.", "params": {"name": "the name"}, "returns": ""}))
    if "You check docstrings" in text:
        return Text(text=json.dumps({"leaks": False, "reason": "behaviour only"}))
    return Text(text="no code in this answer")


@pytest.mark.parametrize("track", TRACKS)
def test_a_stop_during_a_paid_call_keeps_the_calls_already_paid(tmp_path, track):
    second_call, release = threading.Event(), threading.Event()
    seen = [0]

    def respond(body):
        seen[0] += 1
        if seen[0] == 2:
            second_call.set()
            release.wait(60)
        return _answer(body)

    with FakeOpenAIServer(default=respond) as server:
        cfg = _config(server.base_url, tmp_path, track)
        cfg.construction.pairing.intra_target, cfg.construction.pairing.cross_target = 1, 0
        out = tmp_path / "out"
        done: list = []
        with ResponseCache(cfg.llm.cache_path) as cache, LLMClient(cfg.llm, ENV, cache, UsageLedger({})) as client:
            builder = threading.Thread(
                target=lambda: done.append(build_tasks(_track(cfg, out), client, ScriptedGate(), out)), daemon=True
            )
            builder.start()
            try:
                assert second_call.wait(60), "the candidate never made a second call"
                # what `classforge build` runs on SIGINT/SIGTERM before os._exit skips every finally
                assert run_stop_hooks() == []
                saved = list((out / "usage").glob("*/*.jsonl"))
                assert len(saved) == 1, "the stop wrote the candidate's usage"
                entries = [json.loads(line) for line in saved[0].read_text().splitlines()]
                # the first call, answered and paid; the second was still in flight
                assert [(e["model"], e["counts"]["requests"]) for e in entries] == [(FIRST_MODEL[track], 1)]
            finally:
                release.set()
                builder.join(60)
    assert done and not done[0].incomplete


@pytest.mark.parametrize("track", TRACKS)
def test_a_budget_that_cannot_be_priced_is_refused_before_any_call(tmp_path, track):
    with FakeOpenAIServer(default=_answer) as server:
        cfg = _config(server.base_url, tmp_path, track, budget_usd=1.0)
        cfg.llm.costs.pop("writer-m")  # the test writer: composition's tests stage, real-source's docstrings
        out = tmp_path / "out"
        with (
            ResponseCache(cfg.llm.cache_path) as cache,
            LLMClient(cfg.llm, ENV, cache, UsageLedger({})) as client,
            pytest.raises(ConfigError, match="no price for: writer-m"),
        ):
            build_tasks(_track(cfg, out), client, ScriptedGate(), out)
        assert server.chat_requests == [] and not (out / "candidates").exists() and not (out / "usage").exists()


@pytest.mark.parametrize(
    ("track", "stages"),
    [
        (Track.COMPOSITION, ["compose", "tests", "judges", "solution", "mutation", "task", "plus"]),
        (Track.REAL_SOURCE, ["license", "skeleton", "docstrings", "tests"]),
    ],
)
def test_every_stage_is_reported_as_it_starts(tmp_path, track, stages):

    with scripted_server() as server:
        server.add_rule(pattern="You write docstrings", respond=_answer)
        server.add_rule(pattern="You check docstrings", respond=_answer)
        cfg = _config(server.base_url, tmp_path, track)
        out = tmp_path / "out"
        with ResponseCache(cfg.llm.cache_path) as cache, LLMClient(cfg.llm, ENV, cache, UsageLedger({})) as client:
            plan = BuildPlan(_track(cfg, out), out)
            started: list[str] = []
            status, record = build_candidate(plan, plan.candidates[0], client, ScriptedGate(), started.append)
    assert started == stages
    # the real-source class is dropped where the driver stopped reporting: no generator, at `tests`
    assert status == ("built" if track == Track.COMPOSITION else "rejected"), record
    if track == Track.REAL_SOURCE:
        assert record.outcomes[-1].stage == "tests" and record.outcomes[-1].reason == "no-test-generator"
