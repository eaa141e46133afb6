"""The evaluator's small parts: sandbox result -> outcome mapping, model levels, samples files,
run identity, the EvaluateConfig section, and the summary layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from classforge_bench.benchmark.execution import (
    StoredExecution,
    class_outcome,
    classes_left,
    collected_anything,
    finished_classes,
    to_outcome,
)
from classforge_bench.benchmark.levels import levels_schema, parse_levels
from classforge_bench.benchmark.results import run_id_for
from classforge_bench.benchmark.samples_file import SamplesFileError, read_samples_file
from classforge_bench.benchmark.strategies import STRATEGIES
from classforge_bench.pipeline.config import Config, ConfigError, EvalStrategy, load_config
from classforge_bench.pipeline.sandbox import (
    ClassResult,
    ClassStatus,
    MethodResult,
    SuiteResult,
    SuiteStatus,
    TestOutcome,
)


def method(name: str, outcome: TestOutcome, exc: str | None = None, msg: str | None = None) -> MethodResult:
    return MethodResult(
        name=name, outcome=outcome, exc_type=exc, message=msg, traceback=f"Traceback...\n{exc}: {msg}" if exc else None
    )


def suite(status: SuiteStatus, classes: list[ClassResult], detail: str = "") -> SuiteResult:
    return SuiteResult(status=status, classes=classes, detail=detail, limit_s=10.0, wall_s=0.1)


def stored(
    whole: SuiteResult,
    reruns: list[SuiteResult] | None = None,
    expected: dict[str, list[str]] | None = None,
) -> StoredExecution:
    return StoredExecution(
        key="k",
        task_id="T",
        limit_s=10.0,
        program="",
        whole=whole,
        apart=expected is not None,
        expected=expected or {},
        reruns=reruns or [],
    )


# -- per test class ------------------------------------------------------------------------------------


def test_class_outcome_counts_like_unittest():
    cls = ClassResult(
        name="TestA",
        status=ClassStatus.FAILED,
        methods=[
            method("test_1", TestOutcome.PASSED),
            method("test_2", TestOutcome.FAILED, "AssertionError", "1 != 2"),
            method("test_3", TestOutcome.ERRORED, "NameError", "name 'x' is not defined"),
            method("test_4", TestOutcome.SKIPPED),
            method("test_5", TestOutcome.UNEXPECTED_SUCCESS),
            method("test_6", TestOutcome.EXPECTED_FAILURE),
        ],
    )
    out = class_outcome(cls)
    assert (out.tests_run, out.failures, out.errors, out.skipped, out.passed) == (6, 2, 1, 1, 2)
    assert out.status == "partial"
    assert [(p.test, p.kind, p.exception.type) for p in out.problems] == [
        ("TestA.test_2", "failure", "AssertionError"),
        ("TestA.test_3", "error", "NameError"),
        ("TestA.test_5", "failure", "AssertionError"),
    ]


@pytest.mark.parametrize(
    "status, error",
    [
        (ClassStatus.MISSING, "no test class or function named 'X'"),
        (ClassStatus.ZERO_TESTS, "no test ran (none defined)"),
        (ClassStatus.FIXTURE_ERROR, "setUpClass (t.X): KeyError: 'db'"),
    ],
)
def test_a_class_that_ran_nothing_is_an_error_never_a_pass(status, error):
    out = class_outcome(ClassResult(name="X", status=status, error=error))
    assert out.status == "error" and out.passed == 0
    assert out.problems and out.problems[0].kind == "error"
    if status is ClassStatus.FIXTURE_ERROR:
        assert out.problems[0].exception.type == "KeyError"


def test_a_failing_fixture_after_passing_tests_is_not_a_success():
    # tearDownClass failed after both tests passed: unittest reports an error, so must we
    cls = ClassResult(
        name="X",
        status=ClassStatus.FAILED,
        error="tearDownClass (t.X): OSError: busy",
        methods=[method("test_1", TestOutcome.PASSED), method("test_2", TestOutcome.PASSED)],
    )
    out = class_outcome(cls)
    assert out.status == "partial" and out.errors == 1 and out.problems[-1].exception.type == "OSError"


# -- per sample ----------------------------------------------------------------------------------------


def passed(name: str) -> ClassResult:
    return ClassResult(name=name, status=ClassStatus.PASSED, methods=[method("test_1", TestOutcome.PASSED)])


def test_sandbox_statuses_map_to_sample_buckets():
    ok = to_outcome("T", stored(suite(SuiteStatus.PASSED, [passed("A"), passed("B")])))
    assert ok.status == "completed" and set(ok.test_classes) == {"A", "B"}
    zero = to_outcome(
        "T", stored(suite(SuiteStatus.ZERO_TESTS, [ClassResult(name="A", status=ClassStatus.ZERO_TESTS)]))
    )
    assert zero.status == "completed" and zero.test_class_status("A") == "error"
    load = to_outcome(
        "T",
        stored(
            suite(SuiteStatus.ERROR, [], "the solution failed to import: ModuleNotFoundError: No module named 'numpyy'")
        ),
    )
    assert load.status == "load_error" and load.error.type == "ModuleNotFoundError"
    tampered = to_outcome("T", stored(suite(SuiteStatus.TAMPERED, [passed("A")], "canary reported passed")))
    assert tampered.status == "tampered" and tampered.test_class_status("A") == "error"
    crashed = to_outcome(
        "T",
        stored(suite(SuiteStatus.CRASHED, [ClassResult(name="A", status=ClassStatus.ZERO_TESTS, error="not run")])),
    )
    assert crashed.status == "crashed"
    memory = to_outcome(
        "T", stored(suite(SuiteStatus.RESOURCE_EXCEEDED, [], "memory limit exceeded (MemoryError in A)"))
    )
    assert memory.status == "resource_limit" and memory.error.type == "MemoryError"
    with pytest.raises(ValueError, match="task T: sandbox status sandbox_error cannot be scored"):
        to_outcome("T", stored(suite(SuiteStatus.SANDBOX_ERROR, [], "bwrap: cannot start")))
    cpu = to_outcome("T", stored(suite(SuiteStatus.TIMEOUT, [], "exceeded the 2.0s of CPU limit")))
    assert cpu.status == "timeout" and cpu.error.type == "TimeoutError"
    ceiling = suite(SuiteStatus.TIMEOUT, [], "stopped by the wall-clock safety net").model_copy(
        update={"wall_ceiling": True}
    )
    waited = to_outcome("T", stored(ceiling))
    assert waited.status == "timeout" and waited.error.type == "WallClockCeiling"  # the safety net, named apart


def test_an_abnormal_run_is_accounted_per_class_within_the_limit():
    expected = {"A": ["test_1"], "B": ["test_1"], "C": ["test_1", "test_2"], "D": ["test_1"], "E": ["test_1"]}
    # the whole run finished A, crashed in B (C, D, E never reached); the rerun of C, D, E finished
    # C's first test and timed out in its second, with no time left for D and E
    whole = suite(
        SuiteStatus.CRASHED,
        [
            passed("A"),
            ClassResult(name="B", status=ClassStatus.ZERO_TESTS),
            ClassResult(name="C", status=ClassStatus.ZERO_TESTS),
            ClassResult(name="D", status=ClassStatus.ZERO_TESTS),
            ClassResult(name="E", status=ClassStatus.ZERO_TESTS),
        ],
        "killed by SIGSEGV",
    )
    assert finished_classes(whole, expected) == ["A"]
    assert classes_left("ABCDE", [whole], expected) == ["C", "D", "E"]
    rerun = suite(
        SuiteStatus.TIMEOUT,
        [
            passed("C"),
            ClassResult(name="D", status=ClassStatus.ZERO_TESTS),
            ClassResult(name="E", status=ClassStatus.ZERO_TESTS),
        ],
        "exceeded the 1.0s limit",
    )
    assert classes_left("ABCDE", [whole, rerun], expected) == ["D", "E"]  # C ended in the timeout: decided
    out = to_outcome("T", stored(whole, [rerun], expected), list("ABCDE"))
    assert out.status == "completed"
    assert out.test_class_status("A") == "success"
    assert out.test_classes["B"].problems[-1].exception.type == "Crashed" and not out.test_classes["B"].timed_out
    assert out.test_classes["C"].timed_out and out.test_classes["C"].tests_run == 1
    for name in "DE":
        assert out.test_classes[name].timed_out and out.test_class_status(name) == "error"
        assert out.test_classes[name].problems[0].exception.type == "NotRun"
    # the same whole run without accounting apart (one test class, or reruns off) keeps its bucket
    assert to_outcome("T", stored(whole)).status == "crashed"


def test_class_floors_scale_the_references_own_time_in_each_class(tmp_path):
    from classforge_bench.benchmark.execution import ExecutionJob, ExecutionStore, Executor
    from classforge_bench.benchmark.execution_phase import class_floors as _class_floors
    from classforge_bench.benchmark.results import ReferenceRecord

    timed = [
        MethodResult(name="t1", outcome=TestOutcome.PASSED, duration_s=0.2),
        MethodResult(name="t2", outcome=TestOutcome.PASSED, duration_s=0.05),
    ]
    whole = suite(SuiteStatus.PASSED, [ClassResult(name="A", status=ClassStatus.PASSED, methods=timed), passed("B")])
    cfg = Config().sandbox
    executor = Executor(cfg, ExecutionStore(tmp_path))
    executor.store.put(StoredExecution(key="refkey", task_id="T", limit_s=60.0, program="", whole=whole))
    ref = ReferenceRecord(
        task_id="T", broken=False, suite_status="passed", wall_s=0.3, limit_s=10.0, execution_key="refkey"
    )
    assert _class_floors(executor, ref) == {"A": round(cfg.scale_factor * 0.25, 2), "B": 0.0}
    assert _class_floors(executor, ref.model_copy(update={"execution_key": "gone"})) == {}
    # the floors are part of what a sample's execution is stored under
    job = ExecutionJob(task_id="T", program="p", tests="t", test_classes=("A", "B"), limit_s=10.0)
    assert job.key(cfg) != job.model_copy(update={"class_floors": {"A": 2.5}}).key(cfg)


def test_a_class_is_finished_only_when_every_expected_test_reported():
    half = ClassResult(name="A", status=ClassStatus.PASSED, methods=[method("test_1", TestOutcome.PASSED)])
    timeout = suite(SuiteStatus.TIMEOUT, [half, ClassResult(name="B", status=ClassStatus.FIXTURE_ERROR, error="x")])
    assert finished_classes(timeout, {"A": ["test_1", "test_2"], "B": ["test_1"]}) == ["B"]
    assert finished_classes(timeout, {"A": ["test_1"], "B": ["test_1"]}) == ["A", "B"]
    # a run that ended normally finished every class, whatever was expected
    assert finished_classes(suite(SuiteStatus.FAILED, [half]), {"A": ["test_1", "test_2"]}) == ["A"]


def test_collection_is_told_apart_from_a_load_that_never_finished():
    never = suite(SuiteStatus.TIMEOUT, [ClassResult(name="A", status=ClassStatus.ZERO_TESTS, error="not run")])
    assert not collected_anything(never)
    assert collected_anything(
        suite(SuiteStatus.TIMEOUT, [ClassResult(name="A", status=ClassStatus.ZERO_TESTS, error="no test ran")])
    )


# -- model levels --------------------------------------------------------------------------------------


def test_model_levels_are_parsed_strictly(classeval):
    task = classeval.by_id()["ClassEval_47"]  # is_valid, get_octets, get_binary
    good = '{"levels": {"is_valid": 0, "get_octets": 1, "get_binary": 2}}'
    assert parse_levels(task, good) == ({"is_valid": 0, "get_octets": 1, "get_binary": 2}, "")
    assert parse_levels(task, f"<think>hmm</think>\n```json\n{good}\n```")[0] is not None
    extra = '{"levels": {"is_valid": 0, "get_octets": 1, "get_binary": 2, "helper": 0}}'
    assert parse_levels(task, extra)[1] == "ignored levels of unknown methods: helper"
    assert parse_levels(task, "levels: is_valid=0") == (None, "the answer is not JSON")
    assert parse_levels(task, '{"order": []}') == (None, 'the answer has no "levels" object')
    assert parse_levels(task, '{"levels": {"is_valid": 0, "get_octets": -1, "get_binary": true}}') == (
        None,
        "not a non-negative integer level: get_octets=-1, get_binary=True",
    )
    schema = levels_schema(task)["json_schema"]
    assert schema["strict"] and schema["schema"]["properties"]["levels"]["required"] == task.method_names


# -- samples files ---------------------------------------------------------------------------------------


def test_samples_file_numbering_defaults_and_errors(tmp_path):
    path = tmp_path / "out.jsonl"
    rows = [
        {"task_id": "A", "completion": "x"},
        {"task_id": "A", "completion": "y", "extra": 1},
        {"task_id": "A", "completion": "z", "model": "m", "strategy": "holistic", "sample_index": 4},
        {"task_id": "B", "completion": "w", "sample_index": 1},
        {"task_id": "B", "completion": "v"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    got = read_samples_file(path, default_model=None, known_tasks={"A", "B"})
    assert [(s.task_id, s.model, s.strategy, s.sample_index) for s, _ in got] == [
        ("A", "out", "external", 0),
        ("A", "out", "external", 1),
        ("A", "m", "holistic", 4),
        ("B", "out", "external", 1),
        ("B", "out", "external", 0),
    ]
    assert read_samples_file(path, default_model="mine", known_tasks={"A", "B"})[0][0].model == "mine"
    with pytest.raises(SamplesFileError, match=r"out.jsonl:4: task 'B' is not in the dataset"):
        read_samples_file(path, default_model=None, known_tasks={"A"})
    path.write_text(
        json.dumps({"task_id": "A", "completion": "x", "sample_index": 0})
        + "\n"
        + json.dumps({"task_id": "A", "completion": "y", "sample_index": 0})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(SamplesFileError, match=r":2: task A: sample 0 of out/external given twice"):
        read_samples_file(path, default_model=None, known_tasks={"A"})
    path.write_text('{"task_id": "A"}\n', encoding="utf-8")
    with pytest.raises(SamplesFileError, match=r":1: Value error, give either 'completion' .* or 'steps'"):
        read_samples_file(path, default_model=None, known_tasks={"A"})
    path.write_text('{"task_id": "A", "completion": 3}\n', encoding="utf-8")
    with pytest.raises(SamplesFileError, match=r":1: completion: Input should be a valid string"):
        read_samples_file(path, default_model=None, known_tasks={"A"})


# -- identity and configuration ------------------------------------------------------------------------


def test_run_ids_are_stable_and_change_with_what_changes_the_samples():
    base = {"dataset": "abc", "models": ["gpt-x"], "n": 5, "strategies": ["holistic"]}
    assert run_id_for("ClassEval_data", base) == run_id_for("ClassEval_data", dict(reversed(base.items())))
    assert run_id_for("ClassEval_data", base).startswith("ClassEval_data__gpt-x__")
    assert run_id_for("ClassEval_data", base) != run_id_for("ClassEval_data", base | {"n": 1})
    assert run_id_for("d", {"models": ["org/model:v1"]}).split("__")[1] == "org-model-v1"


def test_evaluate_config_section(tmp_path):
    assert get_args(EvalStrategy) == STRATEGIES
    cfg = Config().evaluate
    assert (cfg.n_samples, cfg.ks, cfg.endpoint.temperature, cfg.levels_source, str(cfg.output_root)) == (
        5,
        [1, 3, 5],
        0.2,
        "labels",
        "results",
    )
    assert cfg.strategies == list(STRATEGIES)
    path = tmp_path / "c.toml"
    path.write_text(
        '[evaluate]\nn_samples = 2\nks = [3, 1, 1]\nstrategies = ["holistic"]\n'
        '[evaluate.endpoint]\nmodel = "m"\nbase_url = "http://127.0.0.1:1/v1"\n',
        encoding="utf-8",
    )
    loaded = load_config(path, env={}).evaluate
    assert (loaded.n_samples, loaded.ks, loaded.strategies, loaded.endpoint.model) == (2, [1, 3], ["holistic"], "m")
    path.write_text('[evaluate]\nstrategies = ["sideways"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="evaluate.strategies"):
        load_config(path, env={})
    path.write_text("[evaluate]\nks = [0]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="evaluate.ks"):
        load_config(Path(path), env={})
