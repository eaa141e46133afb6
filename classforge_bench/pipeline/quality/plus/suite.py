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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from classforge_bench.pipeline.config import MutationConfig, PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import parsing, reasons
from classforge_bench.pipeline.core.records import RepoSeed
from classforge_bench.pipeline.core.store import write_text
from classforge_bench.pipeline.core.task import PlusDrop, PlusSuite
from classforge_bench.pipeline.formats.quirks import defined_test_classes
from classforge_bench.pipeline.quality.cache import content_key
from classforge_bench.pipeline.quality.plus import repo_seeds
from classforge_bench.pipeline.quality.plus.blocking import blocking_methods, without_methods
from classforge_bench.pipeline.quality.plus.contract import Contract, annotated_source
from classforge_bench.pipeline.quality.plus.convert import PlusTest, convert, unasserted
from classforge_bench.pipeline.quality.plus.generate import GENERATOR, GeneratedTests, generate
from classforge_bench.pipeline.quality.plus.observe import OBSERVE_VERSION, Observed, observe_tests
from classforge_bench.pipeline.quality.plus.render import NamedTest, name_tests, render
from classforge_bench.pipeline.quality.plus.repair import repaired
from classforge_bench.pipeline.quality.plus.rules import violation
from classforge_bench.pipeline.quality.plus.seeds import SEEDS_VERSION, Seeded, seed_tests
from classforge_bench.pipeline.quality.plus.selection import SELECTION_VERSION, select_by_mutants
from classforge_bench.pipeline.quality.plus.task_contract import TaskContract, derive_contract
from classforge_bench.pipeline.quality.plus.validate import validate

log = logging.getLogger(__name__)

PLUS_VERSION = 13  # 13: both kinds of seed (the repository's, 12, and the dataset's own tests mutated, 11) in one suite; 12: seeds' UTC twins and round trips; 11: types read only where stated, positional arguments checked, the task's own values in its domain; off-contract arguments repaired, a None return the description states asserted, a stated check of the parameters documents a failure, seeds and selection (when on); 10: numeric strings keep their shape; 9: the task contract (task_contract.py), generator failure reasons; bump when conversion, rules or validation change what a suite holds


def suite_key(
    solution: str,
    class_name: str,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    described: str = "",
    base_tests: str = "",
    documented_fields_only: bool = False,
    base_test_classes: list[str] | None = None,
    seeds: Sequence[RepoSeed] = (),
) -> str:
    settings = plus.model_dump(
        mode="json", include={"seed", "hash_seed", "max_iterations", "assertions", "max_tests", "validation_runs"}
    )
    if plus.observe_state:  # only then: suites made without it keep their keys
        settings |= plus.model_dump(mode="json", include={"observe_state", "observe_walks"}) | {
            "observe": OBSERVE_VERSION
        }
    if plus.seeds:
        settings |= plus.model_dump(mode="json", include={"seeds", "seed_mutants", "seed_splices"}) | {
            "seeds_version": SEEDS_VERSION,
            "observe": OBSERVE_VERSION,
        }
    if plus.select_by_mutants:  # the mutants are the default MutationConfig's sample, run with these classes
        settings |= {
            "select_by_mutants": SELECTION_VERSION,
            "mutation": MutationConfig().model_dump(mode="json"),
            "base_test_classes": base_test_classes if base_test_classes is not None else test_classes_of(base_tests),
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


def test_classes_of(tests: str) -> list[str]:
    """The unittest classes of a test module that hold tests."""
    try:
        return [name for name, n in defined_test_classes(parsing.parse(tests)).items() if n] if tests else []
    except SyntaxError:
        return []


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
    repairs: list[str] | None = None,
) -> tuple[list[PlusTest], list[PlusDrop]]:
    """The static rules, then the task's contract (fields, argument types and domains, documented
    exceptions, described effects), duplicates and the per-task cap, in that order. An argument
    outside the contract is repaired where it can be (repair.py; the origins of the tests repaired
    go to `repairs`). `contract` (declared types) and `described` are the older way to give the
    contract: it is derived from them."""
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
            body, broken, fixed = _off_contract(body, task_contract)
            if fixed and broken is None and repairs is not None:
                repairs.append(test.origin)
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


def _off_contract(body: str, contract: TaskContract) -> tuple[str, tuple[str, str] | None, bool]:
    """(the body, with undocumented-but-stated exception types widened to Exception and arguments
    outside the contract repaired; the first contract rule it breaks as (reason, detail), else
    None; whether an argument was repaired)."""
    body, _ = contract.without_undeclared_checks(body)  # the check goes, the test's other checks stand
    hidden = contract.attribute_problem(body)
    if hidden is not None:
        return body, (reasons.PLUS_PRIVATE_ATTRIBUTE, hidden), False
    effect = contract.effect_problem(body)
    if effect is not None:
        return body, (reasons.PLUS_UNDESCRIBED_EFFECT, effect), False
    off = contract.argument_problem(body)
    fixed = repaired(body, contract) if off is not None else (body, 0)
    if off is not None and fixed is None:
        return body, off, False
    body, changed = fixed or (body, 0)
    rewritten, undocumented = contract.raise_problem(body)
    if rewritten is None:
        return body, (reasons.PLUS_UNDOCUMENTED_EXCEPTION, undocumented), changed > 0
    return rewritten, None, changed > 0


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
    base_test_classes: list[str] | None = None,
    seeds: Sequence[RepoSeed] = (),
) -> PlusSuite:
    """The validated plus suite of one class (cached by content under plus.cache_dir).

    `described`: the task's skeleton, from which its contract is derived (default: the solution);
    `base_tests`: the task's own tests, whose values are in the contract too, and from which
    plus.seeds makes tests; `base_test_classes`: the ones to run (default: every TestCase class
    in `base_tests`), which plus.select_by_mutants runs with the candidates;
    `documented_fields_only`: only fields the constructor's docstring names are observable
    (the real-source track, whose constructors are the author's code, not a specification);
    `seeds`: how the class's repository builds and calls it (repo_seeds.py): tests of their own
    and the search's initial population.
    """
    settings = (sandbox, plus, described or "", base_tests, documented_fields_only, base_test_classes, seeds)
    key = suite_key(solution, class_name, import_statement, *settings)
    cached = cached_suite(plus, key)
    if cached is not None:
        return cached.model_copy(update={"generation_s": 0.0})
    contract = derive_contract(
        described or solution, class_name, base_tests, documented_fields_only=documented_fields_only
    )
    blocked = blocking_methods(solution, class_name)
    searched = without_methods(annotated_source(solution, class_name, contract.declared), class_name, set(blocked))
    seed_module = repo_seeds.pynguin_seed_module(seeds, class_name, contract, solution)
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
    base = (base_tests, base_test_classes if base_test_classes is not None else test_classes_of(base_tests))
    repo_seeded = repo_seeds.seed_tests(seeds, class_name, contract, solution)
    suite = _screened_suite(
        suite, generated, contract, blocked, solution, import_statement, base, sandbox, plus, item_id, repo_seeded
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


class _Candidates(BaseModel):
    """The tests that assert something before validation, and what was dropped making them."""

    model_config = ConfigDict(extra="forbid")
    tests: list[PlusTest]
    seed_classes: dict[str, str] = Field(default_factory=dict, description="seed test origin -> its base test class")
    paths: dict[str, list[tuple[str, str]]] = Field(
        default_factory=dict, description="seed test origin -> exceptions the reference handled in its calls"
    )
    base_paths: list[tuple[str, str]] = Field(default_factory=list, description="those of the base tests")
    imports: list[str] = Field(default_factory=list, description="the base tests' import lines the seeds may use")
    drops: list[PlusDrop] = Field(default_factory=list)
    generated: int = 0
    seeded: int = 0
    repaired: int = 0
    observed: Observed
    observed_tests: int = Field(0, description="generated tests the state observation ran on")


def _candidates(
    generated: GeneratedTests,
    contract: TaskContract,
    blocked: dict[str, str],
    solution: str,
    import_statement: list[str],
    base_tests: str,
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str,
    repo_seeded: Sequence[PlusTest] = (),
) -> _Candidates:
    """Convert, screen by the contract (repairing what it can; the repository's seeds first, so
    the cap keeps them), observe; the seed-mutation tests (plus.seeds); drop what asserts nothing."""
    class_name = contract.class_name
    conversion = convert(generated.module, solution=solution, class_name=class_name, import_statement=import_statement)
    repairs: list[str] = []
    screened, screen_drops = screen(
        [*repo_seeded, *conversion.tests], plus.max_tests, class_name, task_contract=contract, repairs=repairs
    )
    observed = (
        observe_tests(screened, solution, class_name, sandbox, plus, item_id, contract=contract, blocked=set(blocked))
        if plus.observe_state and screened
        else Observed(tests=screened)
    )
    seeded = (
        seed_tests(
            base_tests,
            solution,
            contract,
            import_statement=import_statement,
            sandbox=sandbox,
            plus=plus,
            item_id=item_id,
        )
        if plus.seeds and base_tests
        else Seeded()
    )
    seed_screened, seed_drops = screen(
        [t.test for t in seeded.tests], max(len(seeded.tests), 1), class_name, task_contract=contract
    )
    asserting, silent = unasserted(observed.tests + seed_screened)
    return _Candidates(
        tests=asserting,
        seed_classes={t.test.origin: t.test_class for t in seeded.tests},
        paths={t.test.origin: t.paths for t in seeded.tests},
        base_paths=seeded.base_paths,
        imports=seeded.imports,
        drops=[*conversion.dropped, *screen_drops, *observed.dropped, *seeded.dropped, *seed_drops, *silent],
        generated=len(repo_seeded)
        + len(conversion.tests)
        + len(conversion.dropped)
        + observed.walks
        + seeded.scenarios,
        seeded=seeded.scenarios,
        repaired=len(repairs) + seeded.repaired,
        observed=observed,
        observed_tests=len(screened) if plus.observe_state else 0,
    )


def _kept(
    candidates: _Candidates,
    contract: TaskContract,
    solution: str,
    import_statement: list[str],
    base: tuple[str, list[str]],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str,
) -> tuple[list[NamedTest], list[PlusDrop], dict[str, int]]:
    """Validate on the reference, select by mutants (plus.select_by_mutants), cap at plus.max_tests:
    (the tests kept and named, the drops, the selection's counts)."""
    named = name_tests(candidates.tests, contract.class_name, candidates.seed_classes)
    checked = validate(named, solution, import_statement, sandbox, plus, item_id)
    drops, kept, counts = list(checked.drops), checked.kept, {}
    if plus.select_by_mutants and kept:
        selection = select_by_mutants(
            kept,
            solution,
            base,
            import_statement,
            sandbox,
            contract,
            item_id=item_id,
            paths=(candidates.paths, candidates.base_paths),
        )
        drops += selection.drops
        kept = selection.kept
        counts = selection.model_dump(
            include={"mutants", "killed_by_base", "killed_by_plus", "unattributed", "for_outcomes"}
        )
        if selection.skipped:
            log.info("plus: %s: no mutation-guided selection: %s", item_id or contract.class_name, selection.skipped)
    over = kept[plus.max_tests :]
    drops += [PlusDrop(origin=t.test.origin, reason=reasons.PLUS_OVER_LIMIT) for t in over]
    tests = [t.test for t in kept[: plus.max_tests]]
    return name_tests(tests, contract.class_name, candidates.seed_classes), drops, counts


def _screened_suite(
    suite: PlusSuite,
    generated: GeneratedTests,
    contract: TaskContract,
    blocked: dict[str, str],
    solution: str,
    import_statement: list[str],
    base: tuple[str, list[str]],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    item_id: str,
    seeded: Sequence[PlusTest] = (),
) -> PlusSuite:
    """The candidates (`_candidates`; the repository's seeds first, so the cap keeps them), then
    the ones kept (`_kept`), as the suite's module."""
    candidates = _candidates(
        generated, contract, blocked, solution, import_statement, base[0], sandbox, plus, item_id, seeded
    )
    imports = list(dict.fromkeys(import_statement + candidates.imports))
    kept, kept_drops, selection = _kept(candidates, contract, solution, imports, base, sandbox, plus, item_id)
    drops = candidates.drops + kept_drops
    code, classes = render(kept, imports) if kept else ("", [])
    update: dict = {
        "test": code,
        "test_classes": classes,
        "tests": len(kept),
        "dropped": _counts(drops),
        "drops": drops,
        "generated": candidates.generated,
        "seeded": candidates.seeded,
        "repaired": candidates.repaired,
        "selection": selection,
        "observed": candidates.observed_tests,
        "unchecked": _counts(candidates.observed.unchecked),
    }
    # No test needed (the selection found every mutant the base tests leave alive out of reach, and no
    # new outcome) is an empty suite by choice, not a generator that produced nothing.
    if not kept and reasons.PLUS_NOT_SELECTED not in update["dropped"]:
        counts = ", ".join(f"{r} x{n}" for r, n in _counts(drops).items()) or "no test function in its module"
        update |= {
            "failure": f"{update['generated']} generated, all dropped: {counts}",
            "failure_reason": reasons.PLUS_ALL_DROPPED,
        }
    return suite.model_copy(update=update)
