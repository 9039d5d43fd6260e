"""The design context: the one object every stage after expansion reads. It holds the validated
intent, its catalog and the expanded topology, and computes once what several stages derive from
them (buffer plans, ASNs by device, the models in use per tier).

It lives on its own, below the checks, the renderers, the hosts' side and the deploy, so that
reading it imports none of them: `netgen/api.py` builds it (load, expand, check).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from netgen.intent.catalog import Catalog, PlatformModel
from netgen.intent.fabric import Fabric
from netgen.topology.buffers import DeviceBufferPlan, plan_buffers
from netgen.topology.infiniband import IbFabric, IbSizing, plan_infiniband, size_infiniband
from netgen.topology.model import Device, Role, Topology


@dataclass
class DesignContext:
    """Everything a check may read; derived data is computed once and shared."""

    fabric: Fabric
    catalog: Catalog
    topology: Topology

    @cached_property
    def buffers(self) -> dict[str, DeviceBufferPlan]:
        return plan_buffers(self.fabric, self.catalog, self.topology)

    @cached_property
    def infiniband_sizing(self) -> IbSizing | None:
        """The InfiniBand alternative's numbers (what the design checks read), if the fabric has an
        `infiniband:` section. Raises IbSizingError when it does not fit the switch model (NG801)."""
        if self.fabric.infiniband is None:
            return None
        return size_infiniband(self.fabric, self.catalog)

    @cached_property
    def infiniband(self) -> IbFabric | None:
        """The InfiniBand alternative's fat tree (switches, HCAs, cables), built only for the commands that
        use it; IbSizingError as infiniband_sizing."""
        sized = self.infiniband_sizing
        return None if sized is None else plan_infiniband(self.fabric, self.catalog, sized)

    @cached_property
    def asn_of(self) -> dict[str, int]:
        """Device name -> ASN, built once for every per-device view."""
        return {name: device.asn for name, device in self.topology.devices.items()}

    def model(self, device: Device) -> PlatformModel:
        return self.catalog.get(device.model)

    @cached_property
    def system_names(self) -> frozenset[str]:
        """Every device and host name of the fabric (what LLDP may hear as a neighbour's name)."""
        return frozenset(self.topology.devices) | frozenset(nic.host for nic in self.topology.host_nics)

    @cached_property
    def models_by_role(self) -> dict[Role, dict[str, list[Device]]]:
        """Per tier, the catalog models in use and their devices."""
        result: dict[Role, dict[str, list[Device]]] = {role: {} for role in Role}
        for device in self.topology.devices.values():
            result[device.role].setdefault(device.model, []).append(device)
        return result

    def tier_models(self) -> Iterator[tuple[Role, str, PlatformModel, list[Device]]]:
        for role, models in self.models_by_role.items():
            for name, devices in models.items():
                yield role, name, self.catalog.get(name), devices


__all__ = ["DesignContext"]
