"""A typed model of every config_db.json table netgen emits, checked the way SONiC's YANG does.

SONiC's `config replace` / `config reload` translate config_db into its YANG models and reject
unknown tables and fields, wrong types, broken `must` constraints and dangling leafrefs. This
module restates those rules (written from SONiC master's YANG models, sonic-buildimage
src/sonic-yang-models/yang-models/*.yang;
nothing is imported or copied from YANG) so a rendered config fails here instead of on the switch:

* one small pydantic model per table entry (field types, patterns, ranges, enums, mandatory and
  unknown fields; every value is a JSON string except leaf-lists, which are JSON arrays);
* `TABLES`: table name -> the key shapes it accepts (YANG picks the list by the number of `|`
  parts) and the entry model for each shape;
* plain Python for what spans entries: `must` constraints, leafrefs and GCU's lane rule.

The management-plane tables (MGMT_*, NTP*, SYSLOG_SERVER, DNS_*, LLDP*, SFLOW*, BANNER_MESSAGE,
GNMI*, SNMP*, AAA, TACPLUS*, RADIUS*) each name the sonic-*.yang module they restate; where netgen
is stricter than that YANG, the check says so.

`check_config_db(config)` returns human-readable problems, each starting with `TABLE|key`.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Annotated, Any, Literal, TypeVar, get_args

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, ValidationError
from pydantic_core import ErrorDetails

__all__ = ["TABLES", "check_config_db"]

T = TypeVar("T")
Check = Callable[[str], str]  # returns the value or raises ValueError with the reason


# ---------------------------------------------------------------------------------------------
# Value checks. Each returns the value unchanged or raises ValueError; they back both the
# pydantic field types (via AfterValidator) and the key-part checks.


def _pattern(regex: str) -> Check:
    """A YANG pattern: the whole value must match (YANG patterns are implicitly anchored)."""
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if compiled.fullmatch(value) is None:
            raise ValueError(f"{value!r} does not match {regex}")
        return value

    return check


def _integer(lo: int, hi: int) -> Check:
    """A YANG integer type written as a decimal string, within lo..hi."""

    def check(value: str) -> str:
        if re.fullmatch(r"-?[0-9]+", value) is None or not lo <= int(value) <= hi:
            raise ValueError(f"{value!r} is not an integer in {lo}..{hi}")
        return value

    return check


def _length(lo: int, hi: int) -> Check:
    def check(value: str) -> str:
        if not lo <= len(value) <= hi:
            raise ValueError(f"{value!r} must be {lo}..{hi} characters long")
        return value

    return check


def _one_of(*words: str) -> Check:
    def check(value: str) -> str:
        if value not in words:
            raise ValueError(f"{value!r} is not one of {', '.join(words)}")
        return value

    return check


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# An IPv4 prefix as netgen writes one (no leading zeros): what the checks below accept, decided at C
# speed (a rendered switch has a hundred, every one new); anything else takes the checks.
_PLAIN_IPV4_PREFIX = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}/(?:3[0-2]|[12]?[0-9])")


def _ip_prefix(value: str) -> str:
    """sonic-ip4-prefix | sonic-ip6-prefix: an address with an explicit length; host bits may be set."""
    if _PLAIN_IPV4_PREFIX.fullmatch(value):
        return value
    address, slash, length = value.partition("/")
    if "%" in address:
        raise ValueError(f"{value!r}: a prefix carries no zone index")
    try:
        ipaddress.ip_interface(value)
        ipaddress.ip_address(address)
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 prefix") from None
    if not slash or not length.isdigit():
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 prefix (address/length)")
    return value


def _ip_address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an IP address") from None
    return value


def _ipv6_address(value: str) -> str:
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv6 address") from None
    return value


def _unique(values: list[T]) -> list[T]:
    """YANG leaf-lists of configuration data hold each value at most once."""
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"repeats {', '.join(repeated)}")
    return values


def _comma_list(item: Check, *, all_word: bool = False) -> Check:
    """A leaf-list that config_db stores as ONE comma-separated string (PORT.adv_speeds, profile_list)."""

    def check(value: str) -> str:
        items = value.split(",")
        if all_word and "all" in items and len(items) > 1:
            raise ValueError(f"{value!r}: 'all' must stand alone")
        for part in items:
            if not (all_word and part == "all"):
                item(part)
        _unique(items)
        return value

    return check


def _all(*checks: Check) -> Check:
    """Several checks on one key part, in order."""

    def check(value: str) -> str:
        for each in checks:
            each(value)
        return value

    return check


def _without(banned: str) -> Check:
    """A string pattern of the form [^...]*: none of `banned` (the value is not quoted: it may be a secret)."""

    def check(value: str) -> str:
        found = sorted({c for c in value if c in banned})
        if found:
            raise ValueError(f"must not contain {', '.join(repr(c) for c in found)}")
        return value

    return check


def _address(value: str) -> str:
    """inet:ip-address as netgen writes it: IPv4 or IPv6, no zone index (YANG would take '%zone')."""
    if "%" in value:
        raise ValueError(f"{value!r}: netgen writes no zone index")
    return _ip_address(value)


def _prefix_or_address(value: str) -> str:
    """MGMT_INTERFACE.forced_mgmt_routes: a sonic-ip-prefix or an inet:ip-address."""
    return _ip_prefix(value) if "/" in value else _address(value)


_DNS_LABEL = re.compile(r"[a-zA-Z0-9]|[a-zA-Z0-9_][a-zA-Z0-9_-]{0,61}[a-zA-Z0-9]")


def _host(value: str) -> str:
    """inet:host: an IP address, or a DNS name of at most 253 characters: dot-separated labels of 1..63
    letters, digits, '-' and '_' that end in a letter or digit and do not start with '-', with an
    optional final dot. netgen reads a value of digits and dots only as an address (YANG would take
    '10.0.0.300', or '.', as a name)."""
    if ":" in value or "%" in value or re.fullmatch(r"[0-9.]*", value):
        return _address(value)
    labels = value.removesuffix(".").split(".")
    if len(value) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"{value!r} is neither an IP address nor a host name")
    return value


def _leaf_list(values: list[T]) -> list[T]:
    """A leaf-list netgen writes: each value once, and never empty (leave the field out instead:
    CONFIG_DB keeps [] as one empty-string element, which its readers then iterate)."""
    if not values:
        raise ValueError("is empty: leave the field out instead of writing []")
    return _unique(values)


# netgen's deploy-time stand-in for a secret; the real value replaces it on the way to the switch.
SECRET_PLACEHOLDER = re.compile(r"__NETGEN_SECRET_[A-Z0-9_]{1,64}__")
PLACEHOLDER_FIXED = len("__NETGEN_SECRET___")  # 18 characters besides NAME


def _secret(lo: int, hi: int, banned: str) -> Check:
    """A shared secret or password: lo..hi characters, none of `banned`; the value is never quoted.
    A placeholder __NETGEN_SECRET_<NAME>__ is such a string while it fits (the real secret that
    replaces it at deploy time must fit the same rule)."""
    chars = _without(banned)

    def check(value: str) -> str:
        if not lo <= len(value) <= hi:
            hint = ""
            if SECRET_PLACEHOLDER.fullmatch(value):
                hint = f"; a placeholder's NAME may have at most {hi - PLACEHOLDER_FIXED} characters here"
            raise ValueError(f"must be {lo}..{hi} characters long (has {len(value)}{hint})")
        return chars(value)

    return check


def _vlan_like(value: str) -> bool:
    """The Vlan name pattern sflow/tacacs/radius source interfaces accept (their VLAN leafref is commented
    out in YANG): Vlan + 1..3 digits (leading zeros allowed) or 1000..4094."""
    match = re.fullmatch(r"Vlan([0-9]{1,4})", value)
    return match is not None and (len(match.group(1)) < 4 or 1000 <= int(match.group(1)) <= 4094)


def _sflow_polling(value: str) -> str:
    _integer(0, 300)(value)
    if 1 <= int(value) <= 4:
        raise ValueError(f"{value!r} is not 0 or 5..300")
    return value


def _one_interface(value: str) -> str:
    """NTP|global.src_intf: a YANG leaf-list that CONFIG_DB keeps as a ';'-separated string. SONiC's
    chrony.conf.j2 compares and prefix-matches it as ONE interface name, so netgen writes exactly one."""
    if not value or ";" in value:
        raise ValueError(f"{value!r} is not one interface name (chrony.conf.j2 binds to a single src_intf)")
    return value


# ---------------------------------------------------------------------------------------------
# Field types (all JSON strings)

UInt8 = Annotated[str, AfterValidator(_integer(0, 255))]
UInt16 = Annotated[str, AfterValidator(_integer(0, 65535))]
UInt32 = Annotated[str, AfterValidator(_integer(0, 2**32 - 1))]
UInt64 = Annotated[str, AfterValidator(_integer(0, 2**64 - 1))]
Int32 = Annotated[str, AfterValidator(_integer(-(2**31), 2**31 - 1))]
Boolean = Literal["true", "false"]  # YANG boolean
BooleanType = Literal["true", "false", "True", "False"]  # stypes:boolean_type
UpDown = Literal["up", "down"]
EnableDisable = Literal["enable", "disable"]
EnabledDisabled = Literal["enabled", "disabled"]
OnOff = Literal["on", "off"]
Mac = Annotated[str, AfterValidator(_pattern(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}"))]
Hostname = Annotated[str, AfterValidator(_length(1, 63))]
String1To255 = Annotated[str, AfterValidator(_length(1, 255))]
String1To16 = Annotated[str, AfterValidator(_length(1, 16))]
IpAddress = Annotated[str, AfterValidator(_ip_address)]
Ipv4Address = Annotated[str, AfterValidator(_pattern(r"(([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])\.){3}"
                                                     r"([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])"))]
Ipv6Address = Annotated[str, AfterValidator(_ipv6_address)]
NatZone = Annotated[str, AfterValidator(_integer(0, 3))]
Speed = Annotated[str, AfterValidator(_integer(1, 1_600_000))]  # Mb/s
Lanes = Annotated[str, AfterValidator(_length(1, 128)),
                  AfterValidator(_pattern(r"[0-9]+(,[0-9]+)*"))]  # GCU: numeric lanes, comma-separated
InterfaceType = Literal["CR", "CR2", "CR4", "CR8", "SR", "SR2", "SR4", "SR8", "LR", "LR4", "LR8", "KR", "KR4",
                        "KR8", "CAUI", "GMII", "SFI", "XLAUI", "KR2", "CAUI4", "XAUI", "XFI", "XGMII", "none"]
# Name of a QoS map, a WRED profile or a CABLE_LENGTH entry: 1..32 chars, starts alphanumeric, no dots.
MAP_NAME = r"[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}"
PriorityList = Annotated[str, AfterValidator(_pattern(r"([0-7](,[0-7])*)?"))]  # "" = none
Tc = Annotated[str, AfterValidator(_integer(0, 15))]  # stypes:tc_type
Dscp = Annotated[str, AfterValidator(_pattern(r"6[0-3]|[1-5][0-9]?|[0-9]"))]  # 0..63, no leading zeros
Digit0To7 = Annotated[str, AfterValidator(_pattern(r"[0-7]"))]
Digit0To9 = Annotated[str, AfterValidator(_pattern(r"[0-9]"))]
ProfileList = Annotated[str, AfterValidator(_comma_list(_length(1, 10_000)))]

HashField = Literal["IN_PORT", "DST_MAC", "SRC_MAC", "ETHERTYPE", "VLAN_ID", "IP_PROTOCOL", "DST_IP", "SRC_IP",
                    "L4_DST_PORT", "L4_SRC_PORT", "INNER_DST_MAC", "INNER_SRC_MAC", "INNER_ETHERTYPE",
                    "INNER_IP_PROTOCOL", "INNER_DST_IP", "INNER_SRC_IP", "INNER_L4_DST_PORT", "INNER_L4_SRC_PORT",
                    "IPV6_FLOW_LABEL"]
# Open PR sonic-buildimage#27335 (HLD SONiC#2100): two more enum values and per-packet-type lists.
RDMA_HASH_VALUES = ("RDMA_BTH_OPCODE", "RDMA_BTH_DEST_QP")
RdmaHashField = Literal[HashField, "RDMA_BTH_OPCODE", "RDMA_BTH_DEST_QP"]
HashList = Annotated[list[HashField], AfterValidator(_unique)]
RdmaHashList = Annotated[list[RdmaHashField], AfterValidator(_unique)]
HashAlgorithm = Literal["CRC", "XOR", "RANDOM", "CRC_32LO", "CRC_32HI", "CRC_CCITT", "CRC_XOR"]


class _Entry(BaseModel):
    """One config_db entry: strings only (strict), unknown fields rejected, nothing coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# ---------------------------------------------------------------------------------------------
# DEVICE_METADATA|localhost


class DeviceMetadata(_Entry):
    hostname: Hostname | None = None
    bgp_asn: UInt32 | None = None  # plain decimal; asdot ("1.1") is not valid
    type: Literal[
        "ToRRouter", "LeafRouter", "SpineChassisFrontendRouter", "ChassisBackendRouter", "ASIC", "MgmtToRRouter",
        "MgmtLeafRouter", "MgmtSpineRouter", "MgmtAccessRouter", "LowerMgmtAggregator", "UpperMgmtAggregator",
        "SpineRouter", "BackEndSpineRouter", "UpperSpineRouter", "FabricSpineRouter", "LowerSpineRouter",
        "BackEndToRRouter", "BackEndLeafRouter", "EPMS", "MgmtTsToR", "BmcMgmtToRRouter", "MiniTs", "LeafTs",
        "SpineTs", "CoreTs", "ConsoleServer", "TerminalServer", "SonicHost", "SmartSwitchDPU", "FilterLeaf",
        "NetworkBmc", "MseeRouter", "not-provisioned", "LowerRegionalHub", "FabricRegionalHub",
        "UpperRegionalHub"] | None = None
    buffer_model: Literal["dynamic", "traditional"] | None = None
    docker_routing_config_mode: Literal["separated", "unified", "split", "split-unified"] | None = None
    hwsku: String1To255 | None = None
    platform: String1To255 | None = None
    mac: Mac | None = None
    default_pfcwd_status: EnableDisable | None = None
    deployment_id: UInt32 | None = None
    frr_mgmt_framework_config: Boolean | None = None
    synchronous_mode: EnableDisable | None = None
    default_bgp_status: UpDown | None = None
    yang_config_validation: EnableDisable | None = None
    asic_id: String1To16 | None = None
    switch_type: Literal["chassis-packet", "fabric", "npu", "voq", "dpu", "dummy-sup"] | None = None
    subtype: Literal["DualToR", "SmartSwitch", "Supervisor", "UpstreamLC", "DownstreamLC"] | None = None
    resource_type: str | None = None
    sub_role: str | None = None
    downstream_subrole: str | None = None
    cloudtype: str | None = None
    region: str | None = None
    cluster: str | None = None
    mgmt_type: str | None = None
    slice_type: str | None = None
    location_type: str | None = None
    asic_name: str | None = None
    storage_device: Boolean | None = None
    bgp_adv_lo_prefix_as_128: Boolean | None = None
    create_only_config_db_buffers: Boolean | None = None
    ring_thread_enabled: Boolean | None = None
    syslog_with_osversion: Boolean | None = None
    syslog_counter: Boolean | None = None
    use_template_render_for_restore: Boolean | None = None
    orch_northbond_dash_zmq_enabled: Boolean | None = None
    has_sonic_dhcpv4_relay: BooleanType | None = None
    suppress_fib_pending: EnabledDisabled | None = Field(default=None, alias="suppress-fib-pending")
    nexthop_group: EnabledDisabled | None = None
    zebra_nexthop: EnabledDisabled | None = None
    bgp_router_id: Ipv4Address | None = None
    timezone: String1To255 | None = None
    rack_mgmt_map: Annotated[str, AfterValidator(_length(0, 128))] | None = None
    peer_switch: Hostname | None = None
    chassis_hostname: Hostname | None = None
    switch_id: UInt16 | None = None
    max_cores: UInt8 | None = None
    dhcp_server: EnabledDisabled | None = None
    dpu_auto_recovery: EnableDisable | None = None
    supporting_bulk_counter_groups: Annotated[list[str], AfterValidator(_unique)] | None = None
    t2_group_asns: Annotated[list[UInt32], AfterValidator(_unique)] | None = None
    anchor_route_source: Annotated[list[str], AfterValidator(_unique)] | None = None


# ---------------------------------------------------------------------------------------------
# PORT|<name> and CABLE_LENGTH|<name>


class Port(_Entry):
    lanes: Lanes
    speed: Speed
    mtu: Annotated[str, AfterValidator(_integer(68, 9216))] | None = None
    fec: Literal["rs", "fc", "none", "auto"] | None = None
    admin_status: UpDown | None = None  # YANG default: down
    description: Annotated[str, AfterValidator(_length(0, 255))] | None = None
    alias: Annotated[str, AfterValidator(_length(1, 128))] | None = None
    index: UInt16 | None = None
    autoneg: OnOff | None = None
    link_training: OnOff | None = None
    interface_type: InterfaceType | None = None
    adv_speeds: Annotated[str, AfterValidator(_comma_list(_integer(1, 1_600_000), all_word=True))] | None = None
    adv_interface_types: Annotated[str, AfterValidator(
        _comma_list(_one_of(*get_args(InterfaceType)), all_word=True))] | None = None
    pfc_asym: OnOff | None = None
    tpid: Literal["0x8100", "0x9100", "0x9200", "0x88a8", "0x88A8"] | None = None
    mode: Literal["routed", "access", "trunk"] | None = None
    subport: Annotated[str, AfterValidator(_integer(0, 8))] | None = None
    role: Literal["Ext", "Int", "Inb", "Rec", "Dpc"] | None = None
    dom_polling: EnabledDisabled | None = None
    dhcp_rate_limit: UInt32 | None = None
    fast_linkup: Boolean | None = None
    mux_cable: Boolean | None = None
    macsec: str | None = None  # leafref -> MACSEC_PROFILE
    tx_power: Annotated[str, AfterValidator(_pattern(r"-?[0-9]+(\.[0-9])?"))] | None = None  # decimal64 1 digit
    laser_freq: Int32 | None = None
    core_id: String1To16 | None = None
    core_port_id: String1To16 | None = None
    num_voq: String1To16 | None = None
    asic_port_name: str | None = None


class CableLength(RootModel[dict[str, Annotated[str, AfterValidator(_pattern(r"[0-9]+m"))]]]):
    """CABLE_LENGTH|AZURE = {port: "5m"} (inner keys are leafrefs to PORT, checked below)."""

    model_config = ConfigDict(strict=True, frozen=True)


# ---------------------------------------------------------------------------------------------
# L3 interfaces and VLANs. The bare `<name>` entry and the `<name>|<prefix>` entry are different
# YANG lists with different leaves.

Scope = Literal["global", "local"]
Family = Literal["IPv4", "IPv6"]
LoopbackAction = Literal["drop", "forward"]


class Interface(_Entry):
    vrf_name: str | None = None  # leafref -> VRF
    vnet_name: str | None = None  # leafref -> VNET
    nat_zone: NatZone | None = None
    mpls: EnableDisable | None = None
    ipv6_use_link_local_only: EnableDisable | None = None
    mac_addr: Mac | None = None
    loopback_action: LoopbackAction | None = None


class InterfacePrefix(_Entry):
    scope: Scope | None = None
    family: Family | None = None  # must: matches the prefix's address family


class LoopbackInterface(_Entry):
    vrf_name: str | None = None  # leafref -> VRF
    nat_zone: NatZone | None = None
    admin_status: UpDown | None = None


class Vlan(_Entry):
    vlanid: Annotated[str, AfterValidator(_integer(2, 4094))] | None = None  # must: == number in the name
    alias: str | None = None
    description: String1To255 | None = None
    dhcp_servers: Annotated[list[IpAddress], AfterValidator(_unique)] | None = None
    dhcpv6_servers: Annotated[list[Ipv6Address], AfterValidator(_unique)] | None = None
    mtu: Annotated[str, AfterValidator(_integer(1, 9216))] | None = None
    admin_status: UpDown | None = None
    mac: Mac | None = None


class VlanInterface(_Entry):
    vrf_name: str | None = None  # leafref -> VRF
    vnet_name: str | None = None  # leafref -> VNET
    nat_zone: NatZone | None = None
    mpls: EnableDisable | None = None
    grat_arp: EnabledDisabled | None = None
    proxy_arp: EnabledDisabled | None = None
    ipv6_use_link_local_only: EnableDisable | None = None
    static_anycast_gateway: BooleanType | None = None  # must: "true" needs SAG|GLOBAL.gateway_mac
    mac_addr: Mac | None = None
    loopback_action: LoopbackAction | None = None


class VlanInterfacePrefix(InterfacePrefix):
    secondary: Boolean | None = None


class VlanMember(_Entry):
    tagging_mode: Literal["tagged", "untagged", "priority_tagged"]


# ---------------------------------------------------------------------------------------------
# QoS maps ("Type-1" lists: {map name: {in: out}}) and PORT_QOS_MAP


class DscpToTcMap(RootModel[dict[Dscp, Tc]]):
    model_config = ConfigDict(strict=True, frozen=True)


class TcToQueueMap(RootModel[dict[Tc, Digit0To9]]):
    model_config = ConfigDict(strict=True, frozen=True)


class TcToPriorityGroupMap(RootModel[dict[Tc, Digit0To7]]):
    model_config = ConfigDict(strict=True, frozen=True)


class PfcPriorityToQueueMap(RootModel[dict[Digit0To7, Digit0To7]]):
    model_config = ConfigDict(strict=True, frozen=True)


# PORT_QOS_MAP field -> the map table it names
QOS_MAP_REFS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "tc_to_dscp_map": "TC_TO_DSCP_MAP",
    "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
    "scheduler": "SCHEDULER",
}


class PortQosMap(_Entry):
    dscp_to_tc_map: str | None = None
    tc_to_queue_map: str | None = None
    tc_to_pg_map: str | None = None
    pfc_to_queue_map: str | None = None
    pfc_to_pg_map: str | None = None
    tc_to_dscp_map: str | None = None
    dot1p_to_tc_map: str | None = None
    scheduler: str | None = None  # port-level shaper
    pfc_enable: PriorityList | None = None
    pfcwd_sw_enable: PriorityList | None = None


# ---------------------------------------------------------------------------------------------
# Scheduling: SCHEDULER, WRED_PROFILE, QUEUE


class Scheduler(_Entry):
    type: Literal["DWRR", "WRR", "STRICT"] | None = None
    weight: Annotated[str, AfterValidator(_integer(1, 100))] | None = None
    priority: Annotated[str, AfterValidator(_integer(0, 9))] | None = None
    meter_type: Literal["packets", "bytes"] | None = None
    cir: UInt64 | None = None
    pir: UInt64 | None = None
    cbs: UInt32 | None = None
    pbs: UInt32 | None = None


DropProbability = Annotated[str, AfterValidator(_integer(0, 100))]


class WredProfile(_Entry):
    ecn: Literal["ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red",
                 "ecn_yellow_red", "ecn_all"] | None = None
    wred_green_enable: Boolean | None = None
    wred_yellow_enable: Boolean | None = None
    wred_red_enable: Boolean | None = None
    green_min_threshold: UInt64 | None = None
    green_max_threshold: UInt64 | None = None
    yellow_min_threshold: UInt64 | None = None
    yellow_max_threshold: UInt64 | None = None
    red_min_threshold: UInt64 | None = None
    red_max_threshold: UInt64 | None = None
    green_drop_probability: DropProbability | None = None
    yellow_drop_probability: DropProbability | None = None
    red_drop_probability: DropProbability | None = None


class Queue(_Entry):
    scheduler: str | None = None  # leafref -> SCHEDULER
    wred_profile: str | None = None  # leafref -> WRED_PROFILE


# ---------------------------------------------------------------------------------------------
# Buffers


class BufferPool(_Entry):
    type: Literal["ingress", "egress", "both"]
    mode: Literal["static", "dynamic"]
    size: UInt64 | None = None  # optional: the dynamic model computes it
    xoff: UInt64 | None = None
    percentage: UInt8 | None = None  # must: no size alongside, buffer_model dynamic


class BufferProfile(_Entry):
    pool: str  # leafref -> BUFFER_POOL
    size: UInt64
    static_th: UInt64 | None = None
    dynamic_th: Annotated[str, AfterValidator(_integer(-8, 7))] | None = None
    xon: UInt64 | None = None
    xoff: UInt64 | None = None
    xon_offset: UInt64 | None = None
    headroom_type: Literal["static", "dynamic"] | None = None
    packet_discard_action: Literal["drop", "trim"] | None = None


class BufferPg(_Entry):
    profile: str = "0"  # YANG default "0": omitting it leaves a dangling leafref (or literal NULL)


class BufferQueue(_Entry):
    profile: str = "0"  # YANG default "0"; no NULL alternative


class BufferPortProfileList(_Entry):
    profile_list: ProfileList | None = None  # ONE comma-separated string of BUFFER_PROFILE names


# ---------------------------------------------------------------------------------------------
# PFC watchdog, flex counters, hashing

PFC_WD_PORT_FIELDS = ("action", "detection_time", "restoration_time", "pfc_stat_history")


class PfcWd(_Entry):
    action: Literal["drop", "forward", "alert"] | None = None  # ports only
    detection_time: Annotated[str, AfterValidator(_integer(100, 5000))] | None = None  # ports only
    restoration_time: Annotated[str, AfterValidator(_integer(100, 60000))] | None = None  # ports only
    pfc_stat_history: EnableDisable | None = None  # ports only
    POLL_INTERVAL: Annotated[str, AfterValidator(_integer(100, 1000))] | None = None  # GLOBAL only


class FlexCounterStatus(_Entry):
    """Counter groups without POLL_INTERVAL (PFCWD polls at PFC_WD|GLOBAL.POLL_INTERVAL)."""

    FLEX_COUNTER_STATUS: EnableDisable | None = None
    FLEX_COUNTER_DELAY_STATUS: BooleanType | None = None


class FlexCounterPolled(FlexCounterStatus):
    POLL_INTERVAL: Annotated[str, AfterValidator(_integer(100, 2**32 - 1))] | None = None


class FlexCounterBulk(FlexCounterPolled):
    BULK_CHUNK_SIZE: Annotated[str, AfterValidator(_integer(1, 2**32 - 1))] | None = None
    BULK_CHUNK_SIZE_PER_PREFIX: str | None = None


class FlexCounterIcmpSession(_Entry):
    FLEX_COUNTER_STATUS: EnableDisable | None = None
    POLL_INTERVAL: Annotated[str, AfterValidator(_integer(1000, 30000))] | None = None


FLEX_COUNTER_GROUPS: dict[str, type[_Entry]] = {
    **dict.fromkeys(("DEBUG_COUNTER", "PFCWD", "PORT_RATES", "RIF_RATES"), FlexCounterStatus),
    **dict.fromkeys(("BUFFER_POOL_WATERMARK", "ENI", "DASH_METER", "HA_SET", "PORT_PHY_ATTR", "RIF", "ACL",
                     "FLOW_CNT_TRAP", "FLOW_CNT_ROUTE", "TUNNEL", "WRED_ECN_QUEUE", "WRED_ECN_PORT", "SRV6",
                     "SWITCH"), FlexCounterPolled),
    **dict.fromkeys(("PG_DROP", "PG_WATERMARK", "PORT", "PORT_BUFFER_DROP", "QUEUE", "QUEUE_WATERMARK"),
                    FlexCounterBulk),
    "ICMP_SESSION": FlexCounterIcmpSession,
}


class SwitchHash(_Entry):
    """SWITCH_HASH|GLOBAL as on SONiC master."""

    ecmp_hash: HashList | None = None
    lag_hash: HashList | None = None
    ecmp_hash_algorithm: HashAlgorithm | None = None
    lag_hash_algorithm: HashAlgorithm | None = None


class SwitchHashRdma(_Entry):
    """SWITCH_HASH|GLOBAL with the Generic Hash RDMA extension (open PR sonic-buildimage#27335)."""

    ecmp_hash: RdmaHashList | None = None
    lag_hash: RdmaHashList | None = None
    ecmp_hash_algorithm: HashAlgorithm | None = None
    lag_hash_algorithm: HashAlgorithm | None = None
    ecmp_hash_ipv4: RdmaHashList | None = None
    ecmp_hash_ipv6: RdmaHashList | None = None
    ecmp_hash_ipnip: RdmaHashList | None = None
    ecmp_hash_ipv4_rdma: RdmaHashList | None = None
    ecmp_hash_ipv6_rdma: RdmaHashList | None = None
    lag_hash_ipv4: RdmaHashList | None = None
    lag_hash_ipv6: RdmaHashList | None = None
    lag_hash_ipnip: RdmaHashList | None = None
    lag_hash_ipv4_rdma: RdmaHashList | None = None
    lag_hash_ipv6_rdma: RdmaHashList | None = None


RDMA_HASH_FIELDS = frozenset(SwitchHashRdma.model_fields) - frozenset(SwitchHash.model_fields)


# ---------------------------------------------------------------------------------------------
# Management plane. Each model names the YANG module it restates; "default" comments are the YANG
# defaults SONiC applies when the field is left out. A field typed `str` with a "leafref" or
# "union" comment is checked against other tables below (_management_references).

Host = Annotated[str, AfterValidator(_host)]  # inet:host
Address = Annotated[str, AfterValidator(_address)]  # inet:ip-address
PortNumber = UInt16  # inet:port-number
YesNo = Literal["yes", "no"]
VrfDevice = Literal["default", "mgmt"]  # 'mgmt' needs the management VRF where YANG says so (musts below)
Timeout1To60 = Annotated[str, AfterValidator(_integer(1, 60))]
Priority1To64 = Annotated[str, AfterValidator(_integer(1, 64))]
Retransmit = Annotated[str, AfterValidator(_integer(0, 10))]
NtpKeyId = Annotated[str, AfterValidator(_integer(1, 65535))]
TacacsSecret = Annotated[str, AfterValidator(_secret(1, 256, " #,"))]
RadiusSecret = Annotated[str, AfterValidator(_secret(1, 65, " #,"))]
SnmpSecret = Annotated[str, AfterValidator(_secret(0, 64, " @:"))]
NtpSecret = Annotated[str, AfterValidator(_secret(1, 64, ""))]
SampleDirection = Literal["rx", "tx", "both"]
PrefixOrAddress = Annotated[str, AfterValidator(_prefix_or_address)]


class MgmtVrfConfig(_Entry):  # sonic-mgmt_vrf.yang: MGMT_VRF_CONFIG|vrf_global
    mgmtVrfEnabled: Boolean | None = None  # default false


class MgmtPort(_Entry):  # sonic-mgmt_port.yang: MGMT_PORT|eth<N>
    speed: Literal["10", "100", "1000"] | None = None
    autoneg: OnOff | None = None
    alias: str | None = None
    description: str | None = None
    mtu: Annotated[str, AfterValidator(_integer(1500, 9216))] | None = None  # default 1500
    admin_status: UpDown | None = None  # default up


class MgmtInterface(_Entry):  # sonic-mgmt_interface.yang: MGMT_INTERFACE|<MGMT_PORT>|<ip-prefix>
    # Not mandatory in YANG, but its must (same family as the prefix) fails without it.
    gwaddr: Address
    forced_mgmt_routes: Annotated[list[PrefixOrAddress], AfterValidator(_leaf_list)] | None = None


class NtpGlobal(_Entry):  # sonic-ntp.yang: NTP|global
    src_intf: Annotated[str, AfterValidator(_one_interface)] | None = None  # union (see _one_interface)
    vrf: VrfDevice | None = None
    authentication: EnabledDisabled | None = None  # default disabled
    dhcp: EnabledDisabled | None = None  # default enabled
    server_role: EnabledDisabled | None = None  # default enabled
    admin_state: EnabledDisabled | None = None  # default enabled


class NtpServer(_Entry):  # sonic-ntp.yang: NTP_SERVER|<host> (at most 10)
    association_type: Literal["server", "pool"] | None = None  # default server
    iburst: OnOff | None = None  # default on
    key: NtpKeyId | None = None  # leafref -> NTP_KEY (compared as numbers, as libyang does)
    resolve_as: Host | None = None
    admin_state: EnabledDisabled | None = None  # default enabled
    trusted: YesNo | None = None  # default no
    version: Annotated[str, AfterValidator(_integer(3, 4))] | None = None  # default 4


class NtpKey(_Entry):  # sonic-ntp.yang: NTP_KEY|<1..65535>
    trusted: YesNo | None = None  # default no
    value: NtpSecret | None = None
    type: Literal["md5", "sha1", "sha256", "sha384", "sha512"] | None = None  # default md5


class SyslogServer(_Entry):  # sonic-syslog.yang: SYSLOG_SERVER|<host>
    source: Address | None = None  # must: same family as the server address
    port: PortNumber | None = None
    vrf: str | None = None  # union: 'default', 'mgmt' or a VRF (leafref)
    filter: Literal["include", "exclude"] | None = None
    filter_regex: Annotated[str, AfterValidator(_pattern(r"[^\n\r]+"))] | None = None
    protocol: Literal["tcp", "udp"] | None = None
    severity: Literal["none", "debug", "info", "notice", "warn", "error", "crit"] | None = None


class DnsNameserver(_Entry):  # sonic-dns.yang: DNS_NAMESERVER|<ip> (at most 3; no fields)
    pass


class DnsOptions(_Entry):  # sonic-dns.yang: DNS_OPTIONS|GLOBAL (only with a DNS_NAMESERVER)
    search: Annotated[list[Host], AfterValidator(_leaf_list)] | None = None
    ndots: Annotated[str, AfterValidator(_integer(0, 15))] | None = None  # default 1
    timeout: Annotated[str, AfterValidator(_integer(1, 30))] | None = None  # default 5
    attempts: Annotated[str, AfterValidator(_integer(1, 5))] | None = None  # default 2


class LldpPort(_Entry):  # sonic-lldp.yang: LLDP_PORT|<PORT>
    enabled: Boolean | None = None  # default true
    mode: Literal["RECEIVE", "TRANSMIT"] | None = None


class Lldp(LldpPort):  # sonic-lldp.yang: LLDP|GLOBAL
    hello_time: Annotated[str, AfterValidator(_integer(5, 254))] | None = None  # default 30
    multiplier: Annotated[str, AfterValidator(_integer(1, 10))] | None = None  # default 4
    system_name: str | None = None
    system_description: str | None = None
    supp_mgmt_address_tlv: Boolean | None = None  # default false
    supp_system_capabilities_tlv: Boolean | None = None  # default false


class Sflow(_Entry):  # sonic-sflow.yang: SFLOW|global
    admin_state: UpDown | None = None  # default down
    polling_interval: Annotated[str, AfterValidator(_sflow_polling)] | None = None  # default 20
    agent_id: str | None = None  # union: PORT, LOOPBACK_INTERFACE, MGMT_PORT name or the Vlan pattern
    sample_direction: SampleDirection | None = None  # default rx


class SflowCollector(_Entry):  # sonic-sflow.yang: SFLOW_COLLECTOR|<name, 1..64 chars> (at most 2)
    collector_ip: Address
    collector_port: PortNumber | None = None  # default 6343
    collector_vrf: VrfDevice | None = None


class SflowSession(_Entry):  # sonic-sflow.yang: SFLOW_SESSION|<PORT or 'all'>
    admin_state: UpDown | None = None  # default up
    sample_rate: Annotated[str, AfterValidator(_integer(256, 8_388_608))] | None = None  # must: not on 'all'
    sample_direction: SampleDirection | None = None  # default rx


class BannerMessage(_Entry):  # sonic-banner.yang: BANNER_MESSAGE|global
    state: EnabledDisabled | None = None  # default disabled
    login: str | None = None  # default "Debian GNU/Linux 11"
    motd: str | None = None  # default: SONiC's ASCII-art banner
    logout: str | None = None  # default ""


class Gnmi(_Entry):  # sonic-gnmi.yang: GNMI|gnmi
    client_auth: Boolean | None = None
    log_level: Annotated[str, AfterValidator(_integer(0, 100))] | None = None
    port: PortNumber | None = None
    save_on_set: Boolean | None = None
    enable_crl: Boolean | None = None
    crl_expire_duration: UInt32 | None = None
    user_auth: Literal["password", "jwt", "cert", "none"] | None = None
    vrf: VrfDevice | None = None


# An absolute path ending in /<name>.cer or .key; YANG's '.' before the suffix is any character,
# netgen's is a dot.
CertFile = Annotated[str, AfterValidator(_pattern(r"(/[a-zA-Z0-9_-]+)*/[a-zA-Z0-9_-]+\.cer"))]


class GnmiCerts(_Entry):  # sonic-gnmi.yang: GNMI|certs
    ca_crt: CertFile | None = None
    server_crt: CertFile | None = None
    server_key: Annotated[str, AfterValidator(_pattern(r"(/[a-zA-Z0-9_-]+)*/[a-zA-Z0-9_-]+\.key"))] | None = None


class GnmiClientCert(_Entry):  # sonic-gnmi.yang: GNMI_CLIENT_CERT|<client cert common name>
    role: Annotated[list[Annotated[str, AfterValidator(_length(1, 10_000))]], AfterValidator(_leaf_list)]


SnmpText = Annotated[str, AfterValidator(_length(1, 255)), AfterValidator(_pattern(r"[^\n]+"))]


class SnmpLocation(_Entry):  # sonic-snmp.yang: SNMP|LOCATION
    Location: SnmpText | None = None


class SnmpContact(_Entry):  # sonic-snmp.yang: SNMP|CONTACT
    Contact: SnmpText | None = None


class SnmpCommunity(_Entry):  # sonic-snmp.yang: SNMP_COMMUNITY|<community>
    TYPE: Literal["RO", "RW"] | None = None


class SnmpUser(_Entry):
    """sonic-snmp.yang: SNMP_USER|<user>. The musts tie the other fields to SNMP_USER_TYPE (checked
    below): noAuthNoPriv has all four empty, AuthNoPriv an auth type and password (8+ characters)
    and empty encryption, Priv all four (encryption DES or AES)."""

    SNMP_USER_TYPE: Literal["noAuthNoPriv", "AuthNoPriv", "Priv"]
    SNMP_USER_PERMISSION: Literal["RO", "RW"]
    SNMP_USER_AUTH_TYPE: Literal["", "MD5", "SHA", "HMAC-SHA-2"] | None = None  # default ""
    SNMP_USER_AUTH_PASSWORD: SnmpSecret | None = None
    SNMP_USER_ENCRYPTION_TYPE: Literal["", "DES", "AES"] | None = None  # default ""
    SNMP_USER_ENCRYPTION_PASSWORD: SnmpSecret  # mandatory, "" unless Priv


class SnmpAgentAddress(_Entry):  # sonic-snmp.yang: SNMP_AGENT_ADDRESS_CONFIG|<ip>|<port or ''>|<vrf or ''>
    pass


class Aaa(_Entry):  # sonic-system-aaa.yang: AAA|authentication, AAA|authorization, AAA|accounting
    # default "local"; must: tacacs+ in AAA|authentication needs TACPLUS|global.passkey
    login: Annotated[str, AfterValidator(_pattern(
        r"(ldap|tacacs\+|local|radius|default)(,(ldap|tacacs\+|local|radius|default))*"))] | None = None
    failthrough: BooleanType | None = None  # default False
    fallback: BooleanType | None = None  # default False
    debug: BooleanType | None = None  # default False
    trace: BooleanType | None = None  # default False


TacacsAuthType = Literal["pap", "chap", "mschap", "login"]
RadiusAuthType = Literal["pap", "chap", "mschapv2"]


class Tacplus(_Entry):  # sonic-system-tacacs.yang: TACPLUS|global
    auth_type: TacacsAuthType | None = None  # default pap
    timeout: Timeout1To60 | None = None  # default 5
    key_encrypt: Boolean | None = None
    passkey: TacacsSecret | None = None
    src_intf: str | None = None  # union: PORT, LOOPBACK_INTERFACE, MGMT_PORT name or the Vlan pattern


class TacplusServer(_Entry):  # sonic-system-tacacs.yang: TACPLUS_SERVER|<host> (at most 8)
    priority: Priority1To64 | None = None  # default 1
    tcp_port: PortNumber | None = None  # default 49
    timeout: Timeout1To60 | None = None  # default 5
    auth_type: TacacsAuthType | None = None  # default pap
    key_encrypt: Boolean | None = None
    passkey: TacacsSecret | None = None
    vrf: VrfDevice | None = None  # no management-VRF must here in YANG


class Radius(_Entry):  # sonic-system-radius.yang: RADIUS|global
    passkey: RadiusSecret | None = None
    auth_type: RadiusAuthType | None = None  # default pap
    src_ip: Address | None = None
    nas_ip: Address | None = None
    statistics: Boolean | None = None
    timeout: Timeout1To60 | None = None  # default 5
    retransmit: Retransmit | None = None  # default 3


class RadiusServer(_Entry):  # sonic-system-radius.yang: RADIUS_SERVER|<host> (at most 8)
    auth_port: PortNumber | None = None  # default 1812
    passkey: RadiusSecret | None = None
    auth_type: RadiusAuthType | None = None  # default pap
    priority: Priority1To64 | None = None
    timeout: Timeout1To60 | None = None  # default 5
    retransmit: Retransmit | None = None  # default 3
    vrf: VrfDevice | None = None  # no management-VRF must here in YANG
    src_intf: str | None = None  # union: PORT, LOOPBACK_INTERFACE, MGMT_PORT name or the Vlan pattern


# Fields holding a secret: their values are never quoted in a problem.
SECRET_FIELDS = frozenset({
    ("NTP_KEY", "value"), ("TACPLUS", "passkey"), ("TACPLUS_SERVER", "passkey"), ("RADIUS", "passkey"),
    ("RADIUS_SERVER", "passkey"), ("SNMP_USER", "SNMP_USER_AUTH_PASSWORD"),
    ("SNMP_USER", "SNMP_USER_ENCRYPTION_PASSWORD"),
})
# YANG max-elements
MAX_ENTRIES = {"NTP_SERVER": 10, "DNS_NAMESERVER": 3, "SFLOW_COLLECTOR": 2, "TACPLUS_SERVER": 8, "RADIUS_SERVER": 8}


# ---------------------------------------------------------------------------------------------
# The table registry. A config_db key is split on "|"; the number of parts picks the YANG list
# (e.g. INTERFACE|Ethernet0 vs INTERFACE|Ethernet0|10.0.0.0/31), and each part has its own check.

Model = type[BaseModel]


@dataclass(frozen=True, slots=True)
class KeyShape:
    parts: tuple[tuple[str, Check], ...]  # (part name, check) in key order
    model: Model | Mapping[str, Model]  # a mapping picks the model by the whole key (fixed containers)


@dataclass(frozen=True, slots=True)
class Table:
    shapes: tuple[KeyShape, ...]

    def parse(self, key: str) -> tuple[KeyShape, tuple[str, ...]]:
        """The shape and parts of a key, or ValueError naming the part that is wrong."""
        parts = tuple(key.split("|"))
        for shape in self.shapes:
            if len(shape.parts) == len(parts):
                for (name, check), part in zip(shape.parts, parts, strict=True):
                    try:
                        check(part)
                    except ValueError as exc:
                        raise ValueError(f"key part {name}: {exc}") from None
                return shape, parts
        expected = " or ".join("|".join(f"<{n}>" for n, _ in s.parts) for s in self.shapes)
        raise ValueError(f"key must be {expected}")

    @staticmethod
    def model_for(shape: KeyShape, key: str) -> Model:
        return shape.model if isinstance(shape.model, type) else shape.model[key]


def _table(*shapes: tuple[tuple[tuple[str, Check], ...], Model | Mapping[str, Model]]) -> Table:
    return Table(tuple(KeyShape(parts, model) for parts, model in shapes))


# Key parts: (name used in messages, check)
NAME = ("name", _length(1, 10_000))  # a plain YANG string key (SCHEDULER, BUFFER_POOL, ...)
MAP_KEY = ("name", _pattern(MAP_NAME))  # QoS maps, WRED_PROFILE, CABLE_LENGTH
PORT_NAME = ("port", _length(1, 128))  # leafref -> PORT (checked with the references)
IFNAME = ("ifname", _length(1, 128))  # a port, or a literal such as "global" / "GLOBAL" / "CPU"
LOOPBACK_NAME = ("name", _length(1, 15))  # stypes:interface_name
IP_PREFIX = ("ip-prefix", _ip_prefix)
VLAN_NAME = ("name", _pattern(r"Vlan[0-9]+"))  # leafref -> VLAN (whose key has the full pattern)


def _vlan_name(value: str) -> str:
    """Vlan2..Vlan4094, no leading zeros (Vlan1 and Vlan0100 are rejected)."""
    match = re.fullmatch(r"Vlan([1-9][0-9]{0,3})", value)
    if match is None or not 2 <= int(match.group(1)) <= 4094:
        raise ValueError(f"{value!r} is not Vlan2..Vlan4094 (no leading zeros)")
    return value


def _fixed(*names: str) -> tuple[str, Check]:
    return ("name", _one_of(*names))


def _empty_or(check: Check) -> Check:
    """A key part YANG types as a union with the empty string (SNMP_AGENT_ADDRESS_CONFIG's port and VRF)."""
    return lambda value: value if value == "" else check(value)


# sonic-mgmt_port.yang: eth0..eth3999 (MGMT_INTERFACE's name is a leafref to it)
MGMT_PORT_NAME = ("name", _pattern(r"eth([0-9]|[1-9][0-9]{1,2}|[1-3][0-9]{3})"))


TABLES: dict[str, Table] = {
    "DEVICE_METADATA": _table(((_fixed("localhost"),), DeviceMetadata)),
    "PORT": _table(((PORT_NAME,), Port)),
    "CABLE_LENGTH": _table(((MAP_KEY,), CableLength)),
    "LOOPBACK_INTERFACE": _table(((LOOPBACK_NAME,), LoopbackInterface),
                                 ((LOOPBACK_NAME, IP_PREFIX), InterfacePrefix)),
    "INTERFACE": _table(((PORT_NAME,), Interface), ((PORT_NAME, IP_PREFIX), InterfacePrefix)),
    "VLAN": _table(((("name", _vlan_name),), Vlan)),
    "VLAN_INTERFACE": _table(((VLAN_NAME,), VlanInterface), ((VLAN_NAME, IP_PREFIX), VlanInterfacePrefix)),
    "VLAN_MEMBER": _table(((VLAN_NAME, PORT_NAME), VlanMember)),
    "DSCP_TO_TC_MAP": _table(((MAP_KEY,), DscpToTcMap)),
    "TC_TO_QUEUE_MAP": _table(((MAP_KEY,), TcToQueueMap)),
    "TC_TO_PRIORITY_GROUP_MAP": _table(((MAP_KEY,), TcToPriorityGroupMap)),
    "MAP_PFC_PRIORITY_TO_QUEUE": _table(((MAP_KEY,), PfcPriorityToQueueMap)),
    "PORT_QOS_MAP": _table(((IFNAME,), PortQosMap)),
    "SCHEDULER": _table(((NAME,), Scheduler)),
    "WRED_PROFILE": _table(((MAP_KEY,), WredProfile)),
    "QUEUE": _table(((IFNAME, ("qindex", NAME[1])), Queue)),  # qindex is a free string in YANG
    "BUFFER_POOL": _table(((NAME,), BufferPool)),
    "BUFFER_PROFILE": _table(((NAME,), BufferProfile)),
    "BUFFER_PG": _table(((PORT_NAME, ("pg_num", _pattern(r"[0-7](-[0-7])?"))), BufferPg)),
    "BUFFER_QUEUE": _table(((PORT_NAME, ("qindex", _pattern(r"(1[0-5]|[0-9])(-(1[0-5]|[0-9]))?"))), BufferQueue)),
    "BUFFER_PORT_INGRESS_PROFILE_LIST": _table(((PORT_NAME,), BufferPortProfileList)),
    "BUFFER_PORT_EGRESS_PROFILE_LIST": _table(((PORT_NAME,), BufferPortProfileList)),
    "PFC_WD": _table(((IFNAME,), PfcWd)),
    "FLEX_COUNTER_TABLE": _table(((_fixed(*FLEX_COUNTER_GROUPS),), FLEX_COUNTER_GROUPS)),
    "SWITCH_HASH": _table(((_fixed("GLOBAL"),), SwitchHash)),
    # management plane
    "MGMT_VRF_CONFIG": _table(((_fixed("vrf_global"),), MgmtVrfConfig)),
    "MGMT_PORT": _table(((MGMT_PORT_NAME,), MgmtPort)),
    "MGMT_INTERFACE": _table(((MGMT_PORT_NAME, IP_PREFIX), MgmtInterface)),
    "NTP": _table(((_fixed("global"),), NtpGlobal)),
    "NTP_SERVER": _table(((("server_address", _host),), NtpServer)),
    "NTP_KEY": _table(((("id", _integer(1, 65535)),), NtpKey)),
    "SYSLOG_SERVER": _table(((("server_address", _host),), SyslogServer)),
    "DNS_NAMESERVER": _table(((("ip", _address),), DnsNameserver)),
    "DNS_OPTIONS": _table(((_fixed("GLOBAL"),), DnsOptions)),
    "LLDP": _table(((_fixed("GLOBAL"),), Lldp)),
    "LLDP_PORT": _table(((PORT_NAME,), LldpPort)),
    "SFLOW": _table(((_fixed("global"),), Sflow)),
    "SFLOW_COLLECTOR": _table(((("name", _length(1, 64)),), SflowCollector)),
    "SFLOW_SESSION": _table(((PORT_NAME,), SflowSession)),
    "BANNER_MESSAGE": _table(((_fixed("global"),), BannerMessage)),
    "GNMI": _table(((_fixed("gnmi", "certs"),), {"gnmi": Gnmi, "certs": GnmiCerts})),
    "GNMI_CLIENT_CERT": _table(((("cert_cname", NAME[1]),), GnmiClientCert)),
    "SNMP": _table(((_fixed("LOCATION", "CONTACT"),), {"LOCATION": SnmpLocation, "CONTACT": SnmpContact})),
    "SNMP_COMMUNITY": _table(((("name", _all(_length(4, 32), _without(" @,\\'"))),), SnmpCommunity)),
    "SNMP_USER": _table(((("name", _all(_length(4, 32), _without(" :@,\\'"))),), SnmpUser)),
    "SNMP_AGENT_ADDRESS_CONFIG": _table(((("agent_ip", _address), ("port", _empty_or(_integer(0, 65535))),
                                          ("vrf_name", _empty_or(_pattern(r"mgmt|Vrf[a-zA-Z0-9_-]+")))),
                                         SnmpAgentAddress)),
    "AAA": _table(((("type", _one_of("authentication", "authorization", "accounting")),), Aaa)),
    "TACPLUS": _table(((_fixed("global"),), Tacplus)),
    "TACPLUS_SERVER": _table(((("ipaddress", _host),), TacplusServer)),
    "RADIUS": _table(((_fixed("global"),), Radius)),
    "RADIUS_SERVER": _table(((("ipaddress", _host),), RadiusServer)),
}
RDMA_SWITCH_HASH = _table(((_fixed("GLOBAL"),), SwitchHashRdma))

# Tables whose key names a PORT: table -> (index of the port part, literal names that are not ports)
PORT_KEYED: dict[str, tuple[int, tuple[str, ...]]] = {
    "INTERFACE": (0, ()),
    "PORT_QOS_MAP": (0, ("global",)),
    "QUEUE": (0, ("CPU",)),
    "BUFFER_PG": (0, ()),
    "BUFFER_QUEUE": (0, ()),
    "BUFFER_PORT_INGRESS_PROFILE_LIST": (0, ()),
    "BUFFER_PORT_EGRESS_PROFILE_LIST": (0, ()),
    "PFC_WD": (0, ("GLOBAL",)),
    "VLAN_MEMBER": (1, ()),
    "LLDP_PORT": (0, ()),
    "SFLOW_SESSION": (0, ("all",)),
}


# ---------------------------------------------------------------------------------------------
# Checking


@dataclass(frozen=True, slots=True)
class _Row:
    table: str
    key: str
    parts: tuple[str, ...]
    entry: BaseModel

    @property
    def where(self) -> str:
        return f"{self.table}|{self.key}"


def _describe(error: ErrorDetails, table: str, is_map: bool, rdma_hash: bool) -> str:
    """One pydantic error as `field: reason (got value)`."""
    loc = error["loc"]
    field = ".".join(str(p) for p in loc if not isinstance(p, int))
    field += "".join(f"[{p}]" for p in loc if isinstance(p, int))
    kind, value = error["type"], error.get("input")
    if (table, field) in SECRET_FIELDS:
        value = "***"
    if kind == "extra_forbidden":
        reason = "unknown field"
    elif kind == "missing":
        reason = "mandatory field missing"
    elif kind == "value_error":
        reason = error["msg"].removeprefix("Value error, ")
    elif kind == "string_type" and isinstance(value, list):
        how = "one interface name" if (table, field) == ("NTP", "src_intf") else "one comma-separated string"
        reason = f"must be {how}, not a JSON array (got {value!r})"
    elif kind == "literal_error":
        expected = str(error.get("ctx", {}).get("expected", ""))
        count = expected.count("'") // 2  # long enums (hash fields, device types) are not spelled out
        reason = f"{value!r} is not one of {expected if count <= 8 else f'the {count} allowed values'}"
    elif kind == "list_type" and isinstance(value, str):
        reason = f"is a leaf-list: must be a JSON array, not a string (got {value!r})"
    else:
        reason = f"{error['msg']} (got {value!r})"
    if table == "SWITCH_HASH" and not rdma_hash and (str(loc[0]) in RDMA_HASH_FIELDS or value in RDMA_HASH_VALUES):
        reason += " [RDMA hash extension, sonic-buildimage#27335: only valid with rdma_hash=True]"
    if table == "PFC_WD" and str(loc[0]) == "BIG_RED_SWITCH":
        reason += " [not in SONiC's YANG: do not write it]"
    if is_map:  # a "Type-1" table such as DSCP_TO_TC_MAP|AZURE: loc[0] is the inner key
        return f"inner key {loc[0]!r}: {reason}" if loc[-1] == "[key]" else f"value of {loc[0]!r}: {reason}"
    return f"{field}: {reason}"


# Keys and entries repeat within a switch (a queue's scheduler on every port, {} for every interface)
# and across the switches one process checks (every RTSW of a model has the same port names and
# spare ports): a key's parse is a pure function of (table, key) and an entry's validation of
# (model, entry), so each is done once per process and its result kept (entries are read, never
# changed), up to KEPT of each; then the store starts again. The bounds hold a render worker's
# memory to about 30 MB more; larger bounds cost memory for no more speed (docs/developer/benchmarks.md, Rendering).
KEPT = 10_000
_PARSED_KEYS: dict[tuple[int, str], tuple[Table, tuple[KeyShape, tuple[str, ...]] | str]] = {}
_VALID_ENTRIES: dict[tuple[Model, tuple[tuple[str, Any], ...]], BaseModel] = {}
# Whole tables repeat too (a layout's QUEUE, BUFFER_PG, PORT_QOS_MAP...): one without a problem of its
# own is kept with its rows, by the digest of its JSON (_table_text); the cross-table checks still
# run on each.
KEPT_TABLES = 1_024
_VALID_TABLES: dict[tuple[str, int, bytes], tuple[Table, list[_Row]]] = {}


def _keep(store: dict[Any, Any], key: Any, value: Any, bound: int) -> None:
    if len(store) >= bound:
        store.clear()
    store[key] = value


def _parse_key(table: Table, key: str) -> tuple[KeyShape, tuple[str, ...]]:
    """table.parse(key), once per process: ValueError as it raises."""
    found = _PARSED_KEYS.get((id(table), key))
    if found is not None and found[0] is table:
        parsed = found[1]
    else:
        try:
            parsed = table.parse(key)
        except ValueError as exc:
            parsed = str(exc)
        _keep(_PARSED_KEYS, (id(table), key), (table, parsed), KEPT)
    if isinstance(parsed, str):
        raise ValueError(parsed)
    return parsed


def _validate(config: Mapping[str, Any], tables: Mapping[str, Table], rdma_hash: bool,
              problems: list[str]) -> list[_Row]:
    """Tables, keys and entries: everything a single entry decides on its own."""
    rows: list[_Row] = []
    valid = _VALID_ENTRIES
    for table_name, table_data in config.items():
        table = tables.get(table_name)
        if table is None:
            problems.append(f"{table_name}: unknown table (not one of the {len(tables)} tables netgen models)")
            continue
        if not isinstance(table_data, dict):
            problems.append(f"{table_name}: must be a JSON object of entries")
            continue
        whole = _table_text(table_name, table, table_data)
        found = _VALID_TABLES.get(whole) if whole is not None else None
        if found is not None and found[0] is table:
            rows.extend(found[1])
            continue
        first_row, first_problem = len(rows), len(problems)
        for key, data in table_data.items():
            where = f"{table_name}|{key}"
            try:
                shape, parts = _parse_key(table, key)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if not isinstance(data, dict):
                problems.append(f"{where}: entry must be a JSON object, got {data!r}")
                continue
            model = Table.model_for(shape, key)
            memo: tuple[Model, tuple[tuple[str, Any], ...]] | None = (model, tuple(data.items()))
            try:  # a hit is an entry of strings only: only those are kept, and no other value equals a str
                cached = valid.get(memo)  # type: ignore[arg-type]
            except TypeError:  # a list or an object among the values: validated each time
                cached = memo = None
            if cached is not None:
                rows.append(_Row(table_name, key, parts, cached))
                continue
            if memo is not None and not all(type(value) is str for _, value in memo[1]):
                memo = None  # 1 == True == 1.0: only strings are compared safely by equality
            try:
                entry = model.model_validate(data)
                if memo is not None:
                    _keep(valid, memo, entry, KEPT)
            except ValidationError as exc:
                is_map = issubclass(model, RootModel)
                problems.extend(f"{where}: {_describe(e, table_name, is_map, rdma_hash)}" for e in exc.errors())
                continue
            rows.append(_Row(table_name, key, parts, entry))
        if whole is not None and len(problems) == first_problem:
            _keep(_VALID_TABLES, whole, (table, rows[first_row:]), KEPT_TABLES)
    return rows


def _table_text(name: str, table: Table, data: dict[str, Any]) -> tuple[str, int, bytes] | None:
    """A table's identity for _VALID_TABLES: its name, its model and the SHA-256 of its entries as
    JSON (equal JSON, equal entries of equal types: "1", 1 and true differ), or None if it has no
    JSON form. A digest rather than the text: most tables are a switch's own and never come back."""
    try:
        return name, id(table), hashlib.sha256(orjson.dumps(data)).digest()
    except (TypeError, orjson.JSONEncodeError):
        return None


@dataclass(frozen=True, slots=True)
class _Parsed:
    """The config as given (for "does this name exist", as YANG sees it) plus its valid entries."""

    config: Mapping[str, Any]
    rows: list[_Row]
    by_table: dict[str, list[_Row]] = dataclass_field(default_factory=dict)  # rows per table, in order

    def __post_init__(self) -> None:
        for row in self.rows:
            self.by_table.setdefault(row.table, []).append(row)

    def names(self, table: str) -> set[str]:
        data = self.config.get(table)
        return set(data) if isinstance(data, dict) else set()

    def raw(self, table: str, key: str, field: str) -> Any:
        """A field as given (None when absent), for musts that test what exists, as YANG does."""
        data = self.config.get(table)
        entry = data.get(key) if isinstance(data, dict) else None
        return entry.get(field) if isinstance(entry, dict) else None

    def entries(self, table: str, model: type[T]) -> Iterator[tuple[_Row, T]]:
        for row in self.by_table.get(table, ()):
            if isinstance(row.entry, model):
                yield row, row.entry

    def ref(self, row: _Row, field: str, value: str | None, table: str, literals: tuple[str, ...] = ()) -> list[str]:
        """A leafref: `value` must be a key of `table` (or one of the literals the union allows)."""
        if value is None or value in literals or value in self.names(table):
            return []
        return [f"{row.where}: {field} {value!r} is not a {table}"]


def _port_references(cfg: _Parsed) -> Iterator[str]:
    ports = cfg.names("PORT")
    for row in cfg.rows:
        if row.table in PORT_KEYED:
            index, literals = PORT_KEYED[row.table]
            port = row.parts[index]
            if port not in literals and port not in ports:
                yield f"{row.where}: port {port!r} is not a PORT"
    for row, cable in cfg.entries("CABLE_LENGTH", CableLength):
        yield from (f"{row.where}: port {port!r} is not a PORT" for port in cable.root if port not in ports)
    for row, port_entry in cfg.entries("PORT", Port):
        yield from cfg.ref(row, "macsec", port_entry.macsec, "MACSEC_PROFILE")


def _interface_references(cfg: _Parsed) -> Iterator[str]:
    for row in cfg.rows:
        if row.table in ("VLAN_INTERFACE", "VLAN_MEMBER"):
            yield from cfg.ref(row, "name", row.parts[0], "VLAN")
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        for row, entry in cfg.entries(table, BaseModel):
            yield from cfg.ref(row, "vrf_name", getattr(entry, "vrf_name", None), "VRF")
            yield from cfg.ref(row, "vnet_name", getattr(entry, "vnet_name", None), "VNET")


def _qos_references(cfg: _Parsed) -> Iterator[str]:
    for row, qos in cfg.entries("PORT_QOS_MAP", PortQosMap):
        for field, table in QOS_MAP_REFS.items():
            yield from cfg.ref(row, field, getattr(qos, field), table)
    for row, queue in cfg.entries("QUEUE", Queue):
        yield from cfg.ref(row, "scheduler", queue.scheduler, "SCHEDULER")
        yield from cfg.ref(row, "wred_profile", queue.wred_profile, "WRED_PROFILE")
    for row, profile in cfg.entries("BUFFER_PROFILE", BufferProfile):
        yield from cfg.ref(row, "pool", profile.pool, "BUFFER_POOL")
    for row, pg in cfg.entries("BUFFER_PG", BufferPg):
        yield from cfg.ref(row, "profile", pg.profile, "BUFFER_PROFILE", ("NULL",))
    for row, bq in cfg.entries("BUFFER_QUEUE", BufferQueue):
        yield from cfg.ref(row, "profile", bq.profile, "BUFFER_PROFILE")
    for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
        for row, plist in cfg.entries(table, BufferPortProfileList):
            for name in plist.profile_list.split(",") if plist.profile_list else ():
                yield from cfg.ref(row, "profile_list", name, "BUFFER_PROFILE")


def _device_musts(cfg: _Parsed) -> Iterator[str]:
    """DEVICE_METADATA's one must, and GCU's rule that lanes are unique across ports."""
    for row, meta in cfg.entries("DEVICE_METADATA", DeviceMetadata):
        if meta.suppress_fib_pending == "enabled" and meta.synchronous_mode == "disable":
            yield f"{row.where}: suppress-fib-pending 'enabled' needs synchronous_mode 'enable'"
    owner: dict[int, str] = {}
    for row, port in cfg.entries("PORT", Port):
        shared: dict[str, list[int]] = {}  # other port -> lanes this port repeats
        for lane in (int(x) for x in port.lanes.split(",")):
            if lane in owner:
                shared.setdefault(owner[lane], []).append(lane)
            else:
                owner[lane] = row.key
        for other, lanes in shared.items():
            yield f"{row.where}: lanes: {','.join(map(str, lanes))} already used by PORT|{other}"


def _interface_musts(cfg: _Parsed) -> Iterator[str]:
    # An IP entry needs its bare sibling; the family leaf must match the prefix.
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        bare = cfg.names(table)
        for row, prefix in cfg.entries(table, InterfacePrefix):
            name, ip = row.parts
            if name not in bare:
                yield f"{row.where}: needs the bare entry {table}|{name} ({name!r}: {{}})"
            if prefix.family is not None and prefix.family != ("IPv6" if ":" in ip else "IPv4"):
                yield f"{row.where}: family {prefix.family} does not match prefix {ip}"
    for row, vif in cfg.entries("VLAN_INTERFACE", VlanInterface):
        if vif.static_anycast_gateway in ("true", "True"):
            yield f"{row.where}: static_anycast_gateway needs SAG|GLOBAL.gateway_mac (SAG is not modelled)"
    for row, vlan in cfg.entries("VLAN", Vlan):
        if vlan.vlanid is not None and int(vlan.vlanid) != int(row.key.removeprefix("Vlan")):
            yield f"{row.where}: vlanid {vlan.vlanid} does not match the name {row.key}"
    # A VLAN member is not a routed port, and is untagged in at most one VLAN.
    routed = {key.split("|")[0] for key in cfg.names("INTERFACE")}
    untagged: dict[str, str] = {}
    for row, member in cfg.entries("VLAN_MEMBER", VlanMember):
        vlan_name, port_name = row.parts
        if port_name in routed:
            yield f"{row.where}: port {port_name} is also in INTERFACE (a routed port cannot be a VLAN member)"
        if member.tagging_mode == "untagged":
            if port_name in untagged:
                yield f"{row.where}: port {port_name} is already untagged in {untagged[port_name]}"
            else:
                untagged[port_name] = vlan_name


def _scheduler_musts(cfg: _Parsed) -> Iterator[str]:
    """SCHEDULER: pir and cbs need cir > 0, pbs needs pir > 0; pir >= cir, pbs >= cbs."""
    for row, s in cfg.entries("SCHEDULER", Scheduler):
        cir = int(s.cir) if s.cir is not None else 0
        pir = int(s.pir) if s.pir is not None else 0
        for field, value in (("pir", s.pir), ("cbs", s.cbs)):
            if value is not None and cir <= 0:
                yield f"{row.where}: {field} needs cir > 0"
        if s.pir is not None and cir > 0 and pir < cir:
            yield f"{row.where}: pir {s.pir} is below cir {s.cir}"
        if s.pbs is not None:
            if pir <= 0:
                yield f"{row.where}: pbs needs pir > 0"
            if s.cbs is not None and int(s.pbs) < int(s.cbs):
                yield f"{row.where}: pbs {s.pbs} is below cbs {s.cbs}"


def _wred_musts(cfg: _Parsed) -> Iterator[str]:
    """WRED_PROFILE: max >= min per colour; a max without its min fails the same must."""
    for row, wred in cfg.entries("WRED_PROFILE", WredProfile):
        for color in ("green", "yellow", "red"):
            low, high = getattr(wred, f"{color}_min_threshold"), getattr(wred, f"{color}_max_threshold")
            if high is None:
                continue
            if low is None:
                yield f"{row.where}: {color}_max_threshold needs {color}_min_threshold"
            elif int(high) < int(low):
                yield f"{row.where}: {color}_max_threshold {high} is below {color}_min_threshold {low}"


def _buffer_pool_musts(cfg: _Parsed) -> Iterator[str]:
    """BUFFER_POOL.percentage: never with size, and only in the dynamic buffer model."""
    buffer_model = next((m.buffer_model for _, m in cfg.entries("DEVICE_METADATA", DeviceMetadata)), None)
    for row, pool in cfg.entries("BUFFER_POOL", BufferPool):
        if pool.percentage is not None and pool.size is not None:
            yield f"{row.where}: percentage and size are mutually exclusive"
        if pool.percentage is not None and buffer_model != "dynamic":
            yield f"{row.where}: percentage needs DEVICE_METADATA|localhost.buffer_model 'dynamic'"


def _pfc_wd_musts(cfg: _Parsed) -> Iterator[str]:
    """Port fields only on ports, POLL_INTERVAL only on GLOBAL, port times >= GLOBAL's POLL_INTERVAL."""
    glob = next((wd for row, wd in cfg.entries("PFC_WD", PfcWd) if row.key == "GLOBAL"), None)
    for row, wd in cfg.entries("PFC_WD", PfcWd):
        if row.key == "GLOBAL":
            for field in PFC_WD_PORT_FIELDS:
                if getattr(wd, field) is not None:
                    yield f"{row.where}: {field} is allowed only on ports, not on GLOBAL"
            continue
        if wd.POLL_INTERVAL is not None:
            yield f"{row.where}: POLL_INTERVAL is allowed only on GLOBAL"
        if glob is None:  # no GLOBAL (no constraint), or an invalid one (already reported)
            continue
        poll = glob.POLL_INTERVAL
        for field in ("detection_time", "restoration_time"):
            value = getattr(wd, field)
            if value is None:
                continue
            if poll is None:
                yield f"{row.where}: {field} needs PFC_WD|GLOBAL.POLL_INTERVAL (GLOBAL exists without it)"
            elif int(value) < int(poll):
                yield f"{row.where}: {field} {value} is below PFC_WD|GLOBAL.POLL_INTERVAL {poll}"


def _source_interface(cfg: _Parsed, row: _Row, field: str, value: str | None, *, eth0: bool = False,
                      vlan: bool = False) -> list[str]:
    """A source-interface union of leafrefs to PORT, LOOPBACK_INTERFACE and MGMT_PORT names, plus the
    literal 'eth0' (NTP) or the Vlan name pattern (sflow, tacacs, radius). The union's PORTCHANNEL
    member is moot: netgen models no PORTCHANNEL table. A loopback with IP entries but no bare entry
    counts as known here: the missing bare entry is reported on its own (_interface_musts)."""
    if value is None or (eth0 and value == "eth0") or (vlan and _vlan_like(value)):
        return []
    loopbacks = {key.split("|")[0] for key in cfg.names("LOOPBACK_INTERFACE")}
    if value in cfg.names("PORT") | loopbacks | cfg.names("MGMT_PORT"):
        return []
    extra = ", nor 'eth0'" if eth0 else ", nor Vlan0..Vlan4094" if vlan else ""
    return [f"{row.where}: {field} {value!r} is not a PORT, LOOPBACK_INTERFACE or MGMT_PORT name{extra}"]


def _management_references(cfg: _Parsed) -> Iterator[str]:
    for row in cfg.rows:
        if row.table == "MGMT_INTERFACE":
            yield from cfg.ref(row, "name", row.parts[0], "MGMT_PORT")
    for row, ntp in cfg.entries("NTP", NtpGlobal):
        yield from _source_interface(cfg, row, "src_intf", ntp.src_intf, eth0=True)
    key_ids = {int(k) for k in cfg.names("NTP_KEY") if k.isdigit()}
    for row, server in cfg.entries("NTP_SERVER", NtpServer):
        if server.key is not None and int(server.key) not in key_ids:
            yield f"{row.where}: key {server.key!r} is not a NTP_KEY"
    for row, syslog in cfg.entries("SYSLOG_SERVER", SyslogServer):
        # VRF is not modelled (an unknown table to netgen), so only 'default' and 'mgmt' pass in practice
        yield from cfg.ref(row, "vrf", syslog.vrf, "VRF", ("default", "mgmt"))
    for row, sflow in cfg.entries("SFLOW", Sflow):
        yield from _source_interface(cfg, row, "agent_id", sflow.agent_id, vlan=True)
    for row, tacplus in cfg.entries("TACPLUS", Tacplus):
        yield from _source_interface(cfg, row, "src_intf", tacplus.src_intf, vlan=True)
    for row, radius in cfg.entries("RADIUS_SERVER", RadiusServer):
        yield from _source_interface(cfg, row, "src_intf", radius.src_intf, vlan=True)


def _same_family(one: str, other: str) -> bool:
    """The musts' family test: both contain a '.' or both a ':'."""
    return ("." in one and "." in other) or (":" in one and ":" in other)


def _mgmt_vrf_musts(cfg: _Parsed) -> Iterator[str]:
    """A service in the 'mgmt' VRF needs the management VRF enabled. An invalid
    MGMT_VRF_CONFIG|vrf_global is reported on its own; its users are then not judged."""
    mgmt_vrf = cfg.raw("MGMT_VRF_CONFIG", "vrf_global", "mgmtVrfEnabled") == "true" or (
        "vrf_global" in cfg.names("MGMT_VRF_CONFIG") and not any(cfg.entries("MGMT_VRF_CONFIG", MgmtVrfConfig)))
    for table, model, field in (("NTP", NtpGlobal, "vrf"), ("SYSLOG_SERVER", SyslogServer, "vrf"),
                                ("SFLOW_COLLECTOR", SflowCollector, "collector_vrf"), ("GNMI", Gnmi, "vrf")):
        for row, entry in cfg.entries(table, model):
            if getattr(entry, field) == "mgmt" and not mgmt_vrf:
                yield f"{row.where}: {field} 'mgmt' needs MGMT_VRF_CONFIG|vrf_global.mgmtVrfEnabled 'true'"


def _address_family_musts(cfg: _Parsed) -> Iterator[str]:
    """Addresses that must share a family: a management interface's gateway, a syslog source."""
    for row, mgmt in cfg.entries("MGMT_INTERFACE", MgmtInterface):
        if not _same_family(row.parts[1], mgmt.gwaddr):
            yield f"{row.where}: gwaddr {mgmt.gwaddr} is not in the address family of {row.parts[1]}"
    for row, syslog in cfg.entries("SYSLOG_SERVER", SyslogServer):
        if syslog.source is not None and not _same_family(syslog.source, row.key):
            yield (f"{row.where}: source {syslog.source} and the server address are not the same family"
                   " (YANG: both contain '.' or both ':')")


def _service_musts(cfg: _Parsed) -> Iterator[str]:
    """Management services' own musts: DNS options need a nameserver, sFlow's 'all' session takes no
    sample rate, TACACS+ login needs the TACACS+ key."""
    for row, _ in cfg.entries("DNS_OPTIONS", DnsOptions):
        if not cfg.names("DNS_NAMESERVER"):
            yield f"{row.where}: needs at least one DNS_NAMESERVER"
    for row, session in cfg.entries("SFLOW_SESSION", SflowSession):
        if row.key == "all" and session.sample_rate is not None:
            yield f"{row.where}: sample_rate is not allowed on 'all' (set it per port)"
    tacacs_key = cfg.raw("TACPLUS", "global", "passkey") is not None
    for row, aaa in cfg.entries("AAA", Aaa):
        login = aaa.login or "local"
        if row.key == "authentication" and "tacacs+" in login.split(",") and not tacacs_key:
            yield f"{row.where}: login {login!r} needs TACPLUS|global.passkey"


def _snmp_musts(cfg: _Parsed) -> Iterator[str]:
    for row, user in cfg.entries("SNMP_USER", SnmpUser):
        kind = user.SNMP_USER_TYPE
        auth_type, auth_pw = user.SNMP_USER_AUTH_TYPE or "", user.SNMP_USER_AUTH_PASSWORD
        priv_type, priv_pw = user.SNMP_USER_ENCRYPTION_TYPE or "", user.SNMP_USER_ENCRYPTION_PASSWORD
        empty: list[tuple[str, str | None]] = []  # fields this user type must leave empty
        if kind == "noAuthNoPriv":
            empty += [("SNMP_USER_AUTH_TYPE", auth_type), ("SNMP_USER_AUTH_PASSWORD", auth_pw)]
        else:
            if not auth_type:
                yield f"{row.where}: SNMP_USER_TYPE {kind} needs SNMP_USER_AUTH_TYPE MD5, SHA or HMAC-SHA-2"
            if auth_pw is None:  # netgen's rule: YANG only checks the password when it is present
                yield f"{row.where}: SNMP_USER_TYPE {kind} needs SNMP_USER_AUTH_PASSWORD"
            elif len(auth_pw) < 8:
                yield f"{row.where}: SNMP_USER_AUTH_PASSWORD must have at least 8 characters for {kind}"
        if kind == "Priv":
            if not priv_type:
                yield f"{row.where}: SNMP_USER_TYPE Priv needs SNMP_USER_ENCRYPTION_TYPE DES or AES"
            if len(priv_pw) < 8:
                yield f"{row.where}: SNMP_USER_ENCRYPTION_PASSWORD must have at least 8 characters for Priv"
        else:
            empty += [("SNMP_USER_ENCRYPTION_TYPE", priv_type), ("SNMP_USER_ENCRYPTION_PASSWORD", priv_pw)]
        for field, value in empty:
            if value:
                yield f"{row.where}: {field} must be empty for SNMP_USER_TYPE {kind}"
    seen: dict[tuple[str, str], str] = {}  # YANG `unique agent_ip port`
    for row, _ in cfg.entries("SNMP_AGENT_ADDRESS_CONFIG", SnmpAgentAddress):
        address, port, _vrf = row.parts
        ident = (str(ipaddress.ip_address(address)), str(int(port)) if port else "")
        if ident in seen:
            yield f"{row.where}: agent_ip and port already used by SNMP_AGENT_ADDRESS_CONFIG|{seen[ident]}"
        else:
            seen[ident] = row.key


def _table_size_musts(cfg: _Parsed) -> Iterator[str]:
    """The tables SONiC caps (MAX_ENTRIES)."""
    for table, most in MAX_ENTRIES.items():
        if len(cfg.names(table)) > most:
            yield f"{table}: {len(cfg.names(table))} entries, SONiC allows at most {most}"


# Run in this order: check_config_db reports their problems in it.
CROSS_CHECKS: tuple[Callable[[_Parsed], Iterator[str]], ...] = (
    _port_references, _interface_references, _qos_references,
    _device_musts, _interface_musts, _scheduler_musts, _wred_musts, _buffer_pool_musts, _pfc_wd_musts,
    _management_references, _mgmt_vrf_musts, _address_family_musts, _service_musts, _snmp_musts,
    _table_size_musts,
)


def check_config_db(config: dict[str, Any], *, rdma_hash: bool = False) -> list[str]:
    """Every reason SONiC's YANG validation (plus GCU's lane rule) would reject `config`.

    rdma_hash=True accepts the Generic Hash RDMA extension in SWITCH_HASH (per-packet-type lists
    such as ecmp_hash_ipv4_rdma and the RDMA_BTH_OPCODE / RDMA_BTH_DEST_QP fields), which only a
    SONiC build carrying sonic-buildimage#27335 understands. An empty list means valid.
    """
    if not isinstance(config, dict):
        return ["config_db must be a JSON object of tables"]
    tables = {**TABLES, "SWITCH_HASH": RDMA_SWITCH_HASH} if rdma_hash else TABLES
    problems: list[str] = []
    parsed = _Parsed(config, _validate(config, tables, rdma_hash, problems))
    for check in CROSS_CHECKS:
        problems.extend(check(parsed))
    return problems
