"""The special models over all 100 ClassEval tasks (1 sample): `reference` scores 100% on every
task that is not broken, `empty` scores 0% class-level pass@1, and the broken set is exactly what
we measure here.

Seven tasks are known to fail with their reference for reasons outside the solution
(17, 48, 50, 51, 52, 69, 97). In our sandbox five of them are broken, each for the cause below,
and two are not; one task outside that list depends on the random seed:
- ClassEval_17 (Calendar): `test_get_upcoming_events_5` expects events of January 2024 to be
  upcoming, compared with today's date; fails on every date after them.
- ClassEval_48 (IpUtil): `test_get_hostname_3` expects the authors' host name 'LAPTOP-2CS86KUM'.
- ClassEval_51 (KappaCalculator): `np.mat` is gone in NumPy 2 (we have NumPy 2.x).
- ClassEval_52 (Lemmatization): needs NLTK data downloaded at run time; the sandbox has no network,
  so every test raises LookupError.
- ClassEval_69 (PDFHandler): the listed class `TestPDFHandler` is a fixture base class with no
  tests; zero tests run is never a pass.
- ClassEval_50 (JSONProcessor) passes: its test expects a permission error that root does not get,
  but the sandbox runs every program as an unprivileged uid, so the error happens as the test expects.
- ClassEval_58 (MinesweeperGame, not in that list) places mines with `random.randint`, and
  colliding mines fail two tests: unseeded, its reference fails about one run in five. The
  evaluator seeds `random` from `sandbox.hash_seed` in every run, so it is reproducible: it passes
  with the default seed 0 (it would fail with seeds 2 and 5).
- ClassEval_97 (Words2Numbers) passes: the loader fixes (and reports) the leading space in the test
  class name ' Words2NumbersTestMain', so the class is found and runs.
"""

from __future__ import annotations

import pytest

from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig

BROKEN_HERE = {
    "ClassEval_17": "CalendarTestGetUpcomingEvents",
    "ClassEval_48": "LAPTOP-2CS86KUM",
    "ClassEval_51": "np.mat",
    "ClassEval_52": "LookupError",
    "ClassEval_69": "TestPDFHandler: no test ran",
}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_reference_scores_everything_empty_scores_nothing(classeval_path, classeval, tmp_path):
    cfg = Config()
    cfg.evaluate = EvaluateConfig(n_samples=1, output_root=tmp_path / "results", bootstrap_resamples=500)
    out = evaluate(EvaluationRequest(dataset=classeval_path, models=["reference", "empty"]), cfg, env={})
    r = out.results

    causes = {ref.task_id: ref.cause for ref in r.reference if ref.broken}
    assert set(causes) == set(BROKEN_HERE), causes
    for task_id, clue in BROKEN_HERE.items():
        assert clue in causes[task_id], (task_id, causes[task_id])
    assert not any(ref.infrastructure for ref in r.reference)
    assert any(f.task_id == "ClassEval_97" and f.kind == "test_class_whitespace" for f in r.dataset.fixes_applied)

    reference = next(g for g in r.scores if g.model == "reference")
    empty = next(g for g in r.scores if g.model == "empty")
    for g in (reference, empty):
        assert g.strategy == "direct" and g.tasks_scored == 95 and g.n_samples == 95 and g.n_scored == 95
        assert not g.tasks_unscored
    assert reference.buckets["completed"] == 95
    assert reference.metrics.class_level.full[1].value == 1.0
    assert reference.metrics.method_level.full[1].value == 1.0
    assert reference.dep.dep_m.value == reference.dep.dep_f.value == 1.0
    assert sum(reference.taxonomy.values()) == 0

    assert empty.metrics.class_level.full[1].value == 0.0
    # Partial success (ClassEval: every test class has a passing test) is not 0 for `empty`: in two
    # tasks a method that returns None passes the tests of invalid input in every test class
    # (PersonRequest's validators must return None for bad names, sexes and phone numbers;
    # PushBoxGame's init/check_win/move have tests where nothing changes).
    partial = {tc.task_id for tc in empty.metrics.per_task if tc.class_level.partial}
    assert partial == {"ClassEval_70", "ClassEval_71"}, partial
    assert empty.metrics.class_level.partial[1].value == pytest.approx(2 / 95)
    # Method level, 4 of the 394 scored methods pass with an empty body: their own tests only check
    # that nothing happens or that a call does not fail (removing an absent course or user, and
    # Snake's reset/random_food_position, whose tests see the state the constructor already set).
    full = {(tc.task_id, m) for tc in empty.metrics.per_task for m, c in tc.methods.items() if c.full}
    assert full == {
        ("ClassEval_21", "remove_course"),
        ("ClassEval_77", "random_food_position"),
        ("ClassEval_77", "reset"),
        ("ClassEval_92", "delete_user_by_username"),
    }, full
    assert empty.metrics.n_methods_scored == 394
    assert empty.metrics.method_level.full[1].value == pytest.approx(4 / 394)
    assert sum(empty.taxonomy.values()) == 95  # every empty sample fails and gets a category
    assert "**5 broken**" in out.summary
