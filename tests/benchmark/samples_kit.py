"""ClassEval lines as a samples file, and older schemas' records: shared by the samples-file tests."""

from __future__ import annotations

import json
from pathlib import Path

BANK = "ClassEval_8"
BROKEN = "ClassEval_48"  # its tests expect the dataset authors' host name: broken on every other machine


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


def bank_variant(solution: str, withdraw_body: str) -> str:
    """The canonical BankAccount with `withdraw`'s body replaced."""
    head, rest = solution.split("    def withdraw(self, amount):\n", 1)
    tail = rest[rest.index("    def view_balance") :]
    return head + "    def withdraw(self, amount):\n" + withdraw_body + "\n\n" + tail


def write_samples(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


_V3_EXECUTION = ("suite_status", "detail", "wall_s", "isolation", "per_class", "reruns", "runs_wall_s")


_NAME = ("model", "strategy", "task_id", "sample_index", "dataset_sha256")
_RUN = (
    "suite_status",
    "detail",
    "wall_s",
    "runs_wall_s",
    "cpu_s",
    "peak_memory_mb",
    "isolation",
    "per_class",
    "reruns",
)
_RUN_DEFAULTS = {"detail": "", "isolation": "", "per_class": False, "reruns": 0}
_SCORE = ("bucket", "reason", "cause", "repeats", "error_category", "error_reason")


def as_schema_5(record: dict) -> dict:
    """A schema-6 sample file as schema 5 wrote it: `request` (the name, generation's fields, and the
    run's limit, environment and key) and `result` (the score, the run's figures, the outcome, and
    the steps' tokens again). Written here from schema 5's definition, apart from the reader."""
    if "request" in record:
        return record
    gen, run, score = record["generation"], record["execution"] or {}, record["score"]
    request = {k: record[k] for k in _NAME} | {k: gen[k] for k in ("source", "levels", "steps", "program")}
    request |= {"limit_s": run.get("limit_s"), "environment": run.get("environment"), "execution_key": run.get("key")}
    outcome = run.get("outcome")
    if not run and score["bucket"] in ("no_code", "compile_error"):  # schema 5 stored what generation ended it with
        error = None if score["bucket"] == "no_code" else {"type": "UnicodeEncodeError", "message": gen["reason"]}
        outcome = {"error": error and error | {"traceback": ""}, "test_classes": {}}
    parts = [*gen["steps"], gen["levels"] or {}]
    result = {k: score[k] for k in _SCORE} | {k: run.get(k, _RUN_DEFAULTS.get(k)) for k in _RUN}
    result |= {"reused": run.get("reused"), "outcome": outcome}
    result |= {f: sum(p.get(f, 0) for p in parts) for f in ("prompt_tokens", "completion_tokens")}
    return {"request": request, "result": result}


def as_schema_4(record: dict) -> dict:
    """A sample file as schema 4 wrote it: schema 5's, and the outcome named its sample and status again."""
    record = as_schema_5(record)
    request, result = record["request"], record["result"]
    if result["outcome"] is None:
        return record
    identity = {"task_id": request["task_id"], "sample_index": request["sample_index"], "status": result["bucket"]}
    return record | {"result": result | {"outcome": identity | result["outcome"]}}
