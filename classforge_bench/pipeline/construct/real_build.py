"""Real-source track: every harvested class a candidate task, built in one folder like a composition build.

    result = build_real_tasks(classes, config, client, gate, out_dir, generator)

Same layout and contract as `classforge_bench.pipeline.construct.build` (candidates/<id>.json, tasks.jsonl,
rejects.jsonl, funnel.json, build.json, usage files), the same folder lock, and the same resume
rule: a candidate finished with the same fingerprint is loaded, not rebuilt; one that stopped on
the budget, a replay miss or the sandbox is not written and is retried next run. The funnel is
folded from the stored verdicts in class order, so a fresh, a resumed and a replayed build agree.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.config import Config
from classforge_bench.pipeline.construct.build import (
    Incomplete,
    Progress,
    fold_candidates,
    write_build_files,
    write_json_model,
)
from classforge_bench.pipeline.construct.common import Prompts, StageContext
from classforge_bench.pipeline.construct.gate import Gate, GateUnavailable
from classforge_bench.pipeline.construct.real_candidate import (
    TRACK,
    RealCandidateResult,
    TestGenerator,
    candidate_id_for,
    run_real_candidate,
)
from classforge_bench.pipeline.construct.real_docs import writer_endpoint
from classforge_bench.pipeline.construct.strengthen import Mutator, SandboxMutator
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.folder_lock import FolderLock
from classforge_bench.pipeline.core.funnel import Funnel, FunnelReport, RejectionList
from classforge_bench.pipeline.core.pool import map_concurrently
from classforge_bench.pipeline.core.records import HarvestedClass, Rejection
from classforge_bench.pipeline.core.task import Task
from classforge_bench.pipeline.llm.cache import canonical_json
from classforge_bench.pipeline.llm.client import LLMClient
from classforge_bench.pipeline.llm.errors import BudgetExceeded, CacheMiss, UnpricedModel
from classforge_bench.pipeline.llm.ledger import UsageSummary
from classforge_bench.pipeline.llm.prompts import load_prompt
from classforge_bench.pipeline.llm.usage_history import new_run_id, recorded_usage, save_usage
from classforge_bench.pipeline.quality.plus.observe import OBSERVE_VERSION
from classforge_bench.pipeline.quality.plus.suite import PLUS_VERSION

log = logging.getLogger(__name__)

REAL_STAGES_VERSION = 2  # 2: methods no test observes keep no example instead of dropping the class


class RealBuildResult(BaseModel):
    """What `finish` of a composition build gives the release, for the real-source track."""

    model_config = ConfigDict(extra="forbid")

    out_dir: Path
    tasks: list[Task]
    rejections: list[Rejection]
    funnel: FunnelReport
    incomplete: list[Incomplete] = Field(default_factory=list)
    stopped: str | None = None
    resumed: int = 0
    fingerprint: str
    usage: UsageSummary
    usage_all_runs: UsageSummary

    @property
    def complete(self) -> bool:
        return not self.incomplete


def real_fingerprint(config: Config, generator: TestGenerator | None) -> str:
    """Everything that changes what a finished real-source candidate contains, hashed."""
    rs = config.construction.real_source
    endpoint = writer_endpoint(config.llm, rs.docstring_role)
    prompts = {
        n: f"{t.version}:{t.sha256}"
        for n in ("docstring_writer", "docstring_judge")
        for t in [load_prompt(n, config.construction.prompt_versions.get(n))]
    }
    material = {
        "stages_version": REAL_STAGES_VERSION,
        "real_source": rs.model_dump(mode="json"),
        "generator": generator.name if generator is not None else None,
        # what the plus tier does with the generator's output (conversion, rules, state assertions)
        "plus_versions": [PLUS_VERSION, OBSERVE_VERSION],
        "generator_settings": config.plus.model_dump(
            mode="json", exclude={"python", "cache_dir", "enabled", "strengthen_first"}
        ),
        "docstring_models": [
            e.model_dump(include={"model", "temperature", "max_tokens"})
            for e in ([endpoint, config.llm.judges[0]] if endpoint else [])
        ],
        "prompts": prompts if endpoint else {},
        "min_methods": config.construction.min_methods,
        "mutation": config.construction.mutation.model_dump(mode="json", exclude={"workers"}),
        "gate": config.sandbox.model_dump(
            mode="json", include={"min_line_coverage", "wall_limit_s", "environment_checks"}
        ),
    }
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()[:16]


def _candidate_path(out_dir: Path, candidate_id: str) -> Path:
    return out_dir / "candidates" / f"{candidate_id}.json"


def load_finished_real(out_dir: Path, candidate_id: str, fingerprint: str) -> RealCandidateResult | None:
    path = _candidate_path(out_dir, candidate_id)
    if not path.exists():
        return None
    try:
        done = RealCandidateResult.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        log.warning(
            "candidate %s: unreadable result file %s (%s); rebuilding it", candidate_id, path, exc.errors()[0]["msg"]
        )
        return None
    if done.fingerprint != fingerprint:
        return None
    if done.task is not None:
        # `Task.extras` is not serialised with the task; the track's columns come back from the result.
        done.task.extras = done.task_extras()
    return done


class RealPlan:
    """What every candidate of one real-source build shares."""

    def __init__(
        self,
        classes: Iterable[HarvestedClass],
        config: Config,
        out_dir: Path,
        generator: TestGenerator | None,
        mutator: Mutator | None = None,
        run_id: str | None = None,
    ):
        self.config, self.out_dir, self.generator = config, Path(out_dir), generator
        self.classes = sorted(classes, key=lambda hc: hc.id)
        self.run_id = run_id or new_run_id()
        self.prompts = Prompts(config.construction)
        self.fingerprint = real_fingerprint(config, generator)
        if mutator is None and config.construction.mutation.enabled:
            mutator = SandboxMutator(config.sandbox, config.construction.mutation, self.out_dir / "mutation-cache")
        self.mutator = mutator if config.construction.mutation.enabled else None
        self.stop_reason: list[str] = []


Outcome = tuple[str, "RealCandidateResult | Incomplete"]


def build_real_candidate(plan: RealPlan, hc: HarvestedClass, client: LLMClient, gate: Gate) -> Outcome:
    cid = candidate_id_for(hc)
    done = load_finished_real(plan.out_dir, cid, plan.fingerprint)
    if done is not None:
        return "resumed", done
    if plan.stop_reason:
        return "incomplete", Incomplete(
            candidate_id=cid,
            reason=R.INCOMPLETE_NOT_STARTED,
            detail=f"the build stopped ({plan.stop_reason[0]}) before it started",
        )
    ctx = StageContext(
        client=client, llm=plan.config.llm, construct=plan.config.construction, prompts=plan.prompts, candidate_id=cid
    )
    try:
        result = run_real_candidate(hc, ctx, gate, plan.generator, plan.fingerprint, plan.config, plan.mutator)
    except (BudgetExceeded, UnpricedModel) as exc:
        plan.stop_reason.append(R.INCOMPLETE_BUDGET)
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_BUDGET, detail=str(exc))
    except CacheMiss as exc:
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_CACHE_MISS, detail=str(exc))
    except GateUnavailable as exc:
        return "incomplete", Incomplete(candidate_id=cid, reason=R.INCOMPLETE_INFRASTRUCTURE, detail=str(exc))
    finally:
        save_usage(plan.out_dir, plan.run_id, cid, client.ledger.entries(cid))
    last = result.outcomes[-1]
    if last.infrastructure:
        return "incomplete", Incomplete(
            candidate_id=cid, reason=R.INCOMPLETE_INFRASTRUCTURE, detail=f"{last.stage}: {last.reason}: {last.detail}"
        )
    write_json_model(_candidate_path(plan.out_dir, cid), result)
    return result.status, result


def finish_real_build(
    plan: RealPlan, outcomes: Sequence[tuple[HarvestedClass, Outcome | BaseException]]
) -> RealBuildResult:
    collect = RejectionList()
    funnel: Funnel = Funnel(sink=collect)
    tasks, incomplete, finished, resumed = fold_candidates(
        ((hc.id, candidate_id_for(hc), outcome) for hc, outcome in outcomes), funnel
    )
    report = funnel.report()
    for suite in (r.suite for r in finished if r.suite is not None):
        report = report.merge(suite.funnel)
    this_run, all_runs = recorded_usage(plan.out_dir, plan.config.llm.costs, plan.run_id)
    result = RealBuildResult(
        out_dir=plan.out_dir,
        tasks=tasks,
        rejections=collect.rejections,
        funnel=report,
        incomplete=incomplete,
        stopped=plan.stop_reason[0] if plan.stop_reason else None,
        resumed=resumed,
        fingerprint=plan.fingerprint,
        usage=this_run,
        usage_all_runs=all_runs,
    )
    _write_outputs(result, plan)
    return result


def build_real_tasks(
    classes: Iterable[HarvestedClass],
    config: Config,
    client: LLMClient,
    gate: Gate,
    out_dir: Path,
    generator: TestGenerator | None,
    *,
    mutator: Mutator | None = None,
    progress: Progress | None = None,
) -> RealBuildResult:
    """Every class through the real-source stages, concurrently (`llm.concurrency`), in one folder."""
    parsing.guard_interpreter()
    with FolderLock(Path(out_dir), "classforge build (real-source)"):
        plan = RealPlan(classes, config, out_dir, generator, mutator)

        def tracked(hc: HarvestedClass) -> Outcome:
            status, value = build_real_candidate(plan, hc, client, gate)
            if progress is not None:
                progress(candidate_id_for(hc), status)
            return status, value

        outcomes = map_concurrently(tracked, plan.classes, config.llm.concurrency)
        folded = [(o.item, o.error if o.error is not None else o.unwrap()) for o in outcomes]
        return finish_real_build(plan, folded)


def _write_outputs(result: RealBuildResult, plan: RealPlan) -> None:
    write_build_files(
        result,
        {
            "track": TRACK,
            "fingerprint": result.fingerprint,
            "tasks": len(result.tasks),
            "rejected": len(result.rejections),
            "incomplete": [i.model_dump(mode="json") for i in result.incomplete],
            "stopped": result.stopped,
            "resumed": result.resumed,
            "test_generator": plan.generator.name if plan.generator is not None else None,
            "docstring_role": plan.config.construction.real_source.docstring_role,
            "mode": plan.config.llm.mode,
        },
    )
