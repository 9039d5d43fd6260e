"""The fabric report (`netgen report`): every figure a reviewer needs, decided here as data; the
template (templates/report/report.html.j2) only lays it out. One self-contained HTML file: inline
CSS and SVG, one inline script (the device table's search, templates/report/device-search.js) and
a Content-Security-Policy that lets only that script run and nothing be fetched, so it opens
anywhere, offline, and stays small at meta-24k scale (zones are drawn, not devices; each zone's
RTSW x CTSW links are a matrix, not a hairball; the device table is rows of text). Nothing in it
depends on when or where it was built but the switches `netgen drain` left drained (its journals,
a maintenance panel; `netgen report --ignore-drains` leaves them out): the same intent, netgen
version and drains give the same page."""

from __future__ import annotations

import base64
import hashlib
import time
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

import netgen
from netgen.checks.base import Finding
from netgen.checks.summary import summarize
from netgen.context import DesignContext
from netgen.hosts.plan import host_qos, qps_per_connection
from netgen.infiniband.compare import compare, comparison_lines
from netgen.platforms.features import dscp_to_tc, tc_to_queue
from netgen.report.devices import device_table
from netgen.scheduler.model import scheduler_topology
from netgen.scheduler.placement import atsw_capacity_tbps, out_of_service, place
from netgen.templating import TEMPLATE_ROOT
from netgen.topology.infiniband import IbSizingError
from netgen.topology.model import LinkTier, Role


@cache
def _env() -> jinja2.Environment:
    """HTML: every value escaped (finding messages hold '<', names come from the fabric file)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_ROOT / "report"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


@cache
def _search_script() -> str:
    """The device search, placed in the page as it is (its hash is in the page's policy)."""
    script = (TEMPLATE_ROOT / "report" / "device-search.js").read_text(encoding="utf-8")
    if "</" in script:
        raise ValueError("device-search.js must not hold '</' (it would end the <script> element early)")
    return script


def _content_security_policy(script: str) -> str:
    """Inline styles, the one script by its SHA-256, and nothing else: no fetch, no other script
    (an injected one would not run), no form submission, no base URL."""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; base-uri 'none';"
            " form-action 'none'")


def _zone_picture(ctx: DesignContext) -> dict[str, Any]:
    """Zones in a row under the ATSW layer; an edge's width follows its Tb/s (widest 14 px)."""
    fabric = ctx.fabric
    zones = sorted(fabric.zones, key=lambda z: z.id)
    capacity = atsw_capacity_tbps(fabric)
    width_each, gap = 160, 24
    width = max(400, len(zones) * (width_each + gap) + gap)
    widest = max(capacity.values(), default=0.0) or 1.0
    nodes = []
    for index, zone in enumerate(zones):
        x = gap + index * (width_each + gap)
        hosts = zone.racks * zone.hosts_per_rack
        nodes.append({"id": zone.id, "x": x, "y": 150, "w": width_each, "h": 70, "label": f"zone {zone.id}",
                      "detail": f"{zone.racks} racks, {hosts * zone.gpus_per_host:,} GPUs",
                      "cx": x + width_each / 2, "tbps": capacity[zone.id],
                      "stroke": max(1.0, 14 * capacity[zone.id] / widest),
                      "edge_label": f"{capacity[zone.id]:,.1f} Tb/s"})
    agg = fabric.aggregation
    top = None
    if agg is not None:
        top = {"x": gap, "y": 20, "w": width - 2 * gap, "h": 50,
               "label": f"ATSW layer: {agg.atsw_count} x {agg.atsw_model}"}
    # drawn at most this much narrower than its width (12 px text stays >= 10 px); a narrower screen
    # scrolls the picture inside its own box
    min_width = -(-width * 10 // 12)
    return {"width": width, "min_width": min_width, "height": 240, "zones": nodes, "top": top}


def _matrices(ctx: DesignContext) -> list[dict[str, Any]]:
    """Per zone: RTSW rows x CTSW columns, each cell the planned links between the two."""
    topo = ctx.topology
    counts: dict[int, Counter[tuple[str, str]]] = {}
    for link in topo.links:
        if link.tier is LinkTier.RTSW_CTSW:
            zone_id = topo.devices[link.lower.device].zone or 0
            counts.setdefault(zone_id, Counter())[(link.lower.device, link.upper.device)] += 1
    out = []
    for zone in sorted(ctx.fabric.zones, key=lambda z: z.id):
        rtsws = sorted((d for d in topo.by_role(Role.RTSW) if d.zone == zone.id), key=lambda d: d.number)
        ctsws = sorted((d for d in topo.by_role(Role.CTSW) if d.zone == zone.id), key=lambda d: d.number)
        cells = counts.get(zone.id, Counter())
        rows: list[dict[str, Any]] = [{"name": r.name, "cells": [cells[(r.name, c.name)] for c in ctsws]}
                                      for r in rtsws]
        expected = zone.links_per_rtsw_ctsw
        off = sum(1 for row in rows for n in row["cells"] if n != expected)
        out.append({"zone": zone.id, "columns": [c.name for c in ctsws], "rows": rows, "expected": expected,
                    "off": off, "links": sum(cells.values())})
    return out


def _qos_chain(ctx: DesignContext) -> list[dict[str, Any]]:
    """Per class, the chain from the host's NCCL setting to the spine's queue."""
    fabric = ctx.fabric
    qos, host = fabric.qos, host_qos(fabric)
    tcs, queues = dscp_to_tc(fabric), tc_to_queue(fabric)
    priority = dict(host.dscp_priority)
    rows = []
    classes = [(qos.lossless.name, qos.lossless.dscp, "lossless"), (qos.cts.name, qos.cts.dscp, "strict")]
    classes += [(c.name, c.dscp, f"DWRR {c.weight} %") for c in qos.classes]
    for name, dscps, scheduling in classes:
        tc = tcs[dscps[0]]
        nccl = []
        if host.traffic_class >> 2 in dscps:
            nccl.append(f"NCCL_IB_TC={host.traffic_class}")
        if host.fifo_traffic_class >> 2 in dscps:
            nccl.append(f"NCCL_IB_FIFO_TC={host.fifo_traffic_class}")
        lossless = scheduling == "lossless"
        host_priorities = sorted({str(priority[d]) for d in dscps if d in priority})
        rows.append({"name": name, "dscp": ", ".join(map(str, dscps)), "nccl": ", ".join(nccl) or "-",
                     "host_priority": ", ".join(host_priorities) or "default",
                     "tc": tc, "queue": queues.get(tc, "-"),
                     "pg": qos.lossless.pfc_priority if lossless else 0,
                     "pfc": f"on (priority {qos.lossless.pfc_priority})" if lossless else "off",
                     "scheduling": f"DWRR {qos.lossless.weight} %, PFC no-drop" if lossless else scheduling,
                     "ecn": ("on" if qos.ecn.enabled else "off") if lossless else "-",
                     "dcqcn": ("on" if host.dcqcn else "off") if lossless else "-"})
    return rows


def _whatif(ctx: DesignContext) -> dict[str, Any]:
    """The what-if's study (netgen.whatif.study.ecmp_study), as `netgen whatif ecmp --json` has it."""
    from netgen.whatif.study import RULE, ecmp_study  # noqa: PLC0415

    found = ecmp_study(ctx.fabric, qps_per_connection(ctx.fabric))
    return {"stages": [entry.as_dict() for entry in found.stages], "trials": found.trials, "seed": found.seed,
            "rule": RULE}


def _maintenance(ctx: DesignContext, drained: Mapping[str, float]) -> list[dict[str, Any]]:
    """The switches drained now, as the fabric's shared drain state recorded them (netgen drain),
    each with its tier, zone and since when (UTC)."""
    devices = ctx.topology.devices
    return [{"device": name, "role": devices[name].role.value, "zone": devices[name].zone,
             "since": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(when))}
            for name, when in sorted(drained.items()) if name in devices]


def _placements(ctx: DesignContext, drained: Mapping[str, float]) -> list[dict[str, Any]]:
    """Sample jobs: half a zone, and a zone and a third (crossing the ATSW layer where zones are
    equal), placed by netgen and by a topology-blind scheduler; with drained spines, against the
    ATSW capacity left (netgen place does the same)."""
    fabric = ctx.fabric
    topo = scheduler_topology(fabric, ctx.topology)
    spines = out_of_service(ctx.topology, drained)
    largest = max(z.hosts for z in topo.zones)
    sizes = sorted({max(1, largest // 2), min(len(topo.hosts()), largest + largest // 3)})
    out = []
    for size in sizes:
        result = place(fabric, topo, size, drained=spines)
        naive = result.naive_traffic
        out.append({"hosts": size, "zones": result.zones, "crossings": result.traffic.crossings,
                    "gib": result.traffic.as_dict()["gib_per_allreduce"],
                    "load": result.traffic.as_dict()["max_atsw_load"],
                    "naive_zones": result.naive_zones, "naive_crossings": naive.crossings if naive else 0,
                    "naive_gib": naive.as_dict()["gib_per_allreduce"] if naive else 0,
                    "naive_load": naive.as_dict()["max_atsw_load"] if naive else 0})
    return out


def _zone_ranges(zones: list[int]) -> str:
    """[1, 2, 3, 5] -> "1-3, 5"."""
    parts: list[str] = []
    for zone in sorted(zones):
        if parts and parts[-1].split("-")[-1] == str(zone - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{zone}"
        else:
            parts.append(str(zone))
    return ", ".join(parts)


def _oversubscription(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Zones with the same ratios share a row."""
    grouped: dict[tuple[str, str, str], list[int]] = {}
    for row in summary["oversubscription"]:
        grouped.setdefault((row["tier"], row["ratio"], row["declared"]), []).append(row["zone"])
    return [{"zones": _zone_ranges(zones), "tier": tier, "ratio": ratio, "declared": declared}
            for (tier, ratio, declared), zones in grouped.items()]


def _infiniband(ctx: DesignContext) -> dict[str, Any] | None:
    """The RoCE fabric beside its InfiniBand alternative (netgen compare), when the fabric has one that
    fits its switch model (NG801 among the findings says why not, when it does not)."""
    try:
        ib = ctx.infiniband
    except IbSizingError:
        return None
    if ib is None:
        return None
    result = compare(ctx.fabric, ctx.catalog, ctx.topology, ib)
    return {"gpus": result.gpus, "rows": comparison_lines(result)}


def report_data(ctx: DesignContext, findings: list[Finding],
                drained: Mapping[str, float] | None = None) -> dict[str, Any]:
    """What the page shows. `drained`: the switches the fabric's shared drain state (netgen.deploy.lock)
    says netgen left drained, name -> since when: a maintenance panel, and the placement panel
    against the capacity they leave."""
    drained = drained or {}
    summary = summarize(ctx)
    counts = Counter(f.severity.value for f in findings)
    script = _search_script()
    return {
        "netgen_version": netgen.__version__,
        "description": ctx.fabric.description,
        "content_security_policy": _content_security_policy(script),
        "search_script": Markup(script),  # netgen's own file, checked for "</"
        "devices": device_table(ctx.topology),
        "summary": summary,
        "picture": _zone_picture(ctx),
        "oversubscription": _oversubscription(summary),
        "matrices": _matrices(ctx),
        "qos": _qos_chain(ctx),
        "qps": qps_per_connection(ctx.fabric),
        "hashing": ctx.fabric.hashing.mode,
        "whatif": _whatif(ctx),
        "placements": _placements(ctx, drained),
        "maintenance": _maintenance(ctx, drained),
        "infiniband": _infiniband(ctx),
        "findings": [f.as_dict() for f in findings],
        "errors": counts.get("error", 0),
        "warnings": counts.get("warning", 0),
    }


def render_report(ctx: DesignContext, findings: list[Finding], drained: Mapping[str, float] | None = None) -> str:
    return _env().get_template("report.html.j2").render(report_data(ctx, findings, drained))
