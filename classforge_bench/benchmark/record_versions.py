"""Sample records of older results schemas, read into the current one (schema 6, `record.SampleRecord`).

- Schemas 1-3: one flat record per sample, the run under `execution` (`key`, `limit_s`, run figures).
- Schemas 4-5: `request` (who answered what, the program, the run's limit, environment and key) and
  `result` (bucket, reason, outcome, run figures, error category, and the request's token counts
  again); schema 4's outcome also named its task, index and status.
- Schema 6: the sample's name, then `generation`, `execution` and `score`, each filled by one phase.

A copy an old record holds twice must agree (the outcome's task, index and status with the request
and the bucket; the result's tokens with the steps'), else the record is refused naming the field:
a record that says two things is never resolved by picking one. Every field is kept: the bucket a
phase decided moves to the part that decided it (generation's `unrun`, execution's `sandbox_failure`),
and the outcome of a sample generation ended is the one its generation part gives again.
"""

from __future__ import annotations

from typing import Any

_FLAT_REQUEST = ("model", "strategy", "task_id", "sample_index", "source", "levels", "steps", "program")
_IDENTITY = ("task_id", "sample_index")
_NAME = ("model", "strategy", "task_id", "sample_index", "dataset_sha256")
_GENERATION = ("source", "levels", "steps", "program")
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
    "reused",
)
_SCORE = ("bucket", "reason", "cause", "repeats", "error_category", "error_reason")
_ENDED_BY_GENERATION = ("no_code", "generation_error")
_SANDBOX_FAILED = "the sandbox failed: "


def current_shape(data: Any) -> Any:
    """A record read from a file, as schema 6 holds it (data that is no record is left to the validator)."""
    if not isinstance(data, dict):
        return data
    if "request" not in data and "generation" not in data and "model" in data and "bucket" in data:
        data = _split_flat(data)
    if "request" in data and isinstance(data["request"], dict) and isinstance(data.get("result"), dict):
        data = _from_request_and_result(data["request"], data["result"])
    return _status_from_bucket(data)


def _split_flat(data: dict[str, Any]) -> dict[str, Any]:
    """A record of schemas 1-3 (one flat record, the run under `execution`) as request and result."""
    flat = dict(data)
    run = flat.pop("execution", None) or {}
    request = {k: flat.pop(k) for k in _FLAT_REQUEST if k in flat}
    request |= {"limit_s": run.get("limit_s"), "execution_key": run.get("key")}
    return {"request": request, "result": flat | {k: v for k, v in run.items() if k not in ("key", "limit_s")}}


def _from_request_and_result(request: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A record of schemas 4-5 in the three parts of schema 6, its copies checked on the way."""
    _check_copies(request, result)
    bucket = result.get("bucket")
    generation = {"source": "llm"} | {k: request[k] for k in _GENERATION if k in request}
    program = request.get("program")
    if bucket in _ENDED_BY_GENERATION or (bucket == "compile_error" and program is None):
        generation |= {"unrun": bucket, "reason": result.get("reason", ""), "cause": result.get("cause")}
    execution = None
    if request.get("execution_key") is not None or (bucket == "compile_error" and program is not None):
        outcome = result.get("outcome")
        execution = {k: result[k] for k in _RUN if k in result} | {
            "limit_s": request.get("limit_s"),
            "environment": request.get("environment"),
            "key": request.get("execution_key"),
            "outcome": {k: v for k, v in outcome.items() if k not in (*_IDENTITY, "status")}
            if isinstance(outcome, dict)
            else None,
        }
        if bucket == "sandbox_error":
            reason = str(result.get("reason", ""))
            execution["sandbox_failure"] = reason.split(_SANDBOX_FAILED, 1)[-1]
    return {k: request[k] for k in _NAME if k in request} | {
        "generation": generation,
        "execution": execution,
        "score": {k: result[k] for k in _SCORE if k in result},
    }


def _check_copies(request: dict[str, Any], result: dict[str, Any]) -> None:
    """What schemas 4-5 held twice must agree: the outcome's name and status (schema 4) with the
    request and the bucket, the result's tokens with the request's steps and levels."""
    outcome = result.get("outcome")
    if isinstance(outcome, dict):
        for field in _IDENTITY:
            if field in outcome and outcome[field] != request.get(field):
                raise ValueError(
                    f"the request's {field} is {request.get(field)!r} but its outcome's is {outcome[field]!r}"
                )
        if "status" in outcome and outcome["status"] != result.get("bucket"):
            raise ValueError(f"the outcome's status {outcome['status']!r} is not the bucket {result.get('bucket')!r}")
    for field in ("prompt_tokens", "completion_tokens"):
        counted = _tokens(request, field)
        if field in result and counted is not None and result[field] != counted:
            raise ValueError(f"the result's {field} is {result[field]!r} but its steps' are {counted!r}")


def _tokens(request: dict[str, Any], field: str) -> int | None:
    """The request's steps' and levels' tokens, None when they are not plain data to count."""
    parts = [*(request.get("steps") or []), request.get("levels") or {}]
    if not all(isinstance(p, dict) and isinstance(p.get(field, 0), int) for p in parts):
        return None
    return sum(p.get(field, 0) for p in parts)


def _status_from_bucket(data: dict[str, Any]) -> dict[str, Any]:
    """The outcome's status is the bucket, written once (in the score) and filled in here."""
    execution, score = data.get("execution"), data.get("score")
    if not (isinstance(execution, dict) and isinstance(execution.get("outcome"), dict) and isinstance(score, dict)):
        return data
    outcome = execution["outcome"]
    if "status" in outcome:
        return data
    return data | {"execution": execution | {"outcome": outcome | {"status": score.get("bucket")}}}
