"""What a deploy may remove: netgen's sections, the device's own, and everything else.

A deploy replaces a device's configuration with the rendered one. Every section of the running
configuration (an EOS top-level block, a SONiC CONFIG_DB table) falls in one of three classes:

* managed: a kind of section netgen renders (BGP, interfaces, QoS, buffers...). The rendered one
  replaces it, and whatever the device has there beyond it is removed: that is the deploy's job.
  Sections netgen renders only when the intent declares them (NTP, syslog, sFlow...: intent
  `services:`) are managed on a device only when its rendered config has one (`managed_if_rendered`);
  otherwise they fall to the two classes below.
* device-owned: the device's own (management interface and VRF, users, AAA, NTP, logging...). Kept
  from the running configuration unless the intent renders the same section.
* unmanaged: anything else (sFlow, LLDP, transceiver settings, `ip tacacs source-interface`, a
  SONiC table netgen never writes). Its fate is a policy: `keep` (the default: carried over as it
  is), `remove`, or `refuse` (the device is not changed, and the report names the lines).

The lists live in deploy.yaml (`ownership.<nos>`); a NOS's driver supplies the defaults, so the
file only needs what differs. `netgen deploy --remove-unmanaged` turns every unmanaged policy into
`remove` for one run. Every deploy (dry run or not) reports per device what it keeps, what it
removes and what it refused, from the device's own running configuration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from netgen.intent.types import IntentModel

# A section prefix: the start of an EOS top-level line, or a CONFIG_DB table name. Printable, one
# line, no leading space (a prefix can never match a sub-mode line).
SectionPrefix = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][ -~]{0,99}$")]


class Policy(StrEnum):
    KEEP = "keep"
    REMOVE = "remove"
    REFUSE = "refuse"


class NosOwnership(IntentModel):
    """deploy.yaml `ownership.<nos>`. An omitted list means the driver's default for that NOS."""

    managed: list[SectionPrefix] | None = Field(
        default=None, description="Sections netgen renders: replaced, and anything more in them removed.")
    managed_if_rendered: list[SectionPrefix] | None = Field(
        default=None, description="Managed only on a device whose rendered config has such a section.")
    device_owned: list[SectionPrefix] | None = Field(
        default=None, description="Sections the device owns: kept unless the intent renders the same section.")
    unmanaged: Policy = Field(default=Policy.KEEP, description="What to do with every other section.")
    sections: dict[SectionPrefix, Policy] = Field(
        default_factory=dict, description="Per-section policy for unmanaged sections (the longest prefix wins).")


MANAGED, DEVICE_OWNED = "managed", "device-owned"


@dataclass(frozen=True)
class Ownership:
    """The resolved ownership of one NOS's devices. `exact`: a section matches an entry only when it
    is that name (SONiC tables: NTP is not NTP_KEY); otherwise entries are prefixes (EOS lines)."""

    managed: tuple[str, ...]
    device_owned: tuple[str, ...]
    unmanaged: Policy = Policy.KEEP
    sections: Mapping[str, Policy] = field(default_factory=dict)
    managed_if_rendered: tuple[str, ...] = ()
    exact: bool = False

    def _match(self, section: str, entries: Iterable[str]) -> str | None:
        """The longest entry naming `section`, or None."""
        hits = [e for e in entries if (section == e if self.exact else section.startswith(e))]
        return max(hits, key=len) if hits else None

    def classify(self, section: str, rendered: Iterable[str] = ()) -> str:
        """MANAGED, DEVICE_OWNED, or the policy (a `Policy` value) of an unmanaged section, on a device
        whose rendered config has the sections `rendered` (their headers or table names)."""
        if self._match(section, self.managed):
            return MANAGED
        conditional = self._match(section, self.managed_if_rendered)
        if conditional is not None and any(self._match(header, [conditional]) for header in rendered):
            return MANAGED
        if self._match(section, self.device_owned):
            return DEVICE_OWNED
        entry = self._match(section, self.sections)
        return str(self.sections[entry] if entry is not None else self.unmanaged)

    def removing_unmanaged(self) -> Ownership:
        """The same, with every unmanaged section removed (`--remove-unmanaged`)."""
        return replace(self, unmanaged=Policy.REMOVE, sections=dict.fromkeys(self.sections, Policy.REMOVE))


def resolve(configured: NosOwnership | None, defaults: Ownership, remove_unmanaged: bool = False) -> Ownership:
    """deploy.yaml's settings for one NOS over its driver's defaults."""
    if configured is None:
        result = defaults
    else:
        result = Ownership(
            tuple(configured.managed) if configured.managed is not None else defaults.managed,
            tuple(configured.device_owned) if configured.device_owned is not None else defaults.device_owned,
            configured.unmanaged, dict(configured.sections),
            tuple(configured.managed_if_rendered) if configured.managed_if_rendered is not None
            else defaults.managed_if_rendered, defaults.exact)
    return result.removing_unmanaged() if remove_unmanaged else result


@dataclass
class OwnershipReport:
    """Per device, read from its running configuration while staging: what the deploy keeps, what
    it removes and what it refused to touch. Lines are redacted by the driver before they get here."""

    kept_device_owned: list[str] = field(default_factory=list)  # section headers
    kept_unmanaged: list[str] = field(default_factory=list)  # lines
    removed_unmanaged: list[str] = field(default_factory=list)  # lines
    refused: list[str] = field(default_factory=list)  # lines
    would_remove: list[str] = field(default_factory=list)  # every line / path the change removes

    def as_dict(self) -> dict[str, Any]:
        return {"kept_device_owned": self.kept_device_owned, "kept_unmanaged": self.kept_unmanaged,
                "removed_unmanaged": self.removed_unmanaged, "refused": self.refused,
                "would_remove": self.would_remove}


def first(lines: Iterable[str], count: int = 5) -> str:
    shown = list(lines)
    return "; ".join(shown[:count]) + (f" (+{len(shown) - count} more)" if len(shown) > count else "")
