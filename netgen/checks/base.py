"""Design-check framework, modelled on ANTA: each check is a small class with a code, a title and a
`run()` that yields findings; a registry collects them so the runner has no list to maintain."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar, Protocol

from netgen.intent.catalog import Catalog, PlatformModel
from netgen.intent.fabric import Fabric
from netgen.topology.buffers import DeviceBufferPlan, plan_buffers
from netgen.topology.model import Device, Role, Topology


class Severity(StrEnum):
    ERROR = "error"  # the fabric must not be rendered
    WARNING = "warning"  # renders, but a human should read it


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    subject: str  # the object at fault: a device, a zone, an intent path
    message: str
    fix: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "subject": self.subject,
            "message": self.message,
            "fix": self.fix,
        }


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


class DesignCheck(Protocol):
    code: ClassVar[str]
    title: ClassVar[str]

    def run(self, ctx: DesignContext) -> Iterable[Finding]: ...


REGISTRY: dict[str, type[DesignCheck]] = {}


def register(check: type[DesignCheck]) -> type[DesignCheck]:
    if check.code in REGISTRY:
        raise ValueError(f"duplicate design check code {check.code}")
    REGISTRY[check.code] = check
    return check


def error(code: str, subject: str, message: str, fix: str) -> Finding:
    return Finding(code, Severity.ERROR, subject, message, fix)


def warning(code: str, subject: str, message: str, fix: str) -> Finding:
    return Finding(code, Severity.WARNING, subject, message, fix)


def devices_text(devices: list[Device], limit: int = 3) -> str:
    names = [d.name for d in devices[:limit]]
    more = len(devices) - limit
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")
