"""Device checks for deploy pre- and post-checks and for read-only `netgen check`: one small class
per concern, with pydantic inputs, as ANTA writes them. A check reads a device only through the
`DeviceState` protocol, so the same class serves EOS and SONiC; each NOS driver answers it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the device could not answer


@dataclass(frozen=True, slots=True)
class CheckResult:
    check: str
    device: str
    outcome: Outcome
    detail: str

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.PASS

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "device": self.device, "outcome": self.outcome.value, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Facts:
    hostname: str
    model: str  # EOS modelName, or SONiC's hwsku
    nos: str  # "eos" | "sonic"
    version: str


class DeviceState(Protocol):
    """What checks may ask a device. Every method reads; none changes anything."""

    name: str

    def facts(self) -> Facts: ...

    def bgp_peers(self) -> dict[str, str]:
        """Peer address -> session state, for every configured IPv4 and IPv6 neighbour."""
        ...

    def pfc_priorities(self) -> dict[str, set[int]]:
        """Interface -> priorities with PFC enabled."""
        ...

    def pfc_storms(self) -> list[str]:
        """Interfaces where the PFC watchdog currently sees a storm."""
        ...

    def interface_errors(self) -> dict[str, int]:
        """Interface -> total input+output errors."""
        ...

    def config_diff(self) -> str:
        """What still differs between the running and the intended config ("" = nothing)."""
        ...

    def route_widths(self) -> dict[str, int]:
        """BGP routes in the forwarding table: prefix -> number of active next hops."""
        ...

    def lldp_neighbors(self) -> dict[str, list[tuple[str, str]]]:
        """Local port -> every LLDP neighbour it hears, as (system name, port ID)."""
        ...


class CheckInputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeviceCheck:
    """Base class: subclasses set `name`, `Inputs` and implement `test`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Inputs: ClassVar[type[CheckInputs]] = CheckInputs

    def __init__(self, inputs: CheckInputs) -> None:
        self.inputs = inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        raise NotImplementedError

    def run(self, device: DeviceState) -> CheckResult:
        try:
            ok, detail = self.test(device)
        except Exception as exc:  # a device that cannot answer fails the check, it does not crash the rollout
            return CheckResult(self.name, device.name, Outcome.ERROR, f"{type(exc).__name__}: {exc}"[:500])
        return CheckResult(self.name, device.name, Outcome.PASS if ok else Outcome.FAIL, detail)


CHECKS: dict[str, type[DeviceCheck]] = {}


def register(cls: type[DeviceCheck]) -> type[DeviceCheck]:
    CHECKS[cls.name] = cls
    return cls


# --- the checks -----------------------------------------------------------------------------------


@register
class VerifyModel(DeviceCheck):
    name = "model"
    description = "The device is the hostname, NOS and model the intent says."

    class Inputs(CheckInputs):
        hostname: str
        nos: str
        # model strings the device may report (SONiC: the hwsku); empty: the catalog names none, so
        # only NOS and hostname are compared (EOS modelName strings are not in the catalog yet)
        models: tuple[str, ...] = ()

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        facts = device.facts()
        want = self.inputs
        problems = []
        if facts.nos != want.nos:
            problems.append(f"runs {facts.nos}, intent says {want.nos}")
        if want.models and facts.model not in want.models:
            problems.append(f"model {facts.model!r}, intent says one of {list(want.models)}")
        if facts.hostname != want.hostname:
            problems.append(f"hostname {facts.hostname!r}, expected {want.hostname!r}")
        unchecked = "" if want.models else " (model not checked: the catalog names no reported model)"
        return not problems, "; ".join(problems) or f"{facts.nos} {facts.version} on {facts.model}{unchecked}"


@register
class VerifyBgpEstablished(DeviceCheck):
    name = "bgp-established"
    description = "Every expected BGP neighbour is Established."

    class Inputs(CheckInputs):
        peers: tuple[str, ...]  # addresses that must be Established
        optional: tuple[str, ...] = ()  # configured, but may be down (e.g. a peer being deployed)

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        seen = device.bgp_peers()
        down = [f"{p} {seen.get(p, 'not configured')}" for p in self.inputs.peers if seen.get(p) != "Established"]
        if down:
            return False, f"{len(down)} of {len(self.inputs.peers)} not Established: " + ", ".join(down[:6])
        return True, f"{len(self.inputs.peers)} neighbours Established"


@register
class VerifyBgpBaseline(DeviceCheck):
    """Pre-check: how many expected sessions are up before the change, and which are down. The
    pipeline records it (the post-check then requires every session that was up to stay up) and
    allows any number down (`allow_down` = all peers): a change may be the very fix for a down
    session. It fails only when the device cannot report its sessions, or, with a smaller
    `allow_down`, when more sessions than that are down."""

    name = "bgp-baseline"
    description = "Expected BGP sessions up before the change (recorded; at most allow_down may be down)."

    class Inputs(CheckInputs):
        peers: tuple[str, ...]
        allow_down: int = 0

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        seen = device.bgp_peers()
        down = [p for p in self.inputs.peers if seen.get(p) != "Established"]
        ok = len(down) <= self.inputs.allow_down
        return ok, (f"{len(self.inputs.peers) - len(down)}/{len(self.inputs.peers)} Established"
                    + (f"; down: {', '.join(down[:6])}" if down else ""))


@register
class VerifyPfcEnabled(DeviceCheck):
    name = "pfc-enabled"
    description = "PFC is enabled on exactly the lossless priority of every backend port."

    class Inputs(CheckInputs):
        interfaces: tuple[str, ...]
        priority: int

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        status = device.pfc_priorities()
        wrong = [f"{i} {sorted(status.get(i, set()))}" for i in self.inputs.interfaces
                 if status.get(i, set()) != {self.inputs.priority}]
        if wrong:
            head = f"{len(wrong)} port(s) without exactly priority {self.inputs.priority}: "
            return False, head + ", ".join(wrong[:6])
        return True, f"priority {self.inputs.priority} on {len(self.inputs.interfaces)} ports"


@register
class VerifyNoPfcStorm(DeviceCheck):
    name = "no-pfc-storm"
    description = "The PFC watchdog sees no storm (a storm means a lossless queue is stuck)."

    def test(self, device: DeviceState) -> tuple[bool, str]:
        storms = device.pfc_storms()
        return not storms, f"storm on {', '.join(storms[:6])}" if storms else "no storm"


@register
class VerifyInterfaceErrors(DeviceCheck):
    name = "interface-errors"
    description = "Interface error counters have not grown past the baseline."

    class Inputs(CheckInputs):
        baseline: dict[str, int] = {}
        tolerance: int = 0

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        now = device.interface_errors()
        grown = {i: n - self.inputs.baseline.get(i, 0) for i, n in now.items()
                 if n - self.inputs.baseline.get(i, 0) > self.inputs.tolerance}
        if grown:
            return False, "errors grew: " + ", ".join(f"{i} +{n}" for i, n in list(grown.items())[:6])
        return True, f"{len(now)} interfaces, no new errors"


@register
class VerifyNoDiff(DeviceCheck):
    name = "no-diff"
    description = "Nothing differs between the running and the intended config."

    def test(self, device: DeviceState) -> tuple[bool, str]:
        diff = device.config_diff()
        lines = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        return not lines, f"{len(lines)} line(s) still differ" if lines else "running = intended"


@register
class VerifyEcmpWidth(DeviceCheck):
    """No BGP route may lose next hops across the change: the ECMP width each prefix had before
    (the baseline) is the width it must have after. Prefixes that were not there are not judged."""

    name = "ecmp-width"
    description = "Every BGP route keeps at least the ECMP width it had before the change."

    class Inputs(CheckInputs):
        baseline: dict[str, int]

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        now = device.route_widths()
        narrower = [f"{p} {w}->{now.get(p, 0)}" for p, w in sorted(self.inputs.baseline.items())
                    if now.get(p, 0) < w]
        if narrower:
            return False, f"{len(narrower)} route(s) lost next hops: " + ", ".join(narrower[:6])
        widths = sorted(set(self.inputs.baseline.values()))
        return True, f"{len(self.inputs.baseline)} BGP routes, none narrower (widths {widths})"


class PlannedNeighbor(CheckInputs):
    """What one cabled port should hear over LLDP."""

    system: str  # the device or host on the other end
    port: str  # its port name, or "nicN" for a host (said in messages)
    # port IDs that identify that port (a SONiC peer sends its port alias, EOS the interface name);
    # empty: any (a host's NIC sends its MAC or netdev name, which the intent does not know)
    port_ids: tuple[str, ...] = ()


def _same_system(heard: str, planned: str) -> bool:
    """Host names compare without case; a neighbour may send its FQDN (EOS does with a domain name)."""
    heard, planned = heard.casefold(), planned.casefold()
    return heard == planned or heard.startswith(planned + ".")


def lldp_verdicts(planned: Mapping[str, PlannedNeighbor], heard: Mapping[str, list[tuple[str, str]]],
                  fabric_names: frozenset[str]) -> dict[str, tuple[str, str]]:
    """Per planned port: (verdict, what it hears). Verdicts: `planned` (the planned neighbour on the
    planned port), `miscabled` (another port of the planned neighbour, or a device or host of this
    fabric that is not the plan's), `unidentified` (a system name that is nobody's in the fabric: a
    neighbour not named yet, SONiC's "sonic", EOS's "localhost"), `silent` (no LLDP neighbour)."""
    known = {name.casefold() for name in fabric_names}
    verdicts: dict[str, tuple[str, str]] = {}
    for port, want in planned.items():
        seen = heard.get(port, [])
        said = ", ".join(f"{system or '?'} {port_id or '?'}" for system, port_id in seen[:3])
        if not seen:
            verdicts[port] = ("silent", "")
        elif any(_same_system(system, want.system) and (not want.port_ids or port_id in want.port_ids)
                 for system, port_id in seen):
            verdicts[port] = ("planned", said)
        elif any(_same_system(system, want.system) or system.casefold().split(".")[0] in known
                 for system, _ in seen):
            verdicts[port] = ("miscabled", said)
        else:
            verdicts[port] = ("unidentified", said)
    return verdicts


@register
class VerifyLldpNeighbors(DeviceCheck):
    """Cabling, as LLDP sees it. A miscabled port always fails: the config assumes the plan's
    neighbour. A port that hears nothing, or a system that is not in the fabric (a neighbour not yet
    named), fails only when listed in `required`: before a first rollout most peers are unnamed."""

    name = "lldp-neighbors"
    description = "Every cabled port hears its planned neighbour on the planned port (LLDP)."

    class Inputs(CheckInputs):
        ports: dict[str, PlannedNeighbor]
        required: tuple[str, ...] = ()  # ports that must hear their planned neighbour
        fabric_names: frozenset[str] = frozenset()  # every device and host name of the fabric

    inputs: Inputs

    def test(self, device: DeviceState) -> tuple[bool, str]:
        want = self.inputs
        verdicts = lldp_verdicts(want.ports, device.lldp_neighbors(), want.fabric_names)
        required = set(want.required)
        problems = []
        for port, (verdict, said) in verdicts.items():
            planned = want.ports[port]
            target = f"{planned.system} {planned.port}"
            if planned.port_ids and planned.port_ids[0] != planned.port:
                target += f" (port ID {planned.port_ids[0]})"
            if verdict == "miscabled":
                problems.append(f"{port} miscabled: hears {said}, planned {target}")
            elif verdict != "planned" and port in required:
                problems.append(f"{port} hears {'nothing' if verdict == 'silent' else said}, planned {target}")
        counts = {v: sum(1 for verdict, _ in verdicts.values() if verdict == v)
                  for v in ("planned", "silent", "unidentified")}
        summary = (f"{counts['planned']}/{len(verdicts)} ports hear their planned neighbour"
                   + "".join(f", {n} {v}" for v, n in counts.items() if n and v != "planned"))
        if problems:
            return False, f"{len(problems)} port(s): " + "; ".join(problems[:6]) + f" ({summary})"
        return True, summary


def run_checks(device: DeviceState, checks: list[DeviceCheck]) -> Iterator[CheckResult]:
    for check in checks:
        yield check.run(device)
