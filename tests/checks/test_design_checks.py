"""Data-driven tests of every design check (ANTA style): one table row per case.

Each row mutates the small example fabric (inventory/small/fabric.yaml), writes it, runs the design
checks and looks at the findings of one check code only:

  * a failing row expects at least one finding of that code, every one of them with the expected
    severity, and one whose message or subject contains the expected text;
  * a passing row (severity None) expects no finding of that code.

Numbers of the small example that the expectations below are derived from:

  zone (x2)   4 racks, 2 hosts x 8 NICs x 400G = 6.4T of NICs per RTSW (16 NICs, a /27 per rack)
              4 CTSWs x 4 links x 400G = 6.4T up per RTSW (1:1, non-blocking)
  RTSW        arista-7060x6-64pe-{sonic,eos}: 64 cages of 800G, 400G = 2-way breakout
              -> 8 host cages + 8 uplink cages; 166,115,492 B buffer; 8 queues
  CTSW        arista-7804r3a-36p-eos: 144 cages of 400G -> 16 downlinks + 2 uplinks per CTSW
              (6.4T down, 0.8T up = 1:8, as declared); 2 ATSWs, 1 link per CTSW-ATSW pair,
              so each ATSW reserves 4 ports per zone
  pools       16 slots per pool (max_zones 15): loopback /20 -> 256 per slot (halves of 128),
              p2p /16 -> 4096 per slot (halves of 2048), host /16 -> 4096 per slot
  ASNs        ATSW 4200000000, zone N CTSWs 4200000000 + N, RTSW 4201000000 + N x 10000 + rack

A row whose mutation needs a model that the built-in catalog lacks returns a user catalog
(models `extends:` a built-in one); the test writes it next to the fabric file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from netgen.checks import REGISTRY, Severity
from tests.conftest import SMALL, findings_of

pytestmark = pytest.mark.render

ERROR = Severity.ERROR
WARNING = Severity.WARNING

RTSW_SONIC = "arista-7060x6-64pe-sonic"
RTSW_EOS = "arista-7060x6-64pe-eos"
SPINE = "arista-7804r3a-36p-eos"  # CTSW and ATSW model of the small example

Data = dict[str, Any]
Catalog = dict[str, Any]
Mutation = Callable[[Data], "Catalog | None"]


# --- mutation helpers -------------------------------------------------------------------------------
def _walk(data: Data, path: str) -> tuple[Any, str | int]:
    """The container holding the last element of a dotted path ('qos.classes.0.weight')."""
    parts: list[str | int] = [int(p) if p.isdigit() else p for p in path.split(".")]
    node: Any = data
    for part in parts[:-1]:
        node = node[part]
    return node, parts[-1]


def setting(path: str, value: Any) -> Mutation:
    def mutate(data: Data) -> None:
        node, key = _walk(data, path)
        node[key] = value

    return mutate


def remove(path: str) -> Mutation:
    def mutate(data: Data) -> None:
        node, key = _walk(data, path)
        del node[key]

    return mutate


def append(path: str, value: Any) -> Mutation:
    def mutate(data: Data) -> None:
        node, key = _walk(data, path)
        node[key].append(value)

    return mutate


def zones(**values: Any) -> Mutation:
    """Set top-level zone fields on every zone (zone 2 is a YAML merge of zone 1)."""

    def mutate(data: Data) -> None:
        for zone in data["zones"]:
            zone.update(values)

    return mutate


def zone(index: int, **values: Any) -> Mutation:
    def mutate(data: Data) -> None:
        data["zones"][index].update(values)

    return mutate


def combine(*mutations: Mutation) -> Mutation:
    def mutate(data: Data) -> Catalog | None:
        catalog: Catalog | None = None
        for step in mutations:
            extra = step(data)
            if extra is not None:
                catalog = catalog or {"models": {}}
                catalog["models"].update(extra["models"])
        return catalog

    return mutate


def derived_model(tier: str, name: str, base: str, **fields: Any) -> Mutation:
    """Use a new catalog model `name` (extends `base`, with `fields` overridden) for one tier."""

    def mutate(data: Data) -> Catalog:
        data["catalog"] = "catalog.yaml"
        if tier == "atsw":
            data["aggregation"]["atsw_model"] = name
        else:
            for z in data["zones"]:
                z[f"{tier}_model"] = name
        return {"models": {name: {"extends": base, **fields}}}

    return mutate


def capability(tier: str, name: str, base: str, **caps: bool) -> Mutation:
    return derived_model(tier, name, base, capabilities=caps)


def formula_less_family(uplink_m: int) -> Mutation:
    """Zone 1's RTSWs on a Tomahawk 3 model the user adds: the 7060X6 SKU's buffers, no formula."""

    def mutate(data: Data) -> Catalog:
        data["catalog"] = "catalog.yaml"
        data["zones"][0]["rtsw_model"] = "rtsw-th3"
        data["zones"][0]["cable_length_m"] = {"host_m": 3, "rtsw_ctsw_m": uplink_m}
        return {"asic_families": {"tomahawk3": {"cell_bytes": 254, "buffer_bytes": "100MB",
                                               "buffer_source": "a test"}},
                "models": {"rtsw-th3": {"extends": RTSW_SONIC, "asic_family": "tomahawk3"}}}

    return mutate


def lossy_class(name: str, dscp: list[int], tc: int, queue: int, weight: int) -> dict[str, Any]:
    return {"name": name, "dscp": dscp, "traffic_class": tc, "queue": queue, "weight": weight}


# --- the table -----------------------------------------------------------------------------------
class Case(NamedTuple):
    code: str
    id: str
    mutate: Mutation
    severity: Severity | None  # None: no finding of `code` expected
    # Failing cases: text that the message or subject of one finding contains; a tuple = every
    # part in the same finding (for wording that spans figures, e.g. needed and offered sizes).
    expect: str | tuple[str, ...] = ""
    bug: str | None = None  # a known check bug: the case is a strict xfail ...
    raises: type[BaseException] = AssertionError  # ... failing with this exception


CASES: list[Case] = [
    # NG101: RTSW uplinks (ctsw_count x links x speed) vs NICs (hosts x nics x speed) = 6.4T.
    Case("NG101", "two-links-per-ctsw-blocks", zones(links_per_rtsw_ctsw=2), ERROR,
         "uplinks 3.2T < NICs 6.4T (ratio 1:2)"),
    Case("NG101", "zone2-32-nics-blocks", zone(1, nics_per_host=16), ERROR, "NICs 12.8T"),
    Case("NG101", "five-links-overprovisioned", zones(links_per_rtsw_ctsw=5), None),
    Case("NG101", "blocking-declared-1to2", zones(links_per_rtsw_ctsw=2, rtsw_oversubscription="1:2"), None),
    Case("NG101", "declared-1to2.1-within-5pct",  # |2 / 2.1 - 1| = 4.8%
         zones(links_per_rtsw_ctsw=2, rtsw_oversubscription="1:2.1"), None),
    Case("NG101", "declared-1to2.2-beyond-5pct",  # |2 / 2.2 - 1| = 9.1%
         zones(links_per_rtsw_ctsw=2, rtsw_oversubscription="1:2.2"), ERROR, "RTSW ratio is 1:2"),
    Case("NG101", "declared-1to2-but-non-blocking", zones(rtsw_oversubscription="1:2"), ERROR,
         "RTSW ratio is 1:1 (uplinks 6.4T, NICs 6.4T) but 1:2 is declared"),
    # NG102: per CTSW 4 racks x 4 links x 400G = 6.4T down, uplinks x 400G up; declared 1:8.
    Case("NG102", "four-uplinks-is-1to4", setting("aggregation.uplinks_per_ctsw", 4), ERROR,
         "CTSW oversubscription is 1:4 (6.4T down, 1.6T up per CTSW), declared 1:8"),
    Case("NG102", "five-racks-is-1to10", zones(racks=5), ERROR, "CTSW oversubscription is 1:10"),
    Case("NG102", "declared-1to7-off-by-14pct", setting("aggregation.expected_oversubscription", "1:7"),
         ERROR, "off by +14%"),
    Case("NG102", "four-uplinks-declared-1to4",
         combine(setting("aggregation.uplinks_per_ctsw", 4),
                 setting("aggregation.expected_oversubscription", "1:4")), None),
    Case("NG102", "declared-1to7-tolerance-15pct",
         combine(setting("aggregation.expected_oversubscription", "1:7"),
                 setting("aggregation.oversubscription_tolerance", 0.15)), None),
    Case("NG102", "nothing-declared",
         combine(remove("aggregation.expected_oversubscription"),
                 setting("aggregation.uplinks_per_ctsw", 4)), None),
    # NG103
    Case("NG103", "two-zones-no-aggregation", remove("aggregation"), ERROR,
         "2 zones but no aggregation layer"),
    Case("NG103", "one-zone-no-aggregation", combine(remove("aggregation"), remove("zones.1")), None),
    # NG110: RTSW 64 cages: 2 x 32 NICs at 400G = 32 cages; 4 CTSWs x 16 links = 32 cages -> 64 exactly.
    Case("NG110", "rtsw-uses-all-64-cages", zones(nics_per_host=32, links_per_rtsw_ctsw=16), None),
    Case("NG110", "rtsw-needs-66-cages",  # 4 x 17 = 68 uplinks = 34 cages from cage 32 up
         zones(nics_per_host=32, links_per_rtsw_ctsw=17), ERROR,
         f"RTSW port budget: needs 66 cages (32 host + 34 uplink) but {RTSW_SONIC} has 64"),
    Case("NG110", "ctsw-model-with-16-cages",  # 16 downlinks + 2 uplinks
         derived_model("ctsw", "ctsw-16p", SPINE, port_count=16), ERROR,
         "CTSW port budget: needs 18 cages (16 downlink + 2 uplink) but ctsw-16p has 16"),
    Case("NG110", "ctsw-model-with-18-cages", derived_model("ctsw", "ctsw-18p", SPINE, port_count=18), None),
    Case("NG110", "atsw-zone-ranges-overlap",  # zone 1 on ATSW ports 0-3, zone 2 on 3-6: port 3 twice
         setting("aggregation.ports_per_zone", 3), ERROR,
         "ATSW port budget: two links on Ethernet3/4/1"),
    Case("NG110", "atsw-zone-ranges-adjacent", setting("aggregation.ports_per_zone", 4), None),
    # NG111: 7060X6 cages run 800G (400/200/100G breakout); 7804R3 cages run 400G (200/100G).
    Case("NG111", "ctsw-links-800g", zones(fabric_link_speed="800G"), ERROR,
         f"800G links on z01-ctsw01, z01-ctsw02, z01-ctsw03 and 5 more, but {SPINE} cages run 400G, 200G, 100G"),
    Case("NG111", "atsw-links-800g", setting("aggregation.link_speed", "800G"), ERROR,
         f"atsw model {SPINE}"),
    Case("NG111", "nics-50g", zones(nic_speed="50G"), ERROR, "cages run 800G, 400G, 200G, 100G"),
    Case("NG111", "nics-200g-breakout", zones(nic_speed="200G"), None),
    Case("NG111", "fabric-links-100g-breakout", zones(fabric_link_speed="100G"), None),
    # NG120
    Case("NG120", "three-uplinks-two-atsws", setting("aggregation.uplinks_per_ctsw", 3), WARNING,
         "3 uplinks per CTSW over 2 ATSWs: some ATSWs get 2 links"),
    Case("NG120", "four-uplinks-two-atsws", setting("aggregation.uplinks_per_ctsw", 4), None),
    Case("NG120", "three-uplinks-one-atsw",
         combine(setting("aggregation.uplinks_per_ctsw", 3), setting("aggregation.atsw_count", 1)), None),
    # NG121: each zone needs ctsw_count x ceil(uplinks / atsw_count) = 4 x 1 ports on every ATSW.
    Case("NG121", "three-ports-reserved", setting("aggregation.ports_per_zone", 3), ERROR,
         "zone needs 4 ports on every ATSW but aggregation.ports_per_zone is 3"),
    Case("NG121", "four-ports-reserved", setting("aggregation.ports_per_zone", 4), None),
    Case("NG121", "zone2-five-ctsws-four-reserved",
         combine(setting("aggregation.ports_per_zone", 4), zone(1, ctsw_count=5)), ERROR,
         "zone needs 5 ports on every ATSW but aggregation.ports_per_zone is 4"),
    Case("NG121", "zone2-five-ctsws-derived-reservation", zone(1, ctsw_count=5), None),
    # NG201: per zone 4 racks x /27 = 128 host addresses; 4 x 16 x 2 = 128 RTSW-CTSW p2p addresses.
    Case("NG201", "host-pool-24", setting("addressing.host_ipv4", "10.128.0.0/24"), ERROR,
         ("addressing.host_ipv4 (zone 1)", "rack /27 NIC subnets need 128 addresses", "10.128.0.0/24 offers 16")),
    Case("NG201", "host-pool-21", setting("addressing.host_ipv4", "10.128.0.0/21"), None),
    Case("NG201", "loopback-pool-25",  # /29 slots cut in halves of 4 < 4 RTSWs + unused offset 0
         setting("addressing.loopback_ipv4", "10.0.0.0/25"), ERROR,
         ("RTSW loopbacks need 5 addresses", "10.0.0.0/25 offers 4")),
    Case("NG201", "loopback-pool-24", setting("addressing.loopback_ipv4", "10.0.0.0/24"), None),
    Case("NG201", "max-zones-255", setting("addressing.max_zones", 255), None),  # p2p: 128 of 128
    Case("NG201", "max-zones-255-five-racks",
         combine(setting("addressing.max_zones", 255), zones(racks=5)), ERROR,
         ("RTSW-CTSW /31s need 160 addresses", "10.1.0.0/16 offers 128", "256 slots")),
    Case("NG201", "ipv6-ctsw-loopbacks-exhausted",  # /120: 16 slots of 16, halves of 8 < 9 CTSWs + 1
         combine(setting("addressing.loopback_ipv6", "fd00:0:0:ff::/120"), zones(ctsw_count=9)), ERROR,
         ("addressing.loopback_ipv6 (zone 1)", "CTSW loopbacks need 10 addresses", "offers 8")),
    Case("NG201", "ipv6-atsw-loopbacks-exhausted",  # /120: the ATSW slot holds 16 < 17 ATSWs + 1
         combine(setting("addressing.loopback_ipv6", "fd00:0:0:ff::/120"), setting("aggregation.atsw_count", 17)),
         ERROR, ("addressing.loopback_ipv6 (atsw layer)", "ATSW loopbacks need 18 addresses", "offers 16")),
    # NG202
    Case("NG202", "p2p-over-loopbacks", setting("addressing.p2p_ipv4", "10.0.0.0/16"), ERROR,
         "loopback_ipv4 10.0.0.0/20 overlaps p2p_ipv4 10.0.0.0/16"),
    Case("NG202", "host-ipv6-is-p2p-ipv6", setting("addressing.host_ipv6", "fd00:0:1::/48"), ERROR,
         "p2p_ipv6 fd00:0:1::/48 overlaps host_ipv6 fd00:0:1::/48"),
    Case("NG202", "host-ipv6-own-prefix", setting("addressing.host_ipv6", "fd00:0:2::/48"), None),
    Case("NG202", "p2p-adjacent-to-loopbacks", setting("addressing.p2p_ipv4", "10.0.16.0/20"), None),
    # NG203
    Case("NG203", "frontend-holds-p2p", append("frontend_prefixes", "10.1.0.0/16"), ERROR,
         "backend p2p_ipv4 10.1.0.0/16 overlaps frontend prefix 10.1.0.0/16"),
    Case("NG203", "frontend-holds-ipv6-loopbacks", append("frontend_prefixes", "fd00::/16"), ERROR,
         "backend loopback_ipv6 fd00:0:0:ff::/64 overlaps frontend prefix fd00::/16"),
    Case("NG203", "frontend-adjacent", append("frontend_prefixes", "10.2.0.0/16"), None),
    # NG204: 16 NICs + network + gateway + broadcast = 19 -> /27.
    Case("NG204", "host-prefix-28", zones(host_prefix_length=28), ERROR,
         "/28 per rack cannot hold 16 NICs + gateway"),
    Case("NG204", "host-prefix-27", zones(host_prefix_length=27), None),
    Case("NG204", "host-prefix-27-for-32-nics", zones(host_prefix_length=27, nics_per_host=16), ERROR,
         "/27 per rack cannot hold 32 NICs + gateway"),
    # NG210: zone Z rack R = 4201000000 + Z x stride + R.
    Case("NG210", "zone-stride-3",  # z01-rtsw004 = 3 + 4 = z02-rtsw001 = 6 + 1
         setting("asn.rtsw_zone_stride", 3), ERROR,
         "ASN 4201000007 is used by 2 groups that must differ: z01-rtsw004, z02-rtsw001"),
    Case("NG210", "zone-stride-4", setting("asn.rtsw_zone_stride", 4), None),
    Case("NG210", "atsw-is-zone1-ctsw-asn", setting("asn.atsw", 4200000001), ERROR,
         "atsw layer, zone 1 CTSW layer"),
    Case("NG210", "override-takes-zone2-rack1", setting("asn.overrides", {"z01-rtsw001": 4201020001}), ERROR,
         "z01-rtsw001, z02-rtsw001"),
    Case("NG210", "override-unique", setting("asn.overrides", {"z01-rtsw001": 4201099999}), None),
    # NG211
    Case("NG211", "override-as-trans", setting("asn.overrides", {"z01-rtsw001": 23456}), ERROR,
         "1 device(s) get an ASN outside 1..4294967294 or a reserved one (23456, 65535), e.g. z01-rtsw001 = 23456"),
    Case("NG211", "override-65535-reserved", setting("asn.overrides", {"z01-rtsw001": 65535}), ERROR,
         "z01-rtsw001 = 65535"),
    Case("NG211", "override-zero", setting("asn.overrides", {"z02-ctsw01": 0}), ERROR, "z02-ctsw01 = 0"),
    Case("NG211", "override-4294967295", setting("asn.overrides", {"z01-rtsw001": 4294967295}), ERROR,
         "z01-rtsw001 = 4294967295"),
    Case("NG211", "override-4294967294", setting("asn.overrides", {"z01-rtsw001": 4294967294}), None),
    Case("NG211", "rtsw-base-overflows", setting("asn.rtsw_base", 4294967294), ERROR,
         "8 device(s) get an ASN outside"),
    Case("NG211", "ctsw-asn-64511-public",  # zone 1: 64511 (public), zone 2: 64512 (private)
         setting("asn.ctsw_base", 64510), WARNING, "4 device(s) use a public ASN, e.g. z01-ctsw01 = 64511"),
    Case("NG211", "ctsw-asn-64512-private", setting("asn.ctsw_base", 64511), None),
    # NG212
    Case("NG212", "override-rack-5-of-4", setting("asn.overrides", {"z01-rtsw005": 4201099999}), ERROR,
         "asn.overrides.z01-rtsw005"),
    Case("NG212", "override-third-atsw", setting("asn.overrides", {"atsw03": 4201099999}), ERROR,
         "override for 'atsw03', which is not a device of this fabric"),
    Case("NG212", "override-last-rack", setting("asn.overrides", {"z02-rtsw004": 4201099999}), None),
    Case("NG212", "override-second-atsw", setting("asn.overrides", {"atsw02": 4201099999}), None),
    # NG301: roce tc/queue 3 (PFC priority 3), cts tc/queue 6, best-effort tc/queue 0.
    Case("NG301", "lossy-on-lossless-tc", setting("qos.classes.0.traffic_class", 3), ERROR,
         "lossless class 'roce' and class 'best-effort' share traffic class 3"),
    Case("NG301", "lossy-on-cts-queue", setting("qos.classes.0.queue", 6), ERROR,
         "CTS class 'cts' and class 'best-effort' share queue 6"),
    Case("NG301", "cts-on-pfc-priority",
         combine(setting("qos.lossless.pfc_priority", 4), setting("qos.cts.traffic_class", 4)), ERROR,
         "CTS class 'cts' uses traffic class 4, which is the PFC priority"),
    Case("NG301", "lossy-class-on-pfc-priority",  # PFC priority 4 differs from the lossless TC 3
         combine(setting("qos.lossless.pfc_priority", 4), setting("qos.classes.0.traffic_class", 4)), ERROR,
         "class 'best-effort' uses traffic class 4, which is the PFC priority"),
    Case("NG301", "cts-moved-to-5",
         combine(setting("qos.cts.traffic_class", 5), setting("qos.cts.queue", 5)), None),
    Case("NG301", "second-lossy-class",
         combine(setting("qos.classes.0.weight", 40),
                 append("qos.classes", lossy_class("bulk", [10], 1, 1, 10))), None),
    # NG302
    Case("NG302", "best-effort-takes-26", setting("qos.classes.0.dscp", [0, 26]), ERROR,
         "DSCP 26 is in lossless class 'roce' and in class 'best-effort'"),
    Case("NG302", "best-effort-takes-48", setting("qos.classes.0.dscp", [0, 48]), ERROR,
         "DSCP 48 is in CTS class 'cts' and in class 'best-effort'"),
    Case("NG302", "repeated-within-class", setting("qos.classes.0.dscp", [0, 0]), None),
    Case("NG302", "best-effort-adds-10", setting("qos.classes.0.dscp", [0, 10]), None),
    # NG303: every built-in model has 8 queues (0-7); the CTS class uses queue 6.
    Case("NG303", "queue-8", setting("qos.classes.0.queue", 8), ERROR,
         f"queue 8 is used but {RTSW_SONIC} has queues 0-7"),
    Case("NG303", "queue-7", setting("qos.classes.0.queue", 7), None),
    Case("NG303", "rtsw-model-4-queues", derived_model("rtsw", "rtsw-4q", RTSW_SONIC, queues=4), ERROR,
         "queue 6 is used but rtsw-4q has queues 0-3"),
    Case("NG303", "rtsw-model-7-queues", derived_model("rtsw", "rtsw-7q", RTSW_SONIC, queues=7), None),
    # NG304: roce 50 + best-effort 50.
    Case("NG304", "weights-90", setting("qos.classes.0.weight", 40), ERROR,
         "DWRR weights add up to 90 (roce 50, best-effort 40)"),
    Case("NG304", "weights-110", append("qos.classes", lossy_class("bulk", [10], 1, 1, 10)), ERROR,
         "DWRR weights add up to 110 (roce 50, best-effort 50, bulk 10)"),
    Case("NG304", "weights-60-40",
         combine(setting("qos.lossless.weight", 60), setting("qos.classes.0.weight", 40)), None),
    # NG305
    Case("NG305", "rtsw-without-pfc", capability("rtsw", "rtsw-nopfc", RTSW_SONIC, pfc=False), ERROR,
         "rtsw-nopfc cannot run a lossless (PFC) priority"),
    Case("NG305", "rtsw-zero-lossless-priorities",
         derived_model("rtsw", "rtsw-0pfc", RTSW_SONIC, max_lossless_priorities=0), ERROR,
         "rtsw-0pfc cannot run a lossless (PFC) priority"),
    Case("NG305", "rtsw-one-lossless-priority",
         derived_model("rtsw", "rtsw-1pfc", RTSW_SONIC, max_lossless_priorities=1), None),
    # NG306: detection 200, restoration 200, polling 200.
    Case("NG306", "polling-300", setting("qos.pfc_watchdog.polling_interval_ms", 300), ERROR,
         "polling_interval_ms 300 > detection_time_ms 200"),
    Case("NG306", "polling-above-restoration-only",
         combine(setting("qos.pfc_watchdog.polling_interval_ms", 300),
                 setting("qos.pfc_watchdog.detection_time_ms", 500)), ERROR,
         "polling_interval_ms 300 > restoration_time_ms 200"),
    Case("NG306", "polling-equals-timers",
         combine(setting("qos.pfc_watchdog.polling_interval_ms", 300),
                 setting("qos.pfc_watchdog.detection_time_ms", 300),
                 setting("qos.pfc_watchdog.restoration_time_ms", 300)), None),
    Case("NG306", "polling-300-watchdog-off",
         combine(setting("qos.pfc_watchdog.polling_interval_ms", 300),
                 setting("qos.pfc_watchdog.enabled", False)), None),
    # NG307
    Case("NG307", "default-lossless", setting("qos.default_traffic_class", 3), ERROR,
         "default traffic class 3 is the lossless class"),
    Case("NG307", "default-cts", setting("qos.default_traffic_class", 6), ERROR,
         "default traffic class 6 is the strict-priority CTS class"),
    Case("NG307", "default-in-no-class", setting("qos.default_traffic_class", 5), ERROR,
         "default traffic class 5 belongs to no class"),
    Case("NG307", "default-second-lossy-class",
         combine(setting("qos.classes.0.weight", 40),
                 append("qos.classes", lossy_class("bulk", [10], 1, 1, 10)),
                 setting("qos.default_traffic_class", 1)), None),
    # NG308: mtu 9100, roce_mtu 4096.
    Case("NG308", "roce-mtu-9216", setting("qos.lossless.roce_mtu", 9216), ERROR,
         "roce_mtu 9216 exceeds the fabric mtu 9100"),
    Case("NG308", "fabric-mtu-4000", setting("mtu", 4000), ERROR, "roce_mtu 4096 exceeds the fabric mtu 4000"),
    Case("NG308", "roce-mtu-equals-mtu", setting("qos.lossless.roce_mtu", 9100), None),
    # NG401: ECN min 150KB, max 1.5MB, disabled. Zone 1's SONiC RTSWs always carry the WRED profile.
    Case("NG401", "equal-thresholds-ecn-off", setting("qos.ecn.min_threshold", "1.5MB"), ERROR,
         "min_threshold 1500000B is not below max_threshold 1500000B (ECN is off, but SONiC switches keep"),
    Case("NG401", "equal-thresholds-ecn-off-all-eos",
         combine(setting("qos.ecn.min_threshold", "1.5MB"), zone(0, rtsw_model=RTSW_EOS)), WARNING,
         "ECN is off and no switch renders the profile"),
    Case("NG401", "inverted-thresholds-ecn-on",
         combine(setting("qos.ecn.enabled", True), setting("qos.ecn.min_threshold", "2MB")), ERROR,
         "is not below max_threshold"),
    Case("NG401", "ordered-thresholds-ecn-on",
         combine(setting("qos.ecn.enabled", True), setting("qos.ecn.min_threshold", "1MB")), None),
    # NG402: an RTSW (the vendor's Arista-7060X6-64PE-O128S2 pools) shares 166115492 - 29423360
    # (shared headroom pool) - 32 x 18796 (reserved lossless PGs) = 136090660 B; one lossless PG
    # settles at alpha/(1+alpha) of it (alpha = 2^dynamic_th): 68.05MB at dynamic_th 0, 0.53MB at
    # -8, 27.22MB at -2.
    Case("NG402", "max-170MB-above-rtsw-buffer",
         combine(setting("qos.ecn.enabled", True), setting("qos.ecn.max_threshold", "170MB")), ERROR,
         f"a lossless queue can hold on {RTSW_SONIC}: it would never mark"),
    Case("NG402", "max-100MB-above-one-queue-share",
         combine(setting("qos.ecn.enabled", True), setting("qos.ecn.max_threshold", "100MB")), ERROR,
         "exceeds the 68.05MB a lossless queue can hold"),
    Case("NG402", "max-60MB-fits-one-queue-share",
         combine(setting("qos.ecn.enabled", True), setting("qos.ecn.max_threshold", "60MB")), None),
    Case("NG402", "alpha-1-256-too-small-for-1.5MB",
         combine(setting("qos.ecn.enabled", True), setting("buffers.rtsw.dynamic_th", -8)), ERROR,
         "exceeds the 0.53MB a lossless queue can hold"),
    Case("NG402", "alpha-quarter-fits-1.5MB",
         combine(setting("qos.ecn.enabled", True), setting("buffers.rtsw.dynamic_th", -2)), None),
    Case("NG402", "max-170MB-ecn-off", setting("qos.ecn.max_threshold", "170MB"), None),
    Case("NG402", "static-1MB-per-port",
         combine(setting("qos.ecn.enabled", True), zone(1, rtsw_model=RTSW_SONIC),
                 setting("buffers.rtsw", {"mode": "static_per_port", "per_port": "1MB"})), ERROR,
         "ECN max_threshold 1500000B exceeds the 1.00MB a lossless queue can hold"),
    Case("NG402", "static-2MB-per-port",
         combine(setting("qos.ecn.enabled", True), zone(1, rtsw_model=RTSW_SONIC),
                 setting("buffers.rtsw", {"mode": "static_per_port", "per_port": "2MB"})), None),
    # NG403
    Case("NG403", "rtsw-without-ecn",
         combine(setting("qos.ecn.enabled", True), capability("rtsw", "rtsw-noecn", RTSW_SONIC, ecn=False)),
         ERROR, "ECN is enabled but rtsw-noecn cannot mark ECN"),
    Case("NG403", "rtsw-without-ecn-ecn-off", capability("rtsw", "rtsw-noecn", RTSW_SONIC, ecn=False), None),
    # NG410: the RTSW's ASIC has 173268640 B (FBOSS Tomahawk5Asic.h); the SKU's ingress pool
    # 166115492 B includes its 29423360 B shared headroom pool; 32 lossless PGs reserve 601472 B and
    # may each draw 612140 B of headroom (19588480 B in all, so every PG is covered).
    Case("NG410", "vendor-pools-fit", lambda data: None, None),
    Case("NG410", "ingress-pool-above-the-asic",  # 173000000 + 601472 > 173268640
         derived_model("rtsw", "rtsw-big-pool", RTSW_SONIC, sonic={"buffers": {"ingress_pool": {"size": "173MB"}}}),
         ERROR, "ingress pool 173.00MB (shared headroom pool 29.42MB included) + reserved PG sizes 0.60MB ="
                " 173.60MB exceeds the ASIC's 173.27MB"),
    Case("NG410", "egress-reserve-above-the-asic",  # 166115492 + 32 x 7 x 40000 = 175075492
         derived_model("rtsw", "rtsw-big-reserve", RTSW_SONIC,
                       sonic={"buffers": {"egress_lossy": {"size": "40000B"}}}),
         ERROR, "egress pool 166.12MB + reserved queue sizes 8.96MB = 175.08MB exceeds the ASIC's 173.27MB"),
    Case("NG410", "shared-headroom-pool-oversubscribed",  # 19588480 B of xoff, 10000000 // 612140 = 16
         derived_model("rtsw", "rtsw-small-shp", RTSW_SONIC,
                       sonic={"buffers": {"ingress_pool": {"xoff": "10MB"}}}),
         WARNING, "32 lossless PGs may draw up to 19.59MB of headroom from a 10.00MB shared headroom pool (1.96:1):"
                  " only 16 of them can fill their headroom at once"),
    Case("NG410", "static-5MB-per-port",  # 32 x 5MB = 160MB > 136090660 B
         combine(zone(1, rtsw_model=RTSW_SONIC),
                 setting("buffers.rtsw", {"mode": "static_per_port", "per_port": "5MB"})),
         ERROR, "static partitions 160.00MB for 32 ports exceed the 136.09MB shared pool"),
    Case("NG410", "static-4MB-per-port",  # 128MB
         combine(zone(1, rtsw_model=RTSW_SONIC),
                 setting("buffers.rtsw", {"mode": "static_per_port", "per_port": "4MB"})),
         None),
    # NG411: the 7060X6 has static per-port buffers, the 7800R3 has not.
    Case("NG411", "ctsw-static", setting("buffers.ctsw.mode", "static_per_port"), ERROR,
         f"buffers.ctsw is static_per_port but {SPINE} (EOS 4.34) has no static per-port buffer partition"),
    Case("NG411", "ctsw-policy-defaults-to-static", remove("buffers.ctsw"), ERROR,
         "buffers.ctsw is static_per_port"),
    Case("NG411", "atsw-static", setting("buffers.atsw.mode", "static_per_port"), ERROR,
         f"atsw model {SPINE}"),
    # The SONiC 7060X6 renders static_th profiles; netgen cannot yet render Trident MMU profiles on EOS.
    Case("NG411", "rtsw-static-eos-zone", setting("buffers.rtsw.mode", "static_per_port"), ERROR,
         "rtsw model arista-7060x6-64pe-eos"),
    Case("NG411", "rtsw-static-sonic-only",
         combine(setting("buffers.rtsw.mode", "static_per_port"), zone(1, rtsw_model=RTSW_SONIC)), None),
    Case("NG411", "ctsw-static-capable-model",
         combine(setting("buffers.ctsw.mode", "static_per_port"),
                 capability("ctsw", "ctsw-static", SPINE, static_per_port_buffers=True)), None),
    # NG412: the SKU table stops at 150 m; a family without a formula cannot go past it.
    Case("NG412", "cables-covered", lambda data: None, None),
    Case("NG412", "beyond-the-table-with-a-formula", zone(0, cable_length_m={"host_m": 3, "rtsw_ctsw_m": 300}),
         None),
    Case("NG412", "beyond-the-table-without-a-formula", formula_less_family(300), ERROR,
         "no PFC headroom is known for 400G over 300 m on rtsw-th3"),
    Case("NG412", "within-the-table-without-a-formula", formula_less_family(150), None),
    # NG507: the catalog's unverified items, per tier and model.
    Case("NG507", "spine-watchdog-and-headroom", lambda data: None, WARNING,
         "(1) PFC watchdog on Jericho2C+: no Arista source confirms it"),
    Case("NG507", "rtsw-eos-speed", lambda data: None, WARNING, "speed 400g-4 for 2 x 400G on an 800G cage"),
    Case("NG507", "all-verified-by-the-operator",
         combine(derived_model("rtsw", "rtsw-checked", RTSW_EOS, unverified=[]),
                 derived_model("ctsw", "ctsw-checked", SPINE, unverified=[]),
                 derived_model("atsw", "atsw-checked", SPINE, unverified=[])), None),
    # NG501: both RTSW models lack bth_dest_qp_hash, the 7800R3 has it.
    Case("NG501", "rtsw-fallback-five-tuple", lambda data: None, WARNING,
         "it falls back to the 5-tuple hash"),
    Case("NG501", "rtsw-no-fallback", setting("hashing.fallback", "none"), ERROR,
         f"{RTSW_EOS} (EOS 4.34) cannot hash ECMP on the RoCE BTH destination QP"),
    Case("NG501", "five-tuple-mode",
         combine(setting("hashing.mode", "five_tuple"), setting("hashing.fallback", "none")), None),
    Case("NG501", "rtsw-capable-model",
         combine(setting("hashing.fallback", "none"),
                 capability("rtsw", "rtsw-qp", RTSW_SONIC, bth_dest_qp_hash=True)), None),
    # NG502: the 7060X6 has a PFC watchdog, the 7800R3 has none confirmed.
    Case("NG502", "ctsw-watchdog", setting("qos.pfc_watchdog.tiers", ["rtsw", "ctsw"]), ERROR,
         f"PFC watchdog is enabled for ctsw but {SPINE}"),
    Case("NG502", "default-tiers", remove("qos.pfc_watchdog.tiers"), ERROR,
         "PFC watchdog is enabled for atsw"),
    Case("NG502", "ctsw-watchdog-disabled",
         combine(setting("qos.pfc_watchdog.tiers", ["rtsw", "ctsw"]),
                 setting("qos.pfc_watchdog.enabled", False)), None),
    Case("NG502", "ctsw-capable-model",
         combine(setting("qos.pfc_watchdog.tiers", ["rtsw", "ctsw"]),
                 capability("ctsw", "ctsw-wd", SPINE, pfc_watchdog=True)), None),
    # NG503: the built-in SONiC 7060X6 entry is the 2x400G SKU (Arista-7060X6-64PE-O128S2).
    Case("NG503", "sonic-rtsw-200g-nics", zone(0, nic_speed="200G"), ERROR,
         ("200G links on z01-rtsw001", "Arista-7060X6-64PE-O128S2", "at 400G")),
    Case("NG503", "eos-rtsw-200g-nics-has-no-sku", zone(1, nic_speed="200G"), None),
    Case("NG503", "sonic-rtsw-400g", setting("zones.0.nic_speed", "400G"), None),
    # NG504: SONiC's MAP_PFC_PRIORITY_TO_QUEUE takes queues 0-7 and TC_TO_QUEUE_MAP 0-9, whatever the
    # catalog's queue count; every RTSW here becomes a 16-queue SONiC model.
    Case("NG504", "sonic-lossless-queue-8",
         combine(derived_model("rtsw", "rtsw-q16", RTSW_SONIC, queues=16), setting("qos.lossless.queue", 8)),
         ERROR, "lossless queue 8 cannot be a PFC queue on SONiC"),
    Case("NG504", "sonic-class-queue-10",
         combine(derived_model("rtsw", "rtsw-q16", RTSW_SONIC, queues=16), setting("qos.classes.0.queue", 10)),
         ERROR, "class 'best-effort' uses queue 10"),
    Case("NG504", "sonic-queues-7-and-9",
         combine(derived_model("rtsw", "rtsw-q16", RTSW_SONIC, queues=16), setting("qos.lossless.queue", 7),
                 setting("qos.classes.0.queue", 9)), None),
    # NG505: the EOS RTSWs of zone 2 run the watchdog (tiers: [rtsw]); only `drop` is a confirmed EOS action.
    Case("NG505", "eos-watchdog-alert", setting("qos.pfc_watchdog.action", "alert"), ERROR,
         "PFC watchdog action 'alert' on EOS"),
    Case("NG505", "eos-watchdog-alert-off-tier",
         combine(setting("qos.pfc_watchdog.action", "alert"), setting("qos.pfc_watchdog.tiers", ["ctsw"])), None),
    Case("NG505", "eos-watchdog-drop", setting("qos.pfc_watchdog.action", "drop"), None),
    # NG506: EOS watchdog timeout / recovery in 10 ms steps (the zone-2 EOS RTSWs run the watchdog)
    Case("NG506", "eos-watchdog-105ms", setting("qos.pfc_watchdog.detection_time_ms", 105), ERROR,
         "qos.pfc_watchdog.detection_time_ms 105 ms on EOS"),
    Case("NG506", "eos-watchdog-recovery-255ms", setting("qos.pfc_watchdog.restoration_time_ms", 255), ERROR,
         "restoration_time_ms 255 ms"),
    Case("NG506", "eos-watchdog-off-tier",
         combine(setting("qos.pfc_watchdog.detection_time_ms", 105), setting("qos.pfc_watchdog.tiers", ["ctsw"])),
         None),
    Case("NG506", "eos-watchdog-110ms", setting("qos.pfc_watchdog.detection_time_ms", 110), None),
    # NG205: management addresses. The small example: 192.168.0.0/20 cut into 16 /24 slots; atsw01 is the
    # slot-0 upper half's first address (192.168.0.129), z01-rtsw001 192.168.1.1, z01-ctsw01 192.168.1.129.
    Case("NG205", "gateway-is-atsw01", setting("services.management.gateway", "192.168.0.129"), ERROR,
         ("atsw01 would get 192.168.0.129, the gateway",)),
    Case("NG205", "pin-collides", setting("services.management.devices", {"z01-rtsw002": "192.168.1.1"}), ERROR,
         ("z01-rtsw001", "z01-rtsw002", "would all get 192.168.1.1")),
    Case("NG205", "pin-outside", setting("services.management.devices", {"z01-rtsw002": "10.9.9.9"}), ERROR,
         "z01-rtsw002 would get 10.9.9.9, outside 192.168.0.0/20"),
    Case("NG205", "pin-unknown", setting("services.management.devices", {"z09-rtsw001": "192.168.9.9"}), ERROR,
         "not switches of this fabric: z09-rtsw001"),
    Case("NG205", "prefix-too-small", setting("services.management.prefix", "192.168.0.0/26"), ERROR,
         "would all get"),
    Case("NG205", "pin-elsewhere", setting("services.management.devices", {"z01-rtsw002": "192.168.15.200"}), None),
    Case("NG205", "no-management", remove("services"), None),
    # NG508: SONiC's management VRF is always mgmt (zone 1 runs SONiC RTSWs)
    Case("NG508", "sonic-vrf-MGMT", setting("services.management.vrf", "MGMT"), ERROR,
         "SONiC's management VRF is always 'mgmt'"),
    Case("NG508", "eos-only-vrf-MGMT",
         combine(setting("services.management.vrf", "MGMT"), zone(0, rtsw_model="arista-7060x6-64pe-eos")), None),
    # NG509: local users are rendered for EOS only (zone 1's RTSWs run SONiC)
    Case("NG509", "users-with-sonic", lambda data: None, WARNING,
         ("1 local user(s) are rendered for EOS only", "z01-rtsw001")),
    Case("NG509", "users-eos-only", zone(0, rtsw_model="arista-7060x6-64pe-eos"), None),
    Case("NG509", "no-users", remove("services.users"), None),
    # NG601-NG603: custom_config (the small example's blocks: lanz everywhere, snmp-location zone 1 and
    # z01-rtsw001, frr-log-precision on RTSWs, errdisable-recovery zone 2 and z02-rtsw001)
    Case("NG601", "unknown-device", append("custom_config", {"name": "x", "devices": ["z01-rtsw009"],
                                                             "eos_cli": "queue-monitor length\n"}), ERROR,
         "names switches the fabric does not have: z01-rtsw009"),
    Case("NG601", "unknown-zone", append("custom_config", {"name": "x", "zones": [3],
                                                           "eos_cli": "queue-monitor length\n"}), ERROR,
         "names zones the fabric does not have: 3"),
    Case("NG601", "example", lambda data: None, None),
    Case("NG602", "frr-on-eos-only", append("custom_config", {"name": "x", "zones": [2], "frr": "log syslog\n"}),
         WARNING, "its frr reaches no switch: none of the"),
    Case("NG602", "example", lambda data: None, None),
    Case("NG603", "same-name-same-layer", append("custom_config", {"name": "errdisable-recovery", "zones": [1, 2],
                                                                   "eos_cli": "errdisable recovery interval 60\n"}),
         ERROR, "two custom_config blocks named 'errdisable-recovery' of the same layer (zone)"),
    Case("NG601", "override-unknown-device", append("services.overrides", {"devices": ["atsw09"],
                                                                         "lldp": {"hello_s": 10}}), ERROR,
         "override names switches the fabric does not have: atsw09"),
    # zone 2: 4 RTSWs + 4 CTSWs; tiers + zones is still the zone layer (the narrowest selector given)
    Case("NG603", "overrides-same-layer",
         append("services.overrides", {"tiers": ["rtsw", "ctsw"], "zones": [2, 1], "ntp": {"servers": ["192.0.2.9"]}}),
         ERROR, ("services.overrides[0].ntp and services.overrides[4].ntp (both of layer zone) give ntp to",
                 "8 switch(es)")),
    Case("NG603", "overrides-narrower", append("services.overrides", {"devices": ["z02-rtsw002"],
                                                                     "ntp": {"servers": ["192.0.2.9"]}}), None),
    Case("NG603", "same-name-narrower", append("custom_config", {"name": "lanz", "tiers": ["rtsw"],
                                                                 "eos_cli": "queue-monitor length\n"}), None),
    # NG701-NG707: the hosts (`netgen hosts`) against the switches. The small example's hosts follow the
    # switches (no `hosts:` section): NCCL_IB_TC 104 = DSCP 26, FIFO 184 = DSCP 46, ECN off, MTU 9000.
    Case("NG701", "oci-tc-41-is-lossy-here", setting("hosts", {"nccl": {"traffic_class": 41}}), ERROR,
         ("NCCL_IB_TC 41 is DSCP 10", "not in the lossless class")),
    Case("NG701", "rtsw-without-pfc", capability("rtsw", "rtsw-nopfc", RTSW_EOS, pfc=False), ERROR,
         "rtsw-nopfc does not run PFC"),
    Case("NG701", "pinned-106-is-dscp-26", setting("hosts", {"nccl": {"traffic_class": 104}}), None),
    Case("NG702", "fifo-on-the-lossless-class", setting("hosts", {"nccl": {"fifo_traffic_class": 104}}), ERROR,
         ("NCCL_IB_FIFO_TC 104 is DSCP 26", "in the lossless class")),
    Case("NG702", "fifo-with-ecn-bits", setting("hosts", {"nccl": {"fifo_traffic_class": 186}}), WARNING,
         "sets the ECN bits"),
    Case("NG702", "fifo-on-cnp-dscp-48", setting("hosts", {"nccl": {"fifo_traffic_class": 192}}), None),
    Case("NG703", "dcqcn-without-switch-ecn", setting("hosts", {"dcqcn": True}), ERROR,
         "the NICs run DCQCN but no switch marks ECN"),
    Case("NG703", "switch-ecn-without-dcqcn", combine(setting("qos.ecn", {"enabled": True}),
                                                      setting("hosts", {"dcqcn": False})), ERROR,
         "the switches mark ECN but the NICs never react"),
    Case("NG703", "ecn-on-a-model-that-cannot-mark", combine(setting("qos.ecn", {"enabled": True}),
                                                             capability("rtsw", "rtsw-noecn", RTSW_EOS, ecn=False)),
         ERROR, "rtsw-noecn cannot mark ECN"),
    Case("NG703", "ecn-on-both-sides", setting("qos.ecn", {"enabled": True}), None),
    Case("NG704", "qps-over-five-tuple", setting("hashing.mode", "five_tuple"), WARNING,
         "hosts open 16 QPs per connection but the switches hash on the 5-tuple only"),
    Case("NG704", "one-qp-over-five-tuple", combine(setting("hashing.mode", "five_tuple"),
                                                    setting("hosts", {"nccl": {"qps_per_connection": 1}})), None),
    Case("NG705", "host-mtu-above-fabric", setting("hosts", {"mtu": 9216}), ERROR,
         "host MTU 9216 is above the switches' port MTU 9100"),
    Case("NG705", "host-mtu-below-roce", setting("hosts", {"mtu": 4096}), ERROR,
         "cannot carry a RoCE packet of 4096 bytes"),
    Case("NG705", "two-hcas-for-eight-rails", setting("hosts", {"hca_names": ["mlx5_0", "mlx5_1"]}), ERROR,
         ("up to 8 NICs", "lists 2")),
    # NG706: RTSWs that hash on the QP spread 16 NIC flows over 16 uplinks; 16 QPs leave P(1.5x) = 0.44.
    # The small example's RTSW models hash on the 5-tuple (NG501), where the what-if's premise fails.
    Case("NG706", "sixteen-qps-over-sixteen-uplinks", capability("rtsw", "rtsw-qp", RTSW_EOS, bth_dest_qp_hash=True),
         WARNING, ("with 16 QPs per connection, 16 flows over 16 equal-cost links", "33 QPs keep it under 5%")),
    Case("NG706", "forty-qps", combine(capability("rtsw", "rtsw-qp", RTSW_EOS, bth_dest_qp_hash=True),
                                       setting("hashing.qps_per_connection", 40)), None),
    Case("NG706", "five-tuple-rtsws-are-ng501s", setting("hashing.qps_per_connection", 16), None),
    Case("NG705", "eight-named-hcas", setting("hosts", {"hca_names": [f"mlx5_{i}" for i in range(8)]}), None),
    # 16 rails of 63-character names: NCCL_IB_HCA is 1,056 characters, nccl.conf's reader keeps 1,023
    Case("NG705", "hca-list-longer-than-nccl-reads", combine(
        setting("zones.0.nics_per_host", 16), setting("zones.1.nics_per_host", 16),
        setting("hosts", {"hca_names": [f"{'r' * 61}{i:02d}" for i in range(16)]})), ERROR,
         "NCCL_IB_HCA would be 1056 characters"),
    # NG707: Thor2's bnxt_re roce_dscp follows a pinned NCCL_IB_TC; DSCP 10 is lossy (TC 0) on the switches
    Case("NG707", "thor2-roce-dscp-pinned-off-the-lossless-class",
         setting("hosts", {"nic": "thor2", "nccl": {"traffic_class": 40}}), ERROR,
         ("DSCP 10 is on priority 3 at the NIC", "on priority 0 at the switches")),
    Case("NG707", "thor2-follows-the-switches", setting("hosts", {"nic": "thor2"}), None),
    # NG801-NG803: the InfiniBand alternative (the small example: 8 hosts a zone, 64-port NDR switches)
    Case("NG801", "forty-hosts-per-leaf", setting("infiniband.hosts_per_leaf", 40), ERROR,
         ("hosts_per_leaf 40 needs 80 ports", "at most 32")),
    Case("NG801", "spines-per-group-not-a-divisor", setting("infiniband.spines_per_group", 3), ERROR,
         "set spines_per_group to a divisor of 8"),
    Case("NG801", "links-faster-than-the-switch", setting("infiniband.link_speed", "800G"), ERROR,
         "whose ports run 400G"),
    Case("NG801", "the-small-example-fits", setting("infiniband.hosts_per_leaf", 8), None),
    Case("NG801", "three-rails-a-group-of-eight", setting("infiniband.rails_per_group", 3), ERROR,
         "rails_per_group 3 does not divide its 8 rails"),
    Case("NG801", "one-rail-a-group", setting("infiniband.rails_per_group", 1), None),
    # one core ratio for both zones and a zone of half the hosts: its group has 4 core uplinks for 2 x 4
    Case("NG802", "a-smaller-zone-misses-cores", combine(
        setting("infiniband.core_oversubscription", "1:8"), zone(1, racks=2)), WARNING,
         "has 4 core uplinks for 2 cores x 4"),
    Case("NG802", "alike-zones-reach-every-core", setting("infiniband.core_oversubscription", "1:8"), None),
    Case("NG803", "zone-2-in-no-tenant",
         setting("infiniband.partitions", [{"name": "tenant-a", "pkey": 0x10, "zones": [1]}]), WARNING,
         "zone(s) 2 are in no tenant partition"),
    Case("NG803", "every-zone-a-tenant", setting("infiniband.partitions", [
        {"name": "tenant-a", "pkey": 0x10, "zones": [1]}, {"name": "tenant-b", "pkey": 0x20, "zones": [2]}]), None),
]


def _param(case: Case) -> Any:
    outcome = "pass" if case.severity is None else case.severity.value
    marks = [pytest.mark.xfail(strict=True, raises=case.raises, reason=f"BUG: {case.bug}")] if case.bug else []
    return pytest.param(case, id=f"{case.code}-{case.id}-{outcome}", marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_design_check(case: Case, small_data: Data, write_fabric: Callable[..., Any]) -> None:
    catalog = case.mutate(small_data)
    path = write_fabric(small_data, catalog=catalog)
    found = [f for f in findings_of(path) if f.code == case.code]
    shown = "\n".join(f"  {f.severity.value} {f.subject}: {f.message}" for f in found)
    if case.severity is None:
        assert not found, f"expected no {case.code} finding, got:\n{shown}"
        return
    assert found, f"expected a {case.code} {case.severity.value}, got none"
    assert {f.severity for f in found} == {case.severity}, shown
    parts = (case.expect,) if isinstance(case.expect, str) else case.expect
    assert any(all(part in f.message or part in f.subject for part in parts) for f in found), (
        f"no {case.code} finding mentions {case.expect!r}:\n{shown}"
    )


def test_every_check_has_a_failing_and_a_passing_case() -> None:
    trusted = [case for case in CASES if case.bug is None]  # an xfail case proves nothing
    failing = {case.code for case in trusted if case.severity is not None}
    passing = {case.code for case in trusted if case.severity is None}
    assert sorted(set(REGISTRY) - failing) == [], "checks without a failing case"
    assert sorted(set(REGISTRY) - passing) == [], "checks without a passing case"
    assert sorted({case.code for case in CASES} - set(REGISTRY)) == [], "cases for unknown codes"
    ids = [f"{case.code}-{case.id}" for case in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"


def test_small_example_has_only_its_declared_warnings() -> None:
    # hashing: bth_dest_qp with fallback five_tuple; both RTSW models lack bth_dest_qp_hash, the
    # 7804R3 spines have it: one NG501 warning per RTSW model. The catalog's unverified items: one
    # NG507 per tier and model that has some (the EOS RTSW, CTSW and ATSW; the SONiC RTSW has none).
    # services.users reach zone 1's SONiC RTSWs, whose LOCAL_USER table is not rendered: one NG509.
    findings = findings_of(SMALL)
    assert [f for f in findings if f.severity is Severity.ERROR] == []
    assert sorted((f.code, f.subject) for f in findings) == [
        ("NG501", f"rtsw model {RTSW_EOS}"), ("NG501", f"rtsw model {RTSW_SONIC}"),
        ("NG507", f"atsw model {SPINE}"), ("NG507", f"ctsw model {SPINE}"), ("NG507", f"rtsw model {RTSW_EOS}"),
        ("NG509", "services.users"),
    ]
    assert {f.severity for f in findings} == {WARNING}


def test_small_example_round_trips_through_write_fabric(small_data: Data, write_fabric: Callable[..., Any]) -> None:
    # The table mutates the dict form; unmodified, it must give exactly the findings of the file.
    assert findings_of(write_fabric(small_data)) == findings_of(SMALL)
