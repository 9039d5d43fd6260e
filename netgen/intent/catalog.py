"""Platform catalog: what each switch model (hardware + NOS release) can do.

The catalog is data. netgen ships `builtin_catalog.yaml`; a fabric may add models in its own
catalog file, optionally deriving from a built-in one with `extends:`. Every capability that a
design check or a renderer depends on is a field here, so a new model never needs code.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from netgen.intent.types import ByteSize, IntentModel, SafeName, SafeText, Speed


class Nos(StrEnum):
    SONIC = "sonic"
    EOS = "eos"


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


class Linecards(IntentModel):
    """Slot layout of a modular chassis (EOS names its ports Ethernet<slot>/<port>/<lane>)."""

    first_slot: int = Field(ge=1, le=64, description="EOS slot number of the first line card.")
    ports_per_linecard: int = Field(ge=1, le=256, description="Front-panel cages per line card.")


class HeadroomConstants(IntentModel):
    """ASIC constants of SONiC's dynamic headroom formula (sonic-swss buffer_headroom_*.lua)."""

    pipeline_latency: ByteSize = Field(
        description="Bytes the ingress pipeline holds after XOFF is decided; becomes the xon size."
    )
    mac_phy_delay: ByteSize = Field(description="Bytes in flight inside MAC/PHY before PAUSE takes effect.")
    gearbox_delay: ByteSize = Field(
        default=0, description="Bytes added by an external gearbox, counted twice (both directions)."
    )


class SonicSku(IntentModel):
    """The SONiC hardware SKU this model renders for. A SKU fixes the port layout (port_config.ini):
    every cage is split into ports of one speed."""

    hwsku: SafeName = Field(description="SONiC HWSKU name, e.g. Arista-7060X6-64PE-O128S2.")
    port_speed: Speed = Field(description="Speed of every port in the SKU's layout (e.g. 400G = 2x400G per 800G cage).")


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
    nos: Nos = Field(description="Network operating system this entry renders for.")
    nos_release: SafeText = Field(
        description="NOS release or feature level the capabilities below were checked against."
    )
    asic_family: AsicFamily = Field(description="Forwarding ASIC family; selects xgs vs sand behaviour.")
    port_count: int = Field(ge=1, le=2304, description="Front-panel cages (line cards x ports for a chassis).")
    port_speed: Speed = Field(description="Native speed of one cage with no breakout.")
    lanes_per_port: int = Field(ge=1, le=16, description="SerDes lanes per cage.")
    breakout_speeds: list[Speed] = Field(
        default_factory=list,
        description="Lower speeds a cage can be split into (e.g. 400G on an 800G cage = 2x400G).",
    )
    port_naming: PortNaming = Field(description="How port names are formed.")
    linecards: Linecards | None = Field(default=None, description="Slot layout; required for eos-modular.")
    lanes: list[list[int]] | None = Field(
        default=None,
        description="SONiC lane map: lanes[i] are the physical lanes of cage i. Omitted = sequential from 0.",
    )
    buffer_bytes: ByteSize = Field(description="Packet buffer of one buffer domain (one ASIC).")
    ports_per_buffer_domain: int | None = Field(
        default=None,
        ge=1,
        description="Cages served by one ASIC buffer (chassis line cards); omitted = all cages share it.",
    )
    cell_bytes: int = Field(ge=32, le=4096, description="Buffer cell size in bytes.")
    queues: int = Field(default=8, ge=1, le=16, description="Unicast egress queues per port.")
    max_lossless_priorities: int = Field(
        default=2, ge=0, le=8, description="How many PFC (no-drop) priorities a port supports."
    )
    headroom: HeadroomConstants = Field(description="Constants for the PFC headroom calculation.")
    sonic: SonicSku | None = Field(default=None, description="SONiC SKU (required when nos is sonic).")
    capabilities: Capabilities = Field(description="Feature support of this model and NOS release.")

    @model_validator(mode="after")
    def _consistent(self) -> PlatformModel:
        for speed in self.breakout_speeds:
            split = self.port_speed // speed if speed else 0
            if speed >= self.port_speed or self.port_speed % speed or self.lanes_per_port % split:
                raise ValueError(
                    f"breakout speed {speed}G does not split a {self.port_speed}G cage of "
                    f"{self.lanes_per_port} lanes evenly"
                )
        if self.nos is Nos.SONIC and self.sonic is None:
            raise ValueError("a sonic model needs 'sonic: {hwsku: ..., port_speed: ...}'")
        if self.sonic is not None and not self.supports_speed(self.sonic.port_speed):
            raise ValueError(f"sonic.port_speed {self.sonic.port_speed}G is not a speed these cages run")
        if self.port_naming is PortNaming.EOS_MODULAR and self.linecards is None:
            raise ValueError("port_naming eos-modular needs 'linecards' (first_slot, ports_per_linecard)")
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


class Catalog(IntentModel):
    """A set of platform models."""

    models: CatalogModels

    def get(self, name: str) -> PlatformModel:
        return self.models[name]
