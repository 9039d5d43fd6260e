"""What a lab is made of, decided before anything is created: nodes, their interfaces and
addresses, the cables between them, each router's FRR config, and what verification expects.

The plan is pure data built from a checked fabric and its rendered files, and it is saved in the
lab's state file, so `netgen lab verify` and `netgen lab down` need nothing but the lab's name.
Every backend (network namespaces, containerlab) builds from the same plan.

Addresses come from the rendered configs, not from the topology: a SONiC node gets exactly what
its config_db.json says (see `adapters.py`), so the lab tests the files that would be deployed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from netgen.context import DesignContext
from netgen.topology.model import Device, HostNic, Role, Topology

LINUX_IFNAME_MAX = 15  # IFNAMSIZ - 1
MAX_LAB_ROUTERS = 256  # the largest lab measured on a 2-core machine (docs/developer/benchmarks.md, Lab)


class LabSliceError(ValueError):
    """The requested slice does not exist in the fabric (a usage error, not a bug)."""


def linux_ifname(rendered: str) -> str:
    """A Linux interface name for a rendered port name. SONiC names (`Ethernet448`) are kept; EOS
    names lose their slashes (`Ethernet3/1/1` -> `Ethernet3_1_1`) and, if still too long for the
    kernel's 15 characters, `Ethernet` shortens to `Et` as EOS itself abbreviates it."""
    name = rendered.replace("/", "_")
    if len(name) > LINUX_IFNAME_MAX and name.startswith("Ethernet"):
        name = "Et" + name[len("Ethernet"):]
    if len(name) > LINUX_IFNAME_MAX or not name.replace("_", "").replace("-", "").isalnum():
        raise LabSliceError(f"port {rendered!r} has no Linux interface name of at most {LINUX_IFNAME_MAX} characters")
    return name


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LabInterface(_Frozen):
    name: str  # Linux name, <= 15 characters
    rendered: str  # the name in the rendered config (SONiC `Ethernet8`, EOS `Ethernet3/1/1`)
    kind: str  # "port" (one end of a veth) | "bridge" (Loopback0, Vlan1000: no dummy driver here)
    mtu: int
    up: bool = True
    addresses: tuple[str, ...] = ()  # prefixes as the rendered config writes them
    bridge: str | None = None  # the bridge a VLAN member port is enslaved to
    # what the NOS sends over LLDP out of this port: its port ID (SONiC: the PORT alias, as lldpmgrd
    # sets it; EOS: the interface name; a host: its netdev) and port description ("" = none)
    lldp_id: str = ""
    lldp_description: str = ""


class LabNode(_Frozen):
    name: str  # device or host name; the namespace is "<lab>-<name>"
    kind: str  # "router" | "host"
    nos: str | None = None  # the NOS the device runs in production
    role: str | None = None  # rtsw / ctsw / atsw for routers
    zone: int | None = None
    asn: int | None = None
    interfaces: tuple[LabInterface, ...] = ()
    frr_conf: str | None = None  # loaded with `vtysh -f` as SONiC loads it
    frr_source: str = ""  # where frr_conf came from, said plainly in every report
    announces: tuple[str, ...] = ()  # prefixes this router originates (loopbacks, host subnet)
    gateway_v4: str | None = None  # hosts: the RTSW's VLAN gateway
    host_ipv4: str | None = None  # hosts: the NIC address (prefix form)
    attached_to: str | None = None  # hosts: the RTSW


class LabLink(_Frozen):
    a: str
    a_if: str  # Linux interface names
    b: str
    b_if: str
    a_port: str  # rendered port names, for reports
    b_port: str


class LabSession(_Frozen):
    """One expected eBGP session, seen from both ends."""

    afi: str
    a: str  # lower device (RTSW or CTSW)
    a_ip: str
    b: str  # upper device
    b_ip: str

    def label(self) -> str:
        return f"{self.a} {self.a_ip} <-> {self.b} {self.b_ip} ({self.afi})"


@dataclass(frozen=True, slots=True)
class SliceRequest:
    zone: int | None = None  # one zone (no ATSW layer), or every zone plus the ATSW layer
    racks: int | None = None  # the first N racks of each selected zone
    ctsw: int | None = None  # the first N spines of each selected zone

    def describe(self) -> str:
        where = f"zone {self.zone}" if self.zone is not None else "every zone and the ATSW layer"
        parts = [where]
        if self.racks is not None:
            parts.append(f"first {self.racks} rack(s)")
        if self.ctsw is not None:
            parts.append(f"first {self.ctsw} CTSW(s)")
        return ", ".join(parts)


class LabPlan(_Frozen):
    lab: str
    fabric: str
    slice: str  # human description of the slice
    nodes: dict[str, LabNode]
    links: tuple[LabLink, ...]
    sessions: tuple[LabSession, ...]
    sessions_outside: int  # rendered sessions whose peer is not in the slice (not expected up)
    request: SliceRequest | None = None  # the slice asked for (`lab grow` widens it or keeps it)

    def routers(self, role: str | None = None) -> list[LabNode]:
        return [n for n in self.nodes.values() if n.kind == "router" and (role is None or n.role == role)]

    def hosts(self) -> list[LabNode]:
        return [n for n in self.nodes.values() if n.kind == "host"]


# --- slicing -------------------------------------------------------------------------------------


def select_devices(topology: Topology, request: SliceRequest) -> list[Device]:
    zones = sorted({d.zone for d in topology.devices.values() if d.zone is not None})
    if request.zone is not None and request.zone not in zones:
        raise LabSliceError(f"--zone {request.zone}: the fabric has zones {', '.join(map(str, zones))}")
    chosen = [request.zone] if request.zone is not None else zones
    picked: list[Device] = []
    if request.zone is None:
        picked += topology.by_role(Role.ATSW)
    for zone in chosen:
        for role, limit, flag in ((Role.CTSW, request.ctsw, "--ctsw"), (Role.RTSW, request.racks, "--racks")):
            devices = topology.zone_devices(zone, role)
            if limit is not None:
                if limit < 1 or limit > len(devices):
                    raise LabSliceError(f"{flag} {limit}: zone {zone} has {len(devices)} {role.value.upper()}(s);"
                                        f" choose 1 to {len(devices)}")
                devices = devices[:limit]
            picked += devices
    if len(picked) > MAX_LAB_ROUTERS:
        raise LabSliceError(f"the slice has {len(picked)} switches; a lab on this machine class is measured up to"
                            f" {MAX_LAB_ROUTERS}: narrow it with --zone, --racks and --ctsw")
    return picked


# --- the plan -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """What a NOS adapter reads off one device's rendered files: L3 interfaces and FRR config."""

    ports: dict[str, LabInterface]  # rendered port name -> interface (name already Linux-safe)
    bridges: list[LabInterface]  # Loopback0, Vlan1000
    frr_conf: str
    frr_source: str


def build_plan(lab: str, ctx: DesignContext, request: SliceRequest, facts: Mapping[str, NodeFacts]) -> LabPlan:
    """Assemble the lab from the slice's devices and what their rendered files say."""
    topo = ctx.topology
    devices = select_devices(topo, request)
    inside = {d.name for d in devices}
    nodes: dict[str, LabNode] = {}
    links: list[LabLink] = []
    cabled: dict[str, set[str]] = {name: set() for name in inside}

    for link in topo.links:
        lo, up = link.lower, link.upper
        if lo.device in inside and up.device in inside:
            a_if = facts[lo.device].ports[lo.port].name
            b_if = facts[up.device].ports[up.port].name
            links.append(LabLink(a=lo.device, a_if=a_if, b=up.device, b_if=b_if, a_port=lo.port, b_port=up.port))
            cabled[lo.device].add(lo.port)
            cabled[up.device].add(up.port)

    # One host per rack (its first NIC) stands in for the GPUs: it exercises the VLAN member path.
    first_nic: dict[str, HostNic] = {}
    for host_nic in topo.host_nics:
        if host_nic.rtsw in inside and host_nic.rtsw not in first_nic:
            first_nic[host_nic.rtsw] = host_nic
    for device in devices:
        f = facts[device.name]
        nic = first_nic.get(device.name)
        if nic is not None:
            cabled[device.name].add(nic.port)
        missing = cabled[device.name] - f.ports.keys()
        if missing:
            raise LabSliceError(f"{device.name}: the rendered config has no interface for {sorted(missing)}")
        interfaces = [*f.bridges, *(intf for port, intf in f.ports.items() if port in cabled[device.name])]
        announces = [str(device.loopback_ipv4)]
        announces += [str(p) for p in (device.loopback_ipv6, device.host_subnet_ipv4, device.host_subnet_ipv6) if p]
        nodes[device.name] = LabNode(
            name=device.name, kind="router", nos=device.nos, role=device.role.value, zone=device.zone,
            asn=device.asn, interfaces=tuple(interfaces), frr_conf=f.frr_conf, frr_source=f.frr_source,
            announces=tuple(announces))
        if nic is not None and device.host_gateway_ipv4 is not None:
            host_if = f"nic{nic.nic}"
            nodes[nic.host] = LabNode(
                name=nic.host, kind="host", zone=device.zone,
                interfaces=(LabInterface(name=host_if, rendered=host_if, kind="port", mtu=ctx.fabric.mtu,
                                         addresses=(str(nic.ipv4),), lldp_id=host_if),),
                gateway_v4=str(nic.gateway_ipv4), host_ipv4=str(nic.ipv4), attached_to=device.name)
            links.append(LabLink(a=nic.host, a_if=host_if, b=device.name, b_if=f.ports[nic.port].name,
                                 a_port=host_if, b_port=nic.port))

    sessions = [LabSession(afi=s.afi, a=s.lower_device, a_ip=str(s.lower_ip.ip), b=s.upper_device,
                           b_ip=str(s.upper_ip.ip))
                for s in topo.sessions if s.lower_device in inside and s.upper_device in inside]
    touching = sum(1 for s in topo.sessions if (s.lower_device in inside) != (s.upper_device in inside))
    return LabPlan(lab=lab, fabric=ctx.fabric.name, slice=request.describe(), nodes=nodes, links=tuple(links),
                   sessions=tuple(sessions), sessions_outside=touching, request=request)
