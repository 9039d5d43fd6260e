"""Design-check framework, modelled on ANTA: each check is a small class with a code, a title and a
`run()` that yields findings; a registry collects them so the runner has no list to maintain."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from netgen.context import DesignContext
from netgen.topology.model import Device


class Severity(StrEnum):
    ERROR = "error"  # the fabric must not be rendered
    WARNING = "warning"  # renders, but a human should read it


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    subject: str  # the object at fault: a device, a zone, an intent path
    message: str
    fix: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "subject": self.subject,
            "message": self.message,
            "fix": self.fix,
        }


class DesignCheck(Protocol):
    code: ClassVar[str]
    title: ClassVar[str]

    def run(self, ctx: DesignContext) -> Iterable[Finding]: ...


REGISTRY: dict[str, type[DesignCheck]] = {}


def register(check: type[DesignCheck]) -> type[DesignCheck]:
    if check.code in REGISTRY:
        raise ValueError(f"duplicate design check code {check.code}")
    REGISTRY[check.code] = check
    return check


def error(code: str, subject: str, message: str, fix: str) -> Finding:
    return Finding(code, Severity.ERROR, subject, message, fix)


def warning(code: str, subject: str, message: str, fix: str) -> Finding:
    return Finding(code, Severity.WARNING, subject, message, fix)


def devices_text(devices: list[Device], limit: int = 3) -> str:
    names = [d.name for d in devices[:limit]]
    more = len(devices) - limit
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")
