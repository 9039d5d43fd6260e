"""The switch-services plan of one device, shared by every NOS view: management address and VRF,
NTP, syslog, DNS, LLDP, sFlow, gNMI and the login banner (intent/services.py). Each NOS only
decides how to spell it and which interface is its management port."""

from __future__ import annotations

from dataclasses import dataclass

from netgen.checks import DesignContext
from netgen.intent.services import effective_services
from netgen.topology.model import Device


@dataclass(frozen=True, slots=True)
class Syslog:
    address: str
    port: int
    protocol: str  # udp | tcp


@dataclass(frozen=True, slots=True)
class Lldp:
    hello_s: int
    multiplier: int

    @property
    def hold_s(self) -> int:
        return self.hello_s * self.multiplier


@dataclass(frozen=True, slots=True)
class Sflow:
    collectors: tuple[tuple[str, int], ...]  # (address, port)
    sample_rate: int
    polling_interval_s: int


@dataclass(frozen=True, slots=True)
class ServicesPlan:
    vrf: str | None  # None: no management network declared
    address: str | None  # "a.b.c.d/len" on the management port
    gateway: str | None
    ntp: tuple[str, ...]
    syslog: tuple[Syslog, ...]
    dns_servers: tuple[str, ...]
    dns_domain: str | None
    lldp: Lldp | None
    sflow: Sflow | None
    gnmi_port: int | None
    banner: tuple[str, ...]  # login banner lines (empty: none)

    @property
    def any(self) -> bool:
        return any((self.vrf, self.lldp, self.sflow, self.gnmi_port, self.banner))


def services_plan(ctx: DesignContext, device: Device) -> ServicesPlan:
    """The device's services after services.overrides (the design checks refused ambiguous ones)."""
    mgmt = ctx.fabric.services.management
    e = effective_services(ctx.fabric.services, device.role.value, device.zone, device.name)
    ntp, syslog, dns, lldp, sflow, telemetry, banner = e.ntp, e.syslog, e.dns, e.lldp, e.sflow, e.telemetry, e.banner
    return ServicesPlan(
        vrf=mgmt.vrf if mgmt else None,
        address=str(device.mgmt_ipv4) if device.mgmt_ipv4 else None,
        gateway=str(mgmt.gateway) if mgmt else None,
        ntp=tuple(str(a) for a in ntp.servers) if ntp else (),
        syslog=tuple(Syslog(str(h.address), h.port, h.protocol) for h in syslog.servers) if syslog else (),
        dns_servers=tuple(str(a) for a in dns.servers) if dns else (),
        dns_domain=dns.domain if dns else None,
        lldp=Lldp(lldp.hello_s, lldp.multiplier) if lldp else None,
        sflow=Sflow(tuple((str(c.address), c.port) for c in sflow.collectors), sflow.sample_rate,
                    sflow.polling_interval_s) if sflow else None,
        gnmi_port=telemetry.gnmi.port if telemetry else None,
        banner=tuple(banner.login.split("\n")) if banner else (),
    )


__all__ = ["Lldp", "ServicesPlan", "Sflow", "Syslog", "services_plan"]
