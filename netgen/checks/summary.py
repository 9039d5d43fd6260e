"""What `netgen show` reports: a JSON-able summary of the expanded fabric and its design figures;
and what `netgen headroom` reports: each device's PFC headroom per port and buffer budget per ASIC."""

from __future__ import annotations

from collections import Counter
from typing import Any

from netgen.context import DesignContext
from netgen.intent.types import Ratio
from netgen.topology.model import Role


def summarize(ctx: DesignContext) -> dict[str, Any]:
    fabric, topo = ctx.fabric, ctx.topology
    hosts = sum(z.racks * z.hosts_per_rack for z in fabric.zones)
    gpus = sum(z.racks * z.hosts_per_rack * z.gpus_per_host for z in fabric.zones)
    tiers = []
    for role in Role:
        devices = topo.by_role(role)
        if devices:
            tiers.append({
                "tier": role.value,
                "devices": len(devices),
                "models": dict(sorted(Counter(d.model for d in devices).items())),
                "nos": dict(sorted(Counter(d.nos for d in devices).items())),
            })
    links = []
    for (tier, speed), count in Counter((link.tier.value, link.speed_gbps) for link in topo.links).items():
        links.append({"tier": tier, "speed": f"{speed}G", "links": count})
    links.append({
        "tier": "host-rtsw",
        "speed": ",".join(sorted({f"{n.speed_gbps}G" for n in topo.host_nics})),
        "links": len(topo.host_nics),
    })
    oversub = []
    for zone in sorted(fabric.zones, key=lambda z: z.id):
        down, up = zone.rack_nic_gbps, zone.rtsw_uplink_gbps
        oversub.append({"zone": zone.id, "tier": "rtsw", "ratio": str(Ratio.of(up, down)),
                        "declared": str(zone.rtsw_oversubscription) if zone.rtsw_oversubscription else "1:1 or better"})
        if fabric.aggregation is not None:
            agg = fabric.aggregation
            down, up = zone.ctsw_downlink_gbps, agg.ctsw_uplink_gbps
            declared = agg.expected_oversubscription
            oversub.append({"zone": zone.id, "tier": "ctsw", "ratio": str(Ratio.of(up, down)),
                            "declared": str(declared) if declared else "-"})
    buffers = []
    groups: dict[tuple[str, str], list[str]] = {}
    for name, device in topo.devices.items():
        groups.setdefault((device.role.value, device.model), []).append(name)
    for (tier, model), names in groups.items():
        plans = [ctx.buffers[n] for n in names]
        worst = max((p.worst for p in plans), key=lambda d: (d.committed / d.buffer_bytes,
                                                             d.headroom_oversubscription))
        xoffs = [pg.xoff for p in plans for pg in p.lossless.values()]
        vendor = [pg.vendor_xoff for p in plans for pg in p.lossless.values() if pg.vendor_xoff is not None]
        buffers.append({
            "tier": tier,
            "model": model,
            "devices": len(names),
            "mode": plans[0].mode,
            "source": plans[0].source,
            "xoff_per_port_bytes": [min(xoffs, default=0), max(xoffs, default=0)],
            "vendor_xoff_per_port_bytes": [min(vendor, default=0), max(vendor, default=0)],
            "worst_domain_committed_bytes": worst.committed,
            "domain_buffer_bytes": worst.buffer_bytes,
            "worst_domain_used_percent": round(100 * worst.committed / worst.buffer_bytes, 2),
            "headroom_pool_bytes": worst.headroom_pool_bytes,
            "headroom_pool_xoff_bytes": worst.xoff_bytes,
            "headroom_pool_used_percent": round(100 * worst.headroom_oversubscription, 2),
            "static_per_port_bytes": worst.per_port_static,
        })
    pools = []
    for use in topo.pool_use:
        pools.append({"pool": use.pool, "slot": use.slot, "what": use.what, "needed": use.needed,
                      "capacity": use.capacity,
                      "used_percent": round(100 * use.needed / use.capacity, 2) if use.capacity else 100.0})
    unverified = [{"tier": role.value, "model": name, "devices": len(devices), "items": list(model.unverified)}
                  for role, name, model, devices in ctx.tier_models() if model.unverified]
    return {
        "fabric": fabric.name,
        "zones": len(fabric.zones),
        "racks": sum(z.racks for z in fabric.zones),
        "hosts": hosts,
        "gpus": gpus,
        "nics": len(topo.host_nics),
        "devices": len(topo.devices),
        "tiers": tiers,
        "links": links,
        "bgp_sessions": len(topo.sessions),
        "oversubscription": oversub,
        "buffers": buffers,
        "pools": pools,
        "unverified": unverified,
    }


def one_per_model(ctx: DesignContext) -> list[str]:
    """The first device of each tier and model: what `netgen headroom` shows unless told."""
    seen: dict[tuple[str, str], str] = {}
    for name, device in ctx.topology.devices.items():
        seen.setdefault((device.role.value, device.model), name)
    return list(seen.values())


def headroom_report(ctx: DesignContext, name: str) -> dict[str, Any]:
    """One device's buffer plan: each lossless port's headroom (netgen's formula and the vendor's
    row) and each ASIC's budget."""
    device = ctx.topology.devices[name]
    plan = ctx.buffers[name]
    ports = []
    for port in ctx.topology.ports[name]:
        pg = plan.lossless.get(port.name)
        if pg is not None:
            ports.append({"port": port.name, "speed_gbps": port.speed_gbps, "cable_m": port.cable_m,
                          "reserved": pg.size, "xon": pg.xon, "xon_offset": pg.xon_offset, "xoff": pg.xoff,
                          "computed_xoff": pg.computed_xoff, "vendor_xoff": pg.vendor_xoff,
                          "vendor_cable_m": pg.vendor_cable_m})
    asics = [{"asic": d.index, "ports": d.ports, "lossless_ports": d.lossless_ports,
              "buffer_bytes": d.buffer_bytes, "pool_bytes": d.pool_bytes,
              "headroom_pool_bytes": d.headroom_pool_bytes, "xoff_bytes": d.xoff_bytes,
              "headroom_pool_used_percent": round(100 * d.headroom_oversubscription, 2),
              "pgs_covered": d.pgs_covered, "reserved_bytes": d.reserved_bytes,
              "egress_pool_bytes": d.egress_pool_bytes, "egress_reserved_bytes": d.egress_reserved_bytes,
              "static_bytes": d.static_bytes, "per_port_static_bytes": d.per_port_static,
              "committed_bytes": d.committed,
              "used_percent": round(100 * d.committed / d.buffer_bytes, 2)} for d in plan.domains]
    vendor = plan.vendor.source if plan.vendor else None
    return {"device": name, "model": device.model, "mode": plan.mode, "source": plan.source,
            "vendor_settings": vendor, "dynamic_th": plan.dynamic_th, "ports": ports, "asics": asics}
