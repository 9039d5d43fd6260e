"""`netgen replace DEVICE`: bring a replacement switch (an RMA) up as the one it replaces, drained,
and let it carry traffic only once it is cabled and peered as planned.

    --day0 DIR --url URL   what the replacement boots with: its rendered config with the drain in
                           it (it comes up drained) and the zero-touch provisioning file its NOS
                           fetches (DHCP option 67 names it), from the NOS's bundle (part `day0`).
                           No secret is in them: a reversible secret stays a placeholder
                           (intent/secrets.py), filled only on the way to the switch by the join.
    --join                 the replacement, reachable as deploy.yaml says: (1) a deploy of its
                           rendered config with the drain kept (secrets filled; pre-checks: its
                           model and LLDP cabling, so a miscabled switch is refused before anything
                           is pushed); (2) every planned BGP session Established and every
                           switch-to-switch port hearing its planned neighbour over LLDP, read
                           until --wait runs out; (3) only then `netgen undrain` (read back). A
                           replacement that fails (1) or (2) stays drained, and the report says
                           which check failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from nornir.core.task import Result, Task

from netgen.context import DesignContext
from netgen.day2.drain import DrainReport, DrainRequest, run_drain
from netgen.deploy.change import ChangePlan, ChangeRequest, plan_change, push_change
from netgen.deploy.checks import CheckResult, Outcome, VerifyBgpEstablished
from netgen.deploy.connect import connect_driver, disconnect, nornir_for
from netgen.deploy.lock import change_lock
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import GOOD, DeviceOutcome, lldp_check
from netgen.deploy.target import DeployTarget, prepare_target
from netgen.platforms.output_dir import RenderDirError, render_or_read
from netgen.platforms.routing import bgp_plan
from netgen.registry import NOS
from netgen.rendered import RenderInputError
from netgen.sot.base import SotError
from netgen.topology.model import Device

# (the device, its rendered files, the URL of the folder its day-0 files are served from) -> file
# name -> text: what it boots with (drained) and, first, the file DHCP option 67 names (its ZTP file)
Day0Files = Callable[[Device, Mapping[str, str], str], dict[str, str]]
DEFAULT_JOIN_WAIT_S = 300.0


class ReplaceError(Exception):
    """A replacement that cannot be prepared as asked (no day-0 part for its NOS, a bad URL): exit 2."""


@dataclass(frozen=True)
class Day0:
    device: str
    nos: str
    files: dict[str, str]  # name -> text, to be served from `url`
    url: str  # the folder the files are served from
    ztp_file: str  # the file DHCP option 67 (bootfile-name) names

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "nos": self.nos, "files": sorted(self.files), "url": self.url,
                "dhcp_option_67": f"{self.url}/{self.ztp_file}"}


def served_url(base: str, device: str) -> str:
    """The folder URL a device's day-0 files are served from: BASE/DEVICE. BASE must be an http(s)
    URL with a host and nothing a shell or a JSON reader could take otherwise (ReplaceError)."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or any(ch.isspace() or ch in "\"'`\\$;<>|&{}" or not ch.isprintable() for ch in base):
        raise ReplaceError(f"--url {base!r}: give the http(s) URL of the folder that serves the day-0 files, e.g."
                           " http://ztp.example.net/netgen (no query, quote, space or shell character)")
    return f"{base.rstrip('/')}/{device}"


def day0(ctx: DesignContext, device: Device, files: Mapping[str, str], base_url: str) -> Day0:
    """The replacement's day-0 files: `files` (its rendered files, placeholders kept) drained, and the
    ZTP file of its NOS."""
    if not NOS.has_part(device.nos, "day0"):
        raise ReplaceError(f"{device.name}: NOS {device.nos} has no day-0 files in netgen (its bundle has no `day0`)")
    make = NOS.part(device.nos, "day0")
    if not callable(make):
        raise NOS.wrong_part(device.nos, "day0", "a Day0Files (device, rendered files, url) -> files")
    url = served_url(base_url, device.name)
    try:
        made = cast(Day0Files, make)(device, files, url)
    except ValueError as exc:  # e.g. nothing to drain through: what it boots with could not be drained
        raise ReplaceError(f"{device.name}: no day-0 files: {exc}") from None
    except KeyError as exc:
        raise ReplaceError(f"{device.name}: no day-0 files: the rendered files lack {exc}") from None
    if not made:
        raise NOS.wrong_part(device.nos, "day0", "a Day0Files returning at least the file DHCP option 67 names")
    return Day0(device.name, device.nos, made, url, next(iter(made)))


def day0_of(ctx: DesignContext, device_name: str, base_url: str) -> Day0:
    """`netgen replace --day0`: the device rendered now (placeholders kept), then day0()."""
    device = ctx.topology.devices.get(device_name)
    if device is None:
        raise ReplaceError(f"no device {device_name!r} in fabric {ctx.fabric.name}")
    try:
        read = render_or_read(ctx, [device], None)
    except (RenderDirError, RenderInputError) as exc:
        raise ReplaceError(str(exc)) from None
    return day0(ctx, device, read.files[device_name], base_url)


# --- join -----------------------------------------------------------------------------------------


@dataclass
class JoinReport:
    device: str
    deploy: dict[str, Any] | None = None  # the deploy's device outcome (with the drain kept)
    checks: list[CheckResult] = field(default_factory=list)  # the join checks, as last read
    serial: str = ""  # as the switch reports it
    sot_serial: str | None = None  # what the source of truth holds after recording it (None: not asked)
    sot_error: str = ""
    undrain: DrainReport | None = None

    @property
    def joined(self) -> bool:
        return self.undrain is not None and self.undrain.ok

    @property
    def ok(self) -> bool:
        """Joined, and its serial recorded where that was asked."""
        return self.joined and not self.sot_error

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "joined": self.joined, "deploy": self.deploy,
                "checks": [c.as_dict() for c in self.checks], "serial": self.serial,
                "sot": None if self.sot_serial is None and not self.sot_error else
                {"serial": self.sot_serial, "error": self.sot_error},
                "undrain": self.undrain.as_dict() if self.undrain else None}


def join_checks(ctx: DesignContext, device: Device) -> list[Any]:
    """What a replacement must show before it carries traffic: every planned BGP session
    Established, every switch-to-switch port hearing its planned neighbour (LLDP)."""
    peers = tuple(n.address for n in bgp_plan(ctx, device).neighbors)
    fabric_ports = [p.name for p in ctx.topology.ports[device.name] if p.peer_device in ctx.topology.devices]
    return [VerifyBgpEstablished(VerifyBgpEstablished.Inputs(peers=peers)), lldp_check(ctx, device, fabric_ports)]


def _read_join_checks(target: DeployTarget, device: Device, options: DeployOptions, wait_s: float,
                      poll_s: float, report: JoinReport) -> list[CheckResult]:
    found: list[CheckResult] = []
    checks = join_checks(target.ctx, device)

    def task(task: Task) -> Result:
        try:
            driver = connect_driver(task, device, target.files[device.name], options)
            deadline = time.monotonic() + wait_s
            while True:  # sessions come up at their own pace after the push
                driver.new_round()
                found[:] = [c.run(driver) for c in checks]
                if all(r.ok for r in found) or time.monotonic() >= deadline:
                    break
                time.sleep(poll_s)
            report.serial = driver.serial()
        except Exception as exc:
            found[:] = [CheckResult("connect", device.name, Outcome.ERROR, f"{type(exc).__name__}: {exc}"[:300])]
        finally:
            disconnect(task)
        return Result(host=task.host, result=None)

    nornir_for(target, 1).run(task=task, name="netgen replace: join checks", on_failed=True)
    return found


class SerialRecord(Protocol):
    """Where a replacement's serial number goes (netgen/sot/nautobot.py: Nautobot.record_serial)."""

    def record_serial(self, fabric: str, device: str, serial: str) -> str: ...


def join(target: DeployTarget, device_name: str, change_id: str, wait_s: float = DEFAULT_JOIN_WAIT_S,
         poll_s: float = 2.0, slurm: bool = False, sot: SerialRecord | None = None) -> JoinReport:
    """Deploy the replacement with its drain kept, read the join checks until they pass or `wait_s`
    runs out, record its serial number in `sot`, then undrain it (`target`: prepare_target for the
    one device). A serial that cannot be recorded is reported; it does not keep the switch drained."""
    ctx = target.ctx
    device = ctx.topology.devices[device_name]
    report = JoinReport(device_name)
    plan = plan_change(target, ChangeRequest(change_id, keep_drained=True))
    # one lease from the push to the undrain: no other change of the zone between the steps
    with change_lock(ctx, target.fabric_file, target.deploy, [device_name], command=f"netgen replace --join"
                     f" {device_name}", change_id=change_id, why=f"replace {device_name}"):
        return _join_locked(target, device, plan, change_id, wait_s, poll_s, slurm, sot, report)


def _join_locked(target: DeployTarget, device: Device, plan: ChangePlan, change_id: str, wait_s: float,
                 poll_s: float, slurm: bool, sot: SerialRecord | None, report: JoinReport) -> JoinReport:
    ctx, device_name = target.ctx, device.name
    run = push_change(target, plan)
    outcome: DeviceOutcome | None = run.report.devices.get(device_name)
    report.deploy = outcome.as_dict() if outcome else None
    if outcome is None or outcome.status not in GOOD:
        return report
    report.checks = _read_join_checks(target, device, plan.options, wait_s, poll_s, report)
    if not report.checks or not all(c.ok for c in report.checks):
        return report
    if sot is not None:
        try:
            if not report.serial:
                raise SotError(f"{device_name} reports no serial number")
            report.sot_serial = sot.record_serial(ctx.fabric.name, device_name, report.serial)
        except SotError as exc:
            report.sot_error = str(exc)
    report.undrain = run_drain(target, DrainRequest((device_name,), undrain=True, why=f"replace {change_id}",
                                                    slurm=slurm, change_id=f"{change_id[:24]}-undrain"))
    return report


def join_device(ctx: DesignContext, fabric_file: Path, device_name: str, change_id: str, *,
                credentials_file: Path | None = None, known_hosts: Path | None = None, verify_host_keys: bool = True,
                wait_s: float = DEFAULT_JOIN_WAIT_S, slurm: bool = False,
                sot: SerialRecord | None = None) -> JoinReport:
    """`netgen replace --join`: the device reached as deploy.yaml says (TargetError as a deploy
    refuses), then join()."""
    if device_name not in ctx.topology.devices:
        raise ReplaceError(f"no device {device_name!r} in fabric {ctx.fabric.name}")
    target = prepare_target(ctx, fabric_file, limit=device_name, credentials_file=credentials_file,
                            known_hosts=known_hosts, verify_host_keys=verify_host_keys)
    return join(target, device_name, change_id, wait_s, slurm=slurm, sot=sot)


__all__ = ["DEFAULT_JOIN_WAIT_S", "Day0", "Day0Files", "JoinReport", "ReplaceError", "SerialRecord", "day0",
           "day0_of", "join", "join_checks", "join_device", "served_url"]
