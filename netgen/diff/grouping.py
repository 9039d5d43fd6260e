"""Identical changes across devices, grouped: a reviewer reads a QoS change once ("10 devices:
8 ctsw, 2 atsw"), not once per switch. Two devices share a group when their changes are the same
line for line once the device's own name (in file names) and the line numbers of unified-diff
hunks are set aside; any line that differs (a description naming a peer, an address) keeps them
apart. Device names sort naturally (Ethernet44 before Ethernet448, rtsw2 before rtsw10).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

_NUMBER = re.compile(r"(\d+)")
_HUNK = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
_FILE_HEADERS = ("--- a/", "+++ b/")
DEVICE = "{device}"  # stands for each device's own name in a group's file names


def natural_key(text: str) -> tuple[str | int, ...]:
    """'Ethernet44' < 'Ethernet448', 'rtsw2' < 'rtsw10': digit runs compare as numbers (split
    always alternates text and number, so the tuples compare position by position)."""
    return tuple(int(part) if index % 2 else part for index, part in enumerate(_NUMBER.split(text)))


class DeviceChange(Protocol):
    device: str
    kind: str
    files: dict[str, list[str]]
    added: int
    removed: int
    risks: set[str]


@dataclass
class ChangeGroup:
    """Devices whose change is the same; `files` keyed by file name with the device as {device}."""

    kind: str
    files: dict[str, list[str]]
    added: int  # per device
    removed: int
    risks: set[str]
    devices: list[str] = field(default_factory=list)


def _generic(change: DeviceChange) -> dict[str, list[str]]:
    return {name.replace(change.device, DEVICE): [_HUNK.sub("@@", line) for line in lines
                                                   if not line.startswith(_FILE_HEADERS)]
            for name, lines in change.files.items()}


def group_changes(changes: Iterable[DeviceChange]) -> list[ChangeGroup]:
    """Groups in the order their first device comes, devices in natural order within each."""
    groups: dict[tuple[object, ...], ChangeGroup] = {}
    for change in sorted(changes, key=lambda c: natural_key(c.device)):
        files = _generic(change)
        shape = (change.kind, tuple((name, tuple(lines)) for name, lines in sorted(files.items())))
        group = groups.setdefault(shape, ChangeGroup(change.kind, files, change.added, change.removed,
                                                     set(change.risks)))
        group.devices.append(change.device)
    return list(groups.values())


def device_ranges(names: Iterable[str]) -> str:
    """'z01-ctsw01..z01-ctsw04, atsw01..atsw02': runs of consecutive numbers (same prefix, suffix and
    width) as ranges, in natural order."""
    runs: list[list[str]] = []
    last: tuple[str, int, str, int] | None = None
    for name in sorted(names, key=natural_key):
        match = re.match(r"^(.*?)(\d+)(\D*)$", name)
        here = (match.group(1), int(match.group(2)), match.group(3), len(match.group(2))) if match else None
        if runs and here and last and here[0] == last[0] and here[2:] == last[2:] and here[1] == last[1] + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
        last = here
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}..{run[-1]}" for run in runs)


def describe(group: ChangeGroup, tiers: Mapping[str, str], zones: Mapping[str, int | None]) -> str:
    """'10 devices (8 ctsw in zones 1-2, 2 atsw)' or the device itself."""
    if len(group.devices) == 1:
        return group.devices[0]
    by_tier: dict[str, list[str]] = {}
    for name in group.devices:
        by_tier.setdefault(tiers.get(name, "unknown"), []).append(name)
    parts = []
    for tier, names in sorted(by_tier.items(), key=lambda item: -len(item[1])):
        seen = sorted({z for z in (zones.get(n) for n in names) if z is not None})
        where = "" if not seen else f" in zone {seen[0]}" if len(seen) == 1 else f" in zones {_span(seen)}"
        parts.append(f"{len(names)} {tier}{where}")
    return f"{len(group.devices)} devices ({', '.join(parts)})"


def _span(numbers: list[int]) -> str:
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(str(n) for n in numbers)


__all__ = ["DEVICE", "ChangeGroup", "DeviceChange", "describe", "device_ranges", "group_changes", "natural_key"]
