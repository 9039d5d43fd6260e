"""The top-level keywords of EOS's global configuration mode that a custom_config block may use.

Source: Arista's EOS User Manual (https://www.arista.com/en/um-eos), EOS 4.x: each command below is
documented there with "Command Mode: Global Configuration", in the chapter its comment names. The
table is what netgen knows, not all of EOS: a keyword missing from it is refused (the block's check
names it), and adding one is a one-line change here with the manual's chapter beside it.

Each entry maps a keyword, or a keyword and the words that make it a different command, to whether
the command opens a configuration mode (True: lines indented under it are that mode's commands) or
is a command of one line (False: nothing may be indented under it). The longest entry that starts a
line decides. Commands that act instead of configure are not here, so they stay refused: they run
a program or exec commands on a schedule or an event (`daemon`, `event-handler`, `schedule`,
`alias`), or change what the switch boots (`boot`); nor is anything intent/custom.py refuses by
word (`end`, `exit`, `banner`, `enable`, ...).
"""

from __future__ import annotations

EOS_GLOBAL_COMMANDS: dict[tuple[str, ...], bool] = {
    # Ethernet Ports, Port Channels and LACP, VLANs, VRFs, Loopback and Management interfaces
    ("interface",): True,
    ("vlan",): True,
    ("vlan", "internal"): False,
    ("vrf",): True,
    ("port-channel",): False,
    ("lacp",): False,
    ("errdisable",): False,
    ("load-interval",): False,
    ("transceiver",): False,
    ("mac",): False,
    ("mac", "access-list"): True,
    ("arp",): False,
    # IPv4, IPv6, Prefix Lists, Access Control Lists, Route Maps, Routing protocols (BGP, OSPF,
    # IS-IS, BFD, multicast: `router bgp`, `router ospf`, `router bfd`, `router general`, ...)
    ("ip",): False,
    ("ip", "access-list"): True,
    ("ip", "prefix-list"): True,
    ("ipv6",): False,
    ("ipv6", "access-list"): True,
    ("ipv6", "prefix-list"): True,
    ("route-map",): True,
    ("peer-filter",): True,
    ("router",): True,
    ("service",): False,  # service routing protocols model multi-agent
    ("mpls",): False,
    ("mpls", "ldp"): True,
    ("mpls", "rsvp"): True,
    ("nexthop-group",): True,
    ("dhcp",): False,
    ("dhcp", "server"): True,
    ("dhcp", "relay"): True,
    # Quality of Service, Data Center Bridging (PFC), Latency Analyzer (LANZ), Traffic Management
    ("qos",): False,
    ("qos", "profile"): True,
    ("policy-map",): True,
    ("class-map",): True,
    ("traffic-policies",): True,
    ("priority-flow-control",): False,
    ("dcbx",): False,
    ("queue-monitor",): False,  # queue-monitor length ...
    ("queue-monitor", "streaming"): True,
    ("hardware",): False,  # hardware counter feature ..., hardware access-list ..., hardware speed-group ...
    ("hardware", "tcam"): True,
    ("platform",): False,
    ("load-balance",): False,
    ("load-balance", "policies"): True,
    # Spanning Tree Protocol, MLAG, LLDP, sFlow, Port Mirroring, Connectivity Monitor, Tap Aggregation
    ("spanning-tree",): False,
    ("spanning-tree", "mst", "configuration"): True,
    ("mlag",): True,  # mlag configuration
    ("lldp",): False,
    ("sflow",): False,
    ("monitor",): False,  # monitor session NAME source|destination ...
    ("monitor", "connectivity"): True,
    ("tap",): True,  # tap aggregation
    ("link-tracking",): True,  # link-tracking group NAME
    ("track",): False,
    # System management: AAA, user accounts, TACACS+ and RADIUS, NTP, PTP, logging, SNMP, DNS,
    # management APIs and services, system clock, CVX
    ("hostname",): False,
    ("aaa",): False,
    ("aaa", "group", "server"): True,
    ("username",): False,
    ("role",): True,
    ("tacacs-server",): False,
    ("radius-server",): False,
    ("ntp",): False,
    ("ptp",): False,
    ("clock",): False,
    ("logging",): False,
    ("snmp-server",): False,
    ("dns",): False,
    ("management",): True,  # management api ..., management ssh, management security, ...
    ("system",): False,
    ("system", "control-plane"): True,
    ("system", "l1"): True,
    ("cvx",): True,
    ("agent",): False,
    ("trace",): False,
    ("prompt",): False,
    ("dot1x",): False,
    ("switchport",): False,  # switchport default mode ...
}

# Words before a command that turn it off or back to its default: the command after them must be
# known, and the line takes nothing under it.
NEGATIONS = frozenset({"no", "default"})


def command_of(words: list[str]) -> tuple[tuple[str, ...], bool] | None:
    """(the entry that knows a line of these words, whether lines may sit under it), or None for a
    line EOS_GLOBAL_COMMANDS does not know. Keywords are matched without regard to case, as EOS does."""
    keywords = [word.lower() for word in words]
    negated = bool(keywords) and keywords[0] in NEGATIONS
    if negated:
        keywords = keywords[1:]
    for length in (3, 2, 1):
        entry = tuple(keywords[:length])
        if len(entry) == length and entry in EOS_GLOBAL_COMMANDS:
            return entry, EOS_GLOBAL_COMMANDS[entry] and not negated
    return None


__all__ = ["EOS_GLOBAL_COMMANDS", "NEGATIONS", "command_of"]
