"""Slurm hostlist expressions: `z01-r001-h[01-02]` for z01-r001-h01 and z01-r001-h02.

Names are grouped by everything before their last run of digits; within a group, consecutive numbers
of the same width become a range (`[001-192]`), zero padding kept (Slurm's hostlist keeps a range's
width: slurm.conf(5), "NodeName"; topology.conf(5) takes the same expressions). Names without a
trailing number are written as they are. The expression expands back to exactly the given names, in
their order where they were sorted.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

_TRAILING = re.compile(r"^(.*?)(\d+)$")
_NAME = r"(?:[^,\[\]\s]|\[[0-9,-]+\])+"
_EXPRESSION = re.compile(rf"{_NAME}(?:,{_NAME})*")


def _ranges(numbers: list[tuple[int, str]]) -> list[str]:
    """[(1, "001"), (2, "002"), (5, "005")] -> ["001-002", "005"] (a range never mixes widths)."""
    parts: list[str] = []
    start = prev = numbers[0]
    for item in numbers[1:]:
        if item[0] == prev[0] + 1 and len(item[1]) == len(prev[1]):
            prev = item
            continue
        parts.append(start[1] if start == prev else f"{start[1]}-{prev[1]}")
        start = prev = item
    parts.append(start[1] if start == prev else f"{start[1]}-{prev[1]}")
    return parts


def compress(names: Iterable[str]) -> str:
    """One hostlist expression for `names` (comma-separated groups, in first-seen order)."""
    groups: dict[str, list[tuple[int, str]]] = {}
    plain: list[str] = []
    order: list[str] = []
    for name in names:
        match = _TRAILING.match(name)
        if match is None:
            plain.append(name)
            order.append(f"\0{name}")
            continue
        prefix, digits = match.groups()
        if prefix not in groups:
            groups[prefix] = []
            order.append(prefix)
        groups[prefix].append((int(digits), digits))
    out: list[str] = []
    for key in order:
        if key.startswith("\0"):
            out.append(key[1:])
            continue
        numbers = sorted(set(groups[key]))
        parts = _ranges(numbers)
        out.append(f"{key}{parts[0]}" if len(parts) == 1 and "-" not in parts[0] else f"{key}[{','.join(parts)}]")
    return ",".join(out)


def _numbers(body: str) -> list[str]:
    out: list[str] = []
    for item in body.split(","):
        low, dash, high = item.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ValueError(f"not a numeric range: [{body}]")
        out += [f"{n:0{len(low)}d}" for n in range(int(low), int(high or low) + 1)]
    return out


def expand(expression: str) -> list[str]:
    """The names of a hostlist expression; a name may hold several bracketed ranges (each varies,
    the last fastest: z01-r[001-002]-h[01-02] is r001-h01, r001-h02, r002-h01, r002-h02)."""
    if not _EXPRESSION.fullmatch(expression):
        raise ValueError(f"not a hostlist expression: {expression[:80]!r}")
    names: list[str] = []
    for part in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", expression):
        pieces = re.split(r"\[([^\]]*)\]", part)  # text, range, text, range, ..., text
        if any("[" in p or "]" in p for p in pieces[::2]):
            raise ValueError(f"unbalanced brackets in {part!r}")
        choices = [[p] if i % 2 == 0 else _numbers(p) for i, p in enumerate(pieces)]
        names += ["".join(combo) for combo in itertools.product(*choices)]
    return names
