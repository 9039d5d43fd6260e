"""Setting many namespaces' ports up from this process, without a process per namespace.

A wide lab (lab_only.HOLD_BUILD_ROUTERS) is built with its routers' ports down and brings them up
a rack at a time once every router runs (`cable_groups`, paced by `wait_for_cpu`). One `ip -n NS
-batch` per router was the slowest way at a zone's width: each of the 208 processes waited for the
CPU behind the sessions its predecessors had just started (docs/developer/benchmarks.md). Here a
thread of this process enters each namespace (setns.in_namespace) and sets the flag with the same
SIOCSIFFLAGS ioctl `ifconfig up` uses, so a group's ports come up without waiting for a process to
be scheduled.
"""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from netgen.lab.plan import LabNode, LabPlan
from netgen.lab.setns import NamespaceError, in_namespace

_SIOCGIFFLAGS = 0x8913  # <linux/sockios.h>
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1  # <net/if.h>
_IFREQ = struct.Struct("16sH22x")  # struct ifreq: ifr_name, ifr_flags, padding to 40 bytes


# the order a fabric's layers come up in: a rack's leaf with its cables first, the ATSW layer last
LAYER_ORDER = ("rtsw", "ctsw", "atsw")


def cable_groups(plan: LabPlan, routers: Sequence[LabNode]) -> list[dict[str, list[str]]]:
    """The routers' ports that are to be up (kind port), grouped by cable in the order they come
    up: each cable belongs to its end lowest in the fabric (LAYER_ORDER: an RTSW's cables to the
    CTSWs are its rack's), both its router ends in that group; groups in layer order, then by name;
    ports on no cable last. Each group: node -> interface names."""
    layer = {node.name: LAYER_ORDER.index(node.role) if node.role in LAYER_ORDER else len(LAYER_ORDER)
             for node in routers}
    held = {(node.name, i.name) for node in routers for i in node.interfaces if i.kind == "port" and i.up}
    groups: dict[str, dict[str, list[str]]] = {}
    for link in plan.links:
        ends = [(link.a, link.a_if), (link.b, link.b_if)]
        owners = [node for node, _ in ends if node in layer]
        if not owners:
            continue
        group = groups.setdefault(min(owners, key=lambda node: (layer[node], node)), {})
        for end in ends:
            if end in held:
                held.discard(end)
                group.setdefault(end[0], []).append(end[1])
    ordered = [groups[owner] for owner in sorted(groups, key=lambda node: (layer[node], node)) if groups[owner]]
    rest: dict[str, list[str]] = {}
    for node, ifname in sorted(held):
        rest.setdefault(node, []).append(ifname)
    return ordered + ([rest] if rest else [])


def wait_for_cpu(most_s: float = 1.0) -> None:
    """Return once no more threads wait to run than the machine has cores (procs_running in
    /proc/stat, this one included), or after `most_s` seconds at most."""
    cores = os.cpu_count() or 1
    deadline = time.monotonic() + most_s
    while time.monotonic() < deadline and _runnable() > cores + 1:
        time.sleep(0.02)


def _runnable() -> int:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("procs_running "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def ports_up(ports: Mapping[str, Sequence[str]]) -> list[str]:
    """Set each namespace's listed interfaces up (namespace name -> interface names); the
    problems, one line each naming the namespace and interface, empty when every one is up."""
    problems: list[str] = []
    for namespace, names in ports.items():
        try:
            problems += in_namespace(namespace, partial(_set_up, namespace, names))
        except OSError as exc:
            problems.append(str(exc) if isinstance(exc, NamespaceError) else f"{namespace}: {exc.strerror}")
    return problems


def _set_up(namespace: str, names: Sequence[str]) -> list[str]:
    problems = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for name in names:
            try:
                raw = fcntl.ioctl(sock, _SIOCGIFFLAGS, _IFREQ.pack(name.encode(), 0))
                flags = _IFREQ.unpack(raw)[1]
                fcntl.ioctl(sock, _SIOCSIFFLAGS, _IFREQ.pack(name.encode(), flags | _IFF_UP))
            except OSError as exc:
                problems.append(f"{namespace} {name}: {exc.strerror}")
    return problems
