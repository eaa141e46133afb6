"""Class- and method-level pass@k (full and partial) and DEP(M)/DEP(F).

Definitions (sources: ClassEval paper, Du et al. 2023, section 4.4; ClassEval's reference
evaluator, FudanSELab/ClassEval `classeval_evaluation/test_pipeline.py`, functions
`get_test_answer`, `evaluate` and `cal_metrics_pass_at_k`):

Per sample and test class, the test class is success / partial / fail / error
(`TestClassOutcome.status`: success = at least one test passed and none failed or raised;
partial = at least one passed and at least one did not; a class that ran no test is an error).

- Class-level full success (paper: "a class-level code sample is deemed correct if it passes all
  the method-level and class-level test cases"): every test class of the task is a success.
- Class-level partial success (evaluator: `class_partial_success` when no test class is `fail` or
  `error`): every test class has at least one passing test. Reported as pass@k over samples that
  are full *or* partial successes, as the evaluator does (`class_success + class_partial_success`).
- Method-level full success (paper: "a method-level sample is deemed correct if it passes all the
  method-level test cases"): the method's own test class is a success.
- Method-level partial success (evaluator: a test class answer of `partial_success`): at least one
  test of the method's own test class passes; again counted together with full successes.

Class-level pass@k is the mean over tasks; method-level pass@k the mean over every method that
has its own test class (ClassEval's evaluator averages over test classes; methods without one are
counted and reported, not scored). One difference from ClassEval's evaluator, on purpose: it also
scored the class-level test classes as "methods"; we keep method level to methods, as the paper
defines it.

DEP (paper, eq. 2-3): DEP(M) = sum_i G_i(M) / sum_i S_i(M), DEP(F) likewise for fields, summed
over every generated method i of every sample. S_i is the number of method (field) dependencies of
method i in the canonical solution; G_i how many of those the generated method i also uses (read as
the share of the canonical solution's dependencies that a generated method also uses, so a
generated method cannot score above its canonical one). Both sides are measured by the
same analysis, `classforge_bench.pipeline.core.class_analysis.analyse_class`, so the reference solution scores exactly
1.0; `canonical="labels"` takes S_i from the dataset's labels instead. A reference `self.m` in
the generated method counts for method m even when the generated class lacks m. A sample whose
program does not parse, or lacks the method, keeps its denominator and scores 0 for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.benchmark.outcomes import SampleOutcome
from classforge_bench.benchmark.passk import bootstrap_ci, bootstrap_ratio_ci, pass_at_k
from classforge_bench.pipeline.core.ast_helpers import find_class
from classforge_bench.pipeline.core.class_analysis import analyse_class, import_aliases
from classforge_bench.pipeline.core.source import parse
from classforge_bench.pipeline.core.task import Task

Level = Literal["success", "partial", "fail"]
DEFAULT_KS = (1, 3, 5)


# -- per sample --------------------------------------------------------------------------------


def class_level_status(task: Task, sample: SampleOutcome) -> Level:
    statuses = [sample.test_class_status(tc) for tc in task.test_classes]
    if all(s == "success" for s in statuses):
        return "success"
    if all(s in ("success", "partial") for s in statuses):
        return "partial"
    return "fail"


def method_level_status(task: Task, sample: SampleOutcome, method: str) -> Level | None:
    """None when the method has no test class of its own."""
    test_class = task.method(method).test_class
    if test_class is None:
        return None
    status = sample.test_class_status(test_class)
    return "success" if status == "success" else "partial" if status == "partial" else "fail"


# -- per task ------------------------------------------------------------------------------------


class Counts(BaseModel):
    """Correct-sample counts of one unit: full successes, and full-or-partial successes."""

    model_config = ConfigDict(extra="forbid")

    full: int = 0
    partial: int = 0


class TaskCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    n: int
    class_level: Counts
    methods: dict[str, Counts] = Field(description="methods with a test class of their own")
    methods_without_test_class: list[str] = Field(default_factory=list)


def count_task(task: Task, samples: Sequence[SampleOutcome]) -> TaskCounts:
    """`samples`: the task's samples, each once (the caller groups them by their requests)."""
    cls = Counts()
    methods = {m: Counts() for m in task.method_test_classes}
    for sample in samples:
        level = class_level_status(task, sample)
        cls.full += level == "success"
        cls.partial += level in ("success", "partial")
        for name, counts in methods.items():
            mlevel = method_level_status(task, sample, name)
            counts.full += mlevel == "success"
            counts.partial += mlevel in ("success", "partial")
    without = [m for m in task.method_names if m not in methods]
    return TaskCounts(
        task_id=task.task_id, n=len(samples), class_level=cls, methods=methods, methods_without_test_class=without
    )


# -- aggregate ------------------------------------------------------------------------------------


class Estimate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float
    ci_low: float
    ci_high: float


class LevelScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    full: dict[int, Estimate]
    partial: dict[int, Estimate]


class MetricsReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ks: list[int]
    n_tasks: int
    n_methods_scored: int
    methods_without_test_class: list[str] = Field(description="task_id/method pairs scored at class level only")
    class_level: LevelScores
    method_level: LevelScores
    per_task: list[TaskCounts]
    bootstrap: dict[str, float | int] = Field(description="resamples, seed, confidence of the CIs")


def _pooled_mean(groups: Sequence[Sequence[float]]) -> float:
    flat = [v for g in groups for v in g]
    return sum(flat) / len(flat)


def compute_metrics(
    tasks: Sequence[Task],
    outcomes: Mapping[str, Sequence[SampleOutcome]],
    *,
    ks: Iterable[int] = DEFAULT_KS,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> MetricsReport:
    """Scores of one (model, strategy) over `tasks`; every task needs at least one sample.

    Only the k <= n of every task are reported (pass@k is undefined beyond n). Confidence intervals
    are percentile bootstraps over tasks (method level: tasks resampled, their methods pooled).
    """
    missing = [t.task_id for t in tasks if not outcomes.get(t.task_id)]
    if missing:
        raise ValueError(f"no samples for task(s): {', '.join(missing)}")
    unknown = set(outcomes) - {t.task_id for t in tasks}
    if unknown:
        raise ValueError(f"samples for task(s) not being scored: {', '.join(sorted(unknown))}")
    per_task = [count_task(t, outcomes[t.task_id]) for t in tasks]
    n_min = min(tc.n for tc in per_task)
    usable = sorted(k for k in set(ks) if 1 <= k <= n_min)
    if not usable:
        raise ValueError(f"none of k={sorted(set(ks))} is <= the smallest sample count {n_min}")
    boot = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}

    def estimate(values: list, stat=None) -> Estimate:
        if stat is None:
            value = sum(values) / len(values)
            low, high = bootstrap_ci(values, n_resamples=n_resamples, seed=seed, confidence=confidence)
        else:  # the pooled mean of per-task groups: a ratio of sums
            value = stat(values)
            low, high = bootstrap_ratio_ci(
                [sum(g) for g in values],
                [len(g) for g in values],
                n_resamples=n_resamples,
                seed=seed,
                confidence=confidence,
            )
        return Estimate(value=value, ci_low=low, ci_high=high)

    def level_scores(kind: Literal["full", "partial"]) -> tuple[dict[int, Estimate], dict[int, Estimate]]:
        cls_scores, method_scores = {}, {}
        for k in usable:
            cls_scores[k] = estimate([pass_at_k(tc.n, getattr(tc.class_level, kind), k) for tc in per_task])
            groups = [
                [pass_at_k(tc.n, getattr(c, kind), k) for c in tc.methods.values()] for tc in per_task if tc.methods
            ]
            if groups:
                method_scores[k] = estimate(groups, _pooled_mean)
        return cls_scores, method_scores

    cls_full, m_full = level_scores("full")
    cls_partial, m_partial = level_scores("partial")
    return MetricsReport(
        ks=usable,
        n_tasks=len(per_task),
        n_methods_scored=sum(len(tc.methods) for tc in per_task),
        methods_without_test_class=[f"{tc.task_id}/{m}" for tc in per_task for m in tc.methods_without_test_class],
        class_level=LevelScores(full=cls_full, partial=cls_partial),
        method_level=LevelScores(full=m_full, partial=m_partial),
        per_task=per_task,
        bootstrap=boot,
    )


# -- DEP ------------------------------------------------------------------------------------------


class DepCounts(BaseModel):
    """Numerators and denominators of DEP(M) and DEP(F); add them up over methods and samples."""

    model_config = ConfigDict(extra="forbid")

    method_hits: int = 0
    method_total: int = 0
    field_hits: int = 0
    field_total: int = 0

    def __add__(self, other: DepCounts) -> DepCounts:
        return DepCounts(
            method_hits=self.method_hits + other.method_hits,
            method_total=self.method_total + other.method_total,
            field_hits=self.field_hits + other.field_hits,
            field_total=self.field_total + other.field_total,
        )

    @property
    def dep_m(self) -> float | None:
        return self.method_hits / self.method_total if self.method_total else None

    @property
    def dep_f(self) -> float | None:
        return self.field_hits / self.field_total if self.field_total else None


Dependencies = dict[str, tuple[set[str], set[str]]]  # method -> (methods it calls, fields it uses)


def _analyse(source: str, class_name: str) -> Dependencies | None:
    try:
        module = parse(source)
    except SyntaxError:
        return None
    cls = find_class(module, class_name)
    if cls is None:
        return None
    return {
        name: (set(d.method_calls), set(d.fields)) for name, d in analyse_class(cls, import_aliases(module)).items()
    }


def canonical_dependencies(task: Task, canonical: Literal["solution", "labels"] = "solution") -> Dependencies:
    """S_i per method: from the reference solution's analysis (default) or from the dataset's labels."""
    if canonical == "labels":
        return {
            m.method_name: (set(m.dependencies.method_dependencies), set(m.dependencies.field_names))
            for m in task.methods_info
        }
    analysed = _analyse(task.solution_code, task.class_name)
    if analysed is None:
        raise ValueError(f"task {task.task_id}: the reference solution cannot be analysed")
    return {m: analysed.get(m, (set(), set())) for m in task.method_names}


def dep_counts(task: Task, program: str, canonical: Dependencies | None = None) -> DepCounts:
    """DEP numerators/denominators of one generated program (one sample) of `task`."""
    reference = canonical if canonical is not None else canonical_dependencies(task)
    generated = _analyse(program, task.class_name) or {}
    total = DepCounts()
    for method, (ref_calls, ref_fields) in reference.items():
        calls, fields = generated.get(method, (set(), set()))
        # `self.m()` counts as using m even where the generated class lacks m (the analysis then
        # files it under fields): the method did generate the dependency.
        total += DepCounts(
            method_hits=len(ref_calls & (calls | fields)),
            method_total=len(ref_calls),
            field_hits=len(ref_fields & fields),
            field_total=len(ref_fields),
        )
    return total
