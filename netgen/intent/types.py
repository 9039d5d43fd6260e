"""Value types shared by the intent models: safe strings, speeds, byte sizes, ratios.

Everything here parses a human-friendly YAML scalar once, at load time, into a plain Python
value (int, float, str), so later stages never re-parse and never see units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
)


class IntentModel(BaseModel):
    """Base of every intent model: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


# --- strings that can reach device configs ------------------------------------------------------
# A name becomes part of hostnames, profile names, file names and CLI lines. The character set is
# what every target accepts unquoted (EOS, FRR, SONiC YANG names, POSIX file names).
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
# Free text (descriptions) ends up after a CLI keyword (`description ...`). Nothing that starts a
# new line, a comment (`!`, `#`), a quote, a template expression or a shell expansion is allowed.
TEXT_PATTERN = r"^[A-Za-z0-9_.,:/()+=@\-\[\] ]{0,200}$"

# A device-name prefix, e.g. "snc1-": lower case, ends with '-', so names stay DNS-friendly.
HOSTNAME_PREFIX_PATTERN = r"^([a-z0-9][a-z0-9-]{0,20}-)?$"
# A catalog file path: no spaces, quotes or shell characters.
FILE_PATH_PATTERN = r"^[A-Za-z0-9_./-]{1,200}$"

SafeName = Annotated[
    str,
    StringConstraints(pattern=NAME_PATTERN),
    Field(description="A name: letters, digits, '_', '.', '-'; starts with a letter or digit; <= 63 chars."),
]


def _no_edge_space(value: str) -> str:
    if value != value.strip():
        raise ValueError("leading or trailing spaces are not allowed")
    return value


SafeText = Annotated[
    str,
    StringConstraints(pattern=TEXT_PATTERN),
    AfterValidator(_no_edge_space),
    Field(
        description="Free text (e.g. a description): letters, digits, spaces and _ . , : / ( ) + = @ - [ ];"
        " no newline, control character, quote, '!' or '#'; <= 200 chars."
    ),
]


# --- speeds ---------------------------------------------------------------------------------------
_SPEED_RE = re.compile(r"^\s*([0-9]+)\s*G\s*$", re.IGNORECASE)
VALID_SPEEDS_GBPS = (10, 25, 40, 50, 100, 200, 400, 800, 1600)


def parse_speed(value: Any) -> int:
    """'400G' -> 400 (Gb/s). Integers are taken as Gb/s too."""
    if isinstance(value, bool):
        raise ValueError("expected a speed such as '400G'")
    if isinstance(value, int):
        gbps = value
    elif isinstance(value, str) and (m := _SPEED_RE.match(value)):
        gbps = int(m.group(1))
    else:
        raise ValueError("expected a speed such as '400G'")
    if gbps not in VALID_SPEEDS_GBPS:
        allowed = ", ".join(f"{s}G" for s in VALID_SPEEDS_GBPS)
        raise ValueError(f"unsupported speed {gbps}G; allowed: {allowed}")
    return gbps


Speed = Annotated[
    int,
    BeforeValidator(parse_speed),
    PlainSerializer(lambda v: f"{v}G", return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^[0-9]+G$", "examples": ["400G"]}),
]


# --- byte sizes -----------------------------------------------------------------------------------
_BYTES_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)\s*$")
_BYTE_UNITS = {
    "B": 1,
    "KB": 1000,
    "KiB": 1024,
    "MB": 1000**2,
    "MiB": 1024**2,
    "GB": 1000**3,
    "GiB": 1024**3,
}


def parse_bytes(value: Any) -> int:
    """'1.5MiB' -> 1572864. A unit is mandatory: a bare number is ambiguous (bytes? cells? KB?)."""
    if isinstance(value, str) and (m := _BYTES_RE.match(value)):
        return int(float(m.group(1)) * _BYTE_UNITS[m.group(2)])
    raise ValueError("expected a size with an explicit unit, e.g. '150KB', '1.5MiB', '9216B'")


def format_bytes(value: int) -> str:
    for unit in ("GiB", "MiB", "KiB"):
        size = _BYTE_UNITS[unit]
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return f"{value}B"


ByteSize = Annotated[
    int,
    BeforeValidator(parse_bytes),
    PlainSerializer(format_bytes, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^[0-9]+(\.[0-9]+)?\s*(B|KB|KiB|MB|MiB|GB|GiB)$",
            "examples": ["150KB", "1.5MiB"],
        }
    ),
]


# --- ratios ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ratio:
    """Uplink bandwidth : downlink bandwidth, as network engineers write it ('1:7' = 7x oversubscribed)."""

    up: float
    down: float

    @property
    def factor(self) -> float:
        """How many units of downstream bandwidth share one unit of upstream bandwidth."""
        return self.down / self.up

    def __str__(self) -> str:
        return f"{_num(self.up)}:{_num(self.down)}"

    @classmethod
    def of(cls, up_bandwidth: float, down_bandwidth: float) -> Ratio:
        """Normalised so that the smaller side is 1 ('1:6.86' or '1.13:1')."""
        if up_bandwidth <= 0:
            return cls(0.0, 1.0)
        if up_bandwidth >= down_bandwidth:
            return cls(round(up_bandwidth / down_bandwidth, 3), 1.0)
        return cls(1.0, round(down_bandwidth / up_bandwidth, 3))


def _num(value: float) -> str:
    return f"{value:g}"


_RATIO_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*$")


def parse_ratio(value: Any) -> Ratio:
    if isinstance(value, Ratio):
        return value
    if isinstance(value, str) and (m := _RATIO_RE.match(value)):
        up, down = float(m.group(1)), float(m.group(2))
        if up > 0 and down > 0:
            return Ratio(up, down)
    raise ValueError("expected a ratio 'UP:DOWN' of positive numbers, e.g. '1:7' or '1:1'")


RatioStr = Annotated[
    Ratio,
    BeforeValidator(parse_ratio),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^[0-9.]+:[0-9.]+$", "examples": ["1:7", "1:1"]}),
]
