"""The switch-services plan of one device, shared by every NOS view: management address and VRF,
NTP, syslog, DNS, LLDP, sFlow, gNMI and the login banner (intent/services.py). Each NOS only
decides how to spell it and which interface is its management port."""

from __future__ import annotations

from dataclasses import dataclass

from netgen.checks import DesignContext
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
    s = ctx.fabric.services
    mgmt = s.management
    return ServicesPlan(
        vrf=mgmt.vrf if mgmt else None,
        address=str(device.mgmt_ipv4) if device.mgmt_ipv4 else None,
        gateway=str(mgmt.gateway) if mgmt else None,
        ntp=tuple(str(a) for a in s.ntp.servers) if s.ntp else (),
        syslog=tuple(Syslog(str(h.address), h.port, h.protocol) for h in s.syslog.servers) if s.syslog else (),
        dns_servers=tuple(str(a) for a in s.dns.servers) if s.dns else (),
        dns_domain=s.dns.domain if s.dns else None,
        lldp=Lldp(s.lldp.hello_s, s.lldp.multiplier) if s.lldp else None,
        sflow=Sflow(tuple((str(c.address), c.port) for c in s.sflow.collectors), s.sflow.sample_rate,
                    s.sflow.polling_interval_s) if s.sflow else None,
        gnmi_port=s.telemetry.gnmi.port if s.telemetry else None,
        banner=tuple(s.banner.login.split("\n")) if s.banner else (),
    )


__all__ = ["Lldp", "ServicesPlan", "Sflow", "Syslog", "services_plan"]
