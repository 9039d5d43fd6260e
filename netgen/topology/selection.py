"""Naming devices on the command line: one matcher for `--device` and `--limit`.

A pattern is a comma-separated list of terms; a device is selected when any term matches it:
a glob on its name (`z01-rtsw*`, `atsw0[12]`, or a plain name), `role:ctsw` (its tier) or
`zone:2` (its zone). `--limit` takes one pattern; `--device` may be given several times.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Mapping

from netgen.topology.model import Device

GLOB_CHARACTERS = frozenset("*?[")


class SelectionError(ValueError):
    """A pattern that selects nothing, or an exact name that is no device: a usage error (exit 2)."""


def terms_of(pattern: str) -> list[str]:
    return [t.strip() for t in pattern.split(",") if t.strip()]


def _term_matches(term: str, name: str, device: Device) -> bool:
    key, _, value = term.partition(":")
    if value:
        if key == "role":
            return device.role.value == value
        return key == "zone" and str(device.zone) == value
    return fnmatch.fnmatchcase(name, term)


def select(names: list[str], devices: Mapping[str, Device], limit: str | None) -> list[str]:
    """The names (in their order) that `limit` selects; all of them for no pattern. `--limit`:
    comma-separated globs on names, or `role:ctsw` / `zone:2` tokens (any may match)."""
    if not limit:
        return names
    terms = terms_of(limit)
    return [n for n in names if any(_term_matches(term, n, devices[n]) for term in terms)]


def is_exact(term: str) -> bool:
    """A term that names one device (no glob character, no `role:` / `zone:` token)."""
    return not (GLOB_CHARACTERS & set(term) or ":" in term)


def did_you_mean(term: str, names: Iterable[str]) -> str:
    """` (did you mean a, b?)` with the names closest to an exact name, or nothing."""
    close = difflib.get_close_matches(term, list(names), n=3) if is_exact(term) else []
    return f" (did you mean {', '.join(close)}?)" if close else ""


def unmatched_hint(term: str, names: Iterable[str]) -> str:
    """Why `term` selects nothing, with the closest names when it reads as an exact name."""
    if not is_exact(term):
        return f"{term!r} matches no device"
    return f"unknown device {term!r}{did_you_mean(term, names)}"


def match_devices(devices: Mapping[str, Device], patterns: Iterable[str]) -> list[str]:
    """`--device` values (each a pattern as `select` takes) -> the devices they name, in fabric
    order. Every term must select at least one device: an unknown exact name (with the closest
    names) or a glob that matches nothing is a SelectionError."""
    names = list(devices)
    chosen: set[str] = set()
    for pattern in patterns:
        for term in terms_of(pattern):
            found = select(names, devices, term)
            if not found:
                raise SelectionError(unmatched_hint(term, names))
            chosen.update(found)
    return [n for n in names if n in chosen]


__all__ = ["SelectionError", "did_you_mean", "is_exact", "match_devices", "select", "terms_of", "unmatched_hint"]
