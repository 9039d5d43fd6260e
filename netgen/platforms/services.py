"""The switch-services plan of one device, shared by every NOS view: management address and VRF,
NTP, syslog, DNS, LLDP, sFlow, gNMI and the login banner (intent/services.py). Each NOS only
decides how to spell it and which interface is its management port."""

from __future__ import annotations

from dataclasses import dataclass

from netgen.context import DesignContext
from netgen.intent.fabric import Fabric
from netgen.intent.secrets import SecretError, SecretRef, placeholder, read_hash
from netgen.intent.services import SHA512_CRYPT, effective_services
from netgen.intent.services import Aaa as IntentAaa
from netgen.rendered import RenderInputError
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
class Tacacs:
    servers: tuple[str, ...]
    timeout_s: int
    key: str  # a placeholder deploy fills (intent/secrets.py), never the key


@dataclass(frozen=True, slots=True)
class Radius:
    servers: tuple[str, ...]
    timeout_s: int
    retransmit: int
    key: str  # a placeholder deploy fills (intent/secrets.py), never the key


@dataclass(frozen=True, slots=True)
class Aaa:
    tacacs: Tacacs | None
    radius: Radius | None
    login: tuple[str, ...]  # methods in order: "tacacs" or "radius", "local"


@dataclass(frozen=True, slots=True)
class SnmpUser:
    name: str
    auth_key: str  # placeholders deploy fills (intent/secrets.py), never the passphrases
    priv_key: str


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
    aaa: Aaa | None
    snmp: tuple[SnmpUser, ...]  # read-only SNMPv3 users (empty: SNMP is the switch's own)

    @property
    def any(self) -> bool:
        return any((self.vrf, self.lldp, self.sflow, self.gnmi_port, self.banner, self.aaa, self.snmp))


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
        aaa=_aaa(e.aaa, e.sources["aaa"]),
        snmp=tuple(SnmpUser(u.name, placeholder(f"services.snmp.users[{i}].auth_key"),
                            placeholder(f"services.snmp.users[{i}].priv_key"))
                   for i, u in enumerate(ctx.fabric.services.snmp.users if ctx.fabric.services.snmp else [])),
    )


def _aaa(aaa: IntentAaa | None, source: str) -> Aaa | None:
    """`source`: the section's fabric-file path (services.aaa or an override's), which names its keys."""
    if aaa is None:
        return None
    tacacs, radius = aaa.tacacs, aaa.radius
    return Aaa(tacacs=Tacacs(tuple(str(a) for a in tacacs.servers), tacacs.timeout_s,
                             placeholder(f"{source}.tacacs.key")) if tacacs else None,
               radius=Radius(tuple(str(a) for a in radius.servers), radius.timeout_s, radius.retransmit,
                             placeholder(f"{source}.radius.key")) if radius else None,
               login=tuple(aaa.login))


@dataclass(frozen=True, slots=True)
class LocalUser:
    name: str
    privilege: int
    role: str
    sha512: str  # sha512-crypt, as the NOS stores it


def _hash(ref: SecretRef, field: str) -> str:
    """Read where it is once per render (local_users), never across renders: a value kept longer
    could outlive a rotation."""
    try:
        return read_hash(ref, field, SHA512_CRYPT)  # as `netgen validate` checks it (intent/loader.py)
    except SecretError as exc:
        raise RenderInputError(str(exc)) from None


# The users of the last context asked for: every EOS switch of a render asks, and a hash in an
# Ansible vault costs a key derivation (and perhaps a password script) per read. A new context (the
# next load, the next render) reads them again.
_USERS_OF: list[tuple[DesignContext, tuple[LocalUser, ...]]] = []


def local_users(ctx: DesignContext) -> tuple[LocalUser, ...]:
    """services.users with their hashes read from where they are (RenderInputError if they cannot be),
    once per context."""
    if _USERS_OF and _USERS_OF[0][0] is ctx:
        return _USERS_OF[0][1]
    users = read_local_users(ctx.fabric)
    _USERS_OF[:] = [(ctx, users)]
    return users


def read_local_users(fabric: Fabric) -> tuple[LocalUser, ...]:
    """services.users with their hashes read now, from where they are (RenderInputError if they
    cannot be)."""
    return tuple(LocalUser(u.name, u.privilege, u.role, _hash(u.sha512, f"services.users[{i}].sha512"))
                 for i, u in enumerate(fabric.services.users))


__all__ = ["Aaa", "Lldp", "LocalUser", "Radius", "ServicesPlan", "Sflow", "SnmpUser", "Syslog", "Tacacs", "local_users",
           "read_local_users", "services_plan"]
