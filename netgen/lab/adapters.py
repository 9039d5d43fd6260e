"""Per-NOS adapters: turn one device's rendered files into what a lab node needs (L3 interfaces
with their addresses, and an FRR config). A registry keyed by NOS, like the renderer plugins.

SONiC: the node gets what its rendered config_db.json says, applied the way SONiC's intfmgrd and
vlanmgrd apply it (INTERFACE / LOOPBACK_INTERFACE / VLAN_INTERFACE addresses, VLAN_MEMBER ports
in the VLAN's bridge, PORT mtu and admin status), and runs its rendered frr.conf unchanged.

EOS: no EOS runs in a namespace. The node runs FRR with a config rendered from the same per-device
view and BGP plan that produced its EOS CLI (neighbours, ASNs, networks, ECMP width, timers, BFD),
and its addresses come from that view. So the lab checks the EOS device's routing design, not its
EOS CLI; every report says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from netgen.context import DesignContext
from netgen.intent.secrets import MARK, SecretError, fill_placeholders
from netgen.lab.backend import check_lab_name
from netgen.lab.plan import (
    LabInterface,
    LabPlan,
    LabSliceError,
    NodeFacts,
    SliceRequest,
    build_plan,
    linux_ifname,
    select_devices,
)
from netgen.platforms.base import RenderInputError
from netgen.platforms.eos.view import build_view as eos_view
from netgen.platforms.output_dir import RenderDirError, RenderDirFiles, render_or_read
from netgen.platforms.routing import BgpPlan
from netgen.templating import template_env
from netgen.topology.model import Device

Adapter = Callable[[DesignContext, Device, Mapping[str, str]], NodeFacts]
ADAPTERS: dict[str, Adapter] = {}

SONIC_FRR_SOURCE = "the rendered frr.conf, unchanged but for its secrets, filled as a deploy fills them"
EOS_FRR_SOURCE = ("FRR stand-in rendered from the device's EOS view and BGP plan; its EOS CLI is not what runs"
                  " in the lab")


def adapter(nos: str) -> Callable[[Adapter], Adapter]:
    def register(function: Adapter) -> Adapter:
        ADAPTERS[nos] = function
        return function
    return register


def _split_key(key: str) -> tuple[str, str | None]:
    name, _, rest = key.partition("|")
    return name, rest or None


@adapter("sonic")
def sonic_facts(ctx: DesignContext, device: Device, files: Mapping[str, str]) -> NodeFacts:
    try:
        config: dict[str, Any] = json.loads(files["config_db.json"])
        frr = files["frr.conf"]
    except KeyError as exc:
        raise LabSliceError(f"{device.name}: no rendered {exc.args[0]}") from None
    except json.JSONDecodeError as exc:
        raise LabSliceError(f"{device.name}: config_db.json is not JSON: {exc}") from None
    port_table: dict[str, dict[str, str]] = config.get("PORT", {})
    addresses: dict[str, list[str]] = {}
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        for key in config.get(table, {}):
            name, prefix = _split_key(key)
            entry = addresses.setdefault(name, [])
            if prefix is not None:
                entry.append(prefix)
    members = {}
    for key in config.get("VLAN_MEMBER", {}):
        vlan, port = _split_key(key)
        if port is not None:
            members[port] = vlan
    ports = {}
    for name, fields in port_table.items():
        ports[name] = LabInterface(
            name=linux_ifname(name), rendered=name, kind="port", mtu=int(fields.get("mtu", "9100")),
            up=fields.get("admin_status", "down") == "up", addresses=tuple(addresses.get(name, ())),
            bridge=members.get(name), lldp_id=fields.get("alias") or name,
            lldp_description=fields.get("description", ""))
    bridges = [LabInterface(name=name, rendered=name, kind="bridge", mtu=9100, addresses=tuple(addresses[name]))
               for name in config.get("LOOPBACK_INTERFACE", {}) if "|" not in name]
    for name, fields in config.get("VLAN", {}).items():
        bridges.append(LabInterface(name=name, rendered=name, kind="bridge", mtu=int(fields.get("mtu", "9100")),
                                    addresses=tuple(addresses.get(name, ()))))
    return NodeFacts(ports=ports, bridges=bridges, frr_conf=frr, frr_source=SONIC_FRR_SOURCE)


@dataclass(frozen=True, slots=True)
class FrrView:
    """The two things the FRR template reads: a hostname and a BGP plan."""

    hostname: str
    bgp: BgpPlan


@adapter("eos")
def eos_facts(ctx: DesignContext, device: Device, files: Mapping[str, str]) -> NodeFacts:
    view = eos_view(ctx, device)
    ports = {}
    for intf in view.interfaces:
        if intf.shutdown:
            continue
        addrs = tuple(a for a in (intf.ipv4, intf.ipv6) if a)
        bridge = f"Vlan{intf.access_vlan}" if intf.access_vlan is not None else None
        ports[intf.name] = LabInterface(name=linux_ifname(intf.name), rendered=intf.name, kind="port",
                                        mtu=intf.mtu, addresses=addrs, bridge=bridge, lldp_id=intf.name,
                                        lldp_description=intf.description or "")
    loopback = tuple(a for a in (view.loopback_v4, view.loopback_v6) if a)
    bridges = [LabInterface(name="Loopback0", rendered="Loopback0", kind="bridge", mtu=view.mtu, addresses=loopback)]
    if view.host_vlan is not None:
        gateways = tuple(a for a in (view.host_gateway_v4, view.host_gateway_v6) if a)
        bridges.append(LabInterface(name=f"Vlan{view.host_vlan}", rendered=f"Vlan{view.host_vlan}", kind="bridge",
                                    mtu=view.mtu, addresses=gateways))
    frr = template_env("sonic").get_template("frr.conf.j2").render(v=FrrView(view.hostname, view.bgp))
    # The template's first line speaks of SONiC; say what this file really is.
    frr = f"! {view.hostname}: {EOS_FRR_SOURCE}\n" + frr.split("\n", 1)[1]
    return NodeFacts(ports=ports, bridges=bridges, frr_conf=frr, frr_source=EOS_FRR_SOURCE)


def node_facts(ctx: DesignContext, device: Device, files: Mapping[str, str]) -> NodeFacts:
    try:
        build = ADAPTERS[device.nos]
    except KeyError:
        raise LabSliceError(f"{device.name}: no lab adapter for NOS {device.nos!r}") from None
    return build(ctx, device, files)


def rendered_files(ctx: DesignContext, devices: list[Device], configs: Path | None,
                   accept_edited: bool = False) -> dict[str, dict[str, str]]:
    """Each device's rendered files: rendered now (and checked, as `netgen render` does), or read
    from a `netgen render` output directory so the lab runs exactly the files under review."""
    return _rendered_inputs(ctx, devices, configs, accept_edited).files


def _rendered_inputs(ctx: DesignContext, devices: list[Device], configs: Path | None,
                     accept_edited: bool) -> RenderDirFiles:
    """platforms/output_dir.py's render_or_read, its input errors (the render directory's path, the
    fabric file's block or secret) as LabSliceError: exit 2 like any input error."""
    try:
        return render_or_read(ctx, devices, configs, accept_edited=accept_edited)
    except (RenderDirError, RenderInputError) as exc:
        raise LabSliceError(str(exc)) from None


def lab_inputs(lab: str, ctx: DesignContext, request: SliceRequest, configs: Path | None = None,
               accept_edited: bool = False,
               edited: dict[str, str] | None = None) -> tuple[LabPlan, dict[str, dict[str, str]]]:
    """The lab plan and the rendered files it was built from (containerlab boots the files).
    `accept_edited`: files of `configs` changed since netgen rendered them are used, each put in
    `edited` ("device/file" -> why) for the caller to report."""
    check_lab_name(lab)
    devices = select_devices(ctx.topology, request)
    read = _rendered_inputs(ctx, devices, configs, accept_edited)
    files = read.files
    if edited is not None:
        edited.update(read.edited)
    facts = {d.name: node_facts(ctx, d, files.get(d.name, {})) for d in devices}
    # FRR runs what a deploy would push: placeholders (the BGP session key) filled, each secret read
    # once. The returned files keep their placeholders (a containerlab export writes them out).
    secrets, values = ctx.fabric.shared_secrets(), dict[str, str]()
    try:
        facts = {name: replace(f, frr_conf=fill_placeholders(f.frr_conf, secrets, f"{name}/frr.conf", values))
                 if MARK in f.frr_conf else f for name, f in facts.items()}
    except SecretError as exc:
        raise LabSliceError(f"the lab's FRR runs with the fabric's secrets: {exc}") from None
    return build_plan(lab, ctx, request, facts), files


def plan_lab(lab: str, ctx: DesignContext, request: SliceRequest, configs: Path | None = None,
             accept_edited: bool = False) -> LabPlan:
    return lab_inputs(lab, ctx, request, configs, accept_edited)[0]
