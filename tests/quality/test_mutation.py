"""Mutation reports through the real sandbox: killed, survived, timed out, equivalent, the score
policy, the content cache (a second run makes no sandbox run) and the reference check."""

from __future__ import annotations

from pathlib import Path

import pytest
from mutation_kit import CLASSES, SOLUTION, TESTS, CountingBackend

from classforge_bench.pipeline.config import MutationConfig, SandboxConfig
from classforge_bench.pipeline.quality.mutants import generate_mutants
from classforge_bench.pipeline.quality.mutation import (
    MutantOutcome,
    MutationError,
    MutationReport,
    build_report,
    measure_mutation,
    score_of,
)
from classforge_bench.pipeline.sandbox import get_backend


@pytest.fixture(scope="module")
def sandbox() -> SandboxConfig:
    return SandboxConfig(wall_limit_s=20.0, grace_s=1.0, workers=2)


@pytest.fixture(scope="module")
def config() -> MutationConfig:
    # One sandbox run per mutant: the path the batched one (test_mutation_batch.py) is held to.
    return MutationConfig(max_mutants_per_method=50, timeout_floor_s=1.5, timeout_factor=2.0, batch_size=0)


@pytest.fixture(scope="module")
def first(tmp_path_factory, config, sandbox):
    cache = tmp_path_factory.mktemp("mcache")
    backend = CountingBackend(get_backend(sandbox))
    run = measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=config,
        sandbox=sandbox,
        item_id="counter",
        reference_wall_s=0.1,
        cache_root=cache,
        backend=backend,
    )
    return run, cache, backend


def _outcome_of(run, description: str) -> str:
    found = generate_mutants(SOLUTION, max_per_method=50, seed=0)
    ids = {m.mutant_id for m in found.mutants if m.description == description}
    assert ids, f"no mutant {description!r}"
    surviving = {s.mutant_id for s in run.report.surviving}
    return "survived" if ids & surviving else "detected"


def test_killed_survived_timed_out_and_equivalent(first):
    run, _, backend = first
    report = run.report
    assert _outcome_of(run, "self.n += k -> self.n -= k") == "detected"
    assert _outcome_of(run, 'raise ValueError("negative") -> pass') == "detected"
    assert _outcome_of(run, '"Counter" -> ""') == "survived"  # describe() has no test
    assert _outcome_of(run, "< 0 -> <= 0") == "survived"  # add(0) is never tried
    # `self.n -= 1` -> `self.n += 1` in drain() never ends: timed out, not killed.
    assert report.timed_out >= 1
    # The dead `self.n = -1` compiles away: removing or changing it is provably equivalent.
    assert report.equivalent >= 2
    assert report.mutants == report.killed + report.survived + report.timed_out + report.equivalent
    assert report.score == pytest.approx((report.killed + report.timed_out) / (report.mutants - report.equivalent))
    assert (
        backend.runs == report.mutants - report.equivalent
    )  # one run per mutant; the reference was timed by the caller
    assert run.sandbox_runs == backend.runs and run.cached == 0
    surviving = {s.description for s in report.surviving}
    assert '"Counter" -> ""' in surviving
    assert all(s.diff.startswith("--- original") for s in report.surviving)
    assert MutationReport.model_validate_json(report.model_dump_json()) == report


def test_second_run_is_served_from_the_cache(first, config, sandbox):
    run, cache, _ = first
    backend = CountingBackend(get_backend(sandbox))
    again = measure_mutation(
        SOLUTION, TESTS, CLASSES, config=config, sandbox=sandbox, item_id="counter", cache_root=cache, backend=backend
    )
    assert backend.runs == 0 and again.sandbox_runs == 0  # not even the reference is timed
    assert again.cached == run.report.mutants - run.report.equivalent
    assert again.report == run.report


def test_a_torn_cache_line_costs_only_that_mutant(first, config, sandbox, tmp_path):
    _, cache, _ = first
    files = list(Path(cache).rglob("*.jsonl"))
    assert len(files) == 1
    copy = tmp_path / files[0].relative_to(cache)
    copy.parent.mkdir(parents=True)
    lines = files[0].read_text().splitlines(keepends=True)
    copy.write_text("".join(lines[:-1]) + lines[-1][:10])  # the last line cut mid-write
    backend = CountingBackend(get_backend(sandbox))
    measure_mutation(
        SOLUTION,
        TESTS,
        CLASSES,
        config=config,
        sandbox=sandbox,
        item_id="counter",
        reference_wall_s=0.1,
        cache_root=tmp_path,
        backend=backend,
    )
    assert backend.runs == 1


def test_a_reference_that_fails_its_tests_is_an_error(config, sandbox):
    broken = SOLUTION.replace("self.n += k", "self.n += k + 1")
    with pytest.raises(MutationError, match="counter-x: the reference does not pass its tests"):
        measure_mutation(broken, TESTS, CLASSES, config=config, sandbox=sandbox, item_id="counter-x")


def test_timeout_policies():
    assert score_of(6, 2, 2, "killed") == pytest.approx(0.8)
    assert score_of(6, 2, 2, "survived") == pytest.approx(0.6)
    assert score_of(6, 2, 2, "excluded") == pytest.approx(0.75)
    assert score_of(0, 0, 0, "killed") is None
    found = generate_mutants(SOLUTION, max_per_method=50, seed=0)
    outcomes = {m.mutant_id: MutantOutcome.TIMED_OUT for m in found.mutants}
    report = build_report(found.mutants, outcomes, 0, 0, MutationConfig(timeouts_count_as="excluded"))
    assert report.score is None and report.by_operator == {}
