"""CONFIG_DB diffs: an RFC 6902 JSON patch from running to intended (what SONiC's `config
apply-patch` takes), and a semantic table / key / field view of the same change for humans.

Device-owned keys: a rendered config_db.json does not carry what only the device knows (its MAC,
platform string, management interface, port settings netgen leaves to the platform). Before diffing, those are
copied from the running config into the intended one (`overlay_device_owned`), so a push never
deletes them and a converged device shows no diff.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from netgen.diff.grouping import natural_key

ConfigDb = dict[str, dict[str, dict[str, Any]]]

# What the device owns and netgen does not render (yet): kept from the running config.
DEVICE_OWNED_FIELDS: dict[str, tuple[str, ...]] = {
    "DEVICE_METADATA": ("mac", "platform", "hwsku_version", "asic_name", "switch_type", "synchronous_mode",
                        "timezone", "region", "cloudtype", "deployment_id"),
    # alias and index are rendered (the SKU's port_config.ini): a device with others has another SKU.
    "PORT": ("autoneg", "link_training", "tpid", "pfc_asym", "subport"),
}
DEVICE_OWNED_TABLES = ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG", "NTP", "NTP_SERVER", "SYSLOG_SERVER",
                       "AAA", "TACPLUS", "TACPLUS_SERVER", "RADIUS", "RADIUS_SERVER", "SNMP", "SNMP_COMMUNITY",
                       "FEATURE", "AUTO_TECHSUPPORT", "AUTO_TECHSUPPORT_FEATURE", "KDUMP", "CONSOLE_SWITCH",
                       "PASSW_HARDENING", "SSH_SERVER", "SYSTEM_DEFAULTS", "CRM", "BANNER_MESSAGE", "LOGGER",
                       "VERSIONS", "DHCP_SERVER", "TELEMETRY", "GNMI", "RESTAPI", "CONTAINER_FEATURE")


def overlay_device_owned(intended: Mapping[str, Any], running: Mapping[str, Any],
                         tables: Iterable[str] = DEVICE_OWNED_TABLES) -> ConfigDb:
    """The intended config plus what the device owns, taken from its running config: whole `tables`
    the intent does not render, and the device's own fields of rendered entries."""
    result: ConfigDb = copy.deepcopy(dict(intended))
    for table in tables:
        if table in running and table not in result:
            result[table] = copy.deepcopy(running[table])
    for table, fields in DEVICE_OWNED_FIELDS.items():
        for key, entry in result.get(table, {}).items():
            owned = running.get(table, {}).get(key, {})
            for name in fields:
                if name in owned and name not in entry:
                    entry[name] = copy.deepcopy(owned[name])
    return result


def _pointer(*parts: str) -> str:
    """RFC 6901: '~' -> '~0', '/' -> '~1' (CONFIG_DB keys hold prefixes like 10.0.0.1/31)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def json_patch(running: Mapping[str, Any], target: Mapping[str, Any]) -> list[dict[str, Any]]:
    """RFC 6902 operations turning `running` into `target`, at table / key / field granularity,
    in a stable order (tables, then keys, then fields, sorted)."""
    ops: list[dict[str, Any]] = []
    for table in sorted(running.keys() | target.keys()):
        old, new = running.get(table), target.get(table)
        if new is None:
            ops.append({"op": "remove", "path": _pointer(table)})
        elif old is None:
            ops.append({"op": "add", "path": _pointer(table), "value": copy.deepcopy(new)})
        else:
            for key in sorted(old.keys() | new.keys()):
                before, after = old.get(key), new.get(key)
                if after is None:
                    ops.append({"op": "remove", "path": _pointer(table, key)})
                elif before is None:
                    ops.append({"op": "add", "path": _pointer(table, key), "value": copy.deepcopy(after)})
                elif before != after:
                    for name in sorted(before.keys() | after.keys()):
                        if name not in after:
                            ops.append({"op": "remove", "path": _pointer(table, key, name)})
                        elif name not in before:
                            ops.append({"op": "add", "path": _pointer(table, key, name),
                                        "value": copy.deepcopy(after[name])})
                        elif before[name] != after[name]:
                            ops.append({"op": "replace", "path": _pointer(table, key, name),
                                        "value": copy.deepcopy(after[name])})
    return ops


class PatchError(ValueError):
    """A patch operation does not fit the document (RFC 6902 says: fail the whole patch)."""


def _unpointer(path: str) -> list[str]:
    if not path.startswith("/"):
        raise PatchError(f"path {path!r} is not a JSON pointer")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def apply_patch(document: Mapping[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """Apply add / remove / replace / test on objects (all CONFIG_DB needs); all or nothing."""
    doc: dict[str, Any] = copy.deepcopy(dict(document))
    for op in ops:
        parts = _unpointer(op["path"])
        parent: Any = doc
        for part in parts[:-1]:
            if not isinstance(parent, dict) or part not in parent:
                raise PatchError(f"{op['op']} {op['path']}: {part!r} does not exist")
            parent = parent[part]
        last = parts[-1]
        if not isinstance(parent, dict):
            raise PatchError(f"{op['op']} {op['path']}: parent is not an object")
        kind = op["op"]
        if kind == "add":
            parent[last] = copy.deepcopy(op["value"])
        elif kind == "replace":
            if last not in parent:
                raise PatchError(f"replace {op['path']}: does not exist")
            parent[last] = copy.deepcopy(op["value"])
        elif kind == "remove":
            if last not in parent:
                raise PatchError(f"remove {op['path']}: does not exist")
            del parent[last]
        elif kind == "test":
            if parent.get(last) != op["value"]:
                raise PatchError(f"test {op['path']}: value differs")
        else:
            raise PatchError(f"unsupported op {kind!r}")
    return doc


class FieldChange(NamedTuple):  # a tuple: a fabric-wide change makes one per port of every switch
    kind: str  # "add" | "remove" | "change"
    table: str
    key: str
    field: str  # "" when a whole key is added or removed
    old: Any  # None for "add"
    new: Any  # None for "remove"

    def render(self) -> str:
        """One line for people, with secrets masked (a diff may reach a PR comment or a log)."""
        key = "***" if self.table in SECRET_KEY_TABLES else self.key
        where = f"{self.table}|{key}" + (f".{self.field}" if self.field else "")
        old, new = (masked(self.table, self.field, v) for v in (self.old, self.new))
        if self.kind == "add":
            return f"+ {where} = {new}"
        if self.kind == "remove":
            return f"- {where} (was {old})"
        return f"~ {where}: {old} -> {new}"


# CONFIG_DB fields that hold a secret in clear (SONiC YANG: sonic-system-tacacs/-radius `passkey`,
# sonic-snmp SNMP_USER `SNMP_USER_AUTH_PASSWORD` / `SNMP_USER_ENCRYPTION_PASSWORD`, sonic-ntp NTP_KEY
# `value`), and tables whose key is one (SNMP_COMMUNITY: the community string).
SECRET_FIELD = re.compile(r"pass|secret|(^|_)key$", re.IGNORECASE)
SECRET_VALUE_TABLES = ("NTP_KEY",)
SECRET_KEY_TABLES = ("SNMP_COMMUNITY",)


def masked(table: str, field: str, value: Any) -> Any:
    """`value` of TABLE's `field` (a whole row when `field` is empty) as a report may show it."""
    if value is None:
        return None
    if field:
        secret = SECRET_FIELD.search(field) or (table in SECRET_VALUE_TABLES and field == "value")
        return "***" if secret else value
    if isinstance(value, dict):  # a whole row
        return {name: masked(table, name, v) for name, v in value.items()}
    return value


def masked_patch(running: Mapping[str, Any], target: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`json_patch` for a report: values of secret fields masked, and rows of tables keyed by a
    secret named by table only (their path would be the secret)."""
    ops = []
    for raw in json_patch(running, target):
        table, *rest = _unpointer(raw["path"])
        op = dict(raw)
        if table in SECRET_KEY_TABLES:  # its keys are the secret: the table is all a report shows
            op = {"op": raw["op"], "path": f"/{table}" + ("/***" if rest else ""),
                  **({"value": "***"} if "value" in raw else {})}
        elif "value" in raw and rest:
            op["value"] = masked(table, rest[1] if len(rest) > 1 else "", raw["value"])
        elif "value" in raw:  # a whole table
            op["value"] = {key: masked(table, "", row) for key, row in raw["value"].items()}
        ops.append(op)
    return ops


def mask_row(table: str, key: str) -> str:
    """`TABLE|key` for a report, the key masked where it is a secret."""
    return f"{table}|{'***' if table in SECRET_KEY_TABLES else key}"


def semantic_diff(running: Mapping[str, Any], target: Mapping[str, Any]) -> list[FieldChange]:
    """The same change as `json_patch`, as table / key / field, old -> new, for people: tables in
    order, keys in natural order (Ethernet44 before Ethernet448), fields in order. Equal tables are
    skipped whole (a dict comparison in C), so the cost follows the tables that changed."""
    changes = []
    for table in sorted(running.keys() | target.keys()):
        before, after = running.get(table) or {}, target.get(table) or {}
        if before == after:
            continue
        for key in sorted(before.keys() | after.keys(), key=natural_key):
            was, now = before.get(key), after.get(key)
            if was == now:
                continue
            if now is None or was is None:
                changes.append(FieldChange("remove" if now is None else "add", table, key, "", was, now))
                continue
            changes += _field_changes(table, key, was, now)
    return changes


def _field_changes(table: str, key: str, was: dict[str, Any], now: dict[str, Any]) -> list[FieldChange]:
    """The fields of one key that differ, by name: found by a set difference of the two rows' items
    (in C: a port's eight fields, one of which changed) where the values are hashable."""
    try:
        differ = sorted({name for name, _ in now.items() - was.items()} | (was.keys() - now.keys()))
    except TypeError:  # a list value (SWITCH_HASH's fields)
        differ = sorted(name for name in was.keys() | now.keys() if name not in was or name not in now
                        or was[name] != now[name])
    return [FieldChange("add" if name not in was else "remove" if name not in now else "change", table, key, name,
                        was.get(name), now.get(name)) for name in differ]
