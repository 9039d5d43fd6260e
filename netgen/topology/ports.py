"""Front-panel port naming and breakout arithmetic, driven by the catalog's `port_naming` field.

A registry maps each naming scheme to a small function, so a new NOS adds an entry here and in
the catalog, not an if/elif in the expansion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from netgen.intent.catalog import PlatformModel, PortNaming

PortNamer = Callable[[PlatformModel, int, int], str]


def _sonic(model: PlatformModel, cage: int, lane_offset: int) -> str:
    # SONiC names a port after its first lane's position: Ethernet0, Ethernet8; 2x400G -> +4.
    return f"Ethernet{cage * model.lanes_per_port + lane_offset}"


def _eos_fixed(model: PlatformModel, cage: int, lane_offset: int) -> str:
    # EOS numbers cages from 1 and sub-ports by first lane: Ethernet1/1, breakout Ethernet1/5.
    return f"Ethernet{cage + 1}/{lane_offset + 1}"


def _eos_modular(model: PlatformModel, cage: int, lane_offset: int) -> str:
    cards = model.linecards
    first_slot, per_card = (cards.first_slot, cards.ports_per_linecard) if cards else (1, model.port_count)
    return f"Ethernet{first_slot + cage // per_card}/{cage % per_card + 1}/{lane_offset + 1}"


PORT_NAMERS: dict[PortNaming, PortNamer] = {
    PortNaming.SONIC: _sonic,
    PortNaming.EOS_FIXED: _eos_fixed,
    PortNaming.EOS_MODULAR: _eos_modular,
}


@dataclass(frozen=True, slots=True)
class PortSlot:
    cage: int
    lane_offset: int
    lanes: int
    name: str


class PortAllocator:
    """Maps the i-th logical port of a group (same speed, contiguous cages) to a cage and a name."""

    __slots__ = ("_lanes", "_made", "_model", "_namer", "_per_cage", "_start")

    def __init__(self, model: PlatformModel, start_cage: int, speed_gbps: int) -> None:
        self._model = model
        self._namer = PORT_NAMERS[model.port_naming]
        self._per_cage = model.ports_per_cage(speed_gbps)
        self._lanes = max(1, model.lanes_per_port // self._per_cage)
        self._start = start_cage
        self._made: dict[int, PortSlot] = {}  # slots are frozen: one allocator may serve many devices

    def slot(self, index: int) -> PortSlot:
        made = self._made.get(index)
        if made is None:
            cage = self._start + index // self._per_cage
            offset = (index % self._per_cage) * self._lanes
            made = self._made[index] = PortSlot(cage, offset, self._lanes, self._namer(self._model, cage, offset))
        return made


def cages_needed(model: PlatformModel, ports: int, speed_gbps: int) -> int:
    per_cage = model.ports_per_cage(speed_gbps)
    return -(-ports // per_cage)


def top_group_start(model: PlatformModel, ports: int, speed_gbps: int, floor: int) -> int:
    """First cage of a group placed at the top of the front panel (uplinks), never below `floor`."""
    return max(floor, model.port_count - cages_needed(model, ports, speed_gbps))
