"""Custom configuration: the escape hatch for what netgen does not model.

A fabric file's `custom_config:` is a list of named blocks, each with a scope (tiers, zones,
devices; all that are given must match, none = every switch) and configuration for one or more
NOSes: EOS CLI lines, SONiC CONFIG_DB rows, FRR lines. They are layered like AVD's
`eos_cli` / `structured_config`, from the widest scope to the narrowest: every switch, then a
tier, then a zone, then named devices (blocks of the same layer in file order). A narrower
block replaces a wider block of the same name whole (as a host's variables replace its group's in
Ansible); blocks with different names add up, and may not set the same EOS line or CONFIG_DB field.

A custom block is trusted configuration, but it is still configuration: it is checked here for
shape (so it cannot break out of the file or run a command), and at render time by the same checks
as netgen's own output (EOS structure, SONiC's YANG models, FRR's own parser) and against
netgen's output (it may add, never change, what netgen renders). Secrets are refused: they only
come by reference (docs/how-to/switch-services.md).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from netgen.intent.eos_commands import NEGATIONS, command_of
from netgen.intent.scope import LAYERS, Scoped
from netgen.intent.types import SafeName
from netgen.registry import NOS, NosRegistryError

MAX_LINES = 500
# Printable ASCII and newlines: the coarse gate the JSON Schema and the injection guard see.
_BLOCK_TEXT = StringConstraints(pattern=r"^[ -~\n]*$", max_length=64_000)
# Words that would act instead of configure: leave or end the config session early (`end`,
# `commit`, `abort`), run an exec command (`do`, `bash`, `run`, `copy`, `write`, `reload`,
# `configure`, `rollback`), or open a free-text block whose end the file cannot mark reliably
# (`banner`, `comment`). `exit` is refused on EOS too: the file's indentation is its structure.
EOS_REFUSED_WORDS = frozenset({"end", "exit", "commit", "abort", "do", "bash", "run", "copy", "write", "reload",
                               "configure", "rollback", "banner", "comment", "enable", "show"})
FRR_REFUSED_WORDS = frozenset({"end", "do", "write", "copy", "configure", "show", "clear", "debug"})
# A secret in clear (TACACS/RADIUS keys, user secrets, SNMP auth, BGP and OSPF passwords). A line
# (or any value) it matches is never echoed back: errors name the line and this keyword only.
SECRET_WORD = re.compile(r"(^|\s)([\w-]*(key|secret|password|passwd|passphrase|community)|auth|priv)(\s|$)",
                         re.IGNORECASE)
CONFIG_DB_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
CONFIG_DB_KEY = re.compile(r"^[ -~]{1,200}$")
CONFIG_DB_FIELD = re.compile(r"^[A-Za-z][A-Za-z0-9_@.-]{0,63}$")
CONFIG_DB_VALUE = re.compile(r"^[ -~]{0,1024}$")
SECRET_FIELD = re.compile(r"pass|secret|(^|_)key$|community", re.IGNORECASE)


def _lines(text: str) -> list[str]:
    lines = text.rstrip("\n").split("\n")
    if len(lines) > MAX_LINES:
        raise ValueError(f"at most {MAX_LINES} lines")
    return lines


def _first_word(line: str) -> str:
    words = line.split()
    return words[0].lower() if words else ""


def looks_like_secret(text: str) -> bool:
    """Whether some line of `text` holds a word that names a secret (SECRET_WORD)."""
    return SECRET_WORD.search(text) is not None


def _secret_free(number: int, line: str) -> None:
    """Refuse a line that looks like it holds a secret, naming the line and the keyword that says so
    (a fixed word: key, secret, password, ..., auth, priv) and the word's position, never a word of
    the line itself: the line may be all secret."""
    found = SECRET_WORD.search(line)
    if found:
        keyword = (found.group(3) or found.group(2)).lower()
        position = len(line[:found.start(2)].split()) + 1
        raise ValueError(f"line {number}: looks like a secret (its word {position} is or ends in '{keyword}'; the"
                         " line is not shown): secrets are never written in a fabric file; leave this line to the"
                         " device (deploy.yaml ownership) instead")


def _keyword_text(word: str) -> str:
    return repr(word if len(word) <= 40 else word[:37] + "...")


def _eos_block(text: str) -> str:
    """EOS running-config lines as `configure replace` reads them: 3-space indentation, each
    top-level line a command of global configuration mode that eos_commands.py knows, and lines
    indented under a top-level line only where it opens a mode. Deeper lines are checked for their
    indentation only: which of a mode's commands open a mode of their own is not in the table."""
    lines = _lines(text)
    previous = 0
    parent: tuple[int, tuple[str, ...], bool] = (0, (), False)  # the last top-level line: number, entry, takes lines
    for number, line in enumerate(lines, start=1):
        _secret_free(number, line)  # first: every later message names a word of the line
        if not line.strip():
            raise ValueError(f"line {number}: empty line (EOS separates blocks with '!')")
        if line != line.rstrip():
            raise ValueError(f"line {number}: trailing whitespace")
        indent = len(line) - len(line.lstrip(" "))
        if number == 1 and indent:
            raise ValueError("line 1: the block starts with a top-level line (no indentation)")
        if indent % 3:
            raise ValueError(f"line {number}: indentation {indent} is not a multiple of 3 (EOS indents by 3)")
        if indent > previous + 3:
            raise ValueError(f"line {number}: indented deeper than the line above it allows")
        word = _first_word(line)
        if word in EOS_REFUSED_WORDS or word.startswith("!"):
            what = "a comment" if word.startswith("!") else f"'{word}'"
            raise ValueError(f"line {number}: {what} is not accepted in a custom EOS block")
        if indent == 0:
            words = line.split()
            known = command_of(words)
            if known is None:
                keyword = words[1] if word in NEGATIONS and len(words) > 1 else word
                raise ValueError(f"line {number}: {_keyword_text(keyword.lower())} is not a command of EOS's global"
                                 " configuration mode that netgen knows (the top-level keywords of EOS 4.x in"
                                 " netgen/intent/eos_commands.py, from Arista's EOS User Manual)")
            parent = (number, *known)
        elif indent == 3 and not parent[2]:
            raise ValueError(f"line {number}: indented under line {parent[0]} ('{' '.join(parent[1])}'), a command"
                             " of one line: EOS opens no mode for it, so nothing can sit under it")
        previous = indent
    return "\n".join(lines)


def _frr_block(text: str) -> str:
    lines = _lines(text)
    for number, line in enumerate(lines, start=1):
        _secret_free(number, line)  # first: every later message names a word of the line
        if not line.strip():
            raise ValueError(f"line {number}: empty line (use '!')")
        if line != line.rstrip():
            raise ValueError(f"line {number}: trailing whitespace")
        if number == 1 and line[0] == " ":
            raise ValueError("line 1: the block starts with a top-level line (no indentation)")
        word = _first_word(line)
        if word in FRR_REFUSED_WORDS:
            raise ValueError(f"line {number}: '{word}' is not accepted in a custom FRR block")
    return "\n".join(lines)


def _config_db(tables: dict[str, Any]) -> dict[str, Any]:
    """TABLE -> key -> field -> string or list of strings, the shape of CONFIG_DB."""
    if not tables:
        raise ValueError("empty: give at least one table")
    for table, rows in tables.items():
        if not CONFIG_DB_NAME.match(table):
            raise ValueError(f"table {table[:70]!r}: CONFIG_DB table names are upper case (e.g. SNMP_AGENT_ADDRESS)")
        if not isinstance(rows, dict) or not rows:
            raise ValueError(f"{table}: must map keys to fields")
        for key, fields in rows.items():
            if not CONFIG_DB_KEY.match(key):
                raise ValueError(f"{table}: key {key[:70]!r}: printable ASCII, 1-200 characters")
            if not isinstance(fields, dict):
                raise ValueError(f"{table}|{key}: must map field names to values")
            for name, value in fields.items():
                where = f"{table}|{key}.{name[:70]}"
                if not CONFIG_DB_FIELD.match(name):
                    raise ValueError(f"{where}: not a CONFIG_DB field name")
                if SECRET_FIELD.search(name):
                    raise ValueError(f"{where}: holds a secret: secrets are never written in a fabric file")
                values = value if isinstance(value, list) else [value]
                if not values or not all(isinstance(v, str) and CONFIG_DB_VALUE.match(v) for v in values):
                    raise ValueError(f"{where}: a string (or a list of strings) of printable ASCII; CONFIG_DB"
                                     " stores every value as text, so write numbers quoted ('9100')")
    return tables


EosBlock = Annotated[str, _BLOCK_TEXT, AfterValidator(_eos_block)]
FrrBlock = Annotated[str, _BLOCK_TEXT, AfterValidator(_frr_block)]
TableName = Annotated[str, StringConstraints(pattern=CONFIG_DB_NAME.pattern)]
ConfigDbFragment = Annotated[dict[TableName, Any], AfterValidator(_config_db)]

PARTS = ("eos_cli", "sonic_config_db", "frr")  # the parts a block may have (the fields below)


def parts_by_nos() -> dict[str, tuple[str, ...]]:
    """Which parts of a block each registered NOS's renderer reads (its bundle's `custom_parts`,
    netgen/registry.py), by NOS."""
    parts = {nos: NOS.bundle(nos).custom_parts for nos in NOS.names()}
    for nos, taken in parts.items():
        unknown = sorted(set(taken) - set(PARTS))
        if unknown:
            raise NosRegistryError(f"NOS {nos!r}: custom_parts {', '.join(unknown)}: not a custom_config part"
                                   f" (the parts: {', '.join(PARTS)})")
    return parts


class CustomConfig(Scoped):
    """One named block of custom configuration and where it applies."""

    name: SafeName = Field(description="Names the block in diffs, in rendered files and in `netgen show --device`.")
    eos_cli: EosBlock | None = Field(
        default=None, description="EOS running-config lines (3-space indentation), added to the rendered config.")
    sonic_config_db: ConfigDbFragment | None = Field(
        default=None, description="CONFIG_DB rows (TABLE -> key -> field -> text), added to config_db.json.")
    frr: FrrBlock | None = Field(default=None, description="FRR lines, appended to a SONiC switch's frr.conf.")

    @model_validator(mode="after")
    def _has_config(self) -> CustomConfig:
        if self.eos_cli is None and self.sonic_config_db is None and self.frr is None:
            raise ValueError("give at least one of eos_cli, sonic_config_db, frr")
        return self

    def parts_for(self, nos: str) -> tuple[str, ...]:
        """The parts of this block a switch running `nos` gets."""
        return tuple(part for part in parts_by_nos().get(nos, ()) if getattr(self, part) is not None)


class AmbiguousLayer(ValueError):
    """Two blocks with one name and one layer both apply to a switch: neither can replace the other."""

    def __init__(self, name: str, layer: str, device: str) -> None:
        self.summary = f"two custom_config blocks named {name!r} of the same layer ({layer}) apply to"
        super().__init__(f"{self.summary} {device}: narrow one's scope, or rename one")
        self.name = name


def layered(blocks: list[CustomConfig], role: str, zone: int | None, device: str) -> list[CustomConfig]:
    """The blocks that apply to one switch, widest layer first. A block replaces a wider one of the
    same name (as a device's variables replace its group's in Ansible); blocks with other names add."""
    hits = sorted((block for block in blocks if block.applies(role, zone, device)),
                  key=lambda block: LAYERS.index(block.layer))  # stable: file order within a layer
    chosen: dict[str, CustomConfig] = {}
    for block in hits:
        wider = chosen.pop(block.name, None)
        if wider is not None and wider.layer == block.layer:
            raise AmbiguousLayer(block.name, block.layer, device)
        chosen[block.name] = block
    return list(chosen.values())


def replaced(blocks: list[CustomConfig], role: str, zone: int | None, device: str) -> list[CustomConfig]:
    """The blocks whose scope covers the switch but that a narrower block of the same name replaces."""
    kept = {id(block) for block in layered(blocks, role, zone, device)}
    return [block for block in blocks if block.applies(role, zone, device) and id(block) not in kept]


__all__ = ["LAYERS", "PARTS", "SECRET_WORD", "AmbiguousLayer", "ConfigDbFragment", "CustomConfig", "EosBlock",
           "FrrBlock", "layered", "looks_like_secret", "parts_by_nos", "replaced"]
