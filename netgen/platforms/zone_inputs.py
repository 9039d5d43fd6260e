"""Zone inputs: one digest per AI Zone of everything the views of its switches can be built from,
worked out from the intent without building a view.

A render key (render_cache.render_key) is a digest of a device's prepared inputs, so keying a fabric
means building every device's view: meta-24k's 1,693 views cost about 1.3 CPU-seconds, most of a
warm re-render. Yet a view of a zone switch (RTSW or CTSW) is made from little:

* the fabric's own sections (everything but `zones`), the catalog, the local users' hashes and
  netgen's code and renderers: fabric-wide, as in render.fabric_key;
* its zone's entry in `zones`: the zone's names, ports, addresses and ASNs are a function of the
  zone's entry and of fixed positions, never of other zones (topology/expand.py);
* what crosses zones, and no more: the ATSWs (the CTSWs' peers: names, ASNs, loopbacks), the ATSW
  ports reserved per zone (a CTSW uplink's peer port), and the route policy's fabric-wide prefix
  sets and route capacities (policy.fabric_sets, built from every zone).

The zone's digest covers all of that, so a switch whose zone digest is the one DIR's manifest
recorded for it has the render key recorded with it, and its view need not be built. An ATSW links
to every zone: its digest is taken from the topology instead, the fabric-wide part above plus its
own record, its ports and its peers' records (a few hundred objects, not the view's thousands).

A renderer plugin takes part only if it says so (`zone_local = True`): its `prepare` reads nothing
of the design context beyond the fabric-wide part, the device's own record, ports and peers' records
(for a zone switch, a function of its zone's entry and what crosses zones).
tests/platforms/test_zone_inputs.py changes every field of one zone, adds and removes zones, and
checks that every switch whose digest stays the same keeps its render key; a new Zone field fails
that test until it is listed there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import pickle
from collections.abc import Mapping

from netgen.context import DesignContext
from netgen.platforms import base
from netgen.platforms.policy import fabric_sets
from netgen.platforms.services import read_local_users
from netgen.rendered import RenderInputError
from netgen.topology.expand import atsw_ports_per_zone
from netgen.topology.model import Role


def zone_local(plugin: base.RendererPlugin) -> bool:
    """Whether a plugin's views are built only from what zone_inputs covers."""
    return getattr(plugin, "zone_local", False) is True


def zone_inputs(ctx: DesignContext, plugins: Mapping[str, base.RendererPlugin], code: bytes,
                pickler: type[pickle.Pickler]) -> dict[str, str]:
    """Device name -> its inputs' digest (an RTSW's or CTSW's: its zone's) for every switch whose
    NOS plugin is zone-local.
    Empty where a local user's hash cannot be read (the render reports that itself). `code`: the
    code digest of render keys; `pickler`: the stable pickler of render keys (equal values, equal
    bytes in every process)."""
    fabric, topology = ctx.fabric, ctx.topology
    try:
        users = read_local_users(fabric)
    except RenderInputError:
        return {}
    crossing = io.BytesIO()
    atsws = [device for device in topology.devices.values() if device.role is Role.ATSW]
    pickler(crossing, protocol=5).dump((atsw_ports_per_zone(fabric), atsws, fabric_sets(ctx)))
    common = hashlib.sha256(code)
    for part in (fabric.model_dump_json(exclude={"zones"}), ctx.catalog.model_dump_json(),
                 json.dumps([dataclasses.astuple(u) for u in users]), json.dumps(sorted(plugins))):
        common.update(part.encode("utf-8") + b"\0")
    common.update(crossing.getvalue())
    by_zone: dict[int, str] = {}
    for zone in fabric.zones:
        digest = common.copy()
        digest.update(b"\0zone\0" + zone.model_dump_json().encode("utf-8"))
        by_zone[zone.id] = digest.hexdigest()
    local = {nos for nos, plugin in plugins.items() if zone_local(plugin)}
    digests: dict[str, str] = {}
    for name, device in topology.devices.items():
        if device.nos not in local:
            continue
        if device.zone is not None:
            if device.zone in by_zone:
                digests[name] = by_zone[device.zone]
            continue
        # an ATSW: its own record, its ports and its peers' records (every zone's CTSWs it links to)
        ports = topology.ports[name]
        peers = [topology.devices[peer] for peer in sorted({port.peer_device for port in ports})]
        own = io.BytesIO()
        pickler(own, protocol=5).dump((device, ports, peers))
        digest = common.copy()
        digest.update(b"\0switch\0" + own.getvalue())
        digests[name] = digest.hexdigest()
    return digests
