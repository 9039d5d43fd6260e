"""The device checks run read-only (`netgen check`): on every selected device at once (Nornir's
workers), the checks a deploy runs after its change (pipeline.post_checks: model, every BGP session,
PFC, watchdog, no remaining diff, LLDP cabling), with no change made and no baseline to compare
with. A device that cannot be reached or checked gets one `connect` result that says why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nornir.core.task import Result, Task

from netgen.deploy.checks import CheckResult, Outcome
from netgen.deploy.connect import connect_driver, disconnect, nornir_for
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import drain_precheck, post_checks
from netgen.deploy.target import DeployTarget
from netgen.platforms.routing import bgp_plan

CHANGE_ID = "check"  # what the drivers are told the change is called: no change is staged under it


@dataclass
class DeviceCheckReport:
    """Every check's result, device by device in the target's order."""

    devices: list[str]
    results: list[CheckResult] = field(default_factory=list)

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok]

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, Any]:
        return {"devices": len(self.devices), "checks": len(self.results), "failed": len(self.failed),
                "results": [r.as_dict() for r in self.results]}


def check_devices(target: DeployTarget, workers: int | None = None) -> DeviceCheckReport:
    """Run the device checks read-only on every device of `target`, `workers` at once (default:
    deploy.yaml's rollout.workers)."""
    ctx = target.ctx
    nr = nornir_for(target, workers)
    options = DeployOptions(change_id=CHANGE_ID, command_timeout_s=target.deploy.ssh.command_timeout_s,
                            ownership=target.ownership())
    results: dict[str, list[CheckResult]] = {}

    def task(task: Task) -> Result:
        device = ctx.topology.devices[task.host.name]
        try:
            driver = connect_driver(task, device, target.files[device.name], options)
            peers = tuple(n.address for n in bgp_plan(ctx, device).neighbors)
            # a drained switch is compared with its rendered config plus the drain (no-diff)
            drained = drain_precheck(driver, keep=True, kept="checked against its rendered config with the drain")
            results[device.name] = [drained, *(c.run(driver) for c in post_checks(ctx, device, peers, {}))]
        except Exception as exc:
            results[device.name] = [CheckResult("connect", device.name, Outcome.ERROR,
                                                f"{type(exc).__name__}: {exc}"[:300])]
        finally:
            disconnect(task)  # never connected
        return Result(host=task.host, result=None)

    nr.run(task=task, name="netgen check", on_failed=True)
    return DeviceCheckReport(list(target.names), [r for name in target.names for r in results.get(name, [])])


__all__ = ["DeviceCheckReport", "check_devices"]
