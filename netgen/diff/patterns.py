"""The effect of a change across the fabric, as patterns: each edit shape (edits.py) with every
device and place it is done, and the devices whose whole change is the same, as groups.

A pattern is complete detail without copies: `mtu 9100` -> `mtu 9000` in 128 interfaces of each of
156 switches is one shape, one list of interface names, one list of switches. Rows merge the
patterns that set the same thing to the same value in other files (the EOS line `mtu 9100` ->
`mtu 9000`, CONFIG_DB PORT.mtu and VLAN.mtu 9100 -> 9000), so a fabric-wide one-line change reads
as one line. A group is the devices whose edits are the same shapes with as many places each
(`describe` names them by tier and zone); where their places differ (each switch's own BGP AS in
`router bgp`), the group says so rather than naming one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from netgen.diff.edits import DEVICE, FIELDS, DeviceDiff, Instance, Shape, shown
from netgen.diff.grouping import device_ranges, name_ranges, natural_key
from netgen.diff.risks import risks_of_shape

TIER_ORDER = ("rtsw", "ctsw", "atsw")


def tier_counts(devices: Iterable[str], tiers: Mapping[str, str]) -> dict[str, int]:
    """Devices per tier, RTSW first (then CTSW, ATSW, others by name)."""
    counts: dict[str, int] = {}
    for device in devices:
        tier = tiers.get(device, "unknown")
        counts[tier] = counts.get(tier, 0) + 1
    order = {tier: index for index, tier in enumerate(TIER_ORDER)}
    return dict(sorted(counts.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


@dataclass
class Pattern:
    """One shape and every place it is done: `places` maps the names of the places (keys or
    sections, in the device's order) to the devices that have exactly those."""

    shape: Shape
    places: dict[tuple[str, ...], list[str]] = field(default_factory=dict)

    @property
    def devices(self) -> list[str]:
        return sorted((d for names in self.places.values() for d in names), key=natural_key)

    @property
    def count(self) -> int:
        """Places in all: one per key or section per device."""
        return sum(len(names) * len(devices) for names, devices in self.places.items())

    def names(self) -> list[str]:
        """Every place's name, each once."""
        seen: dict[str, None] = {}
        for names in self.places:
            seen.update(dict.fromkeys(names))
        return list(seen)


def collect_patterns(devices: Iterable[DeviceDiff]) -> list[Pattern]:
    """Every shape of every device's change with its places; the widest first (most devices, then
    most places), then in file order."""
    found: dict[Shape, Pattern] = {}
    for device in devices:
        for shape, instances in device.edits.items():
            pattern = found.get(shape) or found.setdefault(shape, Pattern(shape))
            pattern.places.setdefault(tuple(i.where for i in instances), []).append(device.device)
    reach = {shape: (len(p.devices), p.count) for shape, p in found.items()}
    return sorted(found.values(), key=lambda p: (-reach[p.shape][0], -reach[p.shape][1]))


def what_changes(shape: Shape) -> tuple[str, str, str] | None:
    """(name, old, new) when a shape sets one thing to another value: a CONFIG_DB field, or a line
    whose words stay but one (`mtu 9100` -> `mtu 9000`: mtu, 9100, 9000; `neighbor 10.0.0.1
    remote-as 65001` -> `... 65002`: neighbor * remote-as, 65001, 65002). None otherwise."""
    if shape.kind != "change":
        return None
    if shape.form == FIELDS:
        if len(shape.scope) < 2:
            return None
        table, field_name = shape.scope
        # a field named by a number is an entry of a map (DSCP_TO_TC_MAP's 26): named with its table
        return (f"{table}.{field_name}" if field_name.isdigit() else field_name), shape.old[0], shape.new[0]
    if len(shape.old) != 1 or len(shape.new) != 1:
        return None
    old, new = shape.old[0].split(), shape.new[0].split()
    differ = [index for index, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    if len(old) != len(new) or len(differ) != 1 or differ[0] == 0:
        return None
    at = differ[0]
    # the words around name the setting; one that holds a digit names the place (a neighbour's
    # address), which the row's places list, so the same setting of every neighbour is one row
    name = [("*" if any(ch.isdigit() for ch in word) else word) for word in old[:at]]
    return " ".join(name + ["…"] * (at + 1 < len(old))), old[at], new[at]


@dataclass
class Row:
    """Patterns that set the same thing to the same value (`what`), or that make the same edit in
    other files or sections (the same lines, indented otherwise: `timers bgp 3 9` in frr.conf and
    in an EOS config)."""

    what: tuple[str, str, str] | None
    patterns: list[Pattern]

    @property
    def devices(self) -> list[str]:
        return sorted({d for p in self.patterns for d in p.devices}, key=natural_key)

    @property
    def count(self) -> int:
        return sum(p.count for p in self.patterns)


def rows_of(patterns: list[Pattern]) -> list[Row]:
    """The patterns merged into rows (see Row), the widest first."""
    rows: dict[tuple[object, ...], Row] = {}
    for pattern in patterns:
        shape = pattern.shape
        what = what_changes(shape)
        same = ("what", *what) if what is not None else (
            shape.form, shape.kind, *(tuple(line.strip() for line in lines) for lines in (shape.old, shape.new)),
            shape.scope if shape.form == FIELDS else ())
        rows.setdefault(same, Row(what, [])).patterns.append(pattern)
    return sorted(rows.values(), key=lambda row: (-len(row.devices), -row.count))


def file_label(shape: Shape) -> str:
    """Where a shape is, for a summary: `CONFIG_DB PORT`, `EOS interface`, `frr.conf router bgp`."""
    if shape.form == FIELDS:
        return f"CONFIG_DB {shape.scope[0]}" + (f".{shape.scope[1]}" if len(shape.scope) > 1 else "")
    kind = "EOS" if shape.file == f"{DEVICE}.cfg" else shape.file.replace(DEVICE, "*")
    return f"{kind} {' / '.join(shape.scope)}".rstrip() if shape.scope else f"{kind} (top level)"


def pattern_dict(pattern: Pattern, tiers: Mapping[str, str]) -> dict[str, Any]:
    """A pattern for the JSON form: the shape, the counts, and every place on every device as
    ranges of names (each list of places once, with the devices that have it)."""
    shape = pattern.shape
    devices = pattern.devices
    return {
        "file": shape.file, "form": shape.form, "scope": list(shape.scope), "kind": shape.kind,
        "old": list(shape.old), "new": list(shape.new), **({"custom_config": shape.note} if shape.note else {}),
        "what": list(what) if (what := what_changes(shape)) else None,
        "summary": file_label(shape), "risks": sorted(risks_of_shape(shape)),
        "count": pattern.count, "device_count": len(devices), "tiers": tier_counts(devices, tiers),
        "places": [{"devices": device_ranges(holders), "device_count": len(holders), "count": len(names),
                    "names": name_ranges(names)} for names, holders in pattern.places.items()],
    }


@dataclass
class ChangeGroup:
    """Devices whose change is the same shapes with as many places each. `edits`: the first
    device's; `varies`: the shapes whose places are not the same on every device of the group."""

    kind: str
    edits: dict[Shape, list[Instance]]
    added: int  # per device
    removed: int
    risks: set[str]
    devices: list[str] = field(default_factory=list)
    varies: set[Shape] = field(default_factory=set)

    def files(self, limit: int | None = None) -> dict[str, list[str]]:
        """Each file's edits as lines (file names with {device} where the group has several)."""
        out: dict[str, list[str]] = {}
        one = self.devices[0] if len(self.devices) == 1 else None
        for shape, instances in self.edits.items():
            lines = shown(shape, instances, limit, varies=shape in self.varies)
            name = shape.file if one is None else shape.file.replace(DEVICE, one)
            out.setdefault(name, []).extend(lines if one is None else [line.replace(DEVICE, one) for line in lines])
        return out


def group_changes(devices: Iterable[DeviceDiff]) -> list[ChangeGroup]:
    """Groups in the order their first device comes, devices in natural order within each."""
    groups: dict[tuple[object, ...], ChangeGroup] = {}
    for device in sorted(devices, key=lambda d: natural_key(d.device)):
        signature = (device.kind, tuple((shape, len(instances)) for shape, instances in device.edits.items()))
        group = groups.get(signature)
        if group is None:
            groups[signature] = ChangeGroup(device.kind, device.edits, device.added, device.removed,
                                            set(device.risks), [device.device])
            continue
        group.devices.append(device.device)
        for shape, instances in device.edits.items():
            if shape not in group.varies and instances != group.edits[shape]:
                first = [i.where for i in group.edits[shape]]
                if [i.where for i in instances] != first:
                    group.varies.add(shape)
    return list(groups.values())
