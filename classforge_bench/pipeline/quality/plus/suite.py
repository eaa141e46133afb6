"""A task's plus suite end to end: generate (sandbox) -> convert -> static rules -> validate
(sandbox) -> ClassEval-form module. Cached by content: a finished suite is never made again.

The key covers everything that decides the suite: the generator and its settings, the class's
source and imports, the sandbox's hash seed and environment checks, and the converter's version.
Not in it: the time caps and wall limits, which do not change a run that stays within them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.records import RepoSeed
from classforge_bench.pipeline.core.store import write_text
from classforge_bench.pipeline.core.task import PlusDrop, PlusSuite
from classforge_bench.pipeline.quality.cache import content_key
from classforge_bench.pipeline.quality.plus.blocking import blocking_methods, without_methods
from classforge_bench.pipeline.quality.plus.contract import Contract, annotated_source
from classforge_bench.pipeline.quality.plus.convert import PlusTest, convert, unasserted
from classforge_bench.pipeline.quality.plus.generate import GENERATOR, GeneratedTests, generate
from classforge_bench.pipeline.quality.plus.observe import OBSERVE_VERSION, Observed, observe_tests
from classforge_bench.pipeline.quality.plus.render import name_tests, render
from classforge_bench.pipeline.quality.plus.repo_seeds import pynguin_seed_module, seed_tests
from classforge_bench.pipeline.quality.plus.rules import violation
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract, derive_contract
from classforge_bench.pipeline.quality.plus.validate import validate

log = logging.getLogger(__name__)

PLUS_VERSION = 12  # 12: seeds' UTC twins and round trips; 11: types read only where stated, positional arguments checked, the task's own values in its domain; 10: numeric strings keep their shape; 9: the task contract (task_contract.py), generator failure reasons; bump when conversion, rules or validation change what a suite holds


def suite_key(
    solution: str,
    class_name: str,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    described: str = "",
    base_tests: str = "",
    documented_fields_only: bool = False,
    seeds: Sequence[RepoSeed] = (),
) -> str:
    settings = plus.model_dump(
        mode="json", include={"seed", "hash_seed", "max_iterations", "assertions", "max_tests", "validation_runs"}
    )
    if plus.observe_state:  # only then: suites made without it keep their keys
        settings |= plus.model_dump(mode="json", include={"observe_state", "observe_walks"}) | {
            "observe": OBSERVE_VERSION
        }
    checks = sandbox.environment_checks.model_dump(mode="json")
    # Only a seeded suite's key names its seeds: suites made without any keep their keys.
    seeded = [[s.model_dump(mode="json") for s in seeds]] if seeds else []
    return content_key(
        PLUS_VERSION,
        GENERATOR,
        settings,
        sandbox.hash_seed,
        checks,
        class_name,
        solution,
        list(import_statement),
        described,
        base_tests,
        documented_fields_only,
        *seeded,
    )


def _cache_path(plus: PlusConfig, key: str, kind: str = "suites") -> Path | None:
    return None if plus.cache_dir is None else Path(plus.cache_dir) / kind / key[:2] / f"{key}.json"


def generation_path(source: str, plus: PlusConfig, seeds: str = "") -> Path | None:
    """Where the generator's run on `source` (from the seed module `seeds`) is cached (its module,
    wall time, coverage)."""
    settings = plus.model_dump(mode="json", include={"seed", "hash_seed", "max_iterations", "budget_s", "assertions"})
    return _cache_path(plus, content_key(GENERATOR, settings, source, *([seeds] if seeds else [])), "generated")


def generated_tests(
    source: str, sandbox: SandboxConfig, plus: PlusConfig, item_id: str = "", seeds: str = ""
) -> tuple[GeneratedTests, bool]:
    """Pynguin's module for `source`, from the cache when this exact run was made before: the search
    is the costly part, so a change of conversion or validation never repeats it."""
    path = generation_path(source, plus, seeds)
    if path is not None and path.is_file():
        try:
            return GeneratedTests.model_validate_json(path.read_text(encoding="utf-8")), True
        except (ValidationError, ValueError, OSError) as exc:
            log.warning("plus: ignoring unreadable cached generation %s: %s", path, exc)
    generated = generate(source, sandbox, plus, item_id=item_id, seeds=seeds)
    # A run that produced nothing is not kept: it may well succeed on a machine with more room.
    if path is not None and generated.ok:
        write_text(path, generated.model_dump_json())
    return generated, False


def cached_suite(plus: PlusConfig, key: str) -> PlusSuite | None:
    path = _cache_path(plus, key)
    if path is None or not path.is_file():
        return None
    try:
        return PlusSuite.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError, OSError) as exc:
        log.warning("plus: ignoring unreadable cached suite %s (it will be made again): %s", path, exc)
        return None


def screen(
    tests: list[PlusTest],
    max_tests: int,
    class_name: str = "",
    contract: Contract | None = None,
    described: str | None = None,
    *,
    task_contract: TaskContract | None = None,
) -> tuple[list[PlusTest], list[PlusDrop]]:
    """The static rules, then the task's contract (fields, argument types and domains, documented
    exceptions, described effects), duplicates and the per-task cap, in that order. `contract`
    (declared types) and `described` are the older way to give the contract: it is derived from them."""
    if task_contract is None and described:
        task_contract = derive_contract(described, class_name)
    if task_contract is not None and contract:
        task_contract = replace(task_contract, declared={**task_contract.declared, **contract})
    kept: list[PlusTest] = []
    drops: list[PlusDrop] = []
    seen: set[str] = set()
    for test in tests:
        body, broken = test.body, violation(test.body)
        if broken is None and task_contract is not None:
            body, broken = _off_contract(body, task_contract)
        if broken is not None:
            drops.append(PlusDrop(origin=test.origin, reason=broken[0], detail=broken[1]))
        elif body in seen:
            drops.append(PlusDrop(origin=test.origin, reason=reasons.PLUS_DUPLICATE))
        elif len(kept) >= max_tests:
            drops.append(PlusDrop(origin=test.origin, reason=reasons.PLUS_OVER_LIMIT))
        else:
            seen.add(body)
            kept.append(test.model_copy(update={"body": body}))
    return kept, drops


def _off_contract(body: str, contract: TaskContract) -> tuple[str, tuple[str, str] | None]:
    """(the body, with undocumented-but-stated exception types widened to Exception; the first
    contract rule it breaks as (reason, detail), else None)."""
    body, _ = contract.without_undeclared_checks(body)  # the check goes, the test's other checks stand
    hidden = contract.attribute_problem(body)
    if hidden is not None:
        return body, (reasons.PLUS_PRIVATE_ATTRIBUTE, hidden)
    effect = contract.effect_problem(body)
    if effect is not None:
        return body, (reasons.PLUS_UNDESCRIBED_EFFECT, effect)
    off = contract.argument_problem(body)
    if off is not None:
        return body, off
    rewritten, undocumented = contract.raise_problem(body)
    if rewritten is None:
        return body, (reasons.PLUS_UNDOCUMENTED_EXCEPTION, undocumented)
    return rewritten, None


def _counts(drops: list[PlusDrop]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for drop in drops:
        counts[drop.reason] = counts.get(drop.reason, 0) + 1
    return dict(sorted(counts.items()))


def make_plus_suite(
    solution: str,
    class_name: str,
    *,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str = "",
    described: str | None = None,
    base_tests: str = "",
    documented_fields_only: bool = False,
    seeds: Sequence[RepoSeed] = (),
) -> PlusSuite:
    """The validated plus suite of one class (cached by content under plus.cache_dir).

    `described`: the task's skeleton, from which its contract is derived (default: the solution);
    `base_tests`: the task's own tests, whose values are in the contract too;
    `documented_fields_only`: only fields the constructor's docstring names are observable
    (the real-source track, whose constructors are the author's code, not a specification);
    `seeds`: how the class's repository builds and calls it (repo_seeds.py): tests of their own
    and the search's initial population.
    """
    fields_only = documented_fields_only
    key = suite_key(
        solution, class_name, import_statement, sandbox, plus, described or "", base_tests, fields_only, seeds
    )
    cached = cached_suite(plus, key)
    if cached is not None:
        return cached.model_copy(update={"generation_s": 0.0})
    contract = derive_contract(described or solution, class_name, base_tests, documented_fields_only=fields_only)
    blocked = blocking_methods(solution, class_name)
    searched = without_methods(annotated_source(solution, class_name, contract.declared), class_name, set(blocked))
    seed_module = pynguin_seed_module(seeds, class_name, contract, solution)
    generated, reused = generated_tests(searched, sandbox, plus, item_id, seed_module)
    suite = PlusSuite(
        generator=GENERATOR,
        seed=plus.seed,
        generation_s=0.0 if reused else round(generated.wall_s, 2),
        hit_time_cap=generated.hit_time_cap,
        key=key,
    )
    failed = _generator_failure(generated, blocked, plus)
    if failed is not None:
        # Not cached: a generator that died may well succeed on a machine with more room.
        return suite.model_copy(update={"failure": failed[1][:2000], "failure_reason": failed[0]})
    seeded = seed_tests(seeds, class_name, contract, solution)
    suite = _screened_suite(
        suite, generated, contract, blocked, solution, class_name, import_statement, sandbox, plus, item_id, seeded
    )
    path = _cache_path(plus, key)
    if path is not None:
        write_text(path, suite.model_dump_json(indent=1))
    return suite


def _generator_failure(generated: GeneratedTests, blocked: dict[str, str], plus: PlusConfig) -> tuple[str, str] | None:
    """(reason, detail) when the generation run gives no tests to use: its own failure, or a search
    the time cap stopped (the safety net: what it found would depend on load, so none is used)."""
    if not generated.ok:
        reason = generated.failure_reason or reasons.PLUS_GENERATOR_EXIT
        if reason == reasons.PLUS_GENERATOR_KILLED and blocked:
            calls = ", ".join(f"{m}: {c}" for m, c in sorted(blocked.items()))
            return reasons.PLUS_GENERATOR_BLOCKED, f"blocking calls ({calls}); {generated.detail}"
        return reason, generated.detail
    if generated.hit_time_cap:
        return reasons.PLUS_GENERATOR_TIME_CAP, (
            f"the search stopped at plus.budget_s={plus.budget_s} s after {generated.iterations} of "
            f"{plus.max_iterations} iterations (coverage {generated.coverage})"
        )
    return None


def _screened_suite(
    suite: PlusSuite,
    generated: GeneratedTests,
    contract: TaskContract,
    blocked: dict[str, str],
    solution: str,
    class_name: str,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str,
    seeded: Sequence[PlusTest] = (),
) -> PlusSuite:
    """Convert, screen by the contract (the repository's seeds first: the cap keeps them), observe,
    drop what asserts nothing, validate on the reference."""
    conversion = convert(generated.module, solution=solution, class_name=class_name, import_statement=import_statement)
    drops = list(conversion.dropped)
    screened, screen_drops = screen([*seeded, *conversion.tests], plus.max_tests, class_name, task_contract=contract)
    observed = (
        observe_tests(screened, solution, class_name, sandbox, plus, item_id, contract=contract, blocked=set(blocked))
        if plus.observe_state and screened
        else Observed(tests=screened)
    )
    asserting, silent = unasserted(observed.tests)
    checked = validate(name_tests(asserting, class_name), solution, import_statement, sandbox, plus, item_id)
    drops += screen_drops + observed.dropped + silent + checked.drops
    kept = name_tests([t.test for t in checked.kept], class_name)
    code, classes = render(kept, import_statement) if kept else ("", [])
    update: dict = {
        "test": code,
        "test_classes": classes,
        "tests": len(kept),
        "dropped": _counts(drops),
        "drops": drops,
        "generated": len(seeded) + len(conversion.tests) + len(conversion.dropped) + observed.walks,
        "observed": len(screened) if plus.observe_state else 0,
        "unchecked": _counts(observed.unchecked),
    }
    if not kept:
        counts = ", ".join(f"{r} x{n}" for r, n in _counts(drops).items()) or "no test function in its module"
        update |= {
            "failure": f"{update['generated']} generated, all dropped: {counts}",
            "failure_reason": reasons.PLUS_ALL_DROPPED,
        }
    return suite.model_copy(update=update)
