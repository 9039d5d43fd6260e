"""Two renders compared device by device, at a cost that follows what changed: files whose text is
equal are skipped, config_db.json is compared as data (equal tables skipped whole), other files
line by line with anchored matching (linediff.py). Each device's change is a set of edits
(edits.py) with the risk flags they raise (risks.py); RevisionDiff holds the whole comparison,
with the patterns and groups across devices (patterns.py) and the intent's own changes
(intent_diff.py), which format.py lays out."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import re
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import orjson

from netgen.diff.edits import LINES, DeviceDiff, config_db_edits, generic_name, line_edits
from netgen.diff.grouping import describe, device_ranges, natural_key
from netgen.diff.intent_diff import IntentDiff
from netgen.diff.patterns import (
    ChangeGroup,
    Pattern,
    collect_patterns,
    group_changes,
    pattern_dict,
    tier_counts,
)
from netgen.diff.risks import RISKS, SAYS, risks_of_lines, risks_of_shape
from netgen.platforms.custom import PROVENANCE_FILE

RenderedTree = dict[str, Mapping[str, str]]  # device -> file name -> content


def _config_db(text: str) -> dict[str, Any] | None:
    """`text` as a CONFIG_DB document (tables of keys of fields), or None when it is not one (a
    revision's output is not trusted to be well formed; such a file is compared line by line)."""
    try:
        data = orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        return None
    return data if _is_config_db(data) else None


def _is_config_db(data: Any) -> bool:
    return isinstance(data, dict) and all(
        isinstance(table, dict) and all(isinstance(entry, dict) for entry in table.values())
        for table in data.values())


# A rendered config_db.json has each table on lines of its own, its name indented by two spaces:
# cut there, the tables whose text is the same at both revisions need not be parsed at all, which
# is most of the file for most changes. Any other layout is parsed whole. (A JSON string holds no
# raw line break, so a line that starts with two spaces and a quote is a key; a layout that makes
# it a deeper key leaves a cut that does not parse alone, and the file is then parsed whole.)
_TABLE_NAME = re.compile(r'  "((?:[^"\\\n]|\\.)*)": ')


def _table_texts(text: str) -> dict[str, str] | None:
    """Each top-level table's text (`"NAME": {...}`), by name; None when `text` is not laid out so."""
    body = text.rstrip()
    if not body.startswith("{\n  \"") or not body.endswith("}"):
        return None
    starts = [2]
    at = body.find('\n  "', 2)
    while at >= 0:
        starts.append(at + 1)
        at = body.find('\n  "', at + 1)
    tables: dict[str, str] = {}
    for start, end in zip(starts, [*starts[1:], len(body) - 1], strict=True):
        name = _TABLE_NAME.match(body, start)
        if name is None or name.group(1) in tables:
            return None
        tables[name.group(1)] = body[start:end].rstrip().removesuffix(",")
    return tables


def _changed_tables(before: str, after: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The tables whose text differs, parsed at each side (a table on one side only: absent at the
    other), or None when either file is not a CONFIG_DB document laid out by tables."""
    old, new = _table_texts(before), _table_texts(after)
    if old is None or new is None:
        return None
    sides: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    for name in old.keys() | new.keys():
        if old.get(name) == new.get(name):
            continue
        for side, chunks in zip(sides, (old, new), strict=True):
            if name not in chunks:
                continue
            try:
                table = orjson.loads("{" + chunks[name] + "}")
            except orjson.JSONDecodeError:
                return None
            if not isinstance(table, dict) or list(table) != [name] or not _is_config_db(table):
                return None
            side[name] = table[name]
    return sides


def _config_dbs(before: str, after: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Two revisions of a JSON file as CONFIG_DB documents, as much of them as differs; None when
    either is not one."""
    tables = _changed_tables(before, after)
    if tables is not None:
        return tables
    old, new = _config_db(before), _config_db(after)
    return (old, new) if old is not None and new is not None else None


def _custom_rows(files: Mapping[str, str]) -> dict[str, str]:
    """`TABLE|key.field` -> custom_config block name, from a SONiC device's custom-config.json."""
    try:
        data = orjson.loads(files.get(PROVENANCE_FILE, "{}"))
    except orjson.JSONDecodeError:
        return {}
    rows = data.get("config_db", {}) if isinstance(data, dict) else {}
    return {str(k): str(v) for k, v in rows.items()} if isinstance(rows, dict) else {}


def diff_device(device: str, old: Mapping[str, str] | None, new: Mapping[str, str] | None) -> DeviceDiff | None:
    """The device's change (None when none): for each file whose text differs, its edits."""
    kind = "added" if old is None else "removed" if new is None else "changed"
    result = DeviceDiff(device, kind)
    old, new = old or {}, new or {}
    origin: dict[str, str] | None = None
    for name in sorted(old.keys() | new.keys()):
        before, after = old.get(name, ""), new.get(name, "")
        if before == after:
            continue
        file = generic_name(device, name)
        tables = _config_dbs(before, after) if name.endswith(".json") else None
        if tables is not None:
            old_db, new_db = tables
            if origin is None:
                origin = {**_custom_rows(old), **_custom_rows(new)}
            result.edits.update(config_db_edits(file, old_db, new_db, origin))
        else:
            result.edits.update(line_edits(device, file, before, after))
    gone: list[str] = []
    come: list[str] = []
    for shape, instances in result.edits.items():
        result.added += shape.added * len(instances)
        result.removed += shape.removed * len(instances)
        result.risks |= risks_of_shape(shape)
        if shape.form == LINES:
            gone += shape.old
            come += shape.new
    result.risks |= risks_of_lines(gone, come)
    if kind == "removed":
        result.risks.add("device-removed")
    return result if result.edits or kind != "changed" else None


@dataclass
class RevisionDiff:
    base: str
    head: str
    fabric: str
    devices: list[DeviceDiff]
    roles: dict[str, str]  # device -> tier
    zones: dict[str, int | None] = field(default_factory=dict)  # device -> zone (None: the ATSW layer)
    # devices rendered at each revision, of how many ({"base", "head", "of"}); None: both rendered whole
    rendered: dict[str, int] | None = None
    intent: IntentDiff | None = None  # what changed in the files the fabric loads
    _groups: list[ChangeGroup] | None = field(default=None, repr=False)
    _patterns: list[Pattern] | None = field(default=None, repr=False)

    @property
    def changed(self) -> bool:
        return bool(self.devices)

    def groups(self) -> list[ChangeGroup]:
        if self._groups is None:
            self._groups = group_changes(self.devices)
        return self._groups

    def patterns(self) -> list[Pattern]:
        if self._patterns is None:
            self._patterns = collect_patterns(self.devices)
        return self._patterns

    def label(self, group: ChangeGroup) -> str:
        return describe(group.devices, self.roles, self.zones)

    def per_tier(self) -> dict[str, dict[str, int]]:
        tiers: dict[str, dict[str, int]] = {}
        for d in self.devices:
            row = tiers.setdefault(self.roles.get(d.device, "unknown"), {"devices": 0, "added": 0, "removed": 0})
            row["devices"] += 1
            row["added"] += d.added
            row["removed"] += d.removed
        return dict(sorted(tiers.items()))

    def reach(self, devices: list[str]) -> str:
        """How many devices and which tiers: `on 1,692 device(s) (rtsw 1,536, ctsw 128, atsw 28)`."""
        parts = ", ".join(f"{tier} {count:,}" for tier, count in tier_counts(devices, self.roles).items())
        return f"on {len(devices):,} device(s) ({parts})"

    def risk_flags(self) -> list[dict[str, Any]]:
        """Each flag raised: what it says, the devices it reaches by tier, and how many places
        (keys, fields or config sections) change under it."""
        places: dict[str, int] = {}
        for pattern in self.patterns():
            for flag in risks_of_shape(pattern.shape):
                places[flag] = places.get(flag, 0) + pattern.count
        flags = []
        for flag in [*(risk.flag for risk in RISKS), "bgp-removed", "device-removed"]:
            hit = [d.device for d in self.devices if flag in d.risks]
            if hit:
                flags.append({"flag": flag, "says": SAYS[flag], "devices": len(hit),
                              "tiers": tier_counts(hit, self.roles), "places": places.get(flag),
                              "device_names": device_ranges(hit)})
        return flags

    def risks(self) -> list[str]:
        """The flags as sentences: `MTU change on 1,692 device(s) (rtsw 1,536, ctsw 128, atsw 28):
        52,736 places`."""
        said = []
        for flag in self.risk_flags():
            hit = [d.device for d in self.devices if flag["flag"] in d.risks]
            count = f": {flag['places']:,} place(s)" if flag["places"] else ""
            if flag["flag"] == "device-removed":
                said.append(f"{len(hit)} device(s) removed: {', '.join(hit[:5])}")
            elif flag["flag"] == "bgp-removed":
                said.append(f"BGP sessions removed or changed {self.reach(hit)}")
            else:
                said.append(f"{flag['says']} change {self.reach(hit)}{count}")
        return said

    def as_dict(self) -> dict[str, Any]:
        groups = self.groups()
        index = {device: number for number, group in enumerate(groups) for device in group.devices}
        return {"base": self.base, "head": self.head, "fabric": self.fabric, "changed": self.changed,
                "summary": self.per_tier(), "risks": self.risks(), "risk_flags": self.risk_flags(),
                "intent": self.intent.as_dict() if self.intent is not None else None,
                "patterns": [pattern_dict(p, self.roles) for p in self.patterns()],
                "groups": [{"devices": g.devices, "label": self.label(g), "kind": g.kind, "added": g.added,
                            "removed": g.removed, "risks": sorted(g.risks), "files": g.files()} for g in groups],
                "devices": [{**d.as_dict(), "tier": self.roles.get(d.device, "unknown"),
                             "zone": self.zones.get(d.device), "group": index[d.device]} for d in self.devices],
                "rendered": self.rendered}


# Devices are compared on two cores when there are many: the renders are done by then, and a
# fabric-wide change makes every device's comparison cost something. The trees reach the forked
# worker as they are in memory (module state set before the fork), only the results are pickled.
PARALLEL_FROM = 256  # devices
_trees: tuple[RenderedTree, RenderedTree] = ({}, {})


def _diff_devices(names: list[str]) -> list[DeviceDiff]:
    base, head = _trees
    return [diff for name in names if (diff := diff_device(name, base.get(name), head.get(name))) is not None]


def _diff_all(base: RenderedTree, head: RenderedTree, names: list[str]) -> list[DeviceDiff]:
    """diff_device of every name, in order: half of them in a forked worker when there are many and
    this machine has the cores (should the worker not run, that half here too)."""
    global _trees  # noqa: PLW0603 (read by the forked worker, see above)
    if len(names) < PARALLEL_FROM or (os.cpu_count() or 1) < 2 or "fork" not in mp.get_all_start_methods():
        _trees = (base, head)
        try:
            return _diff_devices(names)
        finally:
            _trees = ({}, {})
    _trees = (base, head)
    gc.freeze()  # the worker's collections then leave the parent's objects (and their pages) alone
    try:
        with ProcessPoolExecutor(1, mp_context=mp.get_context("fork")) as pool:
            theirs = pool.submit(_diff_devices, names[1::2])
            mine = _diff_devices(names[0::2])
            try:
                other = theirs.result()
            except (BrokenProcessPool, OSError):  # the worker could not run (killed, no memory)
                other = _diff_devices(names[1::2])
    finally:
        gc.unfreeze()
        _trees = ({}, {})
    done = {diff.device: diff for diff in (*mine, *other)}
    return [done[name] for name in names if name in done]


def compare(base: RenderedTree, head: RenderedTree, base_name: str, head_name: str, fabric: str,
            roles: dict[str, str] | None = None, zones: dict[str, int | None] | None = None,
            rendered: dict[str, int] | None = None, intent: IntentDiff | None = None) -> RevisionDiff:
    devices = _diff_all(base, head, sorted(base.keys() | head.keys(), key=natural_key))
    return RevisionDiff(base_name, head_name, fabric, devices, roles or {}, zones or {}, rendered, intent)
