"""ClassEval lines as a samples file, and an older schema's record: shared by the samples-file tests."""

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


def as_schema_4(record: dict) -> dict:
    """A schema-5 sample file as schema 4 wrote it: the outcome named its sample and status again."""
    request, result = record["request"], record["result"]
    if result["outcome"] is None:
        return record
    identity = {"task_id": request["task_id"], "sample_index": request["sample_index"], "status": result["bucket"]}
    return record | {"result": result | {"outcome": identity | result["outcome"]}}
