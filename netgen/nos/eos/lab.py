"""An EOS switch in the netns lab. No EOS runs in a namespace: the node runs FRR with a config
rendered from the same per-device view and BGP plan that produced its EOS CLI (neighbours, ASNs,
networks, ECMP width, timers, BFD), and its addresses come from that view. So the lab checks the
EOS device's routing design, not its EOS CLI; every report says so. The lab adapter of the EOS
bundle (netgen/lab/adapters.py: Adapter).

The FRR config comes from the FRR template in templates/sonic/ (read as a template, never through
SONiC's bundle), given what it reads: a hostname and a BGP plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from netgen.context import DesignContext
from netgen.lab.plan import LabInterface, NodeFacts, linux_ifname
from netgen.nos.eos.view import build_view
from netgen.platforms.routing import BgpPlan
from netgen.templating import template_env
from netgen.topology.model import Device

EOS_FRR_SOURCE = ("FRR stand-in rendered from the device's EOS view and BGP plan; its EOS CLI is not what runs"
                  " in the lab")
FRR_TEMPLATES, FRR_TEMPLATE = "sonic", "frr.conf.j2"


@dataclass(frozen=True, slots=True)
class FrrView:
    """The two things the FRR template reads: a hostname and a BGP plan."""

    hostname: str
    bgp: BgpPlan


def eos_facts(ctx: DesignContext, device: Device, files: Mapping[str, str]) -> NodeFacts:
    view = build_view(ctx, device)
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
    frr = template_env(FRR_TEMPLATES).get_template(FRR_TEMPLATE).render(v=FrrView(view.hostname, view.bgp))
    # The template's first line speaks of SONiC; say what this file really is.
    frr = f"! {view.hostname}: {EOS_FRR_SOURCE}\n" + frr.split("\n", 1)[1]
    return NodeFacts(ports=ports, bridges=bridges, frr_conf=frr, frr_source=EOS_FRR_SOURCE)
