"""A task's plus suite end to end: generate (sandbox) -> convert -> static rules -> validate
(sandbox) -> ClassEval-form module. Cached by content: a finished suite is never made again.

The key covers everything that decides the suite: the generator and its settings, the class's
source and imports, the sandbox's hash seed and environment checks, and the converter's version.
Not in it: the time caps and wall limits, which do not change a run that stays within them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import ValidationError

from classforge_bench.pipeline.config import PlusConfig, SandboxConfig
from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.core.store import write_text
from classforge_bench.pipeline.core.task import PlusDrop, PlusSuite
from classforge_bench.pipeline.quality.cache import content_key
from classforge_bench.pipeline.quality.plus.contract import (
    Contract,
    annotated_source,
    declared_fields,
    declared_types,
    off_contract,
    undeclared_attribute,
)
from classforge_bench.pipeline.quality.plus.convert import PlusTest, convert
from classforge_bench.pipeline.quality.plus.examples import (
    Evidence,
    method_docs,
    off_domain,
    shown_arguments,
    undescribed_effect,
    unshown_type,
)
from classforge_bench.pipeline.quality.plus.generate import GENERATOR, GeneratedTests, generate
from classforge_bench.pipeline.quality.plus.observe import OBSERVE_VERSION, Observed, observe_tests
from classforge_bench.pipeline.quality.plus.render import name_tests, render
from classforge_bench.pipeline.quality.plus.rules import violation
from classforge_bench.pipeline.quality.plus.validate import validate

log = logging.getLogger(__name__)

PLUS_VERSION = 8  # bump when conversion, rules or validation change what a suite holds


def suite_key(
    solution: str,
    class_name: str,
    import_statement: list[str],
    sandbox: SandboxConfig,
    plus: PlusConfig,
    described: str = "",
) -> str:
    settings = plus.model_dump(
        mode="json", include={"seed", "hash_seed", "max_iterations", "assertions", "max_tests", "validation_runs"}
    )
    if plus.observe_state:  # only then: suites made without it keep their keys
        settings |= plus.model_dump(mode="json", include={"observe_state", "observe_walks"}) | {
            "observe": OBSERVE_VERSION
        }
    checks = sandbox.environment_checks.model_dump(mode="json")
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
    )


def _cache_path(plus: PlusConfig, key: str, kind: str = "suites") -> Path | None:
    return None if plus.cache_dir is None else Path(plus.cache_dir) / kind / key[:2] / f"{key}.json"


def generation_path(source: str, plus: PlusConfig) -> Path | None:
    """Where the generator's run on `source` is cached (its module, wall time, coverage)."""
    settings = plus.model_dump(mode="json", include={"seed", "hash_seed", "max_iterations", "budget_s", "assertions"})
    return _cache_path(plus, content_key(GENERATOR, settings, source), "generated")


def generated_tests(
    source: str, sandbox: SandboxConfig, plus: PlusConfig, item_id: str = ""
) -> tuple[GeneratedTests, bool]:
    """Pynguin's module for `source`, from the cache when this exact run was made before: the search
    is the costly part, so a change of conversion or validation never repeats it."""
    path = generation_path(source, plus)
    if path is not None and path.is_file():
        try:
            return GeneratedTests.model_validate_json(path.read_text(encoding="utf-8")), True
        except (ValidationError, ValueError, OSError) as exc:
            log.warning("plus: ignoring unreadable cached generation %s: %s", path, exc)
    generated = generate(source, sandbox, plus, item_id=item_id)
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
) -> tuple[list[PlusTest], list[PlusDrop]]:
    """The static rules, the description's fields and argument types, duplicates and the per-task
    cap, in that order."""
    kept: list[PlusTest] = []
    drops: list[PlusDrop] = []
    seen: set[str] = set()
    fields = declared_fields(described, class_name) if described else None
    methods = set(contract or {}) | {m for t in tests for m in t.methods}
    evidence = shown_arguments(described, class_name) if described else {}
    docs = method_docs(described, class_name) if described else {}
    for test in tests:
        broken = violation(test.body)
        if broken is None and fields is not None:
            hidden = undeclared_attribute(test.body, class_name, fields, methods)
            broken = (reasons.PLUS_PRIVATE_ATTRIBUTE, hidden) if hidden else None
        broken = broken or _off_description(test.body, class_name, contract or {}, evidence, docs)
        if broken is not None:
            drops.append(PlusDrop(origin=test.origin, reason=broken[0], detail=broken[1]))
        elif test.body in seen:
            drops.append(PlusDrop(origin=test.origin, reason=reasons.PLUS_DUPLICATE))
        elif len(kept) >= max_tests:
            drops.append(PlusDrop(origin=test.origin, reason=reasons.PLUS_OVER_LIMIT))
        else:
            seen.add(test.body)
            kept.append(test)
    return kept, drops


def _off_description(
    body: str, class_name: str, contract: Contract, evidence: Evidence, docs: dict[str, str]
) -> tuple[str, str] | None:
    """(reason, detail) when the test passes what the description neither types, shows nor allows,
    or checks an effect it does not state."""
    effect = undescribed_effect(body, docs) if docs else None
    if effect is not None:
        return reasons.PLUS_UNDESCRIBED_EFFECT, effect
    off = (off_contract(body, class_name, contract) if contract else None) or unshown_type(
        body, class_name, evidence, contract
    )
    if off is not None:
        return reasons.PLUS_OFF_CONTRACT, off
    negative = off_domain(body, class_name, evidence)
    return (reasons.PLUS_OFF_DOMAIN, negative) if negative else None


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
) -> PlusSuite:
    """The validated plus suite of one class (cached by content under plus.cache_dir).

    `described`: where the argument types are stated (a task's skeleton); default: the solution.
    """
    key = suite_key(solution, class_name, import_statement, sandbox, plus, described or "")
    cached = cached_suite(plus, key)
    if cached is not None:
        return cached.model_copy(update={"generation_s": 0.0})
    contract = declared_types(described or solution, class_name)
    generated, reused = generated_tests(annotated_source(solution, class_name, contract), sandbox, plus, item_id)
    suite = PlusSuite(
        generator=GENERATOR,
        seed=plus.seed,
        generation_s=0.0 if reused else round(generated.wall_s, 2),
        hit_time_cap=generated.hit_time_cap,
        key=key,
    )
    if not generated.ok:
        # Not cached: a generator that died may well succeed on a machine with more room.
        return suite.model_copy(update={"failure": generated.detail[:2000]})
    conversion = convert(generated.module, solution=solution, class_name=class_name, import_statement=import_statement)
    drops = list(conversion.dropped)
    screened, screen_drops = screen(conversion.tests, plus.max_tests, class_name, contract, described or solution)
    observed = (
        observe_tests(screened, solution, class_name, sandbox, plus, item_id)
        if plus.observe_state and screened
        else Observed(tests=screened)
    )
    checked = validate(name_tests(observed.tests, class_name), solution, import_statement, sandbox, plus, item_id)
    drops += screen_drops + observed.dropped + checked.drops
    kept = name_tests([t.test for t in checked.kept], class_name)
    code, classes = render(kept, import_statement) if kept else ("", [])
    suite = suite.model_copy(
        update={
            "test": code,
            "test_classes": classes,
            "tests": len(kept),
            "dropped": _counts(drops),
            "drops": drops,
            "generated": len(conversion.tests) + len(conversion.dropped) + observed.walks,
            "observed": len(screened) if plus.observe_state else 0,
            "unchecked": _counts(observed.unchecked),
        }
    )
    path = _cache_path(plus, key)
    if path is not None:
        write_text(path, suite.model_dump_json(indent=1))
    return suite
