"""Infrastructure faults are not verdicts: a candidate that stopped because a model call or the
sandbox failed is left for the next run, which pays only for what never finished. One build per
folder at a time, and no paid call ever drops out of the build's usage."""

from __future__ import annotations

import json
import threading

import pytest
from construct_kit import MODELS, Run, ScriptedGate, intra_pair, make_config, scripted_server, three_pairs

from classforge_bench.pipeline.construct.build import BuildResult
from classforge_bench.pipeline.construct.composition import CandidateResult
from classforge_bench.pipeline.construct.gate import GateUnavailable
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.folder_lock import FolderBusy, FolderLock
from tests.fakes.openai_server import Delay, HTTPError


@pytest.fixture
def server():
    with scripted_server() as srv:
        yield srv


def left_for_next_run(result: BuildResult, *fragments: str) -> None:
    """Unfinished, not rejected: nothing stored as final, the cause kept for the operator."""
    assert not result.tasks
    (unfinished,) = result.incomplete
    assert unfinished.reason == R.INCOMPLETE_INFRASTRUCTURE
    for fragment in fragments:
        assert fragment in unfinished.detail, unfinished.detail
    assert [r for r in result.rejections if r.stage != R.PAIRING] == []
    assert not (result.out_dir / "candidates" / f"{unfinished.candidate_id}.json").exists()
    build = json.loads((result.out_dir / "build.json").read_text())
    assert build["incomplete"][0]["reason"] == R.INCOMPLETE_INFRASTRUCTURE


def requests_by_model(server) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in server.chat_requests:
        counts[r.model] = counts.get(r.model, 0) + 1
    return counts


def test_an_outage_is_retried_by_the_next_run(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[HTTPError(status=500), HTTPError(status=503)])
    cfg = make_config(server.base_url, tmp_path)
    left_for_next_run(Run(cfg)(intra_pair(), tmp_path / "out"), "llm-call-failed", "HTTP 503", "composer")
    again = Run(cfg)(intra_pair(), tmp_path / "out")
    assert len(again.tasks) == 1 and not again.incomplete


def test_timeouts_are_an_infrastructure_fault(server, tmp_path):
    server.add_rule(model=MODELS["composer"], replies=[Delay(seconds=600), Delay(seconds=600)])
    cfg = make_config(server.base_url, tmp_path)
    cfg.llm.composer.timeout_s = 2.0  # the delayed answers never come in the test's lifetime
    left_for_next_run(Run(cfg)(intra_pair(), tmp_path / "out"), "timed out")


def test_a_missing_key_does_not_poison_the_build_folder(server, tmp_path):
    """A 401 on every call (the key was not exported) leaves nothing final behind."""
    server.add_rule(model=MODELS["composer"], replies=[HTTPError(status=401)])
    cfg = make_config(server.base_url, tmp_path)
    left_for_next_run(Run(cfg)(intra_pair(), tmp_path / "out"), "HTTP 401")
    assert len(Run(cfg)(intra_pair(), tmp_path / "out").tasks) == 1


def test_unreachable_judges_leave_the_candidate_for_the_next_run_which_pays_only_for_them(server, tmp_path):
    server.add_rule(model="judge-b", replies=[HTTPError(status=500), HTTPError(status=500)])
    server.add_rule(model="judge-c", replies=[HTTPError(status=500), HTTPError(status=500)])
    cfg = make_config(server.base_url, tmp_path)
    left_for_next_run(Run(cfg)(intra_pair(), tmp_path / "out"), "judges: llm-call-failed", "judge-2=call-failed")
    before = requests_by_model(server)
    again = Run(cfg)(intra_pair(), tmp_path / "out")
    assert len(again.tasks) == 1
    after = requests_by_model(server)
    paid_again = {m: after.get(m, 0) - before.get(m, 0) for m in after}
    # composer, test writer and the judge that answered come from the response cache
    assert paid_again == {"composer-m": 0, "writer-m": 0, "judge-a": 0, "judge-b": 1, "judge-c": 1, "solver-m": 1}


def test_judges_that_could_not_change_the_verdict_make_it_final(server, tmp_path):
    """Two malformed answers and one unreachable judge: two full marks are out of reach anyway."""
    server.add_rule(model="judge-a", replies=["no", "still no"])
    server.add_rule(model="judge-b", replies=["nope", "nope"])
    server.add_rule(model="judge-c", replies=[HTTPError(status=500), HTTPError(status=500)])
    result = Run(make_config(server.base_url, tmp_path))(intra_pair(), tmp_path / "out")
    assert not result.incomplete
    (rejection,) = [r for r in result.rejections if r.stage != R.PAIRING]
    assert (rejection.stage, rejection.reason) == (R.JUDGES, R.JUDGE_VOTES_FAILED)


def test_an_unavailable_sandbox_is_an_infrastructure_fault(server, tmp_path):
    cfg = make_config(server.base_url, tmp_path)
    gate = ScriptedGate(raises=GateUnavailable("candidate x: sandbox error: bwrap: cannot create namespace"))
    left_for_next_run(Run(cfg, gate)(intra_pair(), tmp_path / "out"), "sandbox error")


def test_a_candidate_stored_as_failed_by_an_earlier_version_is_retried(server, tmp_path):
    """Build folders poisoned before this fix heal on the next run."""
    cfg = make_config(server.base_url, tmp_path)
    out = tmp_path / "out"
    first = Run(cfg)(intra_pair(), out)
    (path,) = (out / "candidates").glob("*.json")
    stored = CandidateResult.model_validate_json(path.read_text())
    poisoned = stored.model_copy(
        update={
            "status": "rejected",
            "task": None,
            "outcomes": [
                stored.outcomes[0].model_copy(
                    update={"keep": False, "reason": R.LLM_CALL_FAILED, "detail": "composer: HTTP 401"}
                )
            ],
        }
    )
    path.write_text(poisoned.model_dump_json())
    again = Run(cfg)(intra_pair(), out)
    assert again.resumed == 0 and [t.task_id for t in again.tasks] == [t.task_id for t in first.tasks]


def test_usage_is_cumulative_and_per_run(server, tmp_path):
    server.add_rule(model="judge-c", replies=[HTTPError(status=500), HTTPError(status=500)])
    server.add_rule(model="judge-b", replies=[HTTPError(status=500), HTTPError(status=500)])
    cfg = make_config(server.base_url, tmp_path)
    out = tmp_path / "out"
    first = Run(cfg)(intra_pair(), out)
    second = Run(cfg)(intra_pair(), out)
    total = json.loads((out / "usage.json").read_text())["total"]
    last = json.loads((out / "usage-last-run.json").read_text())["total"]
    assert last == second.usage.total.model_dump(mode="json")
    assert total["requests"] == first.usage.total.requests + second.usage.total.requests
    assert total["failed_requests"] == 2 and total["requests"] == len(server.chat_requests) - 4
    assert total["prompt_tokens"] == first.usage.total.prompt_tokens + second.usage.total.prompt_tokens > 0


def test_a_candidate_that_raises_keeps_its_paid_calls(server, tmp_path):
    class Exploding:
        def __call__(self, *args, **kwargs):
            raise RuntimeError("bug in the gate adapter")

    cfg = make_config(server.base_url, tmp_path)
    result = Run(cfg, Exploding())(intra_pair(), tmp_path / "out")
    (unfinished,) = result.incomplete
    assert unfinished.reason == R.INCOMPLETE_ERROR and "bug in the gate adapter" in unfinished.detail
    paid = len(server.chat_requests)
    assert paid == 6  # composer, test writer, three judges and the solver, before the gate raised
    assert result.usage.total.requests == paid
    assert json.loads((result.out_dir / "usage.json").read_text())["total"]["requests"] == paid


def test_a_second_build_on_the_same_folder_stops_before_paying(server, tmp_path):
    cfg = make_config(server.base_url, tmp_path)
    out = tmp_path / "out"
    with FolderLock(out, "classforge build (test holder)"):
        done = threading.Event()
        errors: list[BaseException] = []

        def second() -> None:  # another thread is as foreign to the lock as another process
            try:
                Run(cfg)(intra_pair(), out)
            except FolderBusy as exc:
                errors.append(exc)
            done.set()

        threading.Thread(target=second).start()
        assert done.wait(600)
    assert len(errors) == 1 and "classforge build (test holder)" in str(errors[0]) and str(out) in str(errors[0])
    assert server.chat_requests == []
    assert len(Run(cfg)(intra_pair(), out).tasks) == 1  # released with the holder


def test_two_concurrent_builds_never_pay_twice(server, tmp_path):
    cfg = make_config(server.base_url, tmp_path, intra=1, cross=2, max_reuse=2)
    out = tmp_path / "out"
    outcomes: list[object] = []

    def one() -> None:
        try:
            outcomes.append(Run(cfg)(three_pairs(), out))
        except FolderBusy as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    built = [o for o in outcomes if isinstance(o, BuildResult)]
    refused = [o for o in outcomes if isinstance(o, FolderBusy)]
    prompts = [(r.model, r.text) for r in server.chat_requests]
    assert len(prompts) == len(set(prompts)), "a call was paid twice"
    assert len(built) + len(refused) == 2 and built
    usage = json.loads((out / "usage.json").read_text())["total"]
    assert usage["requests"] == len(server.chat_requests)
