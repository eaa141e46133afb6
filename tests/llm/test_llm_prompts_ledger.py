"""Prompt templates (versions, fields, system/user split) and the usage ledger on its own."""

from __future__ import annotations

import hashlib
import threading

import pytest
from llmkit import PROMPTS

from classforge_bench.pipeline.config import CostConfig
from classforge_bench.pipeline.llm.errors import PromptError
from classforge_bench.pipeline.llm.ledger import UsageLedger
from classforge_bench.pipeline.llm.prompts import default_prompt_dir, list_prompts, load_prompt


def test_lists_templates_and_loads_the_latest_version():
    assert list_prompts(PROMPTS) == {"chat": [1], "example": [1, 2]}
    t = load_prompt("example", directory=PROMPTS)
    assert (t.name, t.number, t.version) == ("example", 2, "example@v2")
    assert t.sha256 == hashlib.sha256((PROMPTS / "example.v2.md").read_bytes()).hexdigest()
    assert t.fields == ["class_name", "skeleton"]


@pytest.mark.parametrize("version", [1, "1", "v1", "example@v1"])
def test_loads_an_explicit_version(version):
    assert load_prompt("example", version, directory=PROMPTS).render(class_name="Stack") == "Write the class Stack."


def test_renders_code_with_braces_and_literal_dollars():
    t = load_prompt("example", directory=PROMPTS)
    code = 'def f(self):\n    return {"k": "$HOME"}  # ${not_a_field}'
    text = t.render(class_name="Stack", skeleton=code)
    assert code in text  # values are inserted verbatim, never re-parsed
    assert '{"a": 1}' in text and "StackFactory" in text and "prices are in $." in text


def test_missing_and_unknown_fields_name_the_template_and_field():
    t = load_prompt("example", directory=PROMPTS)
    with pytest.raises(PromptError, match=r"example@v2 .*missing field\(s\) skeleton"):
        t.render(class_name="Stack")
    with pytest.raises(PromptError, match=r"example@v2 .*unknown field\(s\) skeletn"):
        t.render(class_name="Stack", skeleton="x", skeletn="y")


def test_system_user_split_returns_messages():
    t = load_prompt("chat", directory=PROMPTS)
    assert t.has_system
    assert t.messages(language="Python", code="class A: ...") == [
        {"role": "system", "content": "You are a careful Python programmer."},
        {"role": "user", "content": "Complete this code:\nclass A: ..."},
    ]
    with pytest.raises(PromptError, match="system part"):
        t.render(language="Python", code="x")
    single = load_prompt("example", 1, directory=PROMPTS)
    assert single.messages(class_name="Q") == [{"role": "user", "content": "Write the class Q."}]


def test_load_errors_are_clear(tmp_path):
    with pytest.raises(PromptError, match="no prompt template named 'nope'"):
        load_prompt("nope", directory=PROMPTS)
    with pytest.raises(PromptError, match=r"example@v7 not found .*available: \[1, 2\]"):
        load_prompt("example", 7, directory=PROMPTS)
    with pytest.raises(PromptError, match="prompt directory not found"):
        load_prompt("x", directory=tmp_path / "missing")
    (tmp_path / "bad.v1.md").write_text("costs $ 5 per $item")
    with pytest.raises(PromptError, match=r"bad@v1 .*invalid placeholder"):
        load_prompt("bad", directory=tmp_path)
    (tmp_path / "num.v9.md").write_text("nine")
    (tmp_path / "num.v10.md").write_text("ten")
    assert load_prompt("num", directory=tmp_path).render() == "ten"  # numeric, not lexical, order


def test_default_directory_is_the_package_prompts_folder():
    assert default_prompt_dir().parts[-2:] == ("pipeline", "prompts")  # classforge_bench/pipeline/prompts


def test_ledger_cost_arithmetic_and_unpriced_models():
    ledger = UsageLedger({"m": CostConfig(prompt_per_mtok=0.15, completion_per_mtok=0.6)})
    ledger.record(
        role="solver", task_id="t1", model="m", prompt_tokens=1_000_000, completion_tokens=500_000, cached=False
    )
    ledger.record(role="solver", task_id="t1", model="m", prompt_tokens=10, completion_tokens=10, cached=True)
    ledger.record(role="judge_0", task_id="t1", model="free", prompt_tokens=7, completion_tokens=3, cached=False)
    ledger.record_failure(role="judge_0", task_id="t2", model="free", retries=4)
    s = ledger.summary()
    assert s.total.cost_usd == 0.45 and ledger.spent_usd == 0.45  # 0.15 + 0.5 * 0.6
    assert s.by_role["solver"].cached_hits == 1 and s.by_role["solver"].cached_completion_tokens == 10
    assert s.by_model["free"].cost_usd == 0.0 and s.unpriced_models == ["free"]
    assert s.by_task["t2"].failed_requests == 1 and s.by_task["t2"].retries == 4
    assert s.total.total_tokens == 1_500_010


def test_ledger_is_thread_safe():
    ledger = UsageLedger({"m": CostConfig(prompt_per_mtok=1.0, completion_per_mtok=1.0)})

    def work(i: int) -> None:
        for _ in range(500):
            ledger.record(
                role=f"r{i % 2}", task_id=f"t{i}", model="m", prompt_tokens=3, completion_tokens=1, cached=False
            )

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = ledger.summary()
    assert s.total.requests == 4000 and s.total.prompt_tokens == 12000
    assert s.total.cost_usd == 0.016 and s.by_role["r0"].requests == 2000
