"""A dataset with plus suites: `evaluate` reports base and plus side by side, and plus catches a
sample the base tests let through (ClassEval_8's base tests never pass a balance to the constructor)."""

from __future__ import annotations

import json

from classforge_bench.benchmark.plus import plus_task
from classforge_bench.benchmark.runner import EvaluationRequest, evaluate
from classforge_bench.pipeline.config import Config, EvaluateConfig
from classforge_bench.pipeline.core.task import PlusSuite

BANK = "ClassEval_8"
PLUS = PlusSuite(
    test=(
        "import unittest\n\n\nclass BankAccountTestDeposit(unittest.TestCase):\n    def test_deposit_1(self):\n"
        "        bank_account = BankAccount(balance=50)\n        self.assertEqual(bank_account.deposit(amount=7), 57)\n\n\n"
        "class BankAccountTestMain(unittest.TestCase):\n    def test_main_1(self):\n"
        "        bank_account = BankAccount(balance=9)\n        self.assertEqual(bank_account.withdraw(amount=4), 5)\n"
        "        self.assertEqual(bank_account.view_balance(), 5)\n"
    ),
    test_classes=["BankAccountTestDeposit", "BankAccountTestMain"],
    tests=2,
    generated=2,
)


def test_plus_task_runs_base_and_plus_tests_per_method(classeval):
    task = classeval.by_id()[BANK].model_copy(update={"plus": PLUS})
    combined = plus_task(task)
    assert "class BankAccountTestDepositPlus(BankAccountTestDeposit):" in combined.test
    assert "class BankAccountTestMainPlus(unittest.TestCase):" in combined.test
    assert combined.test_classes == [
        "BankAccountTestDepositPlus",
        "BankAccountTestWithdraw",
        "BankAccountTestViewBalance",
        "BankAccountTestTransfer",
        "BankAccountTest",
        "BankAccountTestMainPlus",
    ]
    assert combined.method("deposit").test_class == "BankAccountTestDepositPlus"
    assert plus_task(classeval.by_id()[BANK]) == classeval.by_id()[BANK]  # no plus suite: unchanged


def test_evaluate_reports_base_and_plus_and_plus_catches_what_base_misses(classeval_path, tmp_path):
    records = [r for r in json.loads(classeval_path.read_text()) if r["task_id"] == BANK]
    records[0]["plus"] = PLUS.model_dump(mode="json")
    dataset = tmp_path / "bank.json"
    dataset.write_text(json.dumps(records))
    solution = records[0]["solution_code"]
    ignores_balance = solution.replace("self.balance = balance", "self.balance = 0")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": BANK, "completion": f"```python\n{code}\n```", "model": model}) + "\n"
            for model, code in (("good", solution), ("ignores-balance", ignores_balance))
        )
    )
    config = Config(evaluate=EvaluateConfig(output_root=tmp_path / "results", ks=[1], bootstrap_resamples=10))
    results = evaluate(EvaluationRequest(dataset=dataset, models=[], samples_file=samples), config).results

    def class_full(groups, model):
        return next(g for g in groups if g.model == model).metrics.class_level.full[1].value

    assert not any(r.broken for r in results.plus_reference)
    assert class_full(results.scores, "good") == 1.0 and class_full(results.plus_scores, "good") == 1.0
    assert class_full(results.scores, "ignores-balance") == 1.0  # the base tests miss it
    assert class_full(results.plus_scores, "ignores-balance") == 0.0
    summary = (next((tmp_path / "results").iterdir()) / "summary.md").read_text()
    assert "## Base vs plus pass@1 (%)" in summary and "100.0 / 0.0" in summary
