"""Risk flags of a rendered-config diff: the kinds of change a reviewer must not miss (MTU, AS
numbers, BGP timers and policy, QoS maps, PFC, buffers, ECN, hashing, BGP sessions removed), found
in what a change takes away. Each edit's shape (edits.py) raises its flags once, however many
ports and devices it reaches; the report counts the devices, tiers and places each flag reaches."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from netgen.diff.edits import FIELDS, Shape


@dataclass(frozen=True, slots=True)
class Risk:
    """A kind of change a reviewer must not miss: one that reaches every session, every lossless
    queue or every flow's path when it lands on many switches. Found by what it changes of what was
    there: a CONFIG_DB field of an existing key (a table's every field when its set is empty), or a
    whole key removed; a line of frr.conf or an EOS config matching `lines` that goes (a changed
    value is a line that goes and one that comes). What is only added (a new rack's ports and
    sessions, a spare port put into service) is new, not a change, and raises nothing."""

    flag: str  # the key in each device's `risks`
    says: str  # what the flag tells the reviewer
    tables: dict[str, frozenset[str]] = field(default_factory=dict)
    lines: re.Pattern[str] | None = None


_ALL: frozenset[str] = frozenset()  # every field of the table
_QOS_MAPS = frozenset({"dscp_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map", "pfc_to_pg_map"})
RISKS = (
    Risk("mtu", "MTU", {"PORT": frozenset({"mtu"}), "PORTCHANNEL": frozenset({"mtu"}), "VLAN": frozenset({"mtu"})},
         re.compile(r"^\s*(ip |ipv6 )?mtu\b")),
    Risk("asn", "BGP AS numbers", {"DEVICE_METADATA": frozenset({"bgp_asn"}),
                                   "BGP_NEIGHBOR": frozenset({"asn", "local_asn"})},
         re.compile(r"^\s*router bgp \d|\blocal-as\b")),  # and a neighbour whose remote-as changes (risks_of_lines)
    Risk("bgp-timers", "BGP or BFD timers",
         {"BGP_NEIGHBOR": frozenset({"holdtime", "keepalive"}), "BGP_GLOBALS": frozenset({"holdtime", "keepalive"})},
         re.compile(r"^\s*(timers\b|neighbor \S+ timers\b|detect-multiplier\b|receive-interval\b"
                    r"|transmit-interval\b|interval \d|bfd interval\b)")),
    Risk("bgp-policy", "BGP route policy (route maps, prefix lists, path and prefix limits)",
         dict.fromkeys(("ROUTE_MAP", "PREFIX_SET", "PREFIX", "COMMUNITY_SET", "AS_PATH_SET", "ROUTE_REDISTRIBUTE"),
                       _ALL),
         re.compile(r"\broute-map\b|\bprefix-list\b|\bmaximum-(prefix|paths|routes)\b|\bas-path\b"
                    r"|\bcommunity-list\b|\bbestpath\b")),
    Risk("qos-maps", "QoS maps and scheduling (DSCP, traffic class, queue, DWRR)",
         {**dict.fromkeys(("DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
                           "MAP_PFC_PRIORITY_TO_QUEUE", "SCHEDULER"), _ALL),
          "QUEUE": frozenset({"scheduler"}), "PORT_QOS_MAP": _QOS_MAPS},
         re.compile(r"^\s*qos (map|trust)\b|^\s*(tx-queue|bandwidth percent|priority strict|service-profile"
                    r"|qos profile)\b")),
    Risk("pfc", "PFC priorities or the PFC watchdog",
         {"PORT_QOS_MAP": frozenset({"pfc_enable", "pfcwd_sw_enable"}), "PFC_WD": _ALL,
          "DEVICE_METADATA": frozenset({"default_pfcwd_status"})},
         re.compile(r"priority-flow-control")),
    Risk("buffers", "buffer pools, profiles or thresholds",
         dict.fromkeys(("BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH",
                        "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"), _ALL),
         re.compile(r"^\s*(qos )?buffer\b|\bdynamic[- ]threshold\b|\bheadroom\b")),
    Risk("ecn", "ECN marking (DCQCN)", {"WRED_PROFILE": _ALL, "QUEUE": frozenset({"wred_profile"})},
         re.compile(r"random-detect|\becn\b")),
    Risk("hashing", "ECMP hashing", {"SWITCH_HASH": _ALL},
         re.compile(r"^\s*load-balance\b|\bload-sharing\b|^\s*(ip|ipv6) hardware fib\b|payload bytes")),
)
SAYS = {risk.flag: risk.says for risk in RISKS} | {"bgp-removed": "BGP sessions removed or changed",
                                                   "device-removed": "devices removed"}


@functools.lru_cache(maxsize=16384)  # the same shape comes on every device it reaches
def risks_of_shape(shape: Shape) -> frozenset[str]:
    """The flags one edit raises wherever it is done: a CONFIG_DB field of an existing key, or a
    whole key removed, in a table (and field) a risk names; a line that goes matching a risk."""
    if shape.form == FIELDS:
        table, field_name = shape.scope[0], (shape.scope[1] if len(shape.scope) > 1 else "")
        if not field_name and shape.kind == "add":
            return frozenset()  # a new key: a new port, a new neighbour
        return frozenset(risk.flag for risk in RISKS
                         if (fields := risk.tables.get(table)) is not None
                         and (not fields or not field_name or field_name in fields))
    found = {risk.flag for risk in RISKS
             if risk.lines is not None and any(risk.lines.search(line) for line in shape.old)}
    return frozenset(found | risks_of_lines(shape.old, shape.new))


def risks_of_lines(removed: Iterable[str], added: Iterable[str]) -> set[str]:
    """Flags only a device's lines as a whole show: the same neighbour with another AS (an AS
    change, not a session added), and any `neighbor X remote-as` that goes (a session removed)."""
    found = set()
    peers: list[set[str]] = [set(), set()]
    for side, lines in enumerate((removed, added)):
        for line in lines:
            match = _REMOTE_AS.search(line)
            if match:
                peers[side].add(match.group(1))
    if peers[0] & peers[1]:
        found.add("asn")
    if peers[0]:
        found.add("bgp-removed")
    return found


_REMOTE_AS = re.compile(r"\bneighbor (\S+) remote-as\b")
