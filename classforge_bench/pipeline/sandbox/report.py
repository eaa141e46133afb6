"""The harness report: authenticate it, then parse the runner's events into typed records.

The body is trusted only after its HMAC checks out, and even then the events inside it were
produced by the runner, which shares an interpreter with the code under test. So every event is
validated, and anything malformed is counted, never silently skipped.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from classforge_bench.pipeline.core.errors import IntegrityError
from classforge_bench.pipeline.sandbox.results import TestOutcome

PROTOCOL = 1


class ReportError(IntegrityError):
    """The report is missing, forged, or not from this run. `reason` is a stable code."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        super().__init__(f"{reason}: {detail}")


class _Event(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ExcInfo(_Event):
    exc: str | None = None
    msg: str | None = None
    tb: str | None = None
    errno: int | None = None
    memory: bool = False


class StartEvent(_Event):
    e: Literal["start"]
    python: str = ""


class ImportEvent(ExcInfo):
    e: Literal["import"]
    ok: bool
    phase: Literal["solution", "tests"]
    t: float | None = None


class CollectedClass(_Event):
    name: str
    kind: Literal["unittest", "plain", "function", "missing"]
    tests: list[str]


class CollectEvent(_Event):
    e: Literal["collect"]
    classes: list[CollectedClass]
    canaries: list[str]


class TestEvent(ExcInfo):
    e: Literal["test"]
    cls: str
    name: str
    o: TestOutcome
    t: float | None = None


class FixtureErrorEvent(ExcInfo):
    e: Literal["fixture_error"]
    desc: str


class TamperEvent(_Event):
    e: Literal["tamper"]
    where: str
    changed: list[str]


class AbortedEvent(ExcInfo):
    e: Literal["aborted"]


class CoverageEvent(_Event):
    e: Literal["coverage"]
    statements: int = Field(ge=0)
    missing: int = Field(ge=0)
    branches: int | None = Field(None, ge=0)
    missing_branches: int | None = Field(None, ge=0)
    missing_lines: list[int] = Field(default_factory=list)


class CoverageErrorEvent(_Event):
    e: Literal["coverage_error"]
    msg: str = ""


class DoneEvent(_Event):
    e: Literal["done"]


Event = Annotated[
    StartEvent
    | ImportEvent
    | CollectEvent
    | TestEvent
    | FixtureErrorEvent
    | TamperEvent
    | AbortedEvent
    | CoverageEvent
    | CoverageErrorEvent
    | DoneEvent,
    Field(discriminator="e"),
]
_EVENT = TypeAdapter(Event)


class RunnerFacts(BaseModel):
    model_config = ConfigDict(extra="ignore")
    timed_out: bool
    timed_out_class: str | None = None  # stopped when this class ran past its share of the limit
    wall_s: float
    cpu_s: float | None = None
    max_rss_kb: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    stopped_by: str | None = None  # cpu-clock runs: "cpu" (its limit) or "wall_ceiling" (the safety net)


class Canaries(BaseModel):
    model_config = ConfigDict(extra="ignore")
    pass_: str = Field(alias="pass")
    fail: str
    func_pass: str
    func_fail: str
    nonce: int


class HarnessReport(BaseModel):
    """The supervisor's facts (trusted once authenticated) and the runner's parsed events."""

    model_config = ConfigDict(extra="ignore")
    run_id: str
    events: list[Event]
    malformed: int = 0
    noise: int = 0
    noise_samples: list[str] = Field(default_factory=list)
    overflow: bool = False
    runner: RunnerFacts
    canaries: Canaries
    integrity: dict[str, bool]
    undumpable: bool = False
    escaped: int | None = Field(None, description="processes that had left the runner's process group")


def sign(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def authenticate(raw: bytes | None, key: bytes, run_id: str) -> dict:
    """The report body as a dict, if and only if it carries this run's MAC."""
    if raw is None:
        raise ReportError("missing", "the harness wrote no report")
    try:
        outer = json.loads(raw)
        body_text, mac = outer["body"], outer["mac"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ReportError("malformed", f"report is not the harness's format ({exc.__class__.__name__})") from exc
    if not isinstance(body_text, str) or not isinstance(mac, str) or not hmac.compare_digest(sign(key, body_text), mac):
        raise ReportError("forged", "report MAC does not match this run's key")
    body = json.loads(body_text)
    if body.get("protocol") != PROTOCOL or body.get("run_id") != run_id:
        raise ReportError("foreign", "report belongs to another run or protocol version")
    return body


def parse(body: dict) -> HarnessReport:
    """Typed report; events that fail validation are counted in `malformed` instead."""
    events, malformed = [], 0
    for raw in body.get("events", []):
        try:
            events.append(_EVENT.validate_python(raw))
        except ValidationError:
            malformed += 1
    return HarnessReport.model_validate({**body, "events": events, "malformed": malformed})
