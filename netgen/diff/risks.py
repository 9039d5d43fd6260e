"""Risk flags of a rendered-config diff: the kinds of change a reviewer must not miss (MTU, AS
numbers, BGP timers and policy, QoS, ECN, hashing, BGP sessions removed), found in what a change
takes away."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from netgen.diff.config_db import FieldChange


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
RISKS = (
    Risk("mtu", "MTU", {"PORT": frozenset({"mtu"}), "PORTCHANNEL": frozenset({"mtu"}), "VLAN": frozenset({"mtu"})},
         re.compile(r"^\s*(ip |ipv6 )?mtu\b")),
    Risk("asn", "BGP AS numbers", {"DEVICE_METADATA": frozenset({"bgp_asn"})},
         re.compile(r"^\s*router bgp \d|\blocal-as\b")),  # and a neighbour whose remote-as changes (risks_of_lines)
    Risk("bgp-timers", "BGP or BFD timers",
         lines=re.compile(r"^\s*(timers\b|neighbor \S+ timers\b|detect-multiplier\b|receive-interval\b"
                          r"|transmit-interval\b|interval \d|bfd interval\b)")),
    Risk("bgp-policy", "BGP route policy (route maps, prefix lists, path and prefix limits)",
         lines=re.compile(r"\broute-map\b|\bprefix-list\b|\bmaximum-(prefix|paths|routes)\b")),
    Risk("qos", "PFC, queue, buffer or DSCP map settings",
         dict.fromkeys(("PORT_QOS_MAP", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD",
                        "SCHEDULER", "QUEUE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
                        "MAP_PFC_PRIORITY_TO_QUEUE", "CABLE_LENGTH"), _ALL),
         re.compile(r"priority-flow-control|^\s*qos |tx-queue|bandwidth percent|priority strict|service-profile")),
    Risk("ecn", "ECN marking (DCQCN)", {"WRED_PROFILE": _ALL}, re.compile(r"random-detect|\becn\b")),
    Risk("hashing", "ECMP hashing", {"SWITCH_HASH": _ALL},
         re.compile(r"^\s*load-balance\b|\bload-sharing\b|^\s*(ip|ipv6) hardware fib\b|payload bytes")),
)


def risks_of_fields(changes: Iterable[FieldChange]) -> set[str]:
    found = set()
    for change in changes:
        if not change.field and change.kind == "add":
            continue  # a new key: a new port, a new neighbour
        for risk in RISKS:
            fields = risk.tables.get(change.table)
            if fields is not None and (not fields or not change.field or change.field in fields):
                found.add(risk.flag)
    return found


def risks_of_lines(body: list[str]) -> set[str]:
    """`body`: the added and removed lines of a unified diff (their +/- first)."""
    gone = [line[1:] for line in body if line.startswith("-")]
    found = {risk.flag for risk in RISKS if risk.lines is not None and any(risk.lines.search(line) for line in gone)}
    # a session added (one more rack) is no ASN change; the same neighbour with another AS is
    peers: dict[str, set[str]] = {"-": set(), "+": set()}
    for line in body:
        match = _REMOTE_AS.search(line[1:])
        if match:
            peers[line[0]].add(match.group(1))
    if peers["-"] & peers["+"]:
        found.add("asn")
    if peers["-"]:
        found.add("bgp-removed")
    return found


_REMOTE_AS = re.compile(r"\bneighbor (\S+) remote-as\b")
