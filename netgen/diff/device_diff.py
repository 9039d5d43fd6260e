"""Two renders compared device by device: config_db.json as a semantic table / key / field diff
(and an RFC 6902 patch), frr.conf and EOS configs as unified diffs with secrets masked, and the
risk flags each device's changes raise (risks.py); RevisionDiff holds the whole comparison, which
format.py lays out."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from netgen.diff.config_db import FieldChange, masked_patch, semantic_diff
from netgen.diff.grouping import ChangeGroup, describe, group_changes, natural_key
from netgen.diff.risks import RISKS, risks_of_fields, risks_of_lines
from netgen.intent.secrets import redact
from netgen.platforms.custom import PROVENANCE_FILE

RenderedTree = dict[str, dict[str, str]]  # device -> file name -> content


@dataclass
class DeviceDiff:
    device: str
    kind: str  # added | removed | changed
    files: dict[str, list[str]] = field(default_factory=dict)  # file -> diff lines
    added: int = 0
    removed: int = 0
    risks: set[str] = field(default_factory=set)
    patches: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # CONFIG_DB file -> RFC 6902 ops

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "kind": self.kind, "added": self.added, "removed": self.removed,
                "risks": sorted(self.risks), "files": self.files, "patches": self.patches}


def _unified(name: str, old: str, new: str) -> list[str]:
    """A unified diff, secrets masked (a local user's hash: a PR comment is no place for it)."""
    return [redact(line.rstrip("\n")) for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                                       f"a/{name}", f"b/{name}")]


def _config_db(text: str) -> dict[str, Any] | None:
    """`text` as a CONFIG_DB document (tables of keys of fields), or None when it is not one (a
    revision's output is not trusted to be well formed; such a file gets a plain unified diff)."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return None
    if not isinstance(data, dict) or not all(
            isinstance(table, dict) and all(isinstance(entry, dict) for entry in table.values())
            for table in data.values()):
        return None
    return data


def _custom_rows(files: dict[str, str]) -> dict[str, str]:
    """`TABLE|key.field` -> custom_config block name, from a SONiC device's custom-config.json."""
    try:
        data = json.loads(files.get(PROVENANCE_FILE, "{}"))
        rows = data.get("config_db", {}) if isinstance(data, dict) else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in rows.items()} if isinstance(rows, dict) else {}


def _marked(change: FieldChange, line: str, origin: dict[str, str]) -> str:
    """A CONFIG_DB change line, marked when a custom_config block (not netgen) wrote the field."""
    fields = [change.field] if change.field else list((change.new or change.old or {}).keys())
    names = sorted({origin[f"{change.table}|{change.key}.{name}"] for name in fields
                    if f"{change.table}|{change.key}.{name}" in origin})
    return line + (f"  [custom_config {', '.join(names)}]" if names else "")


def diff_device(device: str, old: dict[str, str] | None, new: dict[str, str] | None) -> DeviceDiff | None:
    kind = "added" if old is None else "removed" if new is None else "changed"
    result = DeviceDiff(device, kind)
    old, new = old or {}, new or {}
    origin = {**_custom_rows(old), **_custom_rows(new)}
    for name in sorted(old.keys() | new.keys()):
        before, after = old.get(name, ""), new.get(name, "")
        if before == after:
            continue
        old_db = _config_db(before) if name.endswith(".json") else None
        new_db = _config_db(after) if old_db is not None else None
        if old_db is not None and new_db is not None:
            # ports and keys in natural order (Ethernet44 before Ethernet448)
            changes = sorted(semantic_diff(old_db, new_db), key=lambda c: (c.table, natural_key(c.key), c.field))
            lines = [_marked(c, c.render(), origin) for c in changes]
            result.patches[name] = masked_patch(old_db, new_db)
            result.added += sum(1 for c in changes if c.kind != "remove")
            result.removed += sum(1 for c in changes if c.kind != "add")
            result.risks |= risks_of_fields(changes)
        else:
            lines = _unified(f"{device}/{name}", before, after)
            body = [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            result.added += sum(1 for line in body if line.startswith("+"))
            result.removed += sum(1 for line in body if line.startswith("-"))
            result.risks |= risks_of_lines(body)
        result.files[name] = lines
    if kind == "removed":
        result.risks.add("device-removed")
    return result if result.files or kind != "changed" else None


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

    @property
    def changed(self) -> bool:
        return bool(self.devices)

    def groups(self) -> list[ChangeGroup]:
        return group_changes(self.devices)

    def label(self, group: ChangeGroup) -> str:
        return describe(group, self.roles, self.zones)

    def per_tier(self) -> dict[str, dict[str, int]]:
        tiers: dict[str, dict[str, int]] = {}
        for d in self.devices:
            row = tiers.setdefault(self.roles.get(d.device, "unknown"), {"devices": 0, "added": 0, "removed": 0})
            row["devices"] += 1
            row["added"] += d.added
            row["removed"] += d.removed
        return dict(sorted(tiers.items()))

    def _reach(self, devices: list[str]) -> str:
        """How many devices and which tiers: `on 1,692 device(s) (rtsw 1,536, ctsw 128, atsw 28)`."""
        tiers: dict[str, int] = {}
        for device in devices:
            tier = self.roles.get(device, "unknown")
            tiers[tier] = tiers.get(tier, 0) + 1
        order = {tier: index for index, tier in enumerate(("rtsw", "ctsw", "atsw"))}
        parts = ", ".join(f"{tier} {count:,}" for tier, count in sorted(tiers.items(),
                                                                         key=lambda t: (order.get(t[0], 9), t[0])))
        return f"on {len(devices):,} device(s) ({parts})"

    def risks(self) -> list[str]:
        flags = []
        for risk in RISKS:
            hit = [d.device for d in self.devices if risk.flag in d.risks]
            if hit:
                flags.append(f"{risk.says} change {self._reach(hit)}")
        bgp = [d.device for d in self.devices if "bgp-removed" in d.risks]
        if bgp:
            flags.append(f"BGP sessions removed or changed {self._reach(bgp)}")
        gone = [d.device for d in self.devices if d.kind == "removed"]
        if gone:
            flags.append(f"{len(gone)} device(s) removed: {', '.join(gone[:5])}")
        return flags

    def as_dict(self) -> dict[str, Any]:
        return {"base": self.base, "head": self.head, "fabric": self.fabric, "changed": self.changed,
                "summary": self.per_tier(), "risks": self.risks(),
                "groups": [{"devices": g.devices, "label": self.label(g), "kind": g.kind, "added": g.added,
                            "removed": g.removed, "files": g.files} for g in self.groups()],
                "devices": [d.as_dict() for d in self.devices], "rendered": self.rendered}


def compare(base: RenderedTree, head: RenderedTree, base_name: str, head_name: str, fabric: str,
            roles: dict[str, str] | None = None, zones: dict[str, int | None] | None = None,
            rendered: dict[str, int] | None = None) -> RevisionDiff:
    devices = []
    for name in sorted(base.keys() | head.keys(), key=natural_key):
        diff = diff_device(name, base.get(name), head.get(name))
        if diff is not None:
            devices.append(diff)
    return RevisionDiff(base_name, head_name, fabric, devices, roles or {}, zones or {}, rendered)
