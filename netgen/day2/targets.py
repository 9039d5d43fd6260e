"""What `netgen drain TARGET` names: switches (the `--limit` syntax: names, globs, `role:ctsw`,
`zone:2`) or fabric links, each by its two ends (`z01-rtsw001:Ethernet0--z01-ctsw01:Ethernet0`, as
`netgen show` and the cabling plan name a link) or by its two devices (`z01-rtsw001--z01-ctsw01`:
every link between them). A link is drained at both ends."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netgen.topology.model import Link, Topology
from netgen.topology.selection import select, terms_of, unmatched_hint

LINK_SEPARATOR = "--"


class TargetError(ValueError):
    """A target that names no switch or link of the fabric: a usage error (exit 2), said with the
    closest names where there are some."""


@dataclass(frozen=True, slots=True)
class DrainSet:
    """Switches and links out of service (links by Link.key). A switch's own links are out with it
    and are not listed again."""

    devices: frozenset[str] = frozenset()
    links: frozenset[str] = frozenset()

    def __or__(self, other: DrainSet) -> DrainSet:
        return DrainSet(self.devices | other.devices, self.links | other.links)

    def __bool__(self) -> bool:
        return bool(self.devices or self.links)

    def carries(self, link: Link) -> bool:
        """Whether `link` is in service with this set drained."""
        return not (link.key in self.links or link.lower.device in self.devices or link.upper.device in self.devices)

    def as_dict(self) -> dict[str, list[str]]:
        return {"devices": sorted(self.devices), "links": sorted(self.links)}


def _end(text: str) -> tuple[str, str | None]:
    device, _, port = text.partition(":")
    return device, port or None


def _links(topology: Topology, target: str) -> frozenset[str]:
    left, right = (_end(part.strip()) for part in target.split(LINK_SEPARATOR, 1))
    for device, _ in (left, right):
        if device not in topology.devices:
            raise TargetError(f"link {target!r}: {unmatched_hint(device, topology.devices)}")
    found = set()
    for link in topology.links:
        ends = {(link.lower.device, link.lower.port), (link.upper.device, link.upper.port)}
        if all(any(d == device and (port is None or p == port) for d, p in ends) for device, port in (left, right)) \
                and left[0] != right[0]:
            found.add(link.key)
    if not found:
        raise TargetError(f"link {target!r}: no fabric link joins {left[0]}{':' + left[1] if left[1] else ''}"
                          f" and {right[0]}{':' + right[1] if right[1] else ''}")
    return frozenset(found)


def resolve(topology: Topology, targets: Iterable[str]) -> DrainSet:
    """The switches and links `targets` name; each target must name at least one."""
    names = list(topology.devices)
    devices: set[str] = set()
    links: set[str] = set()
    for target in targets:
        if LINK_SEPARATOR in target:
            links |= _links(topology, target)
            continue
        for term in terms_of(target) or [target]:
            found = select(names, topology.devices, term)
            if not found:
                raise TargetError(unmatched_hint(term, names))
            devices.update(found)
    # a link of a drained switch is out with it
    with_switch = {link.key for link in topology.links if {link.lower.device, link.upper.device} & devices}
    return DrainSet(frozenset(devices), frozenset(links - with_switch))
