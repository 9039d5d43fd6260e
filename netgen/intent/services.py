"""The switch's own services: out-of-band management, NTP, syslog, DNS, LLDP, sFlow, gNMI
telemetry and the login banner. Every section is optional: a fabric file without `services:`
renders none of it, and the deploy then keeps what the switch already has (deploy.yaml
`ownership`). A declared section is rendered for every switch, on both NOSes, and from then on
belongs to netgen: what a switch has there beyond the intent is removed by the next deploy.

Defaults are tagged as in fabric.py: [industry: who] for a documented vendor default, [netgen]
where netgen chose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, model_validator

from netgen.intent.scope import LAYERS, Scoped
from netgen.intent.secrets import SecretRef
from netgen.intent.types import IntentModel, SafeName

# A DNS name (RFC 1123 labels), lower or upper case, no trailing dot.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
DOMAIN_PATTERN = rf"^({_LABEL}\.)*{_LABEL}$"
DomainName = Annotated[str, StringConstraints(pattern=DOMAIN_PATTERN, max_length=253)]
MAX_ADDRESS_TEXT = 45  # 'ffff:...:255.255.255.255'


def _address_text(value: object) -> object:
    if isinstance(value, str) and len(value) > MAX_ADDRESS_TEXT:
        raise ValueError(f"not an IP address: longer than {MAX_ADDRESS_TEXT} characters")
    return value


ServerAddress = Annotated[IPv4Address | IPv6Address, BeforeValidator(_address_text)]
V4Address = Annotated[IPv4Address, BeforeValidator(_address_text)]
V4Prefix = Annotated[IPv4Network, BeforeValidator(_address_text)]

# Banner text reaches an EOS `banner login` block (ended by a line `EOF`) and a SONiC CONFIG_DB
# string: printable ASCII and newlines only, no line that EOS would read as the end of the block.
_BANNER_LINE = re.compile(r"^[ -~]{0,200}$")


def _banner(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) > 40:
        raise ValueError("at most 40 lines")
    for number, line in enumerate(lines, start=1):
        if not _BANNER_LINE.match(line):
            raise ValueError(f"line {number}: only printable ASCII (no tab or control character), <= 200 chars")
        if line.strip() == "EOF":
            raise ValueError(f"line {number}: a line 'EOF' would end the banner early on EOS")
        if line.lstrip().startswith("!") or line.strip() == "end":
            # config files and sessions treat these as a comment or the end of the config
            raise ValueError(f"line {number}: a line starting with '!' or reading 'end' would be taken for config")
    return "\n".join(lines)


# The pattern is the coarse gate (printable ASCII and newlines) the schema and the injection guard
# see; _banner then checks line by line.
BannerText = Annotated[str, StringConstraints(pattern=r"^[ -~\n]*$", max_length=8200), AfterValidator(_banner)]


class ManagementNetwork(IntentModel):
    """Out-of-band management: one IPv4 address per switch on its management port, in a VRF, with
    a default route to the gateway. Addresses come from `prefix` by position, the same way as
    loopbacks (slot 0 for the ATSW layer, slot N for zone N; RTSWs in the lower half of a slot by
    rack number, CTSWs and ATSWs in the upper half), so adding a rack never moves one; `devices`
    pins any switch to an address from your IPAM instead."""

    prefix: V4Prefix = Field(description="The management subnet every switch sits in.")
    gateway: V4Address = Field(description="Default gateway, inside the prefix.")
    vrf: SafeName = Field(default="mgmt", description="Management VRF. SONiC's is always 'mgmt'. [industry: SONiC]")
    devices: dict[SafeName, V4Address] = Field(
        default_factory=dict, description="Fixed addresses by switch name (an IPAM table); the rest from the prefix.")

    @model_validator(mode="after")
    def _gateway_inside(self) -> ManagementNetwork:
        if self.gateway not in self.prefix:
            raise ValueError(f"gateway {self.gateway} is outside prefix {self.prefix}")
        return self


class Ntp(IntentModel):
    servers: list[ServerAddress] = Field(min_length=1, max_length=8, description="NTP servers, reached in the VRF.")


class SyslogServer(IntentModel):
    address: ServerAddress = Field(description="Syslog server, reached in the management VRF.")
    port: int = Field(default=514, ge=1, le=65535, description="[industry: RFC 5426 514/udp]")
    protocol: Literal["udp", "tcp"] = Field(default="udp", description="Transport. [industry: RFC 5426 udp]")


class Syslog(IntentModel):
    servers: list[SyslogServer] = Field(min_length=1, max_length=8, description="Remote syslog servers.")


class Dns(IntentModel):
    servers: list[ServerAddress] = Field(min_length=1, max_length=3, description="Name servers (resolv.conf: 3).")
    domain: DomainName | None = Field(default=None, description="Search domain.")


class Lldp(IntentModel):
    hello_s: int = Field(default=30, ge=5, le=3600, description="Transmit interval. [industry: EOS, SONiC 30 s]")
    multiplier: int = Field(default=4, ge=2, le=10, description="Hold time = hello x multiplier. [industry: 4]")


class SflowCollector(IntentModel):
    address: ServerAddress = Field(description="sFlow collector, reached in the management VRF.")
    port: int = Field(default=6343, ge=1, le=65535, description="[industry: sFlow 6343/udp]")


class Sflow(IntentModel):
    """Packet sampling on every fabric port: the only per-flow view of a RoCE fabric at line rate."""

    collectors: list[SflowCollector] = Field(min_length=1, max_length=2, description="Collectors (SONiC: at most 2).")
    # EOS takes a rate under 16384 only as `sflow sample dangerous N` (AVD eos/sflow.j2): not offered.
    sample_rate: int = Field(default=32768, ge=16384, le=8388608,
                             description="1 in N packets (sonic-sflow.yang: at most 8388608). [netgen]")
    polling_interval_s: int = Field(default=20, ge=5, le=300, description="Counter export. [industry: sFlow 20 s]")


class Gnmi(IntentModel):
    """Streaming telemetry: the switch's gNMI server in the management VRF."""

    port: int = Field(default=6030, ge=1024, le=65535, description="gNMI port. [industry: EOS 6030]")


class Telemetry(IntentModel):
    gnmi: Gnmi = Field(default_factory=Gnmi, description="gNMI server settings.")


class Banner(IntentModel):
    login: BannerText = Field(description="Shown before login.")


# sha512-crypt, the form EOS stores a local user's password in (`secret sha512 $6$...`; AVD
# eos/local-users.j2 `sha512_password`); `openssl passwd -6` or `mkpasswd -m sha-512` make one.
SHA512_CRYPT = re.compile(r"^\$6\$(rounds=[0-9]{4,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}$")


class LocalUser(IntentModel):
    """A local account on every EOS switch (SONiC's LOCAL_USER table is not rendered yet: NG509).
    Only its sha512-crypt hash is rendered, read from where `sha512` points at render time."""

    name: SafeName = Field(description="User name.")
    privilege: int = Field(default=15, ge=0, le=15, description="EOS privilege level. [industry: EOS 0-15]")
    role: SafeName = Field(default="network-admin", description="EOS role. [industry: EOS network-admin]")
    sha512: SecretRef = Field(description="Where the user's sha512-crypt hash ($6$...) is; never the password.")


class Tacacs(IntentModel):
    """TACACS+ servers, reached in the management VRF from the management port. The shared key is
    never rendered: configs carry a placeholder that `netgen deploy` fills on the way to the switch."""

    servers: list[V4Address] = Field(min_length=1, max_length=8,
                                     description="TACACS+ servers, tried in order (SONiC: at most 8).")
    key: SecretRef = Field(description="Where the shared key is (env, file or vault); never the key itself.")
    # EOS takes 1-1000 s (AVD schema tacacs_servers.hosts[].timeout); SONiC 1-60 (sonic-system-tacacs.yang)
    timeout_s: int = Field(default=5, ge=1, le=60, description="Per-server timeout. [industry: EOS, SONiC 5 s]")

    @model_validator(mode="after")
    def _unique(self) -> Tacacs:
        if len(set(self.servers)) != len(self.servers):
            raise ValueError("servers: an address is given twice")
        return self


class Radius(IntentModel):
    """RADIUS servers, reached in the management VRF from the management port, the shared key by
    reference like the TACACS+ one (placeholders the deploy fills)."""

    servers: list[V4Address] = Field(min_length=1, max_length=8,
                                     description="RADIUS servers, tried in order (SONiC: at most 8).")
    key: SecretRef = Field(description="Where the shared key is (env, file or vault); never the key itself.")
    # SONiC 1-60 s and 0-10 retransmits (sonic-system-radius.yang); EOS takes more (AVD schema
    # radius_server.hosts[].timeout 1-1000, retransmit 0-100)
    timeout_s: int = Field(default=5, ge=1, le=60, description="Per-server timeout. [industry: EOS, SONiC 5 s]")
    retransmit: int = Field(default=3, ge=0, le=10, description="Retries per server. [industry: EOS, SONiC 3]")

    @model_validator(mode="after")
    def _unique(self) -> Radius:
        if len(set(self.servers)) != len(self.servers):
            raise ValueError("servers: an address is given twice")
        return self


LoginMethod = Literal["tacacs", "radius", "local"]


def _local_login() -> list[LoginMethod]:
    return ["local"]


class Aaa(IntentModel):
    """Who may log in, and how: the login method list, tried in order. A method is tried only when
    the one before it cannot answer (every server down); a server that rejects a user ends the login.
    So the account `netgen deploy` logs in with must exist on the TACACS+ servers once `tacacs` comes
    first, or the next deploy is locked out."""

    tacacs: Tacacs | None = Field(default=None, description="TACACS+ servers and their shared key.")
    radius: Radius | None = Field(default=None, description="RADIUS servers and their shared key.")
    login: list[LoginMethod] = Field(default_factory=_local_login, min_length=1, max_length=2,
                                     description="Login methods in order, e.g. [tacacs, local] or [radius, local].")

    @model_validator(mode="after")
    def _methods(self) -> Aaa:
        if len(set(self.login)) != len(self.login):
            raise ValueError("login: a method is given twice")
        # SONiC's hostcfgd writes PAM for one remote method beside local and falls back to local
        # only for any other list (sonic-host-services data/templates/common-auth-sonic.j2)
        if "tacacs" in self.login and "radius" in self.login:
            raise ValueError("login: use one remote method, tacacs or radius (SONiC takes one beside local)")
        for method in ("tacacs", "radius"):
            if method in self.login and getattr(self, method) is None:
                raise ValueError(f"login: '{method}' needs aaa.{method} (servers, key)")
            if getattr(self, method) is not None and method not in self.login:
                raise ValueError(f"{method}: its servers are not used: put '{method}' in login")
        return self


# SNMP user names: SONiC's key (sonic-snmp.yang SNMP_USER: 4-32 characters, no space, ':', '@', ',',
# quote or backslash) within netgen's safe names.
SnmpUserName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{3,31}$")]


class SnmpUser(IntentModel):
    """A read-only SNMPv3 user with authentication and privacy: SHA (SHA-1) and AES-128, the pair
    both NOSes take (EOS `auth sha ... priv aes ...`, AVD eos/snmp-server.j2; SONiC SNMP_USER
    `SHA` / `AES`). Its passphrases are by reference, like every secret: never rendered, filled by
    the deploy (an SNMP agent needs them in a reversible form)."""

    name: SnmpUserName = Field(description="The SNMPv3 user name (4-32 characters).")
    auth_key: SecretRef = Field(description="Where its authentication passphrase (SHA) is; 8+ characters.")
    priv_key: SecretRef = Field(description="Where its privacy passphrase (AES-128) is; 8+ characters.")


class Snmp(IntentModel):
    """SNMPv3 polling in the management VRF, read-only, authenticated and encrypted (no v1/v2c
    communities: a community string is a password sent in clear)."""

    users: list[SnmpUser] = Field(min_length=1, max_length=8, description="Read-only SNMPv3 users.")

    @model_validator(mode="after")
    def _unique(self) -> Snmp:
        names = [user.name for user in self.users]
        if len(set(names)) != len(names):
            raise ValueError("users: a name is given twice")
        return self


# Sections an override may replace for some switches (management is per switch already: devices).
OVERRIDABLE = ("ntp", "syslog", "dns", "lldp", "sflow", "telemetry", "banner", "aaa")


class ServicesOverride(Scoped):
    """Sections for the switches in a scope, replacing the fabric-wide ones there whole (a zone's
    own NTP servers, a lower sFlow rate on the ATSWs). Layered like custom_config: the fabric-wide
    section, then tier, zone and device overrides, the narrowest winning; two overrides of one layer
    giving the same section to one switch are a design error (NG603)."""

    ntp: Ntp | None = Field(default=None, description="Time servers for these switches.")
    syslog: Syslog | None = Field(default=None, description="Remote logging for these switches.")
    dns: Dns | None = Field(default=None, description="Name resolution for these switches.")
    lldp: Lldp | None = Field(default=None, description="LLDP timers for these switches.")
    sflow: Sflow | None = Field(default=None, description="Packet sampling for these switches.")
    telemetry: Telemetry | None = Field(default=None, description="gNMI for these switches.")
    banner: Banner | None = Field(default=None, description="Login banner for these switches.")
    aaa: Aaa | None = Field(default=None, description="Login methods and servers for these switches (the"
                                                      " deploy account must exist on their servers too).")

    @model_validator(mode="after")
    def _useful(self) -> ServicesOverride:
        if not (self.tiers or self.zones or self.devices):
            raise ValueError("an override needs tiers, zones or devices (for every switch, set the section itself)")
        if not self.sections():
            raise ValueError(f"give at least one of {', '.join(OVERRIDABLE)}")
        return self

    def sections(self) -> list[str]:
        return [name for name in OVERRIDABLE if getattr(self, name) is not None]


class AmbiguousOverride(ValueError):
    """Two overrides of one layer give the same section to one switch: neither can win."""

    def __init__(self, section: str, layer: str, device: str, first: str, second: str) -> None:
        self.summary = f"{first} and {second} (both of layer {layer}) give {section} to"
        super().__init__(f"{self.summary} {device}: narrow one's scope, or merge them")
        self.key = f"{first}|{second}"


@dataclass(frozen=True, slots=True)
class EffectiveServices:
    """One switch's service sections after the overrides, and the fabric-file path of each."""

    ntp: Ntp | None
    syslog: Syslog | None
    dns: Dns | None
    lldp: Lldp | None
    sflow: Sflow | None
    telemetry: Telemetry | None
    banner: Banner | None
    aaa: Aaa | None
    sources: dict[str, str]  # section -> services.ntp, services.overrides[2].ntp, ...


def effective_services(services: Services, role: str, zone: int | None, device: str) -> EffectiveServices:
    """Raises AmbiguousOverride when two overrides of one layer give the switch the same section."""
    values: dict[str, Any] = {name: getattr(services, name) for name in OVERRIDABLE}
    sources = {name: f"services.{name}" for name in OVERRIDABLE}
    layer_of: dict[str, str] = {}
    hits = sorted(((index, o) for index, o in enumerate(services.overrides) if o.applies(role, zone, device)),
                  key=lambda hit: LAYERS.index(hit[1].layer))
    for index, override in hits:
        for name in override.sections():
            source = f"services.overrides[{index}].{name}"
            if layer_of.get(name) == override.layer:
                raise AmbiguousOverride(name, override.layer, device, sources[name], source)
            values[name], sources[name], layer_of[name] = getattr(override, name), source, override.layer
    return EffectiveServices(**values, sources=sources)


class Services(IntentModel):
    management: ManagementNetwork | None = Field(default=None, description="Out-of-band management network.")
    ntp: Ntp | None = Field(default=None, description="Time servers.")
    syslog: Syslog | None = Field(default=None, description="Remote logging.")
    dns: Dns | None = Field(default=None, description="Name resolution on the switch.")
    lldp: Lldp | None = Field(default=None, description="LLDP timers (LLDP runs by default on both NOSes).")
    sflow: Sflow | None = Field(default=None, description="Packet sampling to collectors.")
    telemetry: Telemetry | None = Field(default=None, description="Streaming telemetry (gNMI).")
    banner: Banner | None = Field(default=None, description="Login banner.")
    aaa: Aaa | None = Field(default=None, description="Login methods and TACACS+ or RADIUS servers.")
    snmp: Snmp | None = Field(default=None, description="SNMPv3 polling (read-only users, passphrases by reference).")
    users: list[LocalUser] = Field(default_factory=list, max_length=32,
                                   description="Local accounts on the EOS switches (hashes by reference).")
    overrides: list[ServicesOverride] = Field(
        default_factory=list, max_length=200,
        description="Sections for some tiers, zones or switches, replacing the ones above there (narrowest wins).")

    @model_validator(mode="after")
    def _need_management(self) -> Services:
        needs = [name for name in ("ntp", "syslog", "dns", "sflow", "telemetry", "aaa", "snmp")
                 if getattr(self, name) is not None or any(getattr(o, name, None) is not None for o in self.overrides)]
        names = [user.name for user in self.users]
        if len(set(names)) != len(names):
            raise ValueError(f"users: {sorted({n for n in names if names.count(n) > 1})[0]!r} is given twice")
        if needs and self.management is None:
            raise ValueError(f"{', '.join(needs)} reach their servers through the management network: add"
                             " services.management (prefix, gateway)")
        return self

    def references(self) -> dict[str, SecretRef]:
        """Every secret reference in the section, by fabric-file path."""
        refs = {f"services.users[{i}].sha512": user.sha512 for i, user in enumerate(self.users)}
        return refs | self.shared_secrets()

    def shared_secrets(self) -> dict[str, SecretRef]:
        """Secrets a switch keeps in a reversible form (a TACACS+ key): rendered as placeholders that
        deploy fills, by their fabric-file path."""
        secrets: dict[str, SecretRef] = {}
        sections = [("services.aaa", self.aaa)] + [(f"services.overrides[{i}].aaa", o.aaa)
                                                    for i, o in enumerate(self.overrides)]
        for where, aaa in sections:
            if aaa is not None and aaa.tacacs is not None:
                secrets[f"{where}.tacacs.key"] = aaa.tacacs.key
            if aaa is not None and aaa.radius is not None:
                secrets[f"{where}.radius.key"] = aaa.radius.key
        for index, user in enumerate(self.snmp.users if self.snmp else []):
            secrets[f"services.snmp.users[{index}].auth_key"] = user.auth_key
            secrets[f"services.snmp.users[{index}].priv_key"] = user.priv_key
        return secrets


__all__ = [
    "OVERRIDABLE",
    "SHA512_CRYPT",
    "Aaa",
    "AmbiguousOverride",
    "Banner",
    "Dns",
    "EffectiveServices",
    "Gnmi",
    "Lldp",
    "LocalUser",
    "LoginMethod",
    "ManagementNetwork",
    "Ntp",
    "Radius",
    "Services",
    "ServicesOverride",
    "Sflow",
    "SflowCollector",
    "Snmp",
    "SnmpUser",
    "Syslog",
    "SyslogServer",
    "Tacacs",
    "Telemetry",
    "effective_services",
]
