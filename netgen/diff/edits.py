"""A device's change as edits, each an instance of a shape that many devices and ports can share.

The same edit on many lines is one thing to review: `mtu 9100` -> `mtu 9000` in every interface of
every EOS switch, PORT.mtu 9100 -> 9000 on every port of every SONiC switch. So each change is
split into what it does (its Shape: the file, where in the file's structure, what goes and what
comes, with the device's own name set aside) and where it does it (the instance: a CONFIG_DB key,
or the name of the config section, e.g. the interface). Counting shapes and their instances gives
the patterns a pull-request comment leads with, and a device's change is its shapes with the
instances of each, which is small even when every port changes.

CONFIG_DB files are compared as data, table by table, skipping the tables that are equal; other
files line by line (linediff.py), each change placed under the section its first line sits in:
the nearest less indented line above it (`interface Ethernet3/1/1`, `router bgp 65001`), and for
a top-level line the comment that opens its `!`-delimited paragraph, if any (`! custom_config
lanz`). A section's last word is its name when it holds a digit (the interface, the AS number,
the route-map sequence) and the rest its kind.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from netgen.diff.config_db import SECRET_KEY_TABLES, masked, semantic_diff
from netgen.diff.grouping import name_ranges
from netgen.diff.linediff import opcodes
from netgen.intent.secrets import redact

DEVICE = "{device}"  # stands for the device's own name in a shape's file name, sections and lines
FIELDS, LINES = "fields", "lines"  # a shape's form: CONFIG_DB fields, or lines of a config


class Shape(NamedTuple):
    """What an edit does, the same wherever it is done. CONFIG_DB (form FIELDS): scope (TABLE,
    field), or (TABLE,) for a whole key added or removed, old and new the values as shown (one each,
    none for an added or removed side), note the custom_config blocks that wrote the field. Lines
    (form LINES): scope the kinds of the sections it sits in, outermost first, old and new the lines
    that go and come (secrets masked)."""

    form: str
    file: str
    scope: tuple[str, ...]
    kind: str  # add | remove | change
    old: tuple[str, ...]
    new: tuple[str, ...]
    note: str = ""

    @property
    def added(self) -> int:
        """What the tier table counts as added by one instance: lines, or one field or key."""
        return len(self.new) if self.form == LINES else int(self.kind != "remove")

    @property
    def removed(self) -> int:
        return len(self.old) if self.form == LINES else int(self.kind != "add")


class Instance(NamedTuple):
    """Where a shape is done: the key, or the section's name ("" at the top level), and the
    section lines themselves (for showing one instance in its context)."""

    where: str
    context: tuple[str, ...] = ()


Edits = dict[Shape, list[Instance]]  # in the order each shape first comes in the file


def _own_name(device: str) -> re.Pattern[str]:
    """The device's name as a word of its own (z01-rtsw001, not inside z01-rtsw0011)."""
    return re.compile(rf"(?<![\w.-]){re.escape(device)}(?![\w-])")


def generic_name(device: str, name: str) -> str:
    return name.replace(device, DEVICE)


# --- CONFIG_DB --------------------------------------------------------------------------------
def _shown(table: str, field: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return (str(masked(table, field, value)),)


def _field_shape(file: str, table: str, field: str, kind: str, old: Any, new: Any, note: str) -> Shape:
    scope = (table, field) if field else (table,)
    return Shape(FIELDS, file, scope, kind, _shown(table, field, old), _shown(table, field, new), note)


# The same field change comes on every port of every switch of a model: its shape is made once.
_cached_field_shape = functools.lru_cache(maxsize=16384)(_field_shape)


def config_db_edits(file: str, old: Mapping[str, Any], new: Mapping[str, Any],
                    origin: Mapping[str, str]) -> Edits:
    """The field changes of a CONFIG_DB file as shapes: (TABLE, field) old -> new, per key."""
    edits: Edits = {}
    for change in semantic_diff(old, new):
        note = ""
        if origin:
            fields = [change.field] if change.field else list((change.new or change.old or {}).keys())
            note = ", ".join(sorted({origin[row] for name in fields
                                     if (row := f"{change.table}|{change.key}.{name}") in origin}))
        args = (file, change.table, change.field, change.kind, change.old, change.new, note)
        try:
            shape = _cached_field_shape(*args)
        except TypeError:  # a list or mapping value: not hashable, made each time
            shape = _field_shape(*args)
        key = "***" if change.table in SECRET_KEY_TABLES else change.key
        edits.setdefault(shape, []).append(Instance(key))
    return edits


# --- lines ------------------------------------------------------------------------------------
def _sections(lines: list[str]) -> list[int]:
    """_opener of every line at once, in one pass (a stack of the lines that may open a section)."""
    parent = [-1] * len(lines)
    open_: list[tuple[int, int]] = []  # (indent, index)
    comment = -1
    for index, line in enumerate(lines):
        body = line.lstrip(" ")
        if not body:
            continue
        depth = len(line) - len(body)
        if depth == 0 and body.startswith("!"):
            open_.clear()
            comment = index if body.strip() != "!" else -1
            continue
        if body.startswith("!"):  # a comment inside a section: in it, but opens nothing
            parent[index] = next((at for indent, at in reversed(open_) if indent < depth), -1)
            continue
        while open_ and open_[-1][0] >= depth:
            open_.pop()
        parent[index] = open_[-1][1] if open_ else comment if depth == 0 else -1
        open_.append((depth, index))
    return parent


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _opener(lines: list[str], index: int) -> int | None:
    """The index of the line that opens the section line `index` sits in (-1: none): the nearest
    line above it that is less indented, or for a top-level line the `! comment` opening its
    `!`-delimited paragraph. Walks up from the line, a section's lines being few; None when that
    takes more than WALK lines (the caller then works out every line's at once: _sections)."""
    line = lines[index]
    depth = _indent(line)
    if (depth == 0 and line.startswith("!")) or not line.strip():
        return -1
    for above in range(index - 1, max(-1, index - 1 - WALK), -1):
        text = lines[above]
        if not text.strip():
            continue
        if depth == 0:
            if text.startswith("!"):
                return above if text.strip() != "!" else -1
            continue
        if _indent(text) < depth and not text.lstrip(" ").startswith("!"):
            return above
        if _indent(text) == 0 and text.startswith("!"):
            return -1
    return -1 if index <= WALK else None


WALK = 200


def _kind_and_name(header: str) -> tuple[str, str]:
    words = header.split()
    if len(words) > 1 and any(ch.isdigit() for ch in words[-1]):
        return " ".join(words[:-1]), words[-1]
    return " ".join(words), ""


class _Side:
    """One side's lines, and the sections a line sits in, each worked out once."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self._opener: dict[int, int] = {}
        self._all: list[int] | None = None

    def opener(self, index: int) -> int:
        if self._all is not None:
            return self._all[index]
        if index not in self._opener:
            found = _opener(self.lines, index)
            if found is None:
                self._all = _sections(self.lines)
                return self._all[index]
            self._opener[index] = found
        return self._opener[index]

    def headers(self, index: int) -> list[str]:
        """The lines opening the sections line `index` sits in, outermost first (at most 16)."""
        path: list[str] = []
        at = self.opener(index)
        while at >= 0 and len(path) < 16:
            path.append(self.lines[at])
            at = self.opener(at)
        return path[::-1]


def line_edits(device: str, file: str, old: str, new: str) -> Edits:
    """The changed runs of lines of a config file as shapes, each under its section (see above)."""
    own = _own_name(device)
    seen: dict[str, str] = {}  # a line as shapes hold it: secrets masked, the device's name set aside

    def general(line: str) -> str:
        shown = seen.get(line)
        if shown is None:
            masked_line = redact(line)
            shown = seen[line] = own.sub(DEVICE, masked_line) if device in masked_line else masked_line
        return shown

    before, after = _Side(old), _Side(new)
    edits: Edits = {}
    for tag, i1, i2, j1, j2 in opcodes(before.lines, after.lines):
        if tag == "equal":
            continue
        headers = before.headers(i1) if i2 > i1 else after.headers(j1)
        kinds, names = zip(*(_kind_and_name(general(h)) for h in headers), strict=True) if headers else ((), ())
        kind = "change" if tag == "replace" else "remove" if tag == "delete" else "add"
        shape = Shape(LINES, file, kinds, kind, tuple(general(line) for line in before.lines[i1:i2]),
                      tuple(general(line) for line in after.lines[j1:j2]))
        where = next((name for name in reversed(names) if name), "")
        edits.setdefault(shape, []).append(Instance(where, tuple(redact(h) for h in headers)))
    return edits


# --- shown ------------------------------------------------------------------------------------
def shown(shape: Shape, instances: list[Instance], limit: int | None = None, *, varies: bool = False) -> list[str]:
    """A shape and where it is done, as lines for people. CONFIG_DB: one line, as FieldChange
    renders it (`~ PORT|Ethernet0.mtu: 9100 -> 9000`), the key `*` and the keys listed after it when
    there are several. Lines: an `@@` line naming the sections (or the one section's lines as
    context), then the lines that go (-) and come (+). `limit`: at most that many runs of names.
    `varies`: the places differ from device to device (a group's devices), so none is named."""
    names = [instance.where for instance in instances]
    many = len(names) > 1
    if shape.form == FIELDS:
        table, field = shape.scope[0], (shape.scope[1] if len(shape.scope) > 1 else "")
        place = f"{table}|{'*' if many or varies else names[0]}" + (f".{field}" if field else "")
        old, new = (shape.old or ("",))[0], (shape.new or ("",))[0]
        line = (f"+ {place} = {new}" if shape.kind == "add" else f"- {place} (was {old})" if shape.kind == "remove"
                else f"~ {place}: {old} -> {new}")
        line += f"  [custom_config {shape.note}]" if shape.note else ""
        if varies:
            return [f"{line}  ({len(names):,} key(s) on each device)"]
        return [line + (f"  ({len(names):,} keys: {name_ranges(names, limit)})" if many else "")]
    if varies or many:
        sections = " / ".join(shape.scope)
        where = "" if varies or not any(names) else f": {name_ranges(names, limit)}"
        head = [f"@@ {len(names):,} x{' ' + sections if sections else ''}{where}" if many or not varies
                else f"@@ {sections or 'top level'}, in each device's own section"]
    else:
        head = ["@@", *(" " + line for line in instances[0].context)]
    return [*head, *("-" + line for line in shape.old), *("+" + line for line in shape.new)]


@dataclass
class DeviceDiff:
    device: str
    kind: str  # added | removed | changed
    edits: Edits = field(default_factory=dict)  # shape -> where it is done, in file order
    added: int = 0
    removed: int = 0
    risks: set[str] = field(default_factory=set)

    @property
    def files(self) -> dict[str, list[str]]:
        """Each changed file's edits as lines (edits.shown), every place named."""
        out: dict[str, list[str]] = {}
        for shape, instances in self.edits.items():
            lines = [line.replace(DEVICE, self.device) for line in shown(shape, instances)]
            out.setdefault(shape.file.replace(DEVICE, self.device), []).extend(lines)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "kind": self.kind, "added": self.added, "removed": self.removed,
                "risks": sorted(self.risks), "files": self.files}
