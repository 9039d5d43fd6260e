"""Stable address arithmetic: every address is a fixed function of (pool, slot, position).

Each pool is cut into `slot_count(max_zones)` equal slots; slot 0 belongs to the ATSW layer and
slot N to zone N. Inside a slot, regions are fixed fractions (halves), and positions come from
rack / switch numbers. Nothing depends on how many racks or zones exist, which is what makes an
added rack or zone a pure addition in every diff.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network


def slot_count(max_zones: int) -> int:
    """Slots per pool: the ATSW slot plus one per zone id, rounded up to a power of two."""
    count = 1
    while count < max_zones + 1:
        count *= 2
    return count


@dataclass(frozen=True, slots=True)
class Region:
    """A contiguous run of addresses, as integers."""

    base: int
    size: int

    def at(self, offset: int) -> int:
        # Offsets past the end wrap inside the region instead of running into a neighbour's
        # addresses; the pool-exhaustion check (NG201) reports the overflow as a design error,
        # and nothing is rendered while a design error stands.
        return self.base + offset % self.size

    def halves(self) -> tuple[Region, Region]:
        half = max(1, self.size // 2)
        return Region(self.base, half), Region(self.base + (self.size - half if self.size > 1 else 0), half)


def pool_slot(pool: IPv4Network | IPv6Network, slot: int, slots: int) -> Region:
    # A pool smaller than its slot count gets 1-address slots that wrap inside the pool (NG201
    # reports it); they never point outside the pool.
    size = max(1, pool.num_addresses // slots)
    return Region(int(pool.network_address) + (slot % slots) * size % pool.num_addresses, size)


def host_prefix_length(nics_per_rack: int, family_bits: int = 32) -> int:
    """Smallest subnet that holds network, gateway, every NIC and broadcast."""
    needed = nics_per_rack + 3
    bits = 1
    while (1 << bits) < needed:
        bits += 1
    return family_bits - bits
