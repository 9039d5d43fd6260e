"""What the netns lab runs that the rendered configs do not say, decided from the plan before
anything starts, and said in every report (`netgen lab up` and `lab verify`: `lab_only`).

A lab puts a whole AI Zone's control plane on two cores: every router's FRR daemons, LLDP on both
ends of every cable. What costs there is not the routes but the packets each daemon wakes up for:
on this machine class each BFD control packet sent or received costs a bfdd about 0.15-0.19 ms of
CPU (docs/developer/benchmarks.md, "Lab: a whole zone"), and a zone's 3,072 BFD sessions at the
rendered 300 ms send 20,000 of them a second: several times what both cores can do. So the lab keeps the
packet rates within a budget measured here, by slowing only what has to be slowed:

- BFD: each profile's transmit and receive intervals are raised to the lab's floor where they are
  below it; sessions, profiles, multipliers and every BGP setting stay as rendered. Labs of up to
  150 sessions keep the rendered 300 ms (the 26-router meta slice: 64).
- LLDP (lldpd is the lab's, not part of the rendered config): the interval grows with the number of
  cabled ports, holding each neighbour at least 30 s.

Every setting is applied after the rendered frr.conf (`vtysh -f` on the node's own lab file) and
again after anything reloads FRR (`frr-reload.py` removes what frr.conf does not hold). While a lab
of more than HOLD_BUILD_ROUTERS routers is built its routers' ports are down and their BFD profiles
shut (`held_conf`); once every router runs the cables come up a rack at a time (netgen/lab/link_up.py)
and BFD is released, so no router's start competes with the sessions of those before it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from netgen.lab.plan import LabNode, LabPlan

# BFD control packets a second the lab's bfdd processes may send together, each also received:
# about a third of a core at 0.15-0.19 ms an event (docs/developer/benchmarks.md, "Lab: a whole zone").
BFD_PACKETS_PER_S = 1000
# LLDP frames a second for the lab's lldpd agents together: about 0.1 of a core at 0.08 ms a frame.
LLDP_FRAMES_PER_S = 1250
# Past this many routers a lab is built with its routers' ports down and BFD shut, released once
# every router runs; below it, held ports cost more (BGP's 10 s connect retry) than they save.
HOLD_BUILD_ROUTERS = 32
LLDP_HOLD_S = 30  # a neighbour is kept this long without a frame (a node starved of CPU keeps them)
LAB_CONF = "lab-only.conf"  # the node's lab-only FRR settings, beside its frr.conf; not "netgen-*", the
# prefix of what a deploy stages on a switch (its tests find leftovers by it)
# Lab-only zebra setting: FRR 8.4 loses kernel nexthop-group members after a link flap and does not
# put them back (fixed upstream in FRR 9.0, FRRouting/frr#13413), which would leave the kernel FIB
# narrower than the RIB after a cut drill. Routes with embedded next hops do not have that bug. A
# switch ASIC is not involved either way.
ZEBRA_SETTING = "no zebra nexthop kernel enable"
# Every lab FRR daemon starts with glibc malloc's mmap threshold set to its default, 128 KiB: set, it
# stops adjusting itself upwards ("Malloc Tunable Parameters", GNU C Library manual), so the large
# blocks a daemon frees go back to the system instead of staying in its heap. Measured on the 4 x 16
# meta slice: bgpd about 3 MB and zebra about 3 MB less per router; the daemons' work is the same.
FRR_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_=131072",)

_PROFILE = re.compile(r"^ profile (\S+)$")
_INTERVAL = re.compile(r"^  (transmit|receive)-interval (\d+)$")


def bfd_profiles(frr_conf: str) -> dict[str, dict[str, int]]:
    """The BFD profiles of a rendered frr.conf (`bfd` / ` profile NAME` blocks): name -> {transmit,
    receive} in ms, each only where the profile sets it."""
    profiles: dict[str, dict[str, int]] = {}
    in_bfd, current = False, None
    for line in frr_conf.splitlines():
        if line == "bfd":
            in_bfd = True
        elif in_bfd and line == "exit":
            in_bfd, current = False, None
        elif in_bfd and (match := _PROFILE.match(line)):
            current = profiles.setdefault(match.group(1), {})
        elif current is not None and (match := _INTERVAL.match(line)):
            current[match.group(1)] = int(match.group(2))
    return profiles


def uses_bfd(frr_conf: str) -> bool:
    return any(line.strip() == "bfd" or " bfd" in line for line in frr_conf.splitlines())


@dataclass(frozen=True, slots=True)
class LabOnly:
    """The lab's own settings for one plan."""

    bfd_floor_ms: int  # 0: the rendered BFD timers run unchanged
    bfd_sessions: int
    lldp_interval_s: int
    lldp_hold: int  # lldpd's tx-hold: the TTL is interval x hold
    cabled_ports: int
    hold_build: bool = False  # ports down and BFD shut until every router runs (HOLD_BUILD_ROUTERS)

    def frr_lines(self, node: LabNode) -> list[str]:
        """The node's lab-only FRR configuration, in frr.conf syntax."""
        lines = [ZEBRA_SETTING]
        raised = self.raised(node)
        if raised:
            lines.append("bfd")
            for name in raised:
                lines += [f" profile {name}", f"  transmit-interval {self.bfd_floor_ms}",
                          f"  receive-interval {self.bfd_floor_ms}", " exit"]
            lines.append("exit")
        return lines

    def held_conf(self, node: LabNode) -> str:
        """Loaded before the node's frr.conf while a lab is built: every BFD profile shut, so its
        sessions are born administratively down and send nothing until `release_vtysh` (a zone's
        6,000 BFD ends sending to peers not yet reachable took most of both cores)."""
        profiles = sorted(bfd_profiles(node.frr_conf or ""))
        if not profiles:
            return ""
        lines = ["bfd", *(f" profile {name}\n  shutdown\n exit" for name in profiles), "exit"]
        return "! netgen lab only, while the lab is built (netgen/lab/lab_only.py)\n" + "".join(
            f"{line}\n" for line in lines)

    def release_vtysh(self, node: LabNode) -> list[str]:
        """vtysh's arguments that undo `held_conf` (empty: nothing held): to bfdd alone, which
        answers at once, where plain vtysh also waits for a bgpd busy with its sessions."""
        profiles = sorted(bfd_profiles(node.frr_conf or ""))
        lines = ["configure terminal", "bfd"]
        for name in profiles:
            lines += [f"profile {name}", "no shutdown", "exit"]
        return ["-d", "bfdd", *(arg for line in lines for arg in ("-c", line))] if profiles else []

    def frr_conf(self, node: LabNode) -> str:
        return "! netgen lab only (netgen/lab/lab_only.py), applied after frr.conf\n" + "".join(
            f"{line}\n" for line in self.frr_lines(node))

    def raised(self, node: LabNode) -> list[str]:
        """The node's BFD profiles whose rendered timers are below the floor."""
        if not self.bfd_floor_ms:
            return []
        return sorted(name for name, timers in bfd_profiles(node.frr_conf or "").items()
                      if min(timers.get("transmit", 300), timers.get("receive", 300)) < self.bfd_floor_ms)

    def describe(self, plan: LabPlan) -> list[str]:
        """Each lab-only setting as the reports say it."""
        said = [f"zebra: `{ZEBRA_SETTING}` (FRR 8.4 loses kernel nexthop-group members after a link flap,"
                " FRRouting/frr#13413; routes carry their next hops instead; forwarding is the same)",
                f"FRR daemons start with {' '.join(FRR_ENVIRONMENT)} (glibc malloc returns freed blocks"
                " to the system: memory only, the daemons' work is the same)"]
        rendered: dict[tuple[str, str], set[int]] = {}
        for node in plan.routers():
            for name in self.raised(node):
                timers = bfd_profiles(node.frr_conf or "")[name]
                rendered.setdefault((name, str(node.nos)), set()).update(timers.values())
        for (name, nos), values in sorted(rendered.items()):
            was = "/".join(f"{v} ms" for v in sorted(values))
            said.append(f"BFD profile {name} ({nos}): transmit and receive interval {was} -> {self.bfd_floor_ms}"
                        f" ms (lab only: {self.bfd_sessions} BFD sessions within {BFD_PACKETS_PER_S} packets/s on"
                        " this machine; multiplier and every BGP timer as rendered)")
        held = self.lldp_interval_s * self.lldp_hold
        if self.hold_build:
            said.append(f"built with every router's ports down and BFD shut until all {len(plan.routers())} routers"
                        " ran; then the cables came up a rack at a time and BFD was released")
        said.append(f"LLDP (the lab's lldpd): every {self.lldp_interval_s} s, held {held} s ({self.cabled_ports}"
                    f" cabled ports within {LLDP_FRAMES_PER_S} frames/s)")
        return said


def lab_only(plan: LabPlan) -> LabOnly:
    """The lab's settings for `plan`: BFD's floor from the sessions whose both ends run BFD, LLDP's
    interval from the cabled ports."""
    bfd = {n.name for n in plan.routers() if uses_bfd(n.frr_conf or "")}
    sessions = sum(1 for s in plan.sessions if s.a in bfd and s.b in bfd)
    # both ends of every session send one packet each interval
    needed_ms = 2 * sessions * 1000 / BFD_PACKETS_PER_S
    rendered = [min(t.values()) for n in plan.routers() for t in bfd_profiles(n.frr_conf or "").values() if t]
    floor = 0
    if sessions and needed_ms > min(rendered, default=300):
        floor = int(math.ceil(needed_ms / 100) * 100)
    ports = 2 * len(plan.links)
    interval = max(1, math.ceil(ports / LLDP_FRAMES_PER_S))
    return LabOnly(bfd_floor_ms=floor, bfd_sessions=sessions, lldp_interval_s=interval,
                   hold_build=len(plan.routers()) > HOLD_BUILD_ROUTERS,
                   lldp_hold=max(4, math.ceil(LLDP_HOLD_S / interval)), cabled_ports=ports)
