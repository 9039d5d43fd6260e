"""A typed model of every config_db.json table netgen emits, checked the way SONiC's YANG does.

SONiC's `config replace` / `config reload` translate config_db into its YANG models and reject
unknown tables and fields, wrong types, broken `must` constraints and dangling leafrefs. This
module restates those rules (written from netgen's notes on SONiC master's YANG models, sonic.md;
nothing is imported or copied from YANG) so a rendered config fails here instead of on the switch:

* one small pydantic model per table entry (field types, patterns, ranges, enums, mandatory and
  unknown fields; every value is a JSON string except leaf-lists, which are JSON arrays);
* `TABLES`: table name -> the key shapes it accepts (YANG picks the list by the number of `|`
  parts) and the entry model for each shape;
* plain Python for what spans entries: `must` constraints, leafrefs and GCU's lane rule.

`check_config_db(config)` returns human-readable problems, each starting with `TABLE|key`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, get_args

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


def _ip_prefix(value: str) -> str:
    """sonic-ip4-prefix | sonic-ip6-prefix: an address with an explicit length; host bits may be set."""
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
    if kind == "extra_forbidden":
        reason = "unknown field"
    elif kind == "missing":
        reason = "mandatory field missing"
    elif kind == "value_error":
        reason = error["msg"].removeprefix("Value error, ")
    elif kind == "string_type" and isinstance(value, list):
        reason = f"must be one comma-separated string, not a JSON array (got {value!r})"
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


def _validate(config: Mapping[str, Any], tables: Mapping[str, Table], rdma_hash: bool,
              problems: list[str]) -> list[_Row]:
    """Tables, keys and entries: everything a single entry decides on its own."""
    rows: list[_Row] = []
    for table_name, table_data in config.items():
        table = tables.get(table_name)
        if table is None:
            problems.append(f"{table_name}: unknown table (not one of the {len(tables)} tables netgen models)")
            continue
        if not isinstance(table_data, dict):
            problems.append(f"{table_name}: must be a JSON object of entries")
            continue
        for key, data in table_data.items():
            where = f"{table_name}|{key}"
            try:
                shape, parts = table.parse(key)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if not isinstance(data, dict):
                problems.append(f"{where}: entry must be a JSON object, got {data!r}")
                continue
            model = Table.model_for(shape, key)
            try:
                entry = model.model_validate(data)
            except ValidationError as exc:
                is_map = issubclass(model, RootModel)
                problems.extend(f"{where}: {_describe(e, table_name, is_map, rdma_hash)}" for e in exc.errors())
                continue
            rows.append(_Row(table_name, key, parts, entry))
    return rows


@dataclass(frozen=True, slots=True)
class _Parsed:
    """The config as given (for "does this name exist", as YANG sees it) plus its valid entries."""

    config: Mapping[str, Any]
    rows: list[_Row]

    def names(self, table: str) -> set[str]:
        data = self.config.get(table)
        return set(data) if isinstance(data, dict) else set()

    def entries(self, table: str, model: type[T]) -> Iterator[tuple[_Row, T]]:
        for row in self.rows:
            if row.table == table and isinstance(row.entry, model):
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


def _qos_musts(cfg: _Parsed) -> Iterator[str]:
    # SCHEDULER: pir and cbs need cir > 0, pbs needs pir > 0; pir >= cir, pbs >= cbs.
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
    # WRED_PROFILE: max >= min; a max without its min fails the same must.
    for row, wred in cfg.entries("WRED_PROFILE", WredProfile):
        for color in ("green", "yellow", "red"):
            low, high = getattr(wred, f"{color}_min_threshold"), getattr(wred, f"{color}_max_threshold")
            if high is None:
                continue
            if low is None:
                yield f"{row.where}: {color}_max_threshold needs {color}_min_threshold"
            elif int(high) < int(low):
                yield f"{row.where}: {color}_max_threshold {high} is below {color}_min_threshold {low}"
    # BUFFER_POOL.percentage: never with size, and only in the dynamic buffer model.
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


CROSS_CHECKS: tuple[Callable[[_Parsed], Iterator[str]], ...] = (
    _port_references, _interface_references, _qos_references,
    _device_musts, _interface_musts, _qos_musts, _pfc_wd_musts,
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
