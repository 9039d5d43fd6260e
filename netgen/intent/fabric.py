"""The fabric intent: one declarative description of a RoCE backend (BE) training fabric.

Shape follows Meta's design (SIGCOMM 2024, "RDMA over Ethernet for Distributed AI Training at Meta
Scale"): per-rack RTSW leaves, a deep-buffer CTSW spine per AI Zone (non-blocking inside the zone),
and an optional, deliberately oversubscribed ATSW layer between zones.

Defaults are tagged in their descriptions: [Meta] where Meta published the value, [industry: who]
where it did not and netgen borrows a documented vendor default, [netgen] where netgen chose.
"""

from __future__ import annotations

from ipaddress import IPv4Network, IPv6Network
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from netgen.intent.custom import CustomConfig
from netgen.intent.hosts import Hosts
from netgen.intent.infiniband import Infiniband
from netgen.intent.secrets import SecretRef
from netgen.intent.services import Services
from netgen.intent.types import (
    FILE_PATH_PATTERN,
    HOSTNAME_PREFIX_PATTERN,
    ByteSize,
    IntentModel,
    RatioStr,
    SafeName,
    SafeText,
    Speed,
)

PRIVATE_ASN_4BYTE = (4_200_000_000, 4_294_967_294)  # RFC 6996
PRIVATE_ASN_2BYTE = (64_512, 65_534)
MAX_ASN_NUMBER = 4_294_967_295  # a 4-byte ASN field holds 0..2^32-1; NG211 says which of those are usable
# Logical ports one switch can have: 2304 cages (PlatformModel.port_count) x at most a 16-way breakout.
MAX_LOGICAL_PORTS = 2304 * 16

Dscp = Annotated[int, Field(ge=0, le=63)]
AsnNumber = Annotated[int, Field(ge=0, le=MAX_ASN_NUMBER)]
TierName = Literal["rtsw", "ctsw", "atsw"]
ALL_TIERS: tuple[TierName, ...] = ("rtsw", "ctsw", "atsw")
DscpList = list[Dscp]
DSCP_VALUES = 64  # a DSCP list never needs more entries, nor a QoS policy more classes


def _dscp_list(description: str, default: list[int]) -> list[int]:
    return Field(default_factory=lambda: list(default), min_length=1, max_length=DSCP_VALUES, description=description)


# --- addressing -----------------------------------------------------------------------------------
# The longest prefix text is 49 characters ('ffff:...:ffff:255.255.255.255/128'). Longer text is refused
# before the address parser sees it: its messages quote the whole input.
MAX_PREFIX_TEXT = 64


def _prefix_text(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_PREFIX_TEXT:
        raise ValueError(f"not a prefix: longer than {MAX_PREFIX_TEXT} characters")
    return value


IPv4Prefix = Annotated[IPv4Network, BeforeValidator(_prefix_text)]
IPv6Prefix = Annotated[IPv6Network, BeforeValidator(_prefix_text)]
AnyPrefix = Annotated[IPv4Network | IPv6Network, BeforeValidator(_prefix_text)]


class AddressPools(IntentModel):
    """Backend address pools. Each pool is cut into fixed-size slots: slot 0 for the ATSW layer,
    slot N for zone N. Inside a slot, positions are fixed by rack/switch number, so adding a rack
    or a zone never moves an existing address."""

    loopback_ipv4: IPv4Prefix = Field(description="Router loopbacks (/32 each).")
    p2p_ipv4: IPv4Prefix = Field(description="Point-to-point fabric links (/31 each).")
    host_ipv4: IPv4Prefix = Field(description="Host-facing NIC subnets (one per rack/RTSW).")
    loopback_ipv6: IPv6Prefix | None = Field(default=None, description="Optional IPv6 loopbacks (/128).")
    p2p_ipv6: IPv6Prefix | None = Field(default=None, description="Optional IPv6 fabric links (/127).")
    host_ipv6: IPv6Prefix | None = Field(default=None, description="Optional IPv6 NIC subnets (/64 per rack).")
    max_zones: int = Field(
        default=15,
        ge=1,
        le=255,
        description="Zone slots reserved in every pool (zone ids 1..max_zones). Fixed so that adding a"
        " zone never re-cuts the pools. [netgen]",
    )


class AsnPlan(IntentModel):
    """RFC 7938 eBGP plan with private 4-byte ASNs (RFC 6996): one ASN per RTSW, one per zone's CTSW
    layer, one for the ATSW layer."""

    atsw: int = Field(default=4_200_000_000, ge=1, le=4_294_967_294, description="ASN of the ATSW layer.")
    ctsw_base: int = Field(
        default=4_200_000_000,
        ge=1,
        le=4_294_967_294,
        description="Zone N's CTSW layer uses ctsw_base + N.",
    )
    rtsw_base: int = Field(
        default=4_201_000_000,
        ge=1,
        le=4_294_967_294,
        description="RTSW of zone Z, rack R uses rtsw_base + Z * rtsw_zone_stride + R.",
    )
    rtsw_zone_stride: int = Field(
        default=10_000, ge=1, le=4_294_967_294,
        description="ASN distance between zones' RTSW ranges (max racks per zone).",
    )
    overrides: dict[SafeName, AsnNumber] = Field(
        default_factory=dict,
        description="Per-device ASN overrides: device name -> ASN (0..4294967295; NG211 flags the reserved ones).",
    )


class Bfd(IntentModel):
    enabled: bool = Field(default=True, description="BFD on every eBGP session. [netgen]")
    min_rx_ms: int = Field(default=300, ge=10, le=60_000, description="Required min RX interval (ms).")
    min_tx_ms: int = Field(default=300, ge=10, le=60_000, description="Desired min TX interval (ms).")
    multiplier: int = Field(default=3, ge=2, le=255, description="Detection multiplier.")


class BgpOptions(IntentModel):
    keepalive_s: int = Field(default=3, ge=1, le=3600, description="BGP keepalive (s). [industry: RFC 7938 DCs]")
    hold_s: int = Field(default=9, ge=3, le=65535, description="BGP hold time (s); >= 3 x keepalive.")
    bfd: Bfd = Field(default_factory=Bfd, description="BFD options.")
    # TCP MD5 (RFC 2385): the one option both NOSes and the Linux kernel under FRR take; a switch
    # keeps the key reversibly, so configs carry a placeholder the deploy fills.
    password: SecretRef | None = Field(
        default=None,
        description="Where the TCP MD5 key of every fabric BGP session is (env, file or vault); never the key."
                    " Both ends of a session need it: change it only with every switch in the rollout.")

    @model_validator(mode="after")
    def _hold_vs_keepalive(self) -> BgpOptions:
        if self.hold_s < 3 * self.keepalive_s:
            raise ValueError(
                f"hold_s ({self.hold_s}) must be at least 3 x keepalive_s ({3 * self.keepalive_s})"
            )
        return self


# --- zones and aggregation ------------------------------------------------------------------------
class ZoneCables(IntentModel):
    """Cable lengths per tier, used for PFC headroom (longer cable = more bytes in flight)."""

    host_m: int = Field(default=3, ge=0, le=10_000, description="NIC to RTSW, copper DAC. [netgen]")
    rtsw_ctsw_m: int = Field(
        default=100, ge=0, le=10_000, description="RTSW to CTSW, single-mode fibre inside the hall. [netgen]"
    )


class Zone(IntentModel):
    """One AI Zone: a non-blocking two-stage Clos of RTSW leaves and CTSW spines."""

    id: int = Field(ge=1, le=255, description="Zone number; fixes the zone's address slot and names (z01).")
    description: SafeText = Field(default="", description="Free text, e.g. the data hall.")
    racks: int = Field(ge=1, le=4096, description="Racks in the zone; one RTSW per rack.")
    hosts_per_rack: int = Field(default=2, ge=1, le=64, description="Training hosts per rack. [Meta: 2]")
    nics_per_host: int = Field(default=8, ge=1, le=32, description="Backend NICs per host. [Meta: 8, one/GPU]")
    gpus_per_host: int = Field(default=8, ge=1, le=64, description="GPUs per host. [Meta: 8 x H100]")
    nic_speed: Speed = Field(default="400G", validate_default=True, description="Backend NIC speed. [Meta: 400G]")
    rtsw_model: SafeName = Field(description="Catalog model of the rack switches.")
    ctsw_model: SafeName = Field(description="Catalog model of the zone's spine switches.")
    ctsw_count: int = Field(ge=1, le=256, description="CTSW spines in the zone.")
    links_per_rtsw_ctsw: int = Field(
        default=1, ge=1, le=64, description="Parallel links between one RTSW and one CTSW."
    )
    fabric_link_speed: Speed = Field(default="400G", validate_default=True,
                                     description="RTSW-CTSW link speed. [Meta: 400G]")
    cable_length_m: ZoneCables = Field(default_factory=ZoneCables, description="Cable lengths per tier.")
    rtsw_oversubscription: RatioStr | None = Field(
        default=None,
        description="Declared RTSW uplink:downlink ratio if the zone is meant to be blocking; omitted ="
        " the zone must be non-blocking (uplink bandwidth >= NIC bandwidth). [Meta: non-blocking]",
    )
    host_prefix_length: int | None = Field(
        default=None,
        ge=16,
        le=30,
        description="IPv4 NIC subnet per rack; omitted = the smallest that fits all NICs + gateway.",
    )

    @property
    def rack_nic_gbps(self) -> int:
        """NIC bandwidth of one rack: what its RTSW takes in from the hosts."""
        return self.hosts_per_rack * self.nics_per_host * self.nic_speed

    @property
    def rtsw_uplink_gbps(self) -> int:
        """One RTSW's bandwidth up to the zone's CTSWs."""
        return self.ctsw_count * self.links_per_rtsw_ctsw * self.fabric_link_speed

    @property
    def ctsw_downlink_gbps(self) -> int:
        """One CTSW's bandwidth down to the zone's RTSWs."""
        return self.racks * self.links_per_rtsw_ctsw * self.fabric_link_speed


class Aggregation(IntentModel):
    """The ATSW layer that stitches AI Zones together; deliberately oversubscribed."""

    atsw_model: SafeName = Field(description="Catalog model of the aggregation switches.")
    atsw_count: int = Field(ge=1, le=512, description="ATSW switches.")
    uplinks_per_ctsw: int = Field(
        ge=1, le=512, description="Uplinks from every CTSW; uplink k lands on ATSW (k mod atsw_count)."
    )
    link_speed: Speed = Field(default="400G", validate_default=True, description="CTSW-ATSW link speed. [Meta: 400G]")
    cable_length_m: int = Field(default=500, ge=0, le=10_000, description="CTSW to ATSW cable. [netgen]")
    expected_oversubscription: RatioStr | None = Field(
        default=None,
        description="Declared CTSW uplink:downlink ratio, checked against the derived one. [Meta: 1:7]",
    )
    oversubscription_tolerance: float = Field(
        default=0.05,
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="Relative deviation allowed between derived and declared oversubscription.",
    )
    ports_per_zone: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LOGICAL_PORTS,
        description="ATSW ports reserved per zone slot (zone N starts at (N-1) x this). Omitted = the"
        " largest zone's need; pin it if bigger zones may be added later, so ports never move.",
    )

    @property
    def ctsw_uplink_gbps(self) -> int:
        """One CTSW's bandwidth up to the ATSW layer."""
        return self.uplinks_per_ctsw * self.link_speed


# --- QoS ------------------------------------------------------------------------------------------
class LosslessClass(IntentModel):
    """The RoCE class: PFC-protected, one lossless queue on every switch. [Meta: single lossless
    queue, DSCP-based PFC]"""

    name: SafeName = Field(default="roce", description="Class name used in profile/map names.")
    dscp: DscpList = _dscp_list("DSCP values of RoCE traffic. [industry: NVIDIA/Cumulus 26]", [26])
    traffic_class: int = Field(default=3, ge=0, le=7, description="Traffic class. [industry: SONiC/EOS 3]")
    pfc_priority: int = Field(default=3, ge=0, le=7, description="PFC priority (no-drop). [industry: 3]")
    queue: int = Field(default=3, ge=0, le=15, description="Egress queue. [industry: 3]")
    weight: int = Field(default=50, ge=1, le=100, description="DWRR weight (percent). [industry: ETS 50]")
    roce_mtu: int = Field(
        default=4096,
        ge=256,
        le=9216,
        description="Largest RoCE packet the lossless class carries (headroom input). [industry: 4096]",
    )


class CtsClass(IntentModel):
    """High-priority class for NCCL clear-to-send packets (receiver-driven admission), scheduled in
    strict priority so a CTS never waits behind bulk data. [Meta: dedicated high-priority queue]"""

    name: SafeName = Field(default="cts", description="Class name used in profile/map names.")
    dscp: DscpList = _dscp_list(
        "DSCP values of CTS packets. [netgen: 46 (EF) for CTS; 48 = NVIDIA's CNP default, so DCQCN"
        " congestion notifications share the strict queue]",
        [46, 48],
    )
    traffic_class: int = Field(default=6, ge=0, le=7, description="Traffic class. [industry: CNP TC6]")
    queue: int = Field(default=6, ge=0, le=15, description="Egress queue, strict priority.")


class TrafficClassSpec(IntentModel):
    """A lossy class scheduled by DWRR."""

    name: SafeName = Field(description="Class name.")
    dscp: DscpList = Field(min_length=1, max_length=DSCP_VALUES, description="DSCP values of this class.")
    traffic_class: int = Field(ge=0, le=7, description="Traffic class.")
    queue: int = Field(ge=0, le=15, description="Egress queue.")
    weight: int = Field(ge=1, le=100, description="DWRR weight (percent).")


def _default_classes() -> list[TrafficClassSpec]:
    return [TrafficClassSpec(name="best-effort", dscp=[0], traffic_class=0, queue=0, weight=50)]


class EcnPolicy(IntentModel):
    """ECN marking on the lossless queue: the switch half of DCQCN."""

    enabled: bool = Field(
        default=False,
        description="Mark ECN on the lossless queue. [Meta: DCQCN off at 400G, PFC only]",
    )
    min_threshold: ByteSize = Field(default="150KB", validate_default=True,
                                    description="Start marking. [industry: Cumulus 150KB]")
    max_threshold: ByteSize = Field(default="1.5MB", validate_default=True,
                                    description="Mark at max probability. [Cumulus 1.5MB]")
    max_mark_probability: int = Field(
        default=5, ge=1, le=100, description="Marking probability at max_threshold (%). [industry: SONiC 5]"
    )


class PfcWatchdog(IntentModel):
    """Detects a queue stuck in PFC pause (a PFC storm) and stops honouring pause on it."""

    enabled: bool = Field(default=True, description="Run the PFC watchdog on lossless ports. [netgen]")
    detection_time_ms: int = Field(
        default=200, ge=100, le=5000, description="Time paused before a storm is declared. [SONiC 200]"
    )
    restoration_time_ms: int = Field(
        default=200, ge=100, le=60_000, description="Time storm-free before recovery. [SONiC 200]"
    )
    polling_interval_ms: int = Field(
        default=200, ge=100, le=1000, description="Watchdog poll interval. [SONiC 200]"
    )
    action: Literal["drop", "forward", "alert"] = Field(
        default="drop", description="What a stormed queue does. [SONiC default drop]"
    )
    tiers: list[TierName] = Field(
        default_factory=lambda: list(ALL_TIERS),
        description="Tiers that run the watchdog. Host-facing RTSW ports matter most: a stuck NIC"
        " is the classic PFC storm source. [netgen: all tiers]",
    )


class Qos(IntentModel):
    trust: Literal["dscp"] = Field(default="dscp", description="Classification. [Meta: DSCP-based PFC]")
    lossless: LosslessClass = Field(default_factory=LosslessClass, description="The RoCE lossless class.")
    cts: CtsClass = Field(default_factory=CtsClass, description="The strict-priority CTS class.")
    classes: list[TrafficClassSpec] = Field(
        default_factory=_default_classes, max_length=DSCP_VALUES, description="Other (lossy, DWRR) classes."
    )
    default_traffic_class: int = Field(
        default=0, ge=0, le=7, description="Traffic class of every DSCP no class lists."
    )
    ecn: EcnPolicy = Field(default_factory=EcnPolicy, description="ECN / DCQCN on-off and thresholds.")
    pfc_watchdog: PfcWatchdog = Field(default_factory=PfcWatchdog, description="PFC watchdog.")


# --- hashing --------------------------------------------------------------------------------------
class PayloadBytes(IntentModel):
    first: int = Field(default=5, ge=0, le=62, description="First hashed byte of the UDP payload (0-based).")
    last: int = Field(default=7, ge=0, le=62, description="Last hashed byte (inclusive).")

    @model_validator(mode="after")
    def _ordered(self) -> PayloadBytes:
        if self.last < self.first:
            raise ValueError(f"last ({self.last}) must not be below first ({self.first})")
        return self


class Hashing(IntentModel):
    """ECMP hashing. `bth_dest_qp` adds the RoCEv2 BTH destination QP (UDP payload bytes 5-7) to the
    hash so that NCCL's QP scaling spreads one connection over many paths. [Meta: E-ECMP]"""

    mode: Literal["five_tuple", "bth_dest_qp"] = Field(default="bth_dest_qp", description="Hash mode.")
    udp_dst_port: int = Field(default=4791, ge=1, le=65535, description="RoCEv2 UDP port. [IANA 4791]")
    payload_bytes: PayloadBytes = Field(
        default_factory=PayloadBytes, description="BTH dest-QP position in the UDP payload. [BTH 5-7]"
    )
    qps_per_connection: int = Field(
        default=16,
        ge=1,
        le=128,
        description="QPs per NCCL connection hosts should use (NCCL_IB_QPS_PER_CONNECTION)."
        " [Meta: 16 for LLM, 4 for ranking]",
    )
    fallback: Literal["none", "five_tuple"] = Field(
        default="none",
        description="What a switch whose platform cannot hash on the QP does: 'none' = design error,"
        " 'five_tuple' = fall back and report a warning.",
    )


# --- buffers --------------------------------------------------------------------------------------
class TierBuffers(IntentModel):
    mode: Literal["shared", "static_per_port"] = Field(description="Shared dynamic pool or a fixed slice per port.")
    dynamic_th: int | None = Field(
        default=None,
        ge=-8,
        le=7,
        description="Shared mode: the lossless PG may use alpha = 2^dynamic_th of the free shared pool;"
        " omitted = the switch vendor's value for the ASIC (0 on Tomahawk 5, -5 at 400G on Jericho2C+).",
    )
    per_port: ByteSize | None = Field(
        default=None,
        description="Static mode: buffer reserved per used port; omitted = the shared pool (the vendor's pool"
        " less its shared headroom pool and reserved sizes), split equally over the ASIC's used ports.",
    )


class Buffers(IntentModel):
    rtsw: TierBuffers = Field(
        default_factory=lambda: TierBuffers(mode="shared"), description="RTSW. [Meta: shared, shallow]"
    )
    ctsw: TierBuffers = Field(
        default_factory=lambda: TierBuffers(mode="static_per_port"),
        description="CTSW. [Meta: deep buffer statically divided per port]",
    )
    atsw: TierBuffers = Field(
        default_factory=lambda: TierBuffers(mode="static_per_port"),
        description="ATSW. [netgen: same deep-buffer policy as the CTSW]",
    )


class Maintenance(IntentModel):
    """What may be out of service at once (`netgen drain`): a drain that would leave less is refused
    before anything moves, unless forced with a reason the journal keeps. A drained CTSW takes its
    share of every RTSW's uplinks; the RoCE zone is non-blocking only while all of them carry
    traffic, so the bounds say how much of that an operator accepts to lose for maintenance."""

    max_drained_ctsw_per_zone: int = Field(
        default=1, ge=0, le=256,
        description="CTSWs of one zone drained at once (switches and their links). [netgen: one, as a spine is"
                    " maintained at a time]")
    min_zone_spine_bandwidth_pct: int = Field(
        default=75, ge=0, le=100,
        description="Share of a zone's RTSW-CTSW bandwidth that must stay in service. [netgen: one CTSW of four]")
    min_rtsw_uplinks: int = Field(
        default=1, ge=0, le=512,
        description="Uplinks every RTSW not itself drained keeps; 0 lets a drain cut a rack off. [netgen]")
    max_drained_atsw: int = Field(
        default=1, ge=0, le=512, description="ATSWs drained at once. [netgen]")
    min_atsw_bandwidth_pct: int = Field(
        default=50, ge=0, le=100,
        description="Share of each zone's CTSW-ATSW bandwidth that must stay in service. [netgen: the ATSW layer"
                    " is oversubscribed by design; half of it is what cross-zone jobs are planned on]")


# --- the fabric -----------------------------------------------------------------------------------
class Fabric(IntentModel):
    """A RoCE backend training fabric."""

    name: SafeName = Field(description="Fabric name.")
    description: SafeText = Field(default="", description="Free text.")
    hostname_prefix: str = Field(
        default="",
        pattern=HOSTNAME_PREFIX_PATTERN,
        description="Prepended to every device name, e.g. 'snc1-' (lower case, ends with '-').",
    )
    catalog: str | None = Field(
        default=None,
        pattern=FILE_PATH_PATTERN,
        description="Extra platform catalog file: absolute, or relative to this fabric file.",
    )
    mtu: int = Field(default=9100, ge=1500, le=9216, description="Fabric port MTU. [industry: SONiC 9100]")
    addressing: AddressPools = Field(description="Address pools.")
    frontend_prefixes: list[AnyPrefix] = Field(
        default_factory=list, description="Frontend (FE) prefixes the backend must never overlap."
    )
    asn: AsnPlan = Field(default_factory=AsnPlan, description="ASN plan.")
    bgp: BgpOptions = Field(default_factory=BgpOptions, description="BGP session options.")
    zones: list[Zone] = Field(min_length=1, max_length=255, description="AI Zones (ids 1..255, each once).")
    aggregation: Aggregation | None = Field(default=None, description="Optional ATSW layer.")
    qos: Qos = Field(default_factory=Qos, description="Traffic classes, PFC, ECN, PFC watchdog.")
    hashing: Hashing = Field(default_factory=Hashing, description="ECMP hashing.")
    buffers: Buffers = Field(default_factory=Buffers, description="Buffer policy per tier.")
    hosts: Hosts = Field(default_factory=Hosts,
                         description="The GPU hosts' NICs and NCCL (`netgen hosts`); the rest follows qos and hashing.")
    services: Services = Field(
        default_factory=Services,
        description="The switches' own services (management, NTP, syslog, DNS, LLDP, sFlow, gNMI, banner).")
    maintenance: Maintenance = Field(
        default_factory=Maintenance,
        description="What `netgen drain` may take out of service at once (per zone and in the ATSW layer).")
    infiniband: Infiniband | None = Field(
        default=None,
        description="The InfiniBand alternative for the same GPUs (`netgen infiniband`, `netgen compare`): switch"
                    " model, sizing, partitions and the subnet manager's settings.")
    custom_config: list[CustomConfig] = Field(
        default_factory=list, max_length=200,
        description="Configuration netgen does not model (EOS CLI, SONiC CONFIG_DB rows, FRR lines), layered from"
                    " every switch to one device; it may add to netgen's output, never change it.")

    def shared_secrets(self) -> dict[str, SecretRef]:
        """Secrets a switch keeps in a reversible form (TACACS+ key, SNMP passphrases, BGP key), by
        fabric-file path: configs carry placeholders for them that the deploy fills."""
        secrets = self.services.shared_secrets()
        if self.bgp.password is not None:
            secrets["bgp.password"] = self.bgp.password
        return secrets

    def references(self) -> dict[str, SecretRef]:
        """Every secret reference in the fabric file, by fabric-file path."""
        return self.services.references() | self.shared_secrets()
