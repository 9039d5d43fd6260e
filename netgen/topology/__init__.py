"""Stage 2: pure, stable expansion of the intent into devices, ports, links, sessions and NICs."""

from netgen.topology.buffers import DeviceBufferPlan, LosslessPg, formula_xoff, plan_buffers
from netgen.topology.expand import expand
from netgen.topology.model import BgpSession, Device, HostNic, Link, Port, Role, Topology

__all__ = [
    "BgpSession",
    "Device",
    "DeviceBufferPlan",
    "HostNic",
    "Link",
    "LosslessPg",
    "Port",
    "Role",
    "Topology",
    "expand",
    "formula_xoff",
    "plan_buffers",
]
