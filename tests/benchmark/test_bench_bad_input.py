"""One bad sample never stops a run (issue 9, item 4): invalid UTF-8 in a dataset or samples file,
a lone surrogate in a completion, a raw U+2028 inside a JSON string."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classforge_bench.benchmark.results import load_results
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate, regrade
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.formats.loader import DatasetError, load_dataset
from classforge_bench.pipeline.formats.textfiles import TextFileError, utf8_lines

BANK = "ClassEval_8"


def _task_record(classeval_path: Path, task_id: str) -> dict:
    return next(t for t in json.loads(classeval_path.read_text(encoding="utf-8")) if t["task_id"] == task_id)


def test_lines_split_at_newline_only_and_name_the_bad_byte(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": "one\xe2\x80\xa8two"}\r\n\n{"b": "\xff"}\n')
    lines = list(utf8_lines(path, strict=False))
    assert [ln.number for ln in lines] == [1, 3]
    assert json.loads(lines[0].text) == {"a": "one\u2028two"}
    assert lines[1].fault == "invalid UTF-8 (byte 0xff at column 8)" and lines[1].text == '{"b": "\udcff"}'
    with pytest.raises(TextFileError, match=r"x\.jsonl:3: invalid UTF-8 \(byte 0xff at column 8\)"):
        list(utf8_lines(path))


def test_dataset_with_invalid_utf8_names_file_and_line(classeval_path, tmp_path):
    record = _task_record(classeval_path, BANK)
    text = json.dumps([record], indent=1).encode("utf-8")
    cut = text.index(b"class_description")
    bad_json = tmp_path / "bad.json"
    bad_json.write_bytes(text[:cut] + b"\xc3(" + text[cut:])
    line = text[:cut].count(b"\n") + 1
    with pytest.raises(DatasetError, match=rf"bad\.json:{line}:\d+: invalid UTF-8 \(byte 0xc3\)"):
        load_dataset(bad_json)
    bad_jsonl = tmp_path / "bad.jsonl"
    good = json.dumps(record).encode("utf-8")
    bad_jsonl.write_bytes(good + b"\n" + good.replace(b"BankAccount", b"Bank\xffAccount", 1) + b"\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:2: invalid UTF-8"):
        load_dataset(bad_jsonl)


def test_jsonl_dataset_with_a_raw_line_separator_inside_a_string_loads(classeval_path, tmp_path):
    record = _task_record(classeval_path, BANK)
    record["class_description"] += "\u2028second paragraph\u2029"
    path = tmp_path / "ls.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")  # raw, not escaped
    [task] = load_dataset(path).tasks
    assert task.task_id == BANK


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_bad_samples_get_their_own_outcome_and_the_rest_are_scored(classeval_path, tmp_path):
    solution = _task_record(classeval_path, BANK)["solution_code"]
    fence = "```python\n{}\n```"

    def line(completion: str, strategy: str) -> bytes:
        return json.dumps(
            {"task_id": BANK, "completion": completion, "model": "m", "strategy": strategy}, ensure_ascii=False
        ).encode("utf-8")

    good = line(fence.format(solution), "good")
    # a Latin-1 byte inside a comment of the code: invalid UTF-8 on line 2 only
    latin1 = line(fence.format(solution.replace("class BankAccount:", "class BankAccount:  # caf\u00e9")), "latin1")
    latin1 = latin1.replace("caf\u00e9".encode("utf-8"), b"caf\xe9")
    surrogate = json.dumps(
        {"task_id": BANK, "completion": fence.format(solution + "\n# \ud800"), "model": "m", "strategy": "surrogate"}
    ).encode("ascii")  # escaped "\ud800"
    separator = line("Here you go\u2028(answer below):\n" + fence.format(solution), "separator")
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(b"\n".join([good, latin1, surrogate, separator]) + b"\n")

    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=tmp_path / "results", bootstrap_resamples=50)
    out = evaluate(EvaluationRequest(dataset=classeval_path, samples_file=samples, task_ids=[BANK]), cfg, env={})
    by = {s.strategy: s for s in out.results.samples}
    assert by["good"].bucket == by["separator"].bucket == "completed"
    assert by["good"].outcome.test_class_status("BankAccountTest") == "success"
    assert by["latin1"].bucket == by["surrogate"].bucket == "compile_error"
    assert "lone surrogate U+DCE9" in by["latin1"].score.reason
    assert "lone surrogate U+D800" in by["surrogate"].score.reason
    assert by["latin1"].score.error_category == "syntax" and by["latin1"].execution is None
    # the results hold the bad text escaped, and read back and regrade
    assert load_results(out.run_dir).samples[1].generation.steps[0].raw == by["latin1"].generation.steps[0].raw
    assert [g.metrics for g in regrade(out.run_dir).results.scores] == [g.metrics for g in out.results.scores]


def test_extraction_of_a_live_answer_with_a_lone_surrogate_does_not_raise():
    from classforge_bench.pipeline.llm.extraction import extract_code, extract_method

    unfenced = "class A:\n    def f(self):\n        return '\ud800'\n\nThat is all."
    assert "return '\ud800'" in extract_code(unfenced, class_name="A").code
    m = extract_method(unfenced, "f", class_name="A")
    assert m.how == "lines" and "\ud800" in m.code  # kept as written; the program is refused later
