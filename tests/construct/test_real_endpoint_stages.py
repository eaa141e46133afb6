"""The construction stages against servers that behave like real local ones: named drops for what
a re-run repeats, an infrastructure family for what it may not, repairs that stay short."""

from __future__ import annotations

import construct_fixtures as fx
import pytest
from construct_kit import MODELS, Run, intra_pair, make_config, scripted_server

from classforge_bench.pipeline.construct.compose import problem_feedback
from classforge_bench.pipeline.construct.composition import CandidateResult
from classforge_bench.pipeline.construct.skeleton_checks import check_skeleton
from classforge_bench.pipeline.core import reasons as R
from tests.fakes.openai_server import HTTPError, ServerProfile, Truncated


@pytest.fixture
def server():
    with scripted_server() as srv:
        yield srv


def run(server, tmp_path, **endpoint_changes):
    cfg = make_config(server.base_url, tmp_path)
    for role, changes in endpoint_changes.items():
        for k, v in changes.items():
            setattr(getattr(cfg.llm, role), k, v)
    return Run(cfg, None)(intra_pair(), tmp_path / "out")


def last(result):
    (rej,) = [r for r in result.rejections if r.stage != R.PAIRING]
    return rej


def test_judges_on_a_server_refusing_json_schema_still_vote(server, tmp_path):
    server.profile = ServerProfile(json_schema=False)
    result = run(server, tmp_path)
    assert len(result.tasks) == 1, result.rejections
    judge_formats = [
        (r.body.get("response_format") or {}).get("type")
        for r in server.chat_requests
        if r.model and r.model.startswith("judge")
    ]
    # Each judge model is refused once, then asked with json_object.
    assert judge_formats.count("json_schema") == 3 and judge_formats.count("json_object") == 3


def test_a_prompt_over_the_window_is_a_named_drop_with_counts_and_not_sent(server, tmp_path):
    result = run(server, tmp_path, composer={"context_window": 600})
    rej = last(result)
    assert (rej.stage, rej.reason) == (R.COMPOSE, R.PROMPT_TOO_LONG)
    assert "does not fit the context window of 600 tokens" in rej.detail and "composer: prompt of" in rej.detail
    assert not [r for r in server.chat_requests if r.model == MODELS["composer"]]


def test_a_cut_skeleton_is_retried_with_more_room_then_dropped_naming_the_limit(server, tmp_path):
    server.add_rule(
        model=MODELS["composer"],
        replies=[Truncated("class A:", completion_tokens=4000), Truncated("class A:\n  ", completion_tokens=8000)],
    )
    result = run(server, tmp_path, composer={"max_tokens": 4000})
    rej = last(result)
    assert (rej.stage, rej.reason) == (R.COMPOSE, R.TRUNCATED)
    assert (
        rej.detail.startswith("composer reply cut by max_tokens=8000")
        and "after one retry with more room" in rej.detail
    )
    assert [r.body["max_tokens"] for r in server.chat_requests if r.model == MODELS["composer"]] == [4000, 8000]


def test_outages_are_infrastructure_drops_and_refusals_are_not(server, tmp_path):
    server.add_rule(model=MODELS["test_writer"], replies=[HTTPError(status=503, message="loading model")] * 5)
    outage = run(server, tmp_path, test_writer={"max_retries": 1, "backoff_base_s": 0})
    # An outage is no verdict: the candidate is left unfinished (not stored) for the next run.
    (unfinished,) = outage.incomplete
    assert unfinished.reason == R.INCOMPLETE_INFRASTRUCTURE
    assert "llm-call-failed" in unfinished.detail and "HTTP 503: loading model" in unfinished.detail
    assert not (outage.out_dir / "candidates" / f"{unfinished.candidate_id}.json").exists()


def test_a_bad_request_is_a_final_rejection(server, tmp_path):
    server.add_rule(model=MODELS["test_writer"], replies=[HTTPError(status=400, message="unsupported parameter")])
    result = run(server, tmp_path)
    rej = last(result)
    done = CandidateResult.model_validate_json((result.out_dir / "candidates" / f"{rej.item_id}.json").read_text())
    assert rej.reason == R.LLM_REQUEST_REJECTED and not done.outcomes[-1].infrastructure
    assert "unsupported parameter" in rej.detail


def test_repair_feedback_quotes_the_offending_lines():
    broken = fx.SKELETON.replace("    def pop(self) -> str:", "    def pop(self -> str:", 1)
    assert broken != fx.SKELETON
    report = check_skeleton(broken, 5)
    feedback = problem_feedback(report, broken)
    assert "[skeleton-syntax-error]" in feedback
    marked = [line for line in feedback.splitlines() if line.lstrip().startswith(">>")]
    assert len(marked) == 1 and "def pop(self -> str:" in marked[0]


def test_build_json_counts_first_attempts_and_repairs_per_stage(server, tmp_path):
    import json

    from construct_kit import FOUR_METHODS

    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(FOUR_METHODS)])
    server.add_rule(model=MODELS["judge-2"], replies=['{"score": "ten"}'])
    result = run(server, tmp_path)
    assert len(result.tasks) == 1
    attempts = json.loads((result.out_dir / "build.json").read_text())["attempts"]
    assert attempts["compose"] == {"first_attempt": 0, "after_repair": 1, "failed": 0}
    assert attempts["judges"] == {"first_attempt": 2, "after_repair": 1, "failed": 0}
    assert attempts["solution"] == {"first_attempt": 1, "after_repair": 0, "failed": 0}


def test_the_usage_total_keeps_the_paying_run_across_a_resumed_run(server, tmp_path):
    import json

    first = run(server, tmp_path)
    paid = first.usage.total
    assert paid.requests > 0
    second = run(server, tmp_path)  # everything resumed: no request sent
    assert second.usage.total.requests == 0
    total = json.loads((tmp_path / "out" / "usage.json").read_text())  # every run of the build folder
    assert total["total"]["requests"] == paid.requests
    assert total["total"]["prompt_tokens"] == paid.prompt_tokens
    assert json.loads((tmp_path / "out" / "usage-last-run.json").read_text())["total"]["requests"] == 0


def test_a_candidate_that_raises_keeps_its_paid_calls_in_usage_json(server, tmp_path):
    import json

    from construct_kit import ScriptedGate

    cfg = make_config(server.base_url, tmp_path)
    result = Run(cfg, ScriptedGate(raises=RuntimeError("sandbox could not start")))(intra_pair(), tmp_path / "out")
    assert [i.reason for i in result.incomplete] == [R.INCOMPLETE_ERROR]
    usage = json.loads((tmp_path / "out" / "usage.json").read_text())["total"]
    # compose, tests, three judges, solver: all paid before the gate raised, all counted
    assert usage["requests"] == len(server.chat_requests) == 6


def _prompt_example() -> str:
    """The compose prompt's own format example, as a small model copies it back."""
    from classforge_bench.pipeline.llm.prompts import load_prompt

    text = load_prompt("compose", 1).text
    return text[text.index("```python\n") + len("```python\n") : text.index("```\n\nRules:")]


def test_a_copied_format_example_gets_a_reask_with_the_specs_not_a_repair(server, tmp_path):
    composer = MODELS["composer"]
    server.add_rule(model=composer, replies=[fx.fenced(_prompt_example())])
    result = run(server, tmp_path)
    assert len(result.tasks) == 1, result.rejections
    asks = [r.body["messages"] for r in server.chat_requests if r.body["model"] == composer]
    assert len(asks) == 2
    first, reask = asks
    # The re-ask is the first request (with both specs) plus a note naming the copied class, not the
    # short repair, under instructions that no longer show the example.
    assert "class LoanLedger" in first[0]["content"] and "LoanLedger" not in reask[0]["content"]
    assert reask[-1]["content"].startswith(first[-1]["content"])
    note = reask[-1]["content"][len(first[-1]["content"]) :]
    assert "reproduced `LoanLedger`" in note and "failed these automatic checks" not in note
    assert result.tasks[0].prompt_versions["compose"] == "compose@v1+compose_reask@v2"


def test_the_format_example_under_another_name_gets_the_reask(server, tmp_path):
    composer = MODELS["composer"]
    renamed = _prompt_example().replace("LoanLedger", "FinanceLedger")
    server.add_rule(model=composer, replies=[fx.fenced(renamed)])
    result = run(server, tmp_path)
    assert len(result.tasks) == 1, result.rejections
    first, reask = [r.body["messages"] for r in server.chat_requests if r.body["model"] == composer]
    note = reask[-1]["content"][len(first[-1]["content"]) :]
    assert "reproduced `LoanLedger` (renamed `FinanceLedger`)" in note
    assert result.tasks[0].prompt_versions["compose"] == "compose@v1+compose_reask@v2"


def test_a_composer_that_copies_the_example_again_is_dropped_naming_it(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[fx.fenced(_prompt_example())] * 2)
    result = run(server, tmp_path)
    rej = last(result)
    assert (rej.stage, rej.reason) == (R.COMPOSE, R.COPIED_EXAMPLE)
    assert "format example LoanLedger" in rej.detail and "after 2 attempt(s)" in rej.detail
