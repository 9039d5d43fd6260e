"""Where a setting applies: every switch, a tier, a zone or named switches. Shared by everything in
the fabric file that is layered from the widest scope to the narrowest (services.overrides,
custom_config): defaults, then tier, then zone, then device."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Literal

from pydantic import Field

from netgen.intent.types import IntentModel, SafeName

# The layers, widest first: the order layered settings are applied in.
LAYERS = ("all", "tier", "zone", "device")


class Scoped(IntentModel):
    """A scope: all selectors that are given must match; none given = every switch."""

    tiers: list[Literal["rtsw", "ctsw", "atsw"]] = Field(
        default_factory=list, description="Only on these tiers (empty: every tier).")
    zones: list[Annotated[int, Field(ge=1, le=255)]] = Field(
        default_factory=list, description="Only in these AI Zones (empty: every zone and the ATSW layer).")
    devices: list[SafeName] = Field(default_factory=list, description="Only these switches (empty: every switch).")

    @property
    def layer(self) -> str:
        """The narrowest selector given: the entry's place in the layering."""
        return "device" if self.devices else "zone" if self.zones else "tier" if self.tiers else "all"

    @cached_property
    def device_set(self) -> frozenset[str]:
        """`devices` as a set: a scope may list thousands of switches and is asked about each switch
        by every check and render (not a field: model_dump and the render keys leave it out)."""
        return frozenset(self.devices)

    def applies(self, role: str, zone: int | None, device: str) -> bool:
        return ((not self.tiers or role in self.tiers) and (not self.zones or zone in self.zones)
                and (not self.devices or device in self.device_set))


__all__ = ["LAYERS", "Scoped"]
