"""Names of devices, ports and keys as people read many of them at once: in natural order
(Ethernet44 before Ethernet448, rtsw2 before rtsw10), runs as ranges (`z01-rtsw001..z01-rtsw192`,
`Ethernet0..Ethernet504 step 8`), and a set of devices by tier and zone
("10 devices (8 ctsw in zones 1-2, 2 atsw)").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

_NUMBER = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=65536)
def natural_key(text: str) -> tuple[str | int, ...]:
    """'Ethernet44' < 'Ethernet448', 'rtsw2' < 'rtsw10': digit runs compare as numbers (split
    always alternates text and number, so the tuples compare position by position)."""
    return tuple(int(part) if index % 2 else part for index, part in enumerate(_NUMBER.split(text)))


def device_ranges(names: Iterable[str]) -> str:
    """'z01-ctsw01..z01-ctsw04, atsw01..atsw02': runs of consecutive numbers (same prefix, suffix and
    width) as ranges, in natural order."""
    runs: list[list[str]] = []
    last: tuple[str, int, str, int] | None = None
    for name in sorted(names, key=natural_key):
        match = re.match(r"^(.*?)(\d+)(\D*)$", name)
        here = (match.group(1), int(match.group(2)), match.group(3), len(match.group(2))) if match else None
        if runs and here and last and here[0] == last[0] and here[2:] == last[2:] and here[1] == last[1] + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
        last = here
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}..{run[-1]}" for run in runs)


def describe(devices: list[str], tiers: Mapping[str, str], zones: Mapping[str, int | None]) -> str:
    """'10 devices (8 ctsw in zones 1-2, 2 atsw)' or the device itself."""
    if len(devices) == 1:
        return devices[0]
    by_tier: dict[str, list[str]] = {}
    for name in devices:
        by_tier.setdefault(tiers.get(name, "unknown"), []).append(name)
    parts = []
    for tier, names in sorted(by_tier.items(), key=lambda item: -len(item[1])):
        seen = sorted({z for z in (zones.get(n) for n in names) if z is not None})
        where = "" if not seen else f" in zone {seen[0]}" if len(seen) == 1 else f" in zones {_span(seen)}"
        parts.append(f"{len(names):,} {tier}{where}")
    return f"{len(devices):,} devices ({', '.join(parts)})"


def _span(numbers: list[int]) -> str:
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(str(n) for n in numbers)


def name_ranges(names: Iterable[str], limit: int | None = None) -> str:
    """'Ethernet0..Ethernet504 step 8, Ethernet512': runs of three or more names that differ only in
    one number, by the same step, as ranges; names in natural order, equal names once. `limit`:
    at most that many parts, then how many names are left."""
    parts = _range_parts(tuple(sorted(set(names), key=natural_key)))
    if limit is not None and len(parts) > limit:
        left = sum(count for _, count in parts[limit:])
        return ", ".join(text for text, _ in parts[:limit]) + f", … {left:,} more"
    return ", ".join(text for text, _ in parts)


@functools.lru_cache(maxsize=4096)
def _range_parts(ordered: tuple[str, ...]) -> list[tuple[str, int]]:
    """The runs of `ordered` (see name_ranges) as (text, names in it). Each number's place in the
    names is tried as the one that varies (the port in `Ethernet8|3`, or the queue), and the one
    that leaves fewest parts is kept. Cached: a fabric-wide change asks for the same ports of every
    switch of a model."""
    tokens = [_NUMBER.split(name) for name in ordered]  # text, number, text, ...: numbers at odd places
    best: list[tuple[str, int]] = [(name, 1) for name in ordered]
    for place in range(1, max((len(t) for t in tokens), default=0), 2):
        parts = _runs_varying(ordered, tokens, place)
        if len(parts) < len(best):
            best = parts
    return best


def _runs_varying(ordered: tuple[str, ...], tokens: list[list[str]], place: int) -> list[tuple[str, int]]:
    """The names as runs where only the number at `place` varies, by a constant step; parts in the
    natural order of their first name."""
    series: dict[tuple[object, ...], list[tuple[int, str]]] = {}
    found: list[tuple[str, int, str]] = []
    for name, parts in zip(ordered, tokens, strict=True):
        if place >= len(parts):
            found.append((name, 1, name))
            continue
        number = parts[place]
        padded = len(number) if number.startswith("0") and len(number) > 1 else 0  # x010 is not x10's series
        series.setdefault((len(parts), *parts[:place], padded, *parts[place + 1:]), []).append((int(number), name))
    for members in series.values():
        members.sort()
        run: list[tuple[int, str]] = []
        for member in members:
            step = run[1][0] - run[0][0] if len(run) > 1 else None
            if not run or (step is None and member[0] > run[-1][0]) or (step and member[0] - run[-1][0] == step):
                run.append(member)
            elif len(run) == 2 and member[0] > run[-1][0]:  # two names are no run yet: go on from the second
                found.append((run[0][1], 1, run[0][1]))
                run = [run[1], member]
            else:
                found += _closed(run)
                run = [member]
        found += _closed(run)
    found.sort(key=lambda part: natural_key(part[2]))
    return [(text, count) for text, count, _ in found]


def _closed(run: list[tuple[int, str]]) -> list[tuple[str, int, str]]:
    if len(run) < 3:
        return [(name, 1, name) for _, name in run]
    step = run[1][0] - run[0][0]
    return [(f"{run[0][1]}..{run[-1][1]}" + (f" step {step}" if step != 1 else ""), len(run), run[0][1])]


__all__ = ["describe", "device_ranges", "name_ranges", "natural_key"]
