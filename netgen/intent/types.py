"""Value types shared by the intent models: safe strings, speeds, byte sizes, ratios.

Everything here parses a human-friendly YAML scalar once, at load time, into a plain Python
value (int, float, str), so later stages never re-parse and never see units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
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
from pydantic_core import PydanticCustomError


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
    elif isinstance(value, float) and value.is_integer():  # 400.0: an integer to JSON Schema too
        gbps = int(value)
    elif isinstance(value, str) and (m := _SPEED_RE.match(value)):
        digits = m.group(1).lstrip("0") or "0"
        gbps = int(digits) if len(digits) <= 5 else -1  # -1: far too many digits to be a speed
    else:
        raise ValueError("expected a speed such as '400G'")
    if gbps not in VALID_SPEEDS_GBPS:
        allowed = ", ".join(f"{s}G" for s in VALID_SPEEDS_GBPS)
        shown = f" {gbps}G" if 0 <= gbps < 10**6 else ""
        raise ValueError(f"unsupported speed{shown}; allowed: {allowed}")
    return gbps


Speed = Annotated[
    int,
    BeforeValidator(parse_speed),
    PlainSerializer(lambda v: f"{v}G", return_type=str),
    # exactly what parse_speed takes: a listed speed as text ('400G', ' 0400 g ') or as a number of Gb/s
    WithJsonSchema({"anyOf": [
        {"type": "string", "pattern": rf"^\s*0*({'|'.join(str(s) for s in VALID_SPEEDS_GBPS)})\s*[Gg]\s*$"},
        {"type": "integer", "enum": list(VALID_SPEEDS_GBPS)}], "examples": ["400G"]}),
]


# --- byte sizes -----------------------------------------------------------------------------------
_BYTES_RE = re.compile(r"^\s*([0-9]+)(?:\.([0-9]+))?\s*(B|KB|KiB|MB|MiB|GB|GiB)\s*$")
_BYTE_UNITS = {
    "B": 1,
    "KB": 1000,
    "KiB": 1024,
    "MB": 1000**2,
    "MiB": 1024**2,
    "GB": 1000**3,
    "GiB": 1024**3,
}
# The largest size any field takes: far above every switch buffer (the deepest Jericho ASICs carry
# GBs of HBM), far below anything that could overflow a float or a device counter. Fractions of a
# byte are dropped, so more than 9 decimals only ever spell the same size.
MAX_BYTES = 1024**4
MAX_BYTES_TEXT = "1024GiB"  # 1 TiB, in a unit the parser takes
_MAX_BYTE_DECIMALS = 9
_BYTES_FORM = (f"a size with an explicit unit (B, KB, KiB, MB, MiB, GB, GiB) from 0B to {MAX_BYTES_TEXT},"
               " e.g. '150KB', '1.5MiB', '9216B'")


def parse_bytes(value: Any) -> int:
    """'1.5MiB' -> 1572864. A unit is mandatory: a bare number is ambiguous (bytes? cells? KB?).
    Bounded here, where the size is typed: 0B .. 1024GiB (1 TiB), at most 9 decimals; the arithmetic is exact
    (no float), so no spelling of a size can overflow or lose precision."""
    if isinstance(value, str) and (m := _BYTES_RE.match(value)):
        whole, fraction, unit = m.group(1).lstrip("0"), m.group(2) or "", m.group(3)
        if len(fraction) > _MAX_BYTE_DECIMALS:
            raise ValueError(f"at most {_MAX_BYTE_DECIMALS} decimals; expected {_BYTES_FORM}")
        # a whole part longer than 1TiB's 13 digits is out of range without computing it
        too_long = len(whole) > len(str(MAX_BYTES))
        size = MAX_BYTES + 1 if too_long else int(Decimal(f"{whole or 0}.{fraction or 0}") * _BYTE_UNITS[unit])
        if size > MAX_BYTES:
            raise PydanticCustomError("less_than_equal", "size too large: at most {le}", {"le": MAX_BYTES_TEXT})
        return size
    raise ValueError(f"expected {_BYTES_FORM}")


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
            # parse_bytes' form (its upper bound, 1024GiB, is checked by netgen only)
            "pattern": rf"^\s*[0-9]+(\.[0-9]{{1,{_MAX_BYTE_DECIMALS}}})?\s*(B|KB|KiB|MB|MiB|GB|GiB)\s*$",
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
# Each side of a declared ratio: positive, at most a million, at most 6 decimals (so at least
# 0.000001). The factor DOWN/UP then stays within 1e-12 .. 1e12: finite, never a division by zero.
MAX_RATIO_SIDE = 1_000_000
_MAX_RATIO_DECIMALS = 6
_RATIO_FORM = (f"a ratio 'UP:DOWN' of positive numbers, each at most {MAX_RATIO_SIDE:,} with at most"
               f" {_MAX_RATIO_DECIMALS} decimals, e.g. '1:7' or '1:1'")


_SIDE = rf"[0-9]+(\.[0-9]{{1,{_MAX_RATIO_DECIMALS}}})?"  # one side of a ratio, as the JSON Schema says it


def _ratio_side(text: str) -> float:
    whole, _, fraction = text.partition(".")
    if len(fraction) > _MAX_RATIO_DECIMALS:
        raise ValueError(f"at most {_MAX_RATIO_DECIMALS} decimals on each side; expected {_RATIO_FORM}")
    if len(whole.lstrip("0")) > len(str(MAX_RATIO_SIDE)) or float(text) > MAX_RATIO_SIDE:
        raise PydanticCustomError("less_than_equal", "a side of the ratio is too large: at most {le} each",
                                  {"le": f"{MAX_RATIO_SIDE:,}"})
    side = float(text)
    if side <= 0:
        raise ValueError(f"each side must be more than 0; expected {_RATIO_FORM}")
    return side


def parse_ratio(value: Any) -> Ratio:
    if isinstance(value, Ratio):
        return value
    if isinstance(value, str) and (m := _RATIO_RE.match(value)):
        return Ratio(_ratio_side(m.group(1)), _ratio_side(m.group(2)))
    raise ValueError(f"expected {_RATIO_FORM}")


RatioStr = Annotated[
    Ratio,
    BeforeValidator(parse_ratio),
    PlainSerializer(str, return_type=str),
    # parse_ratio's form (each side > 0 and <= 1,000,000 is checked by netgen only)
    WithJsonSchema({"type": "string", "pattern": rf"^\s*{_SIDE}\s*:\s*{_SIDE}\s*$", "examples": ["1:7", "1:1"]}),
]
