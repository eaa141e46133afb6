"""Fidelity on answers written the way real models write them (issue 15, items 1 and 6).

Each completion below imitates a published model answer (CRLF and lone CR line endings, prompt
echoes answering after `### Response:`, prose around the code, unclosed fences, no fences,
partial classes, syntax errors, no class, per-method answers, decorators that differ from the
skeleton's). The expected verdicts were worked out by hand from what the answer's code does
against ClassEval's tests (quoted in the comments), not by running the code under test.
"""

from __future__ import annotations

import json

import pytest

from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.benchmark.strategies import assemble, plan, read_step_output
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of
from classforge_bench.pipeline.core.source import dedent_code, parse, reindent_def
from classforge_bench.pipeline.llm.extraction import extract_code, extract_method

BANK = "ClassEval_8"  # BankAccount: deposit, withdraw, view_balance, transfer (+ a class-level test)
INTERP = "ClassEval_46"  # Interpolation: two @staticmethod methods, called on an instance by the tests
BANK_CLASSES = [
    "BankAccountTestDeposit",
    "BankAccountTestWithdraw",
    "BankAccountTestViewBalance",
    "BankAccountTestTransfer",
    "BankAccountTest",
]

# Written here, not taken from the dataset: the canonical BankAccount as a model would write it.
BANK_CODE = """class BankAccount:
    def __init__(self, balance=0):
        self.balance = balance

    def deposit(self, amount):
        if amount < 0:
            raise ValueError("Invalid amount")
        self.balance += amount
        return self.balance

    def withdraw(self, amount):
        if amount < 0:
            raise ValueError("Invalid amount")
        if amount > self.balance:
            raise ValueError("Insufficient balance.")
        self.balance -= amount
        return self.balance

    def view_balance(self):
        return self.balance

    def transfer(self, other_account, amount):
        self.withdraw(amount)
        other_account.deposit(amount)"""

ECHO_PREAMBLE = (
    "Below is an instruction that describes a task. Write a response that appropriately completes "
    "the request.\n\n### Instruction:\nPlease complete the class BankAccount in the following code.\n"
)


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


# -- item 1: minimal reproductions -----------------------------------------------------------------


def test_crlf_closing_fence_is_recognised_and_the_prose_after_it_left_out():
    raw = crlf("Here is the code:\n```python\nclass A:\n    x = 1\n```\nThis class has one field.\n")
    ex = extract_code(raw, class_name="A")
    assert ex.how == "fenced" and ex.code == "class A:\n    x = 1"
    assert ex.raw == raw  # the raw answer is kept as it came


def test_lone_cr_line_endings_are_lines_too():
    ex = extract_code("```python\rclass A:\r    x = 1\r```\rDone.", class_name="A")
    assert ex.how == "fenced" and ex.code == "class A:\n    x = 1"


def test_prompt_echo_keeps_the_answer_not_the_echoed_skeleton():
    skeleton = 'class A:\n    def f(self):\n        """Return 1."""'
    raw = f"### Instruction:\nComplete the class.\n{skeleton}\n\n### Response:\nclass A:\n    def f(self):\n        return 1\n"
    ex = extract_code(raw, class_name="A")
    assert ex.code == "class A:\n    def f(self):\n        return 1"
    assert "response marker" in ex.reason


def test_code_on_the_response_marker_line_is_code_not_a_comment():
    raw = "### Instruction:\nclass A:\n    pass\n### Response: class A:\n    def f(self):\n        return 1"
    assert extract_code(raw, class_name="A").code == "class A:\n    def f(self):\n        return 1"


def test_a_heading_that_merely_mentions_an_answer_is_not_a_marker():
    raw = "## Answer explanation\n```python\nclass A:\n    x = 1\n```"
    ex = extract_code(raw, class_name="A")
    assert ex.code == "class A:\n    x = 1" and "response marker" not in ex.reason


def test_unfenced_class_with_a_syntax_error_is_kept_not_trimmed_to_the_imports():
    raw = "import math\n\nclass A:\n    def f(self)\n        return math.pi\n\nThis returns pi."
    ex = extract_code(raw, class_name="A")
    assert "class A:" in ex.code and "def f(self)" in ex.code


def test_skeleton_decorator_is_not_forced_on_a_method_the_model_wrote_with_self(classeval):
    task = classeval.by_id()[INTERP]
    body = "def interpolate_1d(self, x, y, x_interp):\n    return list(x_interp)"
    fn = methods_of(find_class(parse(assemble(task, {"interpolate_1d": body})), task.class_name))["interpolate_1d"]
    assert fn.decorator_list == [] and fn.args.args[0].arg == "self"
    # without self it must stay a static method, or `instance.interpolate_1d(x, y, xi)` gets one argument too many
    plain = "def interpolate_1d(x, y, x_interp):\n    return list(x_interp)"
    fn = methods_of(find_class(parse(assemble(task, {"interpolate_1d": plain})), task.class_name))["interpolate_1d"]
    assert [d.id for d in fn.decorator_list] == ["staticmethod"]
    own = "@classmethod\ndef interpolate_1d(cls, x, y, x_interp):\n    return list(x_interp)"
    fn = methods_of(find_class(parse(assemble(task, {"interpolate_1d": own})), task.class_name))["interpolate_1d"]
    assert [d.id for d in fn.decorator_list] == ["classmethod"]  # the model's own decorators win


# -- item 6: re-indentation never touches string contents ---------------------------------------------

MULTILINE = 'def report(self):\n    return """Total:\n    first\n        second\n"""'
REPORT_VALUE = "Total:\n    first\n        second\n"


def _returned_string(program: str, class_name: str, method: str) -> str:
    fn = methods_of(find_class(parse(program), class_name))[method]
    return fn.body[-1].value.value


@pytest.mark.parametrize("indent", ["", "    ", "        "])
def test_method_returning_a_multiline_string_keeps_its_value_at_any_answer_indentation(indent):
    # The model answered with the method alone, indented as it likes; every line of the answer,
    # string lines included, carries that indentation, which is how the model meant the string.
    answer = "\n".join(indent + line for line in MULTILINE.split("\n"))
    m = extract_method(f"```python\n{answer}\n```", "report")
    assert m.found
    value = _returned_string("class R:\n" + m.code, "R", "report")
    assert value == "Total:\n" + "\n".join(indent + ln for ln in ["    first", "        second", ""])


def test_dedent_by_tokens_leaves_string_lines_alone():
    code = '    def f(self):\n        s = """a\n  b"""\n        return s'
    assert dedent_code(code) == 'def f(self):\n    s = """a\n  b"""\n    return s'
    assert reindent_def(dedent_code(code), "    ").split("\n")[2] == '  b"""'


def test_assembled_method_returning_a_multiline_string_returns_the_same_string(classeval):
    task = classeval.by_id()[BANK]
    step = next(s for s in plan(task, "incremental") if s.target == "view_balance")
    raw = crlf('```python\n    def view_balance(self):\n        return """Total:\n    first\n        second\n"""\n```')
    out = read_step_output(task, step, raw)
    program = assemble(task, out.methods)
    assert _returned_string(program, "BankAccount", "view_balance") == "Total:\n    first\n        second\n"


# -- the fidelity suite: realistic whole-class answers, scored end to end -------------------------------


def _bank_answers() -> list[tuple[str, dict, str, set[str]]]:
    """(label, samples-file line, expected bucket, test classes expected to pass)."""
    allpass = set(BANK_CLASSES)
    skeleton_echo = (
        "class BankAccount:\n    def __init__(self, balance=0):\n        self.balance = balance\n\n"
        '    def deposit(self, amount):\n        """Deposit money."""\n'
    )
    partial = (
        BANK_CODE.split("    def withdraw")[0].rstrip() + "\n\n    def view_balance(self):\n        return self.balance"
    )
    no_check = BANK_CODE.replace(
        '        if amount > self.balance:\n            raise ValueError("Insufficient balance.")\n', ""
    )
    answers = [
        # 79 of 100 answers of one model: CRLF everywhere, the closing fence is "```\r"
        (
            "crlf",
            crlf(f"Sure, here it is:\n```python\n{BANK_CODE}\n```\nThe transfer method reuses withdraw.\n"),
            "completed",
            allpass,
        ),
        # the whole prompt echoed, the answer after the marker (no fences)
        ("echo", f"{ECHO_PREAMBLE}{skeleton_echo}\n### Response:\n{BANK_CODE}\n", "completed", allpass),
        # echoed, and the answer starts on the marker line itself
        ("echo-inline", crlf(f"{ECHO_PREAMBLE}{skeleton_echo}\n### Response: {BANK_CODE}"), "completed", allpass),
        # prose before, a fence that never closes (output cut at max_tokens after the code)
        ("unclosed", f"Let me write the class.\n\n```python\n{BANK_CODE}\n", "completed", allpass),
        # no fences, prose after the code
        ("unfenced", f"{BANK_CODE}\n\nThis implementation raises ValueError on bad amounts.", "completed", allpass),
        # partial class: withdraw and transfer missing -> AttributeError in their tests and in the
        # class-level test (test_all calls withdraw); deposit and view_balance pass
        (
            "partial",
            f"```python\n{partial}\n```",
            "completed",
            {"BankAccountTestDeposit", "BankAccountTestViewBalance"},
        ),
        # withdraw without the balance check: test_withdraw_3 expects "Insufficient balance." and
        # transfer's test_transfer_2 expects the same error through withdraw; the class-level tests
        # stay within the balance and pass
        (
            "logic",
            crlf(f"```python\n{no_check}\n```"),
            "completed",
            {"BankAccountTestDeposit", "BankAccountTestViewBalance", "BankAccountTest"},
        ),
        # a class with a syntax error, no fences: a compile error, not the skeleton scored as logic
        (
            "syntax",
            "import math\n\n"
            + BANK_CODE.replace("def view_balance(self):", "def view_balance(self)")
            + "\n\nLet me know if you need more.",
            "compile_error",
            set(),
        ),
        # no class at all: functions only -> nothing of the model's can be scored as the class
        ("no-class", "```python\ndef deposit(balance, amount):\n    return balance + amount\n```", "no_code", set()),
        # prose only
        ("prose", "I cannot complete this task without more information.\r\n", "no_code", set()),
    ]
    return [
        (label, {"task_id": BANK, "completion": text, "model": "m", "strategy": label}, bucket, passing)
        for label, text, bucket, passing in answers
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_fidelity_suite_on_real_classeval_tasks(classeval_path, tmp_path):
    answers = _bank_answers()
    samples = tmp_path / "samples.jsonl"
    samples.write_text("\n".join(json.dumps(line) for _, line, _, _ in answers) + "\n", encoding="utf-8")
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=tmp_path / "results", bootstrap_resamples=50)
    out = evaluate(EvaluationRequest(dataset=classeval_path, samples_file=samples, task_ids=[BANK]), cfg, env={})
    by_strategy = {s.strategy: s for s in out.results.samples}
    for label, _, bucket, passing in answers:
        sample = by_strategy[label]
        assert sample.bucket == bucket, (label, sample.score.reason)
        got = {
            tc
            for tc in BANK_CLASSES
            if sample.outcome is not None and sample.outcome.test_class_status(tc) == "success"
        }
        assert got == passing, label
    assert "defines no class BankAccount" in by_strategy["no-class"].score.reason
    assert by_strategy["syntax"].score.error_category == "syntax"
    scores = {g.strategy: g for g in out.results.scores}
    assert scores["crlf"].metrics.class_level.full[1].value == 1.0
    assert scores["partial"].metrics.class_level.full[1].value == 0.0
    assert scores["no-class"].metrics.method_level.full[1].value == 0.0  # no credit for the skeleton's code


# -- per-method answers (pre-generated, every strategy), assembled by the live code path ------------------

DEPOSIT = (
    'def deposit(self, amount):\n    if amount < 0:\n        raise ValueError("Invalid amount")\n'
    "    self.balance += amount\n    return self.balance"
)
WITHDRAW = BANK_CODE[BANK_CODE.index("    def withdraw") : BANK_CODE.index("    def view_balance")].rstrip()
VIEW = "def view_balance(self):\n    return self.balance"
TRANSFER = "def transfer(self, other_account, amount):\n    self.withdraw(amount)\n    other_account.deposit(amount)"
INTERP_1D = """def interpolate_1d(self, x, y, x_interp):
    y_interp = []
    for xi in x_interp:
        for i in range(len(x) - 1):
            if x[i] <= xi <= x[i + 1]:
                y_interp.append(y[i] + (y[i + 1] - y[i]) * (xi - x[i]) / (x[i + 1] - x[i]))
                break
    return y_interp"""
INTERP_2D = """@staticmethod
def interpolate_2d(x, y, z, x_interp, y_interp):
    z_interp = []
    for xi, yi in zip(x_interp, y_interp):
        for i in range(len(x) - 1):
            if x[i] <= xi <= x[i + 1]:
                for j in range(len(y) - 1):
                    if y[j] <= yi <= y[j + 1]:
                        z00, z01 = z[i][j], z[i][j + 1]
                        z10, z11 = z[i + 1][j], z[i + 1][j + 1]
                        zi = (z00 * (x[i + 1] - xi) * (y[j + 1] - yi) + z10 * (xi - x[i]) * (y[j + 1] - yi)
                              + z01 * (x[i + 1] - xi) * (yi - y[j]) + z11 * (xi - x[i]) * (yi - y[j])) \\
                            / ((x[i + 1] - x[i]) * (y[j + 1] - y[j]))
                        z_interp.append(zi)
                        break
                break
    return z_interp"""


def _cumulative(*methods: str) -> str:
    """The class as it stands after some steps, the way an incremental model re-emits it."""
    body = "\n\n".join("\n".join("    " + ln if ln else ln for ln in m.split("\n")) for m in methods)
    return f"class BankAccount:\n    def __init__(self, balance=0):\n        self.balance = balance\n\n{body}"


def _per_method_answers() -> list[tuple[dict, str, set[str]]]:
    """(samples-file line, expected bucket, BankAccount/Interpolation test classes expected to pass)."""
    allbank = set(BANK_CLASSES)
    indented = "\n".join("    " + ln for ln in VIEW.split("\n"))
    incremental = [
        {
            "method": "deposit",
            "completion": crlf(f"Here is deposit:\n```python\n{DEPOSIT}\n```\nIt rejects negatives."),
        },
        {"method": "withdraw", "completion": f"{ECHO_PREAMBLE}### Response:\n{WITHDRAW}\n"},
        {"method": "view_balance", "completion": f"```\n{indented}\n```"},
        {"method": "transfer", "completion": f"<think>reuse withdraw</think>\n```python\n{TRANSFER}"},
    ]
    # the class after each step, steps unnamed: they follow the strategy's order
    per_step = [
        {"completion": crlf(f"```python\n{_cumulative(*ms)}\n```")}
        for ms in (
            [DEPOSIT],
            [DEPOSIT, WITHDRAW.replace("    def", "def", 1).replace("\n    ", "\n")],
            [DEPOSIT, VIEW],
            [DEPOSIT, VIEW, TRANSFER],
        )
    ]
    # top_down order from ClassEval's labels: transfer (calls withdraw and deposit) first, then
    # deposit, withdraw, view_balance in declaration order
    top_down = [{"completion": TRANSFER}, {"completion": DEPOSIT}, {"completion": WITHDRAW}, {"completion": VIEW}]
    missing_transfer = incremental[:3]
    interp = [
        {"method": "interpolate_1d", "completion": f"```python\n{INTERP_1D}\n```"},
        {"method": "interpolate_2d", "completion": crlf(f"```python\n{INTERP_2D}\n```")},
    ]
    interp_classes = {"InterpolationTestInterpolate1d", "InterpolationTestInterpolate2d", "InterpolationTestMain"}
    return [
        ({"task_id": BANK, "strategy": "incremental", "steps": incremental}, "completed", allbank),
        ({"task_id": BANK, "strategy": "bottom_up", "steps": per_step}, "completed", allbank),
        ({"task_id": BANK, "strategy": "top_down", "steps": top_down}, "completed", allbank),
        # transfer never answered: it keeps the skeleton's body (returns None, moves nothing), so its
        # tests and the class-level tests (test_all transfers 300) fail
        (
            {"task_id": BANK, "strategy": "compositional", "steps": missing_transfer},
            "completed",
            {"BankAccountTestDeposit", "BankAccountTestWithdraw", "BankAccountTestViewBalance"},
        ),
        # the model wrote interpolate_1d with self and no decorator (the skeleton has @staticmethod);
        # the tests call it on an instance, so it works as written
        (
            {"task_id": INTERP, "strategy": "compositional", "steps": interp, "model": "other"},
            "completed",
            interp_classes,
        ),
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_fidelity_suite_per_method_samples_of_every_strategy(classeval_path, tmp_path):
    answers = _per_method_answers()
    samples = tmp_path / "steps.jsonl"
    samples.write_text("\n".join(json.dumps({"model": "m"} | line) for line, _, _ in answers) + "\n", encoding="utf-8")
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=tmp_path / "results", bootstrap_resamples=50)
    out = evaluate(
        EvaluationRequest(dataset=classeval_path, samples_file=samples, task_ids=[BANK, INTERP]), cfg, env={}
    )
    by = {(s.model, s.strategy, s.task_id): s for s in out.results.samples}
    for line, bucket, passing in answers:
        sample = by[(line.get("model", "m"), line["strategy"], line["task_id"])]
        assert sample.bucket == bucket, (line["strategy"], sample.score.reason)
        got = {tc for tc in sample.outcome.test_classes if sample.outcome.test_class_status(tc) == "success"}
        assert got == passing, (line["strategy"], sample.program)
        assert [st.kind for st in sample.generation.steps] == ["method"] * len(line["steps"])
    top = by[("m", "top_down", BANK)]
    assert [st.targets for st in top.generation.steps] == [["transfer"], ["deposit"], ["withdraw"], ["view_balance"]]
    assert top.generation.levels is not None and top.generation.levels.levels["transfer"] == 1


def test_per_method_sample_errors_name_the_line(tmp_path):
    from classforge_bench.benchmark.samples_file import SamplesFileError, read_samples_file

    path = tmp_path / "s.jsonl"
    cases = [
        ({"task_id": "A", "steps": [{"completion": "x"}]}, r"s\.jsonl:1: a 'steps' sample must name its strategy"),
        (
            {"task_id": "A", "strategy": "holistic", "steps": [{"completion": "x"}]},
            r":1: 'steps' need a per-method strategy",
        ),
        (
            {"task_id": "A", "strategy": "incremental", "steps": [{"method": "g", "completion": "x"}]},
            r":1: task A has no method\(s\) g",
        ),
        (
            {
                "task_id": "A",
                "strategy": "incremental",
                "steps": [{"method": "f", "completion": "x"}, {"completion": "y"}],
            },
            r"name the method of every step or of none",
        ),
        (
            {"task_id": "A", "strategy": "incremental", "steps": [{"completion": "x"}] * 3},
            r"3 steps for task A, which has 2 methods",
        ),
        (
            {"task_id": "A", "strategy": "incremental", "steps": [{"method": "f", "completion": "x"}] * 2},
            r"method\(s\) f answered twice",
        ),
        ({"task_id": "A", "strategy": "incremental", "steps": []}, r":1: steps: List should have at least 1 item"),
    ]
    for line, message in cases:
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        with pytest.raises(SamplesFileError, match=message):
            read_samples_file(path, default_model=None, known_tasks={"A"}, task_methods={"A": ["f", "h"]})
