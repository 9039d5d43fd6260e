"""`netgen compare`: the RoCE fabric and its InfiniBand alternative for the same GPUs, side by side.

Both sides are read from the expanded fabrics (netgen.topology), never from the intent's arithmetic:
switches and ports per tier, cables by medium, speed and length, bandwidth out of a zone and across the
fabric's bisection, oversubscription per tier, how each spreads traffic, what one switch failing takes
away, and the cost when the user gives a price table (nothing is priced that the table does not name).

Bisection: the least bandwidth across any cut of the fabric into two halves of its GPUs. Inside a RoCE
zone the cut is at the RTSWs' uplinks; inside an InfiniBand zone whose rails are in several spine
groups, the cut between groups is at their core uplinks (rails of different groups meet at the core).
Across the fabric, the cut splits the zones into two halves, at their uplinks to the ATSWs or the core.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from netgen.cabling.plan import SMF, bill, cabling_plan
from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Fabric
from netgen.intent.problems import validate
from netgen.intent.types import IntentModel, Ratio, SafeName, SafeText
from netgen.intent.yaml_source import read_yaml
from netgen.topology.infiniband import IbFabric, IbTier
from netgen.topology.model import LinkTier, Role, Topology

Price = Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)]


class CablePrice(IntentModel):
    per_cable: float = Field(default=0, ge=0, le=1e9, allow_inf_nan=False, description="Price of one cable.")
    per_m: float = Field(default=0, ge=0, le=1e9, allow_inf_nan=False, description="Price per metre of it.")


class PriceTable(IntentModel):
    """What the user pays (`netgen compare --prices FILE`): netgen invents no price. An item the table
    does not name is listed as unpriced and the total says it is incomplete."""

    currency: SafeName = Field(default="USD", description="Currency of every price.")
    switches: dict[SafeName, Price] = Field(default_factory=dict, description="Price per switch, by catalog model.")
    cables: dict[SafeText, CablePrice] = Field(
        default_factory=dict, description="Price per cable medium ('copper DAC', 'single-mode fibre').")
    optics: dict[SafeName, Price] = Field(default_factory=dict,
                                          description="Price of the optic of one fibre port end, by speed ('400G').")
    host_adapters: dict[Literal["roce", "infiniband"], Price] = Field(
        default_factory=dict, description="Price per NIC or HCA port: 'roce', 'infiniband'.")


@dataclass
class TierRow:
    tier: str
    model: str
    switches: int
    ports_used: int
    ports_each: int  # the model's logical ports at the speed used


@dataclass
class Side:
    name: str
    tiers: list[TierRow] = field(default_factory=list)
    cables: list[dict[str, Any]] = field(default_factory=list)  # netgen cabling's bill: media, speed, length, count
    optics: int = 0  # fibre port ends, one optic each
    host_ports: int = 0
    zone_out_gbps: dict[int, int] = field(default_factory=dict)  # bandwidth out of each zone
    zone_bisection_gbps: dict[int, int] = field(default_factory=dict)
    fabric_bisection_gbps: int = 0
    oversubscription: dict[str, str] = field(default_factory=dict)  # tier -> up:down
    failure: dict[str, str] = field(default_factory=dict)  # tier -> what one switch failing takes away
    routing: list[str] = field(default_factory=list)
    cost: dict[str, Any] | None = None

    @property
    def switches(self) -> int:
        return sum(row.switches for row in self.tiers)


@dataclass
class Comparison:
    fabric: str
    gpus: int
    hosts: int
    roce: Side
    infiniband: Side

    def as_dict(self) -> dict[str, Any]:
        return {"fabric": self.fabric, "gpus": self.gpus, "hosts": self.hosts,
                "roce": asdict(self.roce) | {"switches": self.roce.switches},
                "infiniband": asdict(self.infiniband) | {"switches": self.infiniband.switches}}


def _half_bisection(bandwidths: list[int]) -> int:
    """The least bandwidth out of a half of the parts (zones, groups): the smallest half's sum."""
    if len(bandwidths) < 2:
        return 0
    ordered = sorted(bandwidths)
    return sum(ordered[: len(ordered) // 2])


def roce_side(fabric: Fabric, catalog: Catalog, topology: Topology) -> Side:
    side = Side("RoCE")
    counts: Counter[tuple[str, str]] = Counter()
    ports: Counter[tuple[str, str]] = Counter()
    each: dict[tuple[str, str], int] = {}
    for device in topology.devices.values():
        key = (device.role.value, device.model)
        counts[key] += 1
        used = topology.ports.get(device.name, [])
        ports[key] += len(used)
        model = catalog.get(device.model)
        speed = used[0].speed_gbps if used else model.port_speed
        each[key] = model.port_count * model.ports_per_cage(speed)
    side.tiers = [TierRow(role, model, counts[(role, model)], ports[(role, model)], each[(role, model)])
                  for role, model in sorted(counts, key=lambda k: ([r.value for r in Role].index(k[0]), k[1]))]
    cables = cabling_plan(fabric, topology)
    side.cables = bill(cables)  # `netgen cabling`'s own bill: media and lengths are the cabling plan's
    side.optics = 2 * sum(1 for c in cables if c.media == SMF)
    side.host_ports = len(topology.host_nics)
    up_by_zone: Counter[int] = Counter()
    for link in topology.links:
        if link.tier is LinkTier.CTSW_ATSW:
            up_by_zone[topology.devices[link.lower.device].zone or 0] += link.speed_gbps
    for zone in fabric.zones:
        side.zone_bisection_gbps[zone.id] = zone.racks * min(zone.rack_nic_gbps, zone.rtsw_uplink_gbps) // 2
        side.zone_out_gbps[zone.id] = up_by_zone.get(zone.id, 0)
        side.oversubscription.setdefault("rtsw", str(Ratio.of(zone.rtsw_uplink_gbps, zone.rack_nic_gbps)))
        if fabric.aggregation is not None:
            side.oversubscription.setdefault(
                "ctsw", str(Ratio.of(fabric.aggregation.ctsw_uplink_gbps, zone.ctsw_downlink_gbps)))
    side.fabric_bisection_gbps = _half_bisection(list(side.zone_out_gbps.values()))
    first = fabric.zones[0]
    gpus = first.hosts_per_rack * first.gpus_per_host
    side.failure = {
        "rtsw": f"its rack's {first.hosts_per_rack} hosts ({gpus} GPUs) lose the backend",
        "ctsw": f"no GPU cut off; the zone keeps {first.ctsw_count - 1} of {first.ctsw_count} spine paths",
    }
    if fabric.aggregation is not None:
        n = fabric.aggregation.atsw_count
        side.failure["atsw"] = f"no GPU cut off; cross-zone capacity {n - 1} of {n}"
    hashing = fabric.hashing
    side.routing = [
        f"eBGP with ECMP: {first.ctsw_count * first.links_per_rtsw_ctsw} equal-cost uplinks per RTSW",
        ("hashing on the RoCE destination QP (UDP payload bytes"
         f" {hashing.payload_bytes.first}-{hashing.payload_bytes.last}), {hashing.qps_per_connection} QPs a connection"
         if hashing.mode == "bth_dest_qp" else "5-tuple hashing"),
        "lossless class by PFC (priority " + str(fabric.qos.lossless.pfc_priority) + "), headroom per port",
    ]
    return side


def ib_side(fabric: Fabric, ib: IbFabric) -> Side:
    side = Side("InfiniBand")
    tiers = Counter(s.tier for s in ib.switches.values())
    used: Counter[IbTier] = Counter()
    for cable in ib.cables:
        for end in (cable.lower, cable.upper):
            switch = ib.switches.get(end)
            if switch is not None:
                used[switch.tier] += 1
    radix = next(iter(ib.switches.values())).ports if ib.switches else 0
    side.tiers = [TierRow(tier.value, ib.switch_model, tiers[tier], used[tier], radix)
                  for tier in IbTier if tiers[tier]]
    lengths = Counter(c.cable_m for c in ib.cables)  # every InfiniBand cable is fibre (IbCables)
    side.cables = [{"media": SMF, "speed_gbps": ib.link_speed_gbps, "length_m": length, "count": n}
                   for length, n in sorted(lengths.items())]
    side.optics = 2 * len(ib.cables)
    side.host_ports = len(ib.hcas)
    speed = ib.link_speed_gbps
    for sizing in ib.sizing:
        group_out = sizing.spines_per_group * sizing.spine_up * speed
        side.zone_out_gbps[sizing.zone] = group_out * sizing.groups
        hca_bw = sizing.hosts * sizing.rails * speed
        side.zone_bisection_gbps[sizing.zone] = (hca_bw // 2 if sizing.groups == 1
                                                 else min(hca_bw // 2, _half_bisection([group_out] * sizing.groups)))
        side.oversubscription.setdefault("leaf", "1:1")
        if ib.cores:
            side.oversubscription.setdefault("spine", str(Ratio.of(sizing.spine_up, sizing.spine_down)))
    side.fabric_bisection_gbps = _half_bisection(list(side.zone_out_gbps.values()))
    first = ib.sizing[0]
    side.failure = {
        "leaf": f"{first.hosts_per_leaf} hosts each lose one rail ({first.hosts_per_leaf} GPUs cut off)",
        "spine": f"no GPU cut off; its group keeps {first.spines_per_group - 1} of {first.spines_per_group} spines",
    }
    if ib.cores:
        side.failure["core"] = f"no GPU cut off; cross-group capacity {ib.cores - 1} of {ib.cores}"
    side.routing = [
        f"subnet manager routing ({fabric.infiniband.subnet_manager.routing_engine if fabric.infiniband else 'ftree'}):"
        " one static path per destination LID, spread over a leaf's uplinks",
        "no adaptive routing with upstream OpenSM; NCCL_IB_SL " + str(fabric.infiniband.service_level
                                                                      if fabric.infiniband else 0),
        "lossless by credit-based link flow control: no PFC, ECN or headroom to plan",
    ]
    if any(s.groups > 1 for s in ib.sizing):
        side.routing.append(f"rails of different spine groups meet at the core ({side.oversubscription.get('spine')})")
    return side


def _price(side: Side, prices: PriceTable, adapter: Literal["roce", "infiniband"]) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    unpriced: list[str] = []
    for row in side.tiers:
        price = prices.switches.get(row.model)
        if price is None:
            unpriced.append(f"switch {row.model}")
        else:
            items.append({"item": f"{row.tier} {row.model}", "count": row.switches, "total": price * row.switches})
    for cable in side.cables:
        price_of = prices.cables.get(cable["media"])
        if price_of is None:
            unpriced.append(f"cable {cable['media']}")
            continue
        total = cable["count"] * (price_of.per_cable + price_of.per_m * cable["length_m"])
        items.append({"item": f"{cable['media']} {cable['length_m']} m", "count": cable["count"], "total": total})
    speeds = {cable["speed_gbps"] for cable in side.cables if cable["media"] == SMF}
    for speed in sorted(speeds):
        optic = prices.optics.get(f"{speed}G")
        count = 2 * sum(c["count"] for c in side.cables if c["media"] == SMF and c["speed_gbps"] == speed)
        if optic is None:
            unpriced.append(f"optic {speed}G")
        else:
            items.append({"item": f"optic {speed}G", "count": count, "total": optic * count})
    host = prices.host_adapters.get(adapter)
    if host is None:
        unpriced.append(f"host adapter {adapter}")
    else:
        items.append({"item": f"host adapter {adapter}", "count": side.host_ports, "total": host * side.host_ports})
    return {"currency": prices.currency, "items": items, "total": round(sum(i["total"] for i in items), 2),
            "unpriced": sorted(set(unpriced)), "complete": not unpriced}


def compare(fabric: Fabric, catalog: Catalog, topology: Topology, ib: IbFabric,
            prices: PriceTable | None = None) -> Comparison:
    hosts = sum(z.racks * z.hosts_per_rack for z in fabric.zones)
    gpus = sum(z.racks * z.hosts_per_rack * z.gpus_per_host for z in fabric.zones)
    result = Comparison(fabric.name, gpus, hosts, roce_side(fabric, catalog, topology), ib_side(fabric, ib))
    if prices is not None:
        result.roce.cost = _price(result.roce, prices, "roce")
        result.infiniband.cost = _price(result.infiniband, prices, "infiniband")
    return result


def tbps(gbps: int) -> str:
    return f"{gbps / 1000:g} Tb/s"


def comparison_lines(result: Comparison) -> list[tuple[str, str, str]]:
    """(what, RoCE, InfiniBand) rows, as `netgen compare` prints them and the report shows them."""
    roce, ib = result.roce, result.infiniband

    def tiers(side: Side) -> str:
        merged: dict[str, list[int]] = {}
        for r in side.tiers:  # a tier of two models (SONiC and EOS racks) is one tier here
            counts = merged.setdefault(r.tier, [0, 0, 0])
            counts[0] += r.switches
            counts[1] += r.ports_used
            counts[2] += r.switches * r.ports_each
        return ", ".join(f"{n} {tier} ({used}/{total} ports)" for tier, (n, used, total) in merged.items())

    def cables(side: Side) -> str:
        return ", ".join(f"{c['count']} {c['media']} {c['length_m']} m" for c in side.cables)

    def zone_values(values: dict[int, int]) -> str:
        distinct = sorted(set(values.values()))
        return " / ".join(tbps(v) for v in distinct) + (" per zone" if len(values) > 1 else "")

    rows = [
        ("switches", f"{roce.switches}: {tiers(roce)}", f"{ib.switches}: {tiers(ib)}"),
        ("host ports", str(roce.host_ports), str(ib.host_ports)),
        ("cables", cables(roce), cables(ib)),
        ("optics (fibre port ends)", str(roce.optics), str(ib.optics)),
        ("bisection in a zone", zone_values(roce.zone_bisection_gbps), zone_values(ib.zone_bisection_gbps)),
        ("out of a zone", zone_values(roce.zone_out_gbps), zone_values(ib.zone_out_gbps)),
        ("fabric bisection (zones in halves)", tbps(roce.fabric_bisection_gbps), tbps(ib.fabric_bisection_gbps)),
        ("oversubscription", ", ".join(f"{t} {r}" for t, r in roce.oversubscription.items()),
         ", ".join(f"{t} {r}" for t, r in ib.oversubscription.items())),
    ]
    for (tier_r, what_r), (tier_i, what_i) in zip(list(roce.failure.items()), list(ib.failure.items()), strict=False):
        rows.append((f"one {tier_r} / {tier_i} fails", what_r, what_i))
    rows.append(("routing", "; ".join(roce.routing), "; ".join(ib.routing)))
    if roce.cost is not None and ib.cost is not None:
        def cost(c: dict[str, Any]) -> str:
            text = f"{c['total']:,.2f} {c['currency']}"
            return text + ("" if c["complete"] else f" (incomplete: unpriced {', '.join(c['unpriced'])})")
        rows.append(("cost", cost(roce.cost), cost(ib.cost)))
    return rows


def load_prices(path: Path) -> PriceTable:
    """A price table file (YAML), read as every input file is (bounded, no tags); NetgenInputError names
    what is wrong and where."""
    data, marks = read_yaml(path, str(path))
    return validate(PriceTable, data, marks, str(path))
