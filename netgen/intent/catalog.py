"""Platform catalog: what each switch model (hardware + NOS release) can do.

The catalog is data. netgen ships `builtin_catalog.yaml`; a fabric may add models in its own
catalog file, optionally deriving from a built-in one with `extends:`. Every capability that a
design check or a renderer depends on is a field here, so a new model never needs code.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from netgen.intent.types import ByteSize, IntentModel, SafeName, SafeText, Speed
from netgen.registry import NAME_PATTERN, NOS, NosRegistryError


def _registered_nos(name: str) -> str:
    """A NOS is one netgen has a bundle of (netgen/registry.py): any other name is an input error
    that lists the registered ones."""
    try:
        NOS.bundle(name)
    except NosRegistryError as exc:
        raise ValueError(str(exc)) from None
    return name


# The name of a registered NOS (the JSON Schema lists them: netgen/intent/schema.py)
NosName = Annotated[str, StringConstraints(pattern=NAME_PATTERN), AfterValidator(_registered_nos)]


class PortNaming(StrEnum):
    """How front-panel port names are formed (see netgen.topology.ports)."""

    SONIC = "sonic"  # Ethernet<first lane index>: Ethernet0, Ethernet8, breakout Ethernet4
    EOS_FIXED = "eos-fixed"  # Ethernet<cage>/<lane>: Ethernet1/1, breakout Ethernet1/5
    EOS_MODULAR = "eos-modular"  # Ethernet<slot>/<cage>/<lane>: Ethernet3/1/1


# ASIC families and their forwarding architecture. "xgs" = shared-buffer Trident/Tomahawk,
# "sand" = VOQ/deep-buffer Jericho. Renderers and checks key their behaviour on this.
ASIC_ARCHITECTURE: dict[str, str] = {
    "tomahawk3": "xgs",
    "tomahawk4": "xgs",
    "tomahawk5": "xgs",
    "trident4": "xgs",
    "jericho2": "sand",
    "jericho2c": "sand",
    "jericho2c+": "sand",
    "jericho3": "sand",
    "jericho3-ai": "sand",
}
AsicFamily = Literal[
    "tomahawk3",
    "tomahawk4",
    "tomahawk5",
    "trident4",
    "jericho2",
    "jericho2c",
    "jericho2c+",
    "jericho3",
    "jericho3-ai",
]


MAX_CAGES = 2304  # front-panel cages of the largest chassis netgen models (PlatformModel.port_count)
MAX_LANES_PER_CAGE = 16
# A SerDes lane number as SONiC's port_config.ini writes it (real platforms stay in the low thousands).
Lane = Annotated[int, Field(ge=0, le=65_535)]


class Linecards(IntentModel):
    """Slot layout of a modular chassis (EOS names its ports Ethernet<slot>/<port>/<lane>)."""

    first_slot: int = Field(ge=1, le=64, description="EOS slot number of the first line card.")
    ports_per_linecard: int = Field(ge=1, le=256, description="Front-panel cages per line card.")


# --- buffers: how the vendor configures the ASIC, and the headroom it publishes ---------------------
class HeadroomFormula(IntentModel):
    """PFC headroom (xoff) of one lossless priority group, in the form the vendor's own tables follow:

    xoff = round_up(fixed_bytes + cell_occupancy x (2 x MTU + rate x (2 x cable / propagation + response)))

    After the switch decides to pause, it must still absorb what is on the cable in both directions,
    what the peer sends before its PAUSE takes effect (response: PFC generation, the peer's reaction,
    MAC/PHY/FEC latency), and one frame in flight at each end; small packets waste buffer cells,
    which `cell_occupancy` accounts for. The vendors publish tables, not these constants: they are
    fitted to the published points of the same family (`published_headroom`), which the formula
    reproduces within 2% (tests/topology/test_headroom_vendor_points.py).
    """

    fixed_bytes: int = Field(ge=0, le=10_000_000, description="Constant bytes added to every xoff.")
    cell_occupancy: float = Field(gt=0, le=16, allow_inf_nan=False,
                                  description="Buffer bytes used per byte received (cell waste).")
    response_ns: int = Field(ge=0, le=1_000_000, description="Peer response plus MAC/PHY/FEC delay, ns.")
    propagation_m_per_s: int = Field(
        default=198_000_000, ge=100_000_000, le=300_000_000,
        description="Signal speed on the cable. [SONiC 198000000, about 2/3 c]",
    )
    round_to_bytes: int = Field(ge=1, le=65_536, description="xoff is rounded up to a multiple of this.")


class PublishedXoff(IntentModel):
    """One (speed, cable) -> xoff point of a vendor table, with the file it comes from."""

    speed: Speed = Field(description="Port speed of the table row.")
    cable_m: int = Field(ge=0, le=200_000, description="Cable length of the table row, metres.")
    xoff: ByteSize = Field(description="The xoff the vendor publishes for it.")
    source: SafeText = Field(description="Where the row is published (repository path).")


PoolMode = Literal["static", "dynamic"]


class PoolSetting(IntentModel):
    """One BUFFER_POOL as the vendor's SKU writes it."""

    type: Literal["ingress", "egress", "both"] = Field(description="Pool direction.")
    mode: PoolMode = Field(description="Threshold mode of the pool.")
    size: ByteSize = Field(description="Pool size. [vendor SKU]")
    xoff: ByteSize = Field(
        default=0,
        description="Shared headroom pool: the part of `size` that lossless PGs share for their xoff. [vendor SKU]",
    )

    @model_validator(mode="after")
    def _headroom_inside(self) -> PoolSetting:
        if self.xoff > self.size:
            raise ValueError("the shared headroom pool (xoff) is part of the pool and cannot exceed its size")
        return self


class ProfileSetting(IntentModel):
    """One BUFFER_PROFILE: reserved bytes and exactly one threshold."""

    size: ByteSize = Field(description="Bytes reserved for the PG or queue.")
    static_th: ByteSize | None = Field(default=None, description="Static threshold, bytes.")
    dynamic_th: int | None = Field(default=None, ge=-8, le=7, description="Dynamic threshold: alpha = 2^n.")

    @model_validator(mode="after")
    def _one_threshold(self) -> ProfileSetting:
        if (self.static_th is None) == (self.dynamic_th is None):
            raise ValueError("set exactly one of static_th and dynamic_th")
        return self


class LosslessRow(IntentModel):
    """One row of the SKU's pg_profile_lookup.ini: the lossless PG profile for a speed and cable."""

    speed: Speed = Field(description="Port speed.")
    cable_m: int = Field(ge=0, le=200_000, description="Cable length, metres (rows cover cables up to it).")
    size: ByteSize = Field(description="Reserved (guaranteed) bytes of the PG.")
    xon: ByteSize = Field(description="xon threshold.")
    xoff: ByteSize = Field(description="Headroom of the PG, drawn from the shared headroom pool.")
    threshold: int = Field(ge=-8, le=7, description="dynamic_th of the PG's shared-buffer use.")
    xon_offset: ByteSize = Field(description="xon offset (hysteresis).")


class VendorBuffers(IntentModel):
    """The buffer configuration the switch vendor ships in its SONiC SKU (buffers_defaults_*.j2 and
    pg_profile_lookup.ini in sonic-buildimage `device/<vendor>/<platform>/<SKU>/`). netgen renders
    these pools and profiles as they are; only each port's xoff is netgen's (never below the SKU's)."""

    source: SafeText = Field(description="The SKU directory the values come from.")
    ingress_pool: PoolSetting = Field(description="ingress_lossless_pool (type both on VOQ chassis).")
    egress_pool: PoolSetting | None = Field(
        default=None, description="egress_lossless_pool; omitted where one pool of type both serves both."
    )
    ingress_lossy: ProfileSetting = Field(description="ingress_lossy_profile.")
    egress_lossless: ProfileSetting = Field(description="egress_lossless_profile.")
    egress_lossy: ProfileSetting = Field(description="egress_lossy_profile.")
    lossless_pg: list[LosslessRow] = Field(min_length=1, description="pg_profile_lookup.ini rows.")

    @model_validator(mode="after")
    def _pools_fit(self) -> VendorBuffers:
        if self.egress_pool is None and self.ingress_pool.type != "both":
            raise ValueError("without an egress_pool, the ingress_pool must be of type both")
        return self

    def lossless_row(self, speed_gbps: int, cable_m: int) -> LosslessRow | None:
        """The row SONiC would use for this port: the shortest cable at this speed that covers it,
        else the longest one (netgen's xoff then grows with the cable past the table)."""
        rows = sorted((r for r in self.lossless_pg if r.speed == speed_gbps), key=lambda r: r.cable_m)
        covering = [r for r in rows if r.cable_m >= cable_m]
        if covering:
            return covering[0]
        return rows[-1] if rows else None


class AsicFamilyBuffers(IntentModel):
    """One ASIC family's buffer facts: size, cells, the headroom formula and the points it was fitted
    to, and the vendor's own SONiC buffer settings for this ASIC (the reference netgen compares
    against, also where the NOS sets buffers itself, as EOS does)."""

    description: SafeText = Field(default="", description="What this family is, for humans.")
    cell_bytes: int = Field(ge=32, le=8192, description="Buffer cell size.")
    buffer_bytes: ByteSize = Field(description="Packet buffer of one ASIC usable for traffic.")
    buffer_source: SafeText = Field(description="Where buffer_bytes and cell_bytes come from.")
    headroom: HeadroomFormula | None = Field(
        default=None, description="The headroom formula; omitted where the vendor publishes no table to fit."
    )
    published_headroom: list[PublishedXoff] = Field(
        default_factory=list,
        description="Vendor-published xoff points the formula is checked against (rows the vendor computed"
        " for that cable, not rows padded with another cable's value).",
    )
    reference: VendorBuffers | None = Field(
        default=None, description="The vendor's SONiC buffer settings for this ASIC (one SKU's), if published."
    )

    @model_validator(mode="after")
    def _fitted(self) -> AsicFamilyBuffers:
        if self.headroom is not None and not self.published_headroom:
            raise ValueError("a headroom formula needs the published points it was fitted to")
        return self


class SonicPort(IntentModel):
    """A SKU port outside the cage layout (e.g. the two SFP ports Ethernet512/513), from port_config.ini."""

    name: SafeName = Field(description="SONiC port name.")
    lanes: list[Lane] = Field(min_length=1, max_length=MAX_LANES_PER_CAGE, description="Physical lanes.")
    alias: SafeName = Field(description="Front-panel alias.")
    index: int = Field(ge=1, le=65_535, description="Front-panel index.")
    speed: Speed = Field(description="Speed.")
    fec: Literal["rs", "fc", "none"] = Field(description="Forward error correction.")


ALIAS_PATTERN = r"^[A-Za-z0-9/_.-]*(\{(index|letter|lane)\}[A-Za-z0-9/_.-]*)+$"


class SonicSku(IntentModel):
    """The SONiC hardware SKU this model renders for. A SKU fixes the port layout (port_config.ini):
    every cage is split into ports of one speed."""

    hwsku: SafeName = Field(description="SONiC HWSKU name, e.g. Arista-7060X6-64PE-O128S2.")
    port_speed: Speed = Field(description="Speed of every port in the SKU's layout (e.g. 400G = 2x400G per 800G cage).")
    alias: str = Field(
        pattern=ALIAS_PATTERN,
        description="Front-panel alias of a cage port as port_config.ini writes it: {index} = cage number"
        " from 1, {letter} = a, b, ... per sub-port, {lane} = first lane of the sub-port from 1"
        " (e.g. 'etp{index}{letter}', 'Ethernet{index}/{lane}').",
    )
    fec: Literal["rs", "fc", "none"] = Field(default="rs", description="FEC of the cage ports. [port_config.ini]")
    extra_ports: list[SonicPort] = Field(
        default_factory=list, description="Ports of the SKU outside the cages (rendered admin down)."
    )
    buffers: VendorBuffers | None = Field(
        description="The SKU's own buffer settings; null where the SKU ships none and leaves buffers to the"
        " SDK's MMU defaults (netgen then renders no buffer tables and says headroom is unverified)."
    )


class Capabilities(IntentModel):
    """What this model + NOS release can configure. Conservative: unconfirmed features are false."""

    pfc: bool = Field(default=True, description="Priority flow control on front-panel ports.")
    pfc_watchdog: bool = Field(description="PFC watchdog (storm detection and recovery).")
    ecn: bool = Field(default=True, description="ECN marking (WRED/random-detect) on egress queues.")
    bth_dest_qp_hash: bool = Field(
        description="ECMP hashing on the RoCEv2 BTH destination QP (UDF or native RDMA hash field)."
    )
    static_per_port_buffers: bool = Field(
        description="A fixed buffer partition per port (static thresholds) instead of a shared pool."
    )


class PlatformModel(IntentModel):
    """One switch model running one NOS release."""

    description: SafeText = Field(default="", description="What this model is, for humans.")
    vendor: SafeName = Field(description="Hardware vendor.")
    nos: NosName = Field(description="Network operating system this entry renders for.")
    nos_release: SafeText = Field(
        description="NOS release or feature level the capabilities below were checked against."
    )
    asic_family: AsicFamily = Field(description="Forwarding ASIC family; selects xgs vs sand behaviour.")
    port_count: int = Field(ge=1, le=MAX_CAGES, description="Front-panel cages (line cards x ports for a chassis).")
    port_speed: Speed = Field(description="Native speed of one cage with no breakout.")
    lanes_per_port: int = Field(ge=1, le=MAX_LANES_PER_CAGE, description="SerDes lanes per cage.")
    breakout_speeds: list[Speed] = Field(
        default_factory=list,
        description="Lower speeds a cage can be split into (e.g. 400G on an 800G cage = 2x400G).",
    )
    port_naming: PortNaming = Field(description="How port names are formed.")
    linecards: Linecards | None = Field(default=None, description="Slot layout; required for eos-modular.")
    lanes: list[Annotated[list[Lane], Field(max_length=MAX_LANES_PER_CAGE)]] | None = Field(
        default=None,
        max_length=MAX_CAGES,
        description="SONiC lane map: lanes[i] are the physical lanes of cage i. Omitted = sequential from 0.",
    )
    ports_per_buffer_domain: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CAGES,
        description="Cages served by one ASIC buffer (chassis line cards); omitted = all cages share it.",
    )
    queues: int = Field(default=8, ge=1, le=16, description="Unicast egress queues per port.")
    max_lossless_priorities: int = Field(
        default=2, ge=0, le=8, description="How many PFC (no-drop) priorities a port supports."
    )
    sonic: SonicSku | None = Field(default=None, description="SONiC SKU (required when nos is sonic).")
    capabilities: Capabilities = Field(description="Feature support of this model and NOS release.")
    unverified: list[SafeText] = Field(
        default_factory=list,
        description="What netgen renders or relies on for this model that no public source confirmed, one"
        " item per entry; design check NG507 names them for every tier that uses the model.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> PlatformModel:
        for speed in self.breakout_speeds:
            split = self.port_speed // speed if speed else 0
            if speed >= self.port_speed or self.port_speed % speed or self.lanes_per_port % split:
                raise ValueError(
                    f"breakout speed {speed}G does not split a {self.port_speed}G cage of "
                    f"{self.lanes_per_port} lanes evenly"
                )
        if self.nos == "sonic" and self.sonic is None:
            raise ValueError("a sonic model needs 'sonic: {hwsku: ..., port_speed: ...}'")
        if self.sonic is not None and not self.supports_speed(self.sonic.port_speed):
            raise ValueError(f"sonic.port_speed {self.sonic.port_speed}G is not a speed these cages run")
        if self.port_naming is PortNaming.EOS_MODULAR and self.linecards is None:
            raise ValueError("port_naming eos-modular needs 'linecards' (first_slot, ports_per_linecard)")
        if self.sonic is not None:
            self._sonic_ports_fit(self.sonic)
        if self.lanes is not None:
            if len(self.lanes) != self.port_count:
                raise ValueError(f"lanes has {len(self.lanes)} entries; port_count is {self.port_count}")
            seen: set[int] = set()
            for cage, group in enumerate(self.lanes):
                if len(group) != self.lanes_per_port:
                    raise ValueError(f"lanes[{cage}] has {len(group)} lanes; lanes_per_port is "
                                     f"{self.lanes_per_port}")
                if seen.intersection(group):
                    raise ValueError(f"lanes[{cage}] repeats a lane used by another cage")
                seen.update(group)
        return self

    def _sonic_ports_fit(self, sku: SonicSku) -> None:
        if "{letter}" not in sku.alias and "{lane}" not in sku.alias and self.ports_per_cage(sku.port_speed) > 1:
            raise ValueError(f"sonic.alias {sku.alias!r} gives every sub-port of a cage the same alias;"
                             " add {letter} or {lane}")
        if sku.buffers is not None and not any(r.speed == sku.port_speed for r in sku.buffers.lossless_pg):
            raise ValueError(f"sonic.buffers.lossless_pg has no row for the SKU's {sku.port_speed}G ports")

    @property
    def architecture(self) -> str:
        """'xgs' (shared buffer) or 'sand' (VOQ, deep buffer)."""
        return ASIC_ARCHITECTURE[self.asic_family]

    def supports_speed(self, speed_gbps: int) -> bool:
        return speed_gbps == self.port_speed or speed_gbps in self.breakout_speeds

    def ports_per_cage(self, speed_gbps: int) -> int:
        """Logical ports one cage yields at this speed (1 native, N for an N-way breakout)."""
        return max(1, self.port_speed // speed_gbps)

    def cage_lanes(self, cage: int) -> list[int]:
        if self.lanes is not None:
            return self.lanes[cage]
        return list(range(cage * self.lanes_per_port, (cage + 1) * self.lanes_per_port))


CatalogModels = Annotated[
    dict[SafeName, PlatformModel],
    Field(description="Switch models by name. Names are what a fabric file's *_model fields refer to."),
]


AsicFamilies = Annotated[
    dict[AsicFamily, AsicFamilyBuffers],
    Field(description="Buffer facts per ASIC family; every model's asic_family needs an entry."),
]


class InfinibandSwitchModel(IntentModel):
    """One InfiniBand switch model, for the InfiniBand alternative of a fabric (`infiniband:` in a
    fabric file). Only what sizing a fat tree and its cabling needs; every value cites its source."""

    description: SafeText = Field(default="", description="What this model is, for humans.")
    vendor: SafeName = Field(description="Hardware vendor.")
    ports: int = Field(ge=4, le=4096, description="Logical ports at port_speed: the switch's radix.")
    port_speed: Speed = Field(description="Speed of one logical port (NDR = 400G).")
    cages: int = Field(ge=1, le=4096, description="Front-panel cages; each carries ports / cages logical ports.")
    source: SafeText = Field(description="Where ports, speed and cages are published.")

    @model_validator(mode="after")
    def _cages_split(self) -> InfinibandSwitchModel:
        if self.ports % self.cages:
            raise ValueError(f"{self.ports} ports do not split evenly over {self.cages} cages")
        return self

    @property
    def ports_per_cage(self) -> int:
        return self.ports // self.cages


InfinibandSwitches = Annotated[
    dict[SafeName, InfinibandSwitchModel],
    Field(description="InfiniBand switch models by name, for a fabric file's infiniband.switch_model."),
]


class Catalog(IntentModel):
    """A set of platform models and the buffer facts of their ASIC families."""

    models: CatalogModels
    asic_families: AsicFamilies = Field(default_factory=dict)
    infiniband_switches: InfinibandSwitches = Field(default_factory=dict)

    def get(self, name: str) -> PlatformModel:
        return self.models[name]

    def family(self, model: PlatformModel) -> AsicFamilyBuffers:
        return self.asic_families[model.asic_family]
