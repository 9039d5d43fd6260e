"""The source-of-truth contract: what `netgen sot push` needs from a backend (Nautobot today,
NetBox later), in netgen's terms. A backend lists what it holds for a fabric, creates, updates;
it never deletes (push never removes anything, netgen's or anyone's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from netgen.sot.objects import Wanted


class SotError(Exception):
    """The source of truth refused or could not be reached; the message names the endpoint and
    says why (never the token). `status`: the HTTP status it answered with, if it answered."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Held:
    """One object as the source of truth holds it, in netgen's terms."""

    id: str
    fields: dict[str, object] = field(default_factory=dict)
    netgen: bool = False  # carries this fabric's netgen mark (netgen made it): netgen may update it


@dataclass(frozen=True, slots=True)
class DeviceFacts:
    """What belongs to the source of truth about a switch, for the deploy: where to reach it, what
    it is, and whether it is in service."""

    management: str | None  # the primary IPv4 address, without its length
    serial: str
    status: str  # e.g. Active, Planned, Offline, Decommissioning


class SourceOfTruth(Protocol):
    name: str  # e.g. "nautobot"

    def prepare(self, fabric: str, dry_run: bool) -> list[str]:
        """What the backend needs before objects can be pushed (custom fields, ...); returns what
        it created (or, dry run, would create)."""
        ...

    def supports(self, kind: str) -> str | None:
        """None when the backend stores this kind; else why not (said in the report)."""
        ...

    def held(self, fabric: str, kind: str) -> dict[tuple[str, ...], Held]:
        """Every object of the kind the backend holds for this fabric, by netgen key."""
        ...

    def create(self, fabric: str, kind: str, objects: list[Wanted]) -> None: ...

    def update(self, fabric: str, kind: str, changes: list[tuple[Held, Wanted]]) -> None: ...

    def device_facts(self, fabric: str) -> dict[str, DeviceFacts]:
        """Every device of the fabric the source of truth holds, by name."""
        ...
