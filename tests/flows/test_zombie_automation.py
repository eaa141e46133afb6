"""The automation the operations page tells users to create for flow runs whose worker was killed:
Prefect's own model accepts it, as `prefect automation create --from-file` would, and it waits
longer than a flow run's heartbeat interval before calling a run a zombie."""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect.client.schemas.objects import StateType
from prefect.events.schemas.automations import AutomationCore, Posture
from prefect.settings.models.flows import FlowsSettings

ROOT = Path(__file__).resolve().parents[2]
AUTOMATION = ROOT / "deploy" / "zombie-flow-runs.yaml"


def test_zombie_automation_is_valid_and_outwaits_the_heartbeat() -> None:
    automation = AutomationCore.model_validate(yaml.safe_load(AUTOMATION.read_text(encoding="utf-8")))
    trigger = automation.trigger
    assert trigger.posture == Posture.Proactive and trigger.after == {"prefect.flow-run.heartbeat"}
    assert {"prefect.flow-run.Completed", "prefect.flow-run.Failed"} <= trigger.expect
    heartbeat = FlowsSettings.model_fields["heartbeat_frequency"].default  # Prefect's default, whatever this shell sets
    assert heartbeat is not None and trigger.within.total_seconds() >= 2 * heartbeat
    (action,) = automation.actions
    assert action.type == "change-flow-run-state" and action.state == StateType.CRASHED
    page = (ROOT / "docs" / "operations" / "faults.md").read_text(encoding="utf-8")
    assert "prefect automation create --from-file deploy/zombie-flow-runs.yaml" in page
