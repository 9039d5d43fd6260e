"""A SONiC CLI stand-in for lab nodes: `config`, `show`, `pfc`, `pfcwd` and `sonic-cfggen`, run over
SSH inside a netns router node. Run as `python -m netgen.nos.sonic.lab_shim PROGRAM ARGS...`; the
SONiC bundle's `lab_shim` part (LAB_SHIM, at the end) is how netgen/lab/endpoints.py installs it on
a router, with `sudo` and `docker exec` shell stand-ins.

What is emulated (following sonic-utilities' config/main.py, generic_config_updater/, show/,
pfc/, pfcwd/ and utilities_common/portstat.py, and its doc/Command-Reference.md):

* CONFIG_DB. Redis is replaced by one JSON file, `/etc/sonic/running/config_db.json` (the
  "running" CONFIG_DB). `/etc/sonic/config_db.json` is the saved startup file, written only by
  `config save -y`, as on SONiC. Checkpoints are `/etc/sonic/checkpoints/NAME.cp.json`.
* The Generic Config Updater. `config apply-patch FILE [-d]` takes an RFC 6902 patch in ConfigDb
  format, simulates the target, refuses patches touching tables without a model ("no YANG"),
  refuses GCU's illegal removals (PFC_WD|GLOBAL, its POLL_INTERVAL, Loopback0) and empty tables,
  and validates the target with netgen's typed model of SONiC's YANG (`check_config_db`), not
  with libyang. An accepted patch is applied as a sequence of per-entry changes, each written to
  CONFIG_DB at once: like GCU it is not transactional, and a failure mid-way leaves the earlier
  changes applied. `config replace FILE` = diff(running, FILE) applied as one patch;
  `config rollback NAME` = replace with the checkpoint; `config checkpoint`,
  `config list-checkpoints [-t]`, `config delete-checkpoint`, `config save -y`.
* intfmgrd/portmgrd. Changes to INTERFACE / LOOPBACK_INTERFACE / VLAN_INTERFACE addresses are
  added to or removed from the kernel interface of that name with `ip address`; PORT mtu and
  admin_status reach the kernel link; a new LOOPBACK_INTERFACE name gets a bridge (this kernel
  has no dummy driver, as in netns.py). Ports that are not cabled in the lab have no kernel
  interface, so their changes stay in CONFIG_DB only.
* Show commands for pre/post checks: `show runningconfiguration all` (CONFIG_DB plus `bgpraw`,
  FRR's running config, as SONiC prints it), `show platform summary [--json]`,
  `show interfaces counters [-j]` (packet and error counters from the kernel's
  /sys/class/net statistics; rates are not sampled and print N/A), `pfc show priority [IF]`,
  `pfcwd show stats [--check-storm]` / `show pfcwd stats`, `show lldp table` (lldpshow's table
  from the node's real lldpd, which the lab configures the way SONiC's lldpmgrd does: port ID =
  the PORT alias, port description = the PORT description).

What is not emulated: the ASIC and everything behind CONFIG_DB (orchagent, buffer/QoS/PFC
programming, PFC watchdog detection), GCU's dependency sorter (changes are ordered by a fixed
table rank instead), SonicYang-format patches, multi-ASIC namespaces, `config reload/load`.

Hooks. Whoever starts the lab's management may name a Python file of hooks
(`endpoints.start_management(shim_hooks=...)`, recorded in DEVICE_FILE); every command loads it and
calls the functions it defines, at these points (the tests inject faults this way:
tests/support/sonic_faults.py). None of them is called when no file is named.

* `before_command(program)`: before any command runs.
* `before_apply()` / `after_apply()`: around writing the changes of an apply-patch / replace /
  rollback (not a dry run).
* `before_write(number, count)`: before the number-th of its count changes is written; a message
  returned fails the command there, the changes before it staying applied.
* `before_disarm()` / `after_disarm()`: around `systemctl stop` (disarming a timer).
* `after_docker_exec()`: after the `docker exec` stand-in ran its command (`hook after_docker_exec`).
* `before_save(path)`: in `config save`, before it writes path; a message returned fails the save
  as a shell redirection that cannot write fails (the message on stderr, exit 2).
* `stormed(queues)`: which of the watched queues `pfcwd show stats` reports stormed (PFC storm
  detection is not emulated: none, without hooks).

Also emulated: transient timers, as `systemd-run --on-active=SECONDS --unit=NAME COMMAND...` makes
them on a SONiC box (systemd-run(1)), with `systemctl stop|is-active NAME.timer`: a detached
process in the node sleeps until the timer is due, then runs the command, unless it was stopped.
State: `/etc/sonic/timers/NAME.timer.json`. No systemd runs in a lab node.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn
from xml.etree import ElementTree

ETC = Path(os.environ.get("NETGEN_SONIC_ETC", "/etc/sonic"))
RUNNING_DIR = "running"
RUNNING_FILE = "config_db.json"
SAVED_FILE = "config_db.json"
CHECKPOINTS_DIR = "checkpoints"
CHECKPOINT_EXT = ".cp.json"
DEVICE_FILE = "netgen_lab.json"  # per-node facts written by write_node below (rdma_hash, serial, asic, hooks)
HOOKS_FACT = "shim_hooks"  # DEVICE_FILE's key naming the hooks file (see the module docstring), if any
SHELL_HOOKS = ("after_docker_exec",)  # the hook points the shell stand-ins call (`hook POINT`)
SCOPE = "localhost"  # GCU's name for the host namespace on a single-ASIC box
PROGRAMS = ("config", "show", "pfc", "pfcwd", "sonic-cfggen", "systemd-run", "systemctl")
TIMERS_DIR = "timers"  # transient timers of the systemd-run stand-in: <unit>.timer.json
# GCU's validate_field_operation: removals it refuses whatever YANG says.
ILLEGAL_REMOVALS = ("/PFC_WD/GLOBAL/POLL_INTERVAL", "/PFC_WD/GLOBAL", "/LOOPBACK_INTERFACE/Loopback0")
ADDRESS_TABLES = ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE")
# Order in which per-entry changes are written: referenced tables first for additions, last for
# removals, so the intermediate states are mostly valid (GCU sorts by YANG dependencies instead).
TABLE_RANK = {
    "DEVICE_METADATA": 0, "PORT": 1, "CABLE_LENGTH": 2, "VLAN": 2, "LOOPBACK_INTERFACE": 3, "INTERFACE": 3,
    "VLAN_INTERFACE": 4, "VLAN_MEMBER": 4, "DSCP_TO_TC_MAP": 5, "TC_TO_QUEUE_MAP": 5, "TC_TO_PRIORITY_GROUP_MAP": 5,
    "MAP_PFC_PRIORITY_TO_QUEUE": 5, "SCHEDULER": 5, "WRED_PROFILE": 5, "BUFFER_POOL": 5, "BUFFER_PROFILE": 6,
    "QUEUE": 7, "BUFFER_PG": 7, "BUFFER_QUEUE": 7, "BUFFER_PORT_INGRESS_PROFILE_LIST": 7,
    "BUFFER_PORT_EGRESS_PROFILE_LIST": 7, "PORT_QOS_MAP": 8, "PFC_WD": 8, "FLEX_COUNTER_TABLE": 9, "SWITCH_HASH": 9,
}

Json = Any  # a JSON value as json.loads returns it
Config = dict[str, Any]  # CONFIG_DB: table -> key -> entry


class ShimError(Exception):
    """A command failed the way the SONiC command fails; the message is what SONiC would say."""

    exit_code = 1


class UsageError(ShimError):
    """click's UsageError (ctx.fail): usage, then `Error: ...` on stderr, exit code 2."""

    exit_code = 2

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class PatchError(ShimError):
    """An RFC 6902 operation that cannot be applied (jsonpatch's JsonPatchConflict and friends)."""


# --- files -----------------------------------------------------------------------------------


def etc() -> Path:
    return ETC


def running_path() -> Path:
    return etc() / RUNNING_DIR / RUNNING_FILE


def read_json(path: Path) -> Json:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Json, indent: int | None = 4) -> None:
    """Atomic replace: a reader never sees half a CONFIG_DB."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=indent, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_running() -> Config:
    data = read_json(running_path())
    if not isinstance(data, dict):
        raise ShimError(f"{running_path()} is not a JSON object")
    return data


def device_facts() -> dict[str, Any]:
    with contextlib.suppress(OSError, json.JSONDecodeError):
        data = read_json(etc() / DEVICE_FILE)
        if isinstance(data, dict):
            return data
    return {}


@functools.cache
def _hooks() -> ModuleType | None:
    """The hooks file DEVICE_FILE names, loaded once per command (None: no hooks)."""
    path = device_facts().get(HOOKS_FACT)
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("netgen_lab_shim_hooks", path)
    if spec is None or spec.loader is None:
        raise ShimError(f"{path}: not a Python file (the lab's {HOOKS_FACT})")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hook(point: str, *args: Any) -> Any:
    """Call the hooks' function of that point, if it defines one; what it returns (None without)."""
    function = getattr(_hooks(), point, None)
    return function(*args) if callable(function) else None


@contextlib.contextmanager
def config_lock() -> Iterator[None]:
    """GCU's ConfigLock: one writer at a time."""
    path = etc() / RUNNING_DIR / ".lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- RFC 6902 ----------------------------------------------------------------------------------


def pointer_tokens(pointer: str) -> list[str]:
    """RFC 6901: "" is the whole document; "/a~1b/c~0d" -> ["a/b", "c~d"]."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"Location must start with /: {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def pointer(tokens: Sequence[str]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def _index(container: list[Json], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not re.fullmatch(r"0|[1-9][0-9]*", token):
        raise PatchError(f"{token!r} is not a valid array index")
    index = int(token)
    if index > len(container) or (index == len(container) and not for_add):
        raise PatchError(f"array index {index} is out of range")
    return index


def _resolve(doc: Json, tokens: Sequence[str]) -> Json:
    node = doc
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"member {token!r} not found in {pointer(tokens)}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, for_add=False)]
        else:
            raise PatchError(f"{pointer(tokens)}: cannot descend into a {type(node).__name__}")
    return node


def _add(doc: Json, tokens: Sequence[str], value: Json) -> Json:
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, for_add=True), value)
    else:
        raise PatchError(f"{pointer(tokens)}: the parent is not an object or array")
    return doc


def _remove(doc: Json, tokens: Sequence[str]) -> tuple[Json, Json]:
    if not tokens:
        raise PatchError("can't remove the whole document")
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"can't remove a non-existent object {last!r}")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, for_add=False))
    raise PatchError(f"{pointer(tokens)}: the parent is not an object or array")


def apply_operation(doc: Json, operation: Mapping[str, Json]) -> Json:
    """One RFC 6902 operation on doc (mutated where possible); returns the new document."""
    op = operation.get("op")
    path = operation.get("path")
    if not isinstance(path, str):
        raise PatchError(f"operation {dict(operation)!r} has no string 'path'")
    tokens = pointer_tokens(path)
    if op in ("add", "replace", "test") and "value" not in operation:
        raise PatchError(f"the {op} operation at {path!r} needs a 'value'")
    if op == "add":
        return _add(doc, tokens, copy.deepcopy(operation["value"]))
    if op == "remove":
        return _remove(doc, tokens)[0]
    if op == "replace":
        if not tokens:
            return copy.deepcopy(operation["value"])
        _resolve(doc, tokens)  # must exist
        doc, _ = _remove(doc, tokens)
        return _add(doc, tokens, copy.deepcopy(operation["value"]))
    if op == "test":
        if _resolve(doc, tokens) != operation["value"]:
            raise PatchError(f"test failed: {path!r} is not {operation['value']!r}")
        return doc
    if op in ("move", "copy"):
        source = operation.get("from")
        if not isinstance(source, str):
            raise PatchError(f"the {op} operation at {path!r} needs a string 'from'")
        from_tokens = pointer_tokens(source)
        if op == "copy":
            return _add(doc, tokens, copy.deepcopy(_resolve(doc, from_tokens)))
        if from_tokens == list(tokens):
            return doc
        if tokens[:len(from_tokens)] == from_tokens:
            raise PatchError(f"can't move {source!r} into its own child {path!r}")
        doc, value = _remove(doc, from_tokens)
        return _add(doc, tokens, value)
    raise PatchError(f"unknown operation {op!r}")


def apply_patch_ops(doc: Json, patch: Sequence[Mapping[str, Json]]) -> Json:
    result = copy.deepcopy(doc)
    for operation in patch:
        if not isinstance(operation, Mapping):
            raise PatchError(f"a patch operation must be a JSON object, got {operation!r}")
        result = apply_operation(result, operation)
    return result


def make_patch(current: Json, target: Json, prefix: Sequence[str] = ()) -> list[dict[str, Json]]:
    """A patch turning current into target: objects are compared member by member, anything else
    (strings, arrays) is replaced whole, as jsonpatch.make_patch does for CONFIG_DB."""
    if isinstance(current, dict) and isinstance(target, dict):
        ops: list[dict[str, Json]] = []
        for key in sorted(current.keys() - target.keys()):
            ops.append({"op": "remove", "path": pointer([*prefix, key])})
        for key in sorted(target.keys() - current.keys()):
            ops.append({"op": "add", "path": pointer([*prefix, key]), "value": copy.deepcopy(target[key])})
        for key in sorted(current.keys() & target.keys()):
            ops += make_patch(current[key], target[key], [*prefix, key])
        return ops
    if current == target and type(current) is type(target):
        return []
    return [{"op": "replace", "path": pointer(prefix), "value": copy.deepcopy(target)}]


# --- the Generic Config Updater ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """One CONFIG_DB entry written (value) or deleted (value None): GCU's JsonChange, coarser."""

    table: str
    key: str
    value: dict[str, Json] | None

    def describe(self) -> str:
        path = pointer([self.table, self.key])
        if self.value is None:
            return json.dumps([{"op": "remove", "path": path}])
        return json.dumps([{"op": "add", "path": path, "value": self.value}], sort_keys=True)


def known_tables() -> frozenset[str]:
    from netgen.nos.sonic.schema import TABLES  # noqa: PLC0415  (pydantic: only when validating)

    return frozenset(TABLES)


def validate_target(target: Config, rdma_hash: bool) -> list[str]:
    """YANG validation stand-in: netgen's model on the tables it knows. Tables without a model
    that are already in CONFIG_DB pass untouched, as sonic_yang crops tables without YANG."""
    from netgen.nos.sonic.schema import check_config_db  # noqa: PLC0415

    known = known_tables()
    return check_config_db({t: v for t, v in target.items() if t in known}, rdma_hash=rdma_hash)


def patch_tables(patch: Sequence[Mapping[str, Json]]) -> set[str]:
    tables: set[str] = set()
    for operation in patch:
        for field in ("path", "from"):
            where = operation.get(field)
            if not isinstance(where, str):
                continue
            tokens = pointer_tokens(where)
            if not tokens:
                value = operation.get("value")
                tables |= set(value) if isinstance(value, dict) else set()
            elif not tokens[0]:
                raise ShimError("Table name in patch cannot be empty")
            else:
                tables.add(tokens[0])
    return tables


def entry_changes(old: Config, new: Config) -> list[Change]:
    """Per-entry changes from old to new: removals first (dependents first), then writes."""
    def entries(config: Config) -> dict[tuple[str, str], Json]:
        return {(t, k): v for t, rows in config.items() if isinstance(rows, dict) for k, v in rows.items()}

    before, after = entries(old), entries(new)

    def rank(item: tuple[str, str]) -> tuple[int, int, str, str]:
        table, key = item
        return TABLE_RANK.get(table, 10), key.count("|"), table, key

    removed = sorted(before.keys() - after.keys(), key=rank, reverse=True)
    written = sorted((k for k in after if before.get(k) != after[k]), key=rank)
    return [Change(t, k, None) for t, k in removed] + [Change(t, k, after[(t, k)]) for t, k in written]


def apply_change(config: Config, change: Change) -> None:
    if change.value is None:
        rows = config.get(change.table, {})
        rows.pop(change.key, None)
        if not rows:
            config.pop(change.table, None)  # CONFIG_DB has no empty tables
    else:
        config.setdefault(change.table, {})[change.key] = copy.deepcopy(change.value)


def _log(title: str, message: str) -> None:
    print(f"{title}: {message}")  # GCU's TitledLogger, printing to the console


def gcu_apply(patch: Json, *, dry_run: bool) -> None:
    """PatchApplier.apply + StrictPatchSorter's checks, then the changes written one by one."""
    title = "Patch Applier"
    if not isinstance(patch, list):
        raise ShimError("the patch must be a JSON array of operations (RFC 6902)")
    _log(title, f"{SCOPE}: Patch application starting.")
    _log(title, f"{SCOPE}: Patch: {json.dumps(patch)}")
    _log(title, f"{SCOPE} getting current config db.")
    old = load_running()
    _log(title, f"{SCOPE}: simulating the target full config after applying the patch.")
    target = apply_patch_ops(old, patch)
    if not isinstance(target, dict):
        raise ShimError("the patch must leave CONFIG_DB a JSON object of tables")
    _log(title, f"{SCOPE}: validating all JsonPatch operations are permitted on the specified fields")
    for operation in make_patch(old, target):
        if operation["op"] == "remove" and operation["path"] in ILLEGAL_REMOVALS:
            raise ShimError(f"Given patch operation is invalid. Operation: remove is illegal on field: "
                            f"{operation['path']}")
    _log(title, f"{SCOPE}: validating target config does not have empty tables, since they do not show up in"
                " ConfigDb.")
    empty = sorted(t for t, rows in target.items() if not rows)
    if empty:
        raise ShimError(f"{SCOPE}: given patch is not valid because it will result in empty tables which is not"
                        f" allowed in ConfigDb. Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")
    _log(title, f"{SCOPE}: sorting patch updates.")
    unknown = sorted(patch_tables(patch) - known_tables())
    if unknown:
        raise ShimError("Given patch is not valid because it has changes to tables without YANG models"
                        f" (netgen lab: no model for {', '.join(unknown)})")
    problems = validate_target(target, bool(device_facts().get("rdma_hash", False)))
    if problems:
        shown = "; ".join(problems[:10]) + (f"; ... {len(problems) - 10} more" if len(problems) > 10 else "")
        raise ShimError(f"Given patch will produce invalid config. Error: {shown}")
    changes = entry_changes(old, target)
    count = len(changes)
    _log(title, f"The {SCOPE} patch was converted into {count} change{'s' if count != 1 else ''}"
                f"{':' if count else '.'}")
    _log(title, f"{SCOPE}: applying {count} change{'s' if count != 1 else ''} in order{':' if count else '.'}")
    for change in changes:
        _log(title, f"  * {change.describe()}")
    if dry_run:
        return
    hook("before_apply")
    current = copy.deepcopy(old)
    for number, change in enumerate(changes, 1):
        failure = hook("before_write", number, count)
        if failure:
            raise ShimError(str(failure))
        before = current.get(change.table, {}).get(change.key)
        apply_change(current, change)
        write_json(running_path(), current)
        sync_kernel(change.table, change.key, before, change.value)
    _log(title, f"{SCOPE}: verifying patch updates are reflected on ConfigDB.")
    if make_patch(load_running(), target):
        raise ShimError(f"{SCOPE}: after applying patch to config, there are still some parts not updated")
    _log(title, f"{SCOPE} patch application completed.")
    hook("after_apply")


def gcu_replace(target: Json, *, dry_run: bool) -> None:
    _log("Config Replacer", "Config replacement starting.")
    if not isinstance(target, dict):
        raise ShimError("the target config must be a JSON object of tables")
    patch = make_patch(load_running(), target)
    _log("Config Replacer", "Applying patch using 'Patch Applier'.")
    gcu_apply(patch, dry_run=dry_run)
    if not dry_run and make_patch(load_running(), target):
        raise ShimError("After replacing config, there is still some parts not updated")
    _log("Config Replacer", "Config replacement completed.")


def checkpoint_path(name: str) -> Path:
    return etc() / CHECKPOINTS_DIR / f"{name}{CHECKPOINT_EXT}"


# --- the kernel side (intfmgrd / portmgrd) -----------------------------------------------------------


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        with contextlib.suppress(OSError), (etc() / RUNNING_DIR / "kernel.log").open("a") as log:
            log.write(f"ip {' '.join(args)}: {done.stderr.strip()}\n")


def _kernel_has(name: str) -> bool:
    return len(name) <= 15 and "/" not in name and Path("/sys/class/net", name).exists()


def sync_kernel(table: str, key: str, before: Json, after: Json) -> None:
    """What SONiC's intfmgrd / portmgrd do with one CONFIG_DB entry change, on this node's kernel."""
    name, _, prefix = key.partition("|")
    if table in ADDRESS_TABLES and prefix:
        if _kernel_has(name) and (before is None) != (after is None):
            _ip("address", "add" if after is not None else "del", prefix, "dev", name)
    elif table == "LOOPBACK_INTERFACE":
        if after is not None and not _kernel_has(name):
            _ip("link", "add", "name", name, "type", "bridge")  # no dummy driver on this kernel
            _ip("link", "set", name, "up")
        elif after is None and _kernel_has(name) and name != "Loopback0":
            _ip("link", "del", name)
    elif table == "PORT" and _kernel_has(name) and isinstance(after, dict):
        old = before if isinstance(before, dict) else {}
        if after.get("mtu") and after.get("mtu") != old.get("mtu"):
            _ip("link", "set", name, "mtu", str(after["mtu"]))
        status = after.get("admin_status", "down")
        if status != old.get("admin_status", "down" if before is not None else None):
            _ip("link", "set", name, "up" if status == "up" else "down")


# --- output helpers ---------------------------------------------------------------------------------


def _numeric(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def tabulate(rows: Sequence[Sequence[str]], headers: Sequence[str], stralign: str = "left") -> str:
    """tabulate's "simple" format as SONiC uses it: numeric columns right-aligned, every column at
    least its header plus two wide."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in headers]
    widths, rights = [], []
    for header, values in zip(headers, columns, strict=True):
        widths.append(max([len(header) + 2, *(len(v) for v in values)]))
        rights.append((bool(values) and all(_numeric(v) for v in values)) or stralign == "right")

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, rights, strict=True))

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *(line(row) for row in rows)])


def natural_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


# --- commands -------------------------------------------------------------------------------------


def fail(message: str) -> NoReturn:
    """sys.exit(message) in sonic-utilities: the message on stderr, exit code 1."""
    raise ShimError(message)


def _need_root() -> None:
    if os.geteuid() != 0:
        fail("Root privileges are required for this operation")


def _flags(args: list[str], *names: str) -> bool:
    """Remove any of the flag spellings from args; True if one was there."""
    found = False
    for name in names:
        while name in args:
            args.remove(name)
            found = True
    return found


def _one_argument(args: list[str], usage: str) -> str:
    positional = [a for a in args if not a.startswith("-")]
    unknown = [a for a in args if a.startswith("-")]
    if unknown:
        raise UsageError(f"No such option: {unknown[0]}", usage)
    if len(positional) != 1:
        raise UsageError(f"Missing argument '{usage.rsplit(maxsplit=1)[-1]}'." if not positional
                         else f"Got unexpected extra argument ({positional[1]})", usage)
    return positional[0]


CONFIG_USAGE = "config [OPTIONS] COMMAND [ARGS]..."
VERBOSE_FLAGS = ("-v", "--verbose")  # accepted and ignored: the stand-in says the same either way


def _config_apply_patch(args: list[str]) -> int:
    usage = "config apply-patch [OPTIONS] PATCH_FILE_PATH"
    dry_run = _flags(args, "-d", "--dry-run")
    _flags(args, *VERBOSE_FLAGS)
    path = _one_argument(args, usage)
    _need_root()
    if dry_run:
        print("** DRY RUN EXECUTION **")
    try:
        patch = read_json(Path(path))
        with config_lock():
            gcu_apply(patch, dry_run=dry_run)
    except (ShimError, OSError, json.JSONDecodeError) as exc:
        print(f"Failed to apply patch due to: {exc}", file=sys.stderr)
        raise UsageError(str(exc), usage) from None
    print("Patch applied successfully.")
    return 0


def _config_replace(command: str, args: list[str]) -> int:
    """`config replace FILE` and `config rollback CHECKPOINT`: the same replace, from a file or a checkpoint."""
    rollback = command == "rollback"
    usage = f"config {command} [OPTIONS] " + ("CHECKPOINT_NAME" if rollback else "TARGET_FILE_PATH")
    dry_run = _flags(args, "-d", "--dry-run")
    _flags(args, *VERBOSE_FLAGS)
    name = _one_argument(args, usage)
    _need_root()
    if dry_run:
        print("** DRY RUN EXECUTION **")
    try:
        if rollback:
            _log("Config Rollbacker", "Config rollbacking starting.")
            if not checkpoint_path(name).is_file():
                raise ShimError(f"Checkpoint '{name}' does not exist")
            target = read_json(checkpoint_path(name))
        else:
            target = read_json(Path(name))
        with config_lock():
            gcu_replace(target, dry_run=dry_run)
    except (ShimError, OSError, json.JSONDecodeError) as exc:
        print("Failed to rollback config" if rollback else "Failed to replace config", file=sys.stderr)
        raise UsageError(str(exc), usage) from None
    print("Config rolled back successfully." if rollback else "Config replaced successfully.")
    return 0


def _config_checkpoint(args: list[str]) -> int:
    _flags(args, *VERBOSE_FLAGS)
    name = _one_argument(args, "config checkpoint [OPTIONS] CHECKPOINT_NAME")
    _need_root()
    with config_lock():
        checkpoint_path(name).parent.mkdir(parents=True, exist_ok=True)
        write_json(checkpoint_path(name), load_running(), indent=None)
    print("Checkpoint created successfully.")
    return 0


def _config_delete_checkpoint(args: list[str]) -> int:
    _flags(args, *VERBOSE_FLAGS)
    usage = "config delete-checkpoint [OPTIONS] CHECKPOINT_NAME"
    name = _one_argument(args, usage)
    _need_root()
    if not checkpoint_path(name).is_file():
        print("Failed to delete config checkpoint", file=sys.stderr)
        raise UsageError(f"Checkpoint '{name}' does not exist", usage)
    checkpoint_path(name).unlink()
    print("Checkpoint deleted successfully.")
    return 0


def _config_list_checkpoints(args: list[str]) -> int:
    with_time = _flags(args, "-t", "--time")
    _flags(args, *VERBOSE_FLAGS)
    folder = etc() / CHECKPOINTS_DIR
    names = sorted(p.name[:-len(CHECKPOINT_EXT)] for p in folder.glob(f"*{CHECKPOINT_EXT}")) \
        if folder.is_dir() else []
    listing: list[Any] = names
    if with_time:
        stamped = [{"name": n, "time": datetime.fromtimestamp(checkpoint_path(n).stat().st_mtime, tz=UTC)
                    .isoformat()} for n in names]
        listing = sorted(stamped, key=lambda c: str(c["time"]), reverse=True)
    print(json.dumps(listing, indent=4))
    return 0


def _config_save(args: list[str]) -> int:
    yes = _flags(args, "-y", "--yes")
    if args:
        raise UsageError("netgen lab: only the default file is emulated", "config save [OPTIONS] [FILENAME]")
    _need_root()
    if not yes:
        answer = input("Existing files will be overwritten, continue? [y/N]: ")
        if answer.strip().lower() not in ("y", "yes"):
            fail("Aborted!")
    print(f"Running command: /usr/local/bin/sonic-cfggen -d --print-data > {etc() / SAVED_FILE}")
    failure = hook("before_save", etc() / SAVED_FILE)
    if failure:  # the shell's redirection fails: exit 2, as sh's
        print(str(failure), file=sys.stderr)
        return 2
    write_json(etc() / SAVED_FILE, load_running())
    return 0


def cmd_config(args: list[str]) -> int:
    """`config COMMAND ...`: the subcommands the stand-in emulates, one function each."""
    if not args:
        raise UsageError("Missing command.", CONFIG_USAGE)
    command, rest = args[0], args[1:]
    if command == "apply-patch":
        return _config_apply_patch(rest)
    if command in ("replace", "rollback"):
        return _config_replace(command, rest)
    if command == "checkpoint":
        return _config_checkpoint(rest)
    if command == "delete-checkpoint":
        return _config_delete_checkpoint(rest)
    if command == "list-checkpoints":
        return _config_list_checkpoints(rest)
    if command == "save":
        return _config_save(rest)
    raise UsageError(f"No such command '{command}'. (netgen lab emulates apply-patch, replace, rollback,"
                     " checkpoint, list-checkpoints, delete-checkpoint, save)", CONFIG_USAGE)


def _vtysh(command: str) -> str:
    done = subprocess.run(["vtysh", "-c", command], capture_output=True, text=True, check=False)
    return done.stdout


def _platform_info(config: Config) -> dict[str, Any]:
    meta = config.get("DEVICE_METADATA", {}).get("localhost", {})
    facts = device_facts()
    info: dict[str, Any] = {"platform": meta.get("platform"), "hwsku": meta.get("hwsku"),
                            "asic_type": facts.get("asic_type", "vs"), "asic_count": 1,
                            "serial": facts.get("serial", "N/A"), "model": facts.get("model", "N/A"),
                            "revision": facts.get("revision", "N/A")}
    if meta.get("switch_type"):
        info["switch_type"] = meta["switch_type"]
    return info


def _counter(port: str, name: str) -> str:
    try:
        return f"{int(Path('/sys/class/net', port, 'statistics', name).read_text()):,}"
    except (OSError, ValueError):
        return "0"


def _port_state(port: str, entry: Mapping[str, Any]) -> str:
    if entry.get("admin_status", "down") != "up":
        return "X"
    try:
        oper = Path("/sys/class/net", port, "operstate").read_text().strip()
    except OSError:
        return "D"
    return "U" if oper in ("up", "unknown") else "D"


COUNTER_HEADER = ("IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
                  "TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR")


def interface_counters(config: Config, only: set[str] | None) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for port in sorted(config.get("PORT", {}), key=natural_key):
        if only is not None and port not in only:
            continue
        entry = config["PORT"][port]
        rows.append((port, _port_state(port, entry),
                     _counter(port, "rx_packets"), "N/A", "N/A", _counter(port, "rx_errors"),
                     _counter(port, "rx_dropped"), _counter(port, "rx_over_errors"),
                     _counter(port, "tx_packets"), "N/A", "N/A", _counter(port, "tx_errors"),
                     _counter(port, "tx_dropped"), "0"))
    return rows


def cmd_show(args: list[str]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if words[:2] == ["runningconfiguration", "all"]:
        config = load_running()
        config["bgpraw"] = _vtysh("show running-config")
        print(json.dumps(config, indent=4))
        return 0
    if words[:2] == ["platform", "summary"]:
        info = _platform_info(load_running())
        if "--json" in args:
            print(json.dumps(info, sort_keys=True, indent=2, ensure_ascii=False))
            return 0
        print(f"Platform: {info['platform']}\nHwSKU: {info['hwsku']}\nASIC: {info['asic_type']}\n"
              f"ASIC Count: {info['asic_count']}\nSerial Number: {info['serial']}\nModel Number: {info['model']}\n"
              f"Hardware Revision: {info['revision']}")
        if "switch_type" in info:
            print(f"Switch Type: {info['switch_type']}")
        return 0
    only = None
    if "-i" in args and args.index("-i") + 1 < len(args):
        at = args.index("-i")
        only = set(args[at + 1].split(","))
        words = [a for a in args[:at] + args[at + 2:] if not a.startswith("-")]
    if words == ["interfaces", "counters"]:
        rows = interface_counters(load_running(), only)
        if "-j" in args or "--json" in args:
            print(json.dumps({r[0]: dict(zip(COUNTER_HEADER[1:], r[1:], strict=True)) for r in rows},
                             indent=4, sort_keys=True))
        else:
            print(tabulate(rows, COUNTER_HEADER, stralign="right"))
        return 0
    if words[:2] == ["pfcwd", "stats"]:
        return cmd_pfcwd(["show", *args[1:]])
    if words[:2] == ["lldp", "table"]:
        print(lldp_table())
        return 0
    raise UsageError(f"No such command '{' '.join(words[:2])}'. (netgen lab emulates runningconfiguration all,"
                     " platform summary, interfaces counters, pfcwd stats, lldp table)",
                     "show [OPTIONS] COMMAND [ARGS]...")


LLDP_CAPABILITY_TAGS = {"Router": "R", "Bridge": "B"}  # lldpshow's ctags; any other enabled one is "O"


def lldp_table() -> str:
    """`show lldp table` as sonic-utilities' scripts/lldpshow prints it, from the node's lldpd
    (`lldpcli show neighbors -f xml`, the XML lldpshow reads from `docker exec lldp lldpctl -f xml`):
    LocalPort, RemoteDevice (chassis name), RemotePortID (port id), Capability (enabled ones, R/B/O),
    RemotePortDescr, rows in lldpshow's natural order, then the entry count. Prints nothing when
    no lldpd answers, as lldpshow does when the lldp container is not running."""
    socket = device_facts().get("lldp_socket")
    if not socket or not Path(socket).exists():
        return ""
    result = subprocess.run(["lldpcli", "-u", str(socket), "show", "neighbors", "-f", "xml"],
                            capture_output=True, text=True, timeout=15, check=False)
    if result.returncode != 0:
        return f"Error: {result.stderr.strip()}"
    rows: dict[str, list[str]] = {}
    for intf in ElementTree.fromstring(result.stdout).findall("interface"):
        local, port, chassis = intf.get("name", ""), intf.find("port"), intf.find("chassis")
        port_id = port.findtext("id", "") if port is not None else ""
        capability = "".join(LLDP_CAPABILITY_TAGS.get(c.get("type", ""), "O")
                             for c in (chassis.findall("capability") if chassis is not None else [])
                             if c.get("enabled") == "on")
        rows[f"{local}#{port_id}"] = [local, chassis.findtext("name", "") if chassis is not None else "", port_id,
                                      capability, port.findtext("descr", "") if port is not None else ""]

    def order(key: str) -> list[Any]:
        name = key.split("#", maxsplit=1)[0]
        return [re.findall("[A-Za-z]+", name) + [int(n) for n in re.findall(r"\d+", name)]]

    table = [rows[key] for key in sorted(rows, key=order)]
    return ("Capability codes: (R) Router, (B) Bridge, (O) Other\n"
            + tabulate(table, ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"])
            + "\n" + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}")


def cmd_pfc(args: list[str]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if words[:2] != ["show", "priority"]:
        raise UsageError("netgen lab emulates only `pfc show priority [INTERFACE]`", "pfc [OPTIONS] COMMAND [ARGS]...")
    table = load_running().get("PORT_QOS_MAP", {})
    interface = words[2] if len(words) > 2 else None
    if interface is not None and interface not in table:
        print(f"Cannot find interface {interface}")
        return 0
    names = [interface] if interface else list(table)
    rows = sorted(([n, str(table[n].get("pfc_enable", "N/A"))] for n in names), key=lambda r: natural_key(r[0]))
    print("")  # the namespace line, empty on a single-ASIC box
    print(tabulate(rows, ("Interface", "Lossless priorities")))
    print("")
    return 0


PFCWD_HEADER = ("QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                "RX LAST OK/DROP")


def pfcwd_queues(config: Config) -> list[str]:
    """The queues the PFC watchdog watches: PFC-enabled priorities of ports with a PFC_WD entry."""
    qos = config.get("PORT_QOS_MAP", {})
    queues = []
    for port in sorted(config.get("PFC_WD", {}), key=natural_key):
        if port == "GLOBAL":
            continue
        enabled = str(qos.get(port, {}).get("pfc_enable", ""))
        queues += [f"{port}:{prio}" for prio in enabled.split(",") if prio]
    return queues


def stormed_queues(config: Config) -> set[str]:
    """The watched queues in a PFC storm: what the hooks say (storm detection is not emulated)."""
    return set(hook("stormed", pfcwd_queues(config)) or ())


def cmd_pfcwd(args: list[str]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if words[:2] != ["show", "stats"]:
        raise UsageError("netgen lab emulates only `pfcwd show stats [-e] [--check-storm] [QUEUE...]`",
                         "pfcwd [OPTIONS] COMMAND [ARGS]...")
    config = load_running()
    stormed = stormed_queues(config)
    wanted = words[2:] or pfcwd_queues(config)
    empty = "-e" in args or "--empty" in args
    rows = []
    for queue in wanted:
        storm = queue in stormed
        stats = ["1/0" if storm else "0/0", "0/0", "0/0", "0/0", "0/0"]
        if storm or empty:
            rows.append([queue, "stormed" if storm else "operational", *stats])
    if "--check-storm" in args:
        return 1 if any(row[1] == "stormed" for row in rows) else 0
    print(tabulate(rows, PFCWD_HEADER, stralign="right"))
    return 0


def _timer_path(unit: str) -> Path:
    name = unit if unit.endswith(".timer") else f"{unit}.timer"
    if not re.fullmatch(r"[A-Za-z0-9:_.@-]+\.timer", name):
        raise UsageError(f"invalid unit name {unit!r}", "systemctl [OPTIONS] COMMAND UNIT")
    return etc() / TIMERS_DIR / f"{name}.json"


def _service_path(timer: Path) -> Path:
    """Present while the command a timer started runs (systemd's NAME.service of a NAME.timer)."""
    return timer.with_name(timer.name.replace(".timer.json", ".service.json"))


def cmd_systemd_run(args: list[str]) -> int:
    """`systemd-run --on-active=SECONDS --unit=NAME [--description=TEXT] COMMAND [ARGS...]`."""
    usage = "systemd-run --on-active=SECONDS --unit=NAME [--description=TEXT] COMMAND [ARGS...]"
    options: dict[str, str] = {}
    rest = list(args)
    while rest and rest[0].startswith("--"):
        key, sep, value = rest.pop(0)[2:].partition("=")
        if not sep:
            if not rest:
                raise UsageError(f"--{key} needs a value", usage)
            value = rest.pop(0)
        options[key] = value
    unknown = set(options) - {"on-active", "unit", "description"}
    if unknown or "on-active" not in options or "unit" not in options or not rest:
        raise UsageError(f"netgen lab: only {usage} is emulated", usage)
    seconds = float(options["on-active"].removesuffix("s"))
    path = _timer_path(options["unit"])
    if path.exists():
        print(f"Failed to start transient timer unit: Unit {path.stem} was already loaded.", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, {"fires_at": time.time() + seconds, "command": rest, "pid": None})
    sleeper = subprocess.Popen([sys.executable, "-m", "netgen.nos.sonic.lab_shim", "timer-fire", path.stem],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True, env=os.environ.copy())
    write_json(path, {**read_json(path), "pid": sleeper.pid})
    unit = path.stem.removesuffix(".timer")
    print(f"Running timer as unit: {unit}.timer\nWill run service as unit: {unit}.service")
    return 0


def cmd_timer_fire(args: list[str]) -> int:
    """The detached sleeper behind one timer: run its command when due, unless it was stopped."""
    path = _timer_path(args[0])
    with contextlib.suppress(OSError, ValueError, KeyError):
        time.sleep(max(0.0, float(read_json(path)["fires_at"]) - time.time()))
        state = read_json(path)
        if state.get("pid") == os.getpid():
            service = _service_path(path)
            write_json(service, {"command": state["command"], "pid": os.getpid()})
            path.unlink()
            log = etc() / TIMERS_DIR / f"{path.stem}.log"
            try:
                with log.open("w") as output:
                    subprocess.run(state["command"], stdout=output, stderr=subprocess.STDOUT, check=False)
            finally:
                service.unlink(missing_ok=True)
    return 0


def cmd_systemctl(args: list[str]) -> int:
    """`systemctl stop NAME.timer` / `systemctl is-active UNIT...` for the timers above and the
    NAME.service each runs when it fires (is-active: one line per unit, exit 0 when at least one is
    active, 3 otherwise, as systemctl(1) says)."""
    usage = "systemctl stop UNIT.timer | systemctl is-active UNIT.timer|UNIT.service..."
    if len(args) < 2 or args[0] not in ("stop", "is-active") or (args[0] == "stop" and len(args) != 2):
        raise UsageError(f"netgen lab: only {usage} is emulated", usage)
    if args[0] == "is-active":
        active = [(_service_path(_timer_path(unit.removesuffix(".service"))) if unit.endswith(".service")
                   else _timer_path(unit)).exists() for unit in args[1:]]
        print("\n".join("active" if on else "inactive" for on in active))
        return 0 if any(active) else 3
    hook("before_disarm")
    code = _stop_timer(_timer_path(args[1]))
    hook("after_disarm")
    return code


def _stop_timer(path: Path) -> int:
    try:
        state = read_json(path)
    except (OSError, ValueError):
        state = None
    if state is None:
        print(f"Failed to stop {path.stem}: Unit {path.stem} not loaded.", file=sys.stderr)
        return 5
    path.unlink(missing_ok=True)
    with contextlib.suppress(ProcessLookupError, TypeError, ValueError):
        os.kill(int(state["pid"]), signal.SIGTERM)
    return 0


def cmd_hook(args: list[str]) -> int:
    """`hook POINT`: the hooks' function of that point, for the shell stand-ins (SHELL_HOOKS)."""
    if len(args) != 1 or args[0] not in SHELL_HOOKS:
        raise UsageError(f"one hook point of {', '.join(SHELL_HOOKS)}", "hook POINT")
    hook(args[0])
    return 0


def cmd_sonic_cfggen(args: list[str]) -> int:
    if "-d" in args and "--print-data" in args:
        print(json.dumps(load_running(), indent=4, sort_keys=True))
        return 0
    raise UsageError("netgen lab emulates only `sonic-cfggen -d --print-data`", "sonic-cfggen [OPTIONS]")


# --- the host side: how a lab router gets this stand-in (the SONiC bundle's `lab_shim` part) ----------

MODULE = "netgen.nos.sonic.lab_shim"  # what the node runs: `python -m MODULE PROGRAM ARGS...`
NODE_ETC = Path("/etc/sonic")  # where a node sees its folder of this stand-in's state
# Keys of CONFIG_DB a switch owns (from its platform files and EEPROM), not the generator.
DEVICE_OWNED: dict[str, tuple[str, ...]] = {"DEVICE_METADATA": ("mac", "platform")}
ASIC_BY_VENDOR = {"Arista": "broadcom", "Mellanox": "mellanox", "Nvidia": "mellanox", "Dell": "broadcom",
                  "Celestica": "broadcom"}
EMULATED_VERSION = "netgen-lab-emulated"  # build_version in /etc/sonic/sonic_version.yml


def platform_of(hwsku: str | None) -> str:
    """A platform string in SONiC's `x86_64-<vendor>_<model>` form, derived from the HwSKU
    (Arista-7060X6-64PE-O128S2 -> x86_64-arista_7060x6_64pe, as in sonic-buildimage's device/)."""
    parts = (hwsku or "").split("-")
    if len(parts) >= 3 and parts[0] == "Arista":
        return f"x86_64-arista_{parts[1].lower()}_{parts[2].lower()}"
    if len(parts) >= 2 and parts[0] in ("Mellanox", "Nvidia"):
        return f"x86_64-mlnx_{parts[1].lower()}-r0"
    return "x86_64-netgen_lab-r0"


def device_mac(node: str) -> str:
    """A stable, locally administered unicast MAC per node name."""
    digest = hashlib.sha256(node.encode()).digest()
    return ":".join(f"{b:02x}" for b in (0x02, *digest[:5]))


def seed_config_db(node: str, rendered_config_db: Mapping[str, Any]) -> dict[str, Any]:
    """The node's initial running CONFIG_DB: the rendered config_db.json plus the keys the device
    owns (DEVICE_OWNED): DEVICE_METADATA|localhost mac and platform. Device values win over rendered
    ones.

    A real switch's CONFIG_DB holds values no generator writes (PORT alias and index are rendered,
    from the SKU's port_config.ini). `config replace` of the plain rendered file therefore removes
    them, exactly as SONiC's GCU would; a deploy must carry them over from the running config.
    Tables a real box also has but netgen's model does not know (MGMT_INTERFACE, MGMT_PORT, FEATURE,
    ...) are not seeded: the stand-in treats them as tables without YANG, and a rendered file never
    contains them."""
    config = copy.deepcopy(dict(rendered_config_db))
    meta = config.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})
    meta["mac"] = device_mac(node)
    meta["platform"] = platform_of(meta.get("hwsku"))
    return config


def _uses_rdma_hash(config: dict[str, Any]) -> bool:
    """Whether the rendered config needs the RDMA hash extension to validate (as `netgen render`
    decided from the platform's capabilities)."""
    from netgen.nos.sonic.schema import check_config_db  # noqa: PLC0415  (pydantic: only when needed)

    return bool(check_config_db(config)) and not check_config_db(config, rdma_hash=True)


def _device_facts(node: str, config: dict[str, Any]) -> dict[str, Any]:
    meta = config.get("DEVICE_METADATA", {}).get("localhost", {})
    hwsku = str(meta.get("hwsku", ""))
    return {"node": node, "rdma_hash": _uses_rdma_hash(config),
            "asic_type": ASIC_BY_VENDOR.get(hwsku.split("-", maxsplit=1)[0], "vs"),
            "serial": f"NGLAB{zlib.crc32(node.encode()):08X}", "model": hwsku or "N/A", "revision": "N/A",
            "emulated_by": "netgen/nos/sonic/lab_shim.py"}


class SonicLabShim:
    """This stand-in as netgen/lab/endpoints.py's LabShim: the commands first on a SONiC router's
    PATH, and its /etc/sonic seeded from the rendered config_db.json (netgen/lab/endpoints.py mounts
    both into the node)."""

    module = MODULE
    etc = NODE_ETC
    needs = ("config_db.json",)

    def write_node(self, folder: Path, node: str, files: Mapping[str, str], lldp_socket: Path,
                   hooks: Path | None) -> None:
        """The node's /etc/sonic: its running CONFIG_DB seeded from the rendered config_db.json
        (seed_config_db), saved as if the box booted from it, and the facts the commands read."""
        rendered = json.loads(files["config_db.json"])
        if not isinstance(rendered, dict):
            raise ValueError(f"{node}: the rendered config_db.json is not a JSON object")
        config = seed_config_db(node, rendered)
        for sub in (RUNNING_DIR, CHECKPOINTS_DIR):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        write_json(folder / RUNNING_DIR / RUNNING_FILE, config)
        write_json(folder / SAVED_FILE, config)  # as if the box booted from it
        # `show lldp table` asks the node's lldpd (netns.py starts it) where SONiC asks its lldp container
        facts = {**_device_facts(node, config), "lldp_socket": str(lldp_socket)}
        if hooks is not None:
            facts[HOOKS_FACT] = str(hooks)
        write_json(folder / DEVICE_FILE, facts)
        (folder / "sonic_version.yml").write_text(
            "# netgen lab: emulated SONiC (netgen/nos/sonic/lab_shim.py), not a SONiC build\n"
            f"build_version: '{EMULATED_VERSION}'\nasic_type: {facts['asic_type']}\n")
        # split / split-unified routing config mode: FRR reads /etc/sonic/frr/*.conf (the bgp container
        # mounts it as /etc/frr). Here the node's own FRR config directory is /etc/frr.
        (folder / "frr").symlink_to("/etc/frr")

    def write_bin(self, folder: Path, hooks: Path | None) -> None:
        """The commands: one script per PROGRAMS running this module, a `sudo` that just runs the
        command (sessions are root) and a `docker` whose `exec CONTAINER CMD` runs CMD on the node
        (`docker exec bgp frr-reload.py ...` works), then calls the hook point after_docker_exec."""
        from netgen.lab.netns import lab_conf_vtysh  # noqa: PLC0415  (only where a lab node is made)

        folder.mkdir(parents=True, exist_ok=True)
        source = Path(__file__).resolve().parents[3]  # where netgen is imported from here: the node does too
        lab_conf = shlex.join(lab_conf_vtysh())
        for program in PROGRAMS:
            (folder / program).write_text(
                "#!/bin/sh\n"
                f"# netgen lab stand-in for SONiC's `{program}` ({MODULE}); this is not SONiC.\n"
                f'PYTHONPATH="{source}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -m {MODULE}'
                f' {program} "$@"\n')
        (folder / "sudo").write_text(
            "#!/bin/sh\n"
            "# netgen lab: sessions are root already; drop sudo's options and run the command.\n"
            'if [ "$(id -u)" -ne 0 ]; then echo "sudo: netgen lab sessions log in as root" >&2; exit 1; fi\n'
            "while [ $# -gt 0 ]; do\n"
            '  case "$1" in\n'
            "    --) shift; break ;;\n"
            "    -u|-g|-p|-C|-D|-r|-t|-U) shift 2 ;;\n"
            '    -s|-i) shift; [ $# -eq 0 ] && exec "${SHELL:-/bin/bash}" ;;\n'
            "    -*) shift ;;\n"
            "    *) break ;;\n"
            "  esac\n"
            "done\n"
            '[ $# -gt 0 ] || { echo "usage: sudo COMMAND [ARGS...]" >&2; exit 1; }\n'
            'exec "$@"\n')
        (folder / "docker").write_text(
            "#!/bin/sh\n"
            "# netgen lab: no containers; `docker exec [OPTIONS] CONTAINER CMD...` runs CMD on the node itself\n"
            "# (bgp, swss, ...: FRR and the SONiC stand-ins all live in the node's namespaces).\n"
            '[ "$1" = exec ] || { echo "docker: netgen lab emulates only docker exec" >&2; exit 1; }\n'
            "shift\n"
            'while [ $# -gt 0 ]; do case "$1" in -u|-w|-e|--user|--workdir|--env) shift 2 ;; -*) shift ;; *) break ;;'
            " esac; done\n"
            "shift\n"
            '[ $# -gt 0 ] || { echo "usage: docker exec CONTAINER COMMAND [ARGS...]" >&2; exit 1; }\n'
            '"$@"\nrc=$?\n'
            # frr-reload.py removes what frr.conf does not hold, the lab's own settings too (lab_only.py)
            + f'case "$1" in *frr-reload*) {lab_conf} >/dev/null 2>&1 ;; esac\n'
            + (f'PYTHONPATH="{source}${{PYTHONPATH:+:$PYTHONPATH}}" "{sys.executable}" -m {MODULE} hook'
               " after_docker_exec\n" if hooks is not None else "")
            + "exit $rc\n")
        for path in folder.iterdir():
            path.chmod(0o755)


LAB_SHIM = SonicLabShim()


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "config": cmd_config, "show": cmd_show, "pfc": cmd_pfc, "pfcwd": cmd_pfcwd, "sonic-cfggen": cmd_sonic_cfggen,
    "systemd-run": cmd_systemd_run, "systemctl": cmd_systemctl, "timer-fire": cmd_timer_fire,
    "hook": cmd_hook,  # the `docker exec` stand-in's hook point
}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m netgen.nos.sonic.lab_shim PROGRAM ARGS...`; exit codes as the SONiC commands give them."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(f"usage: python -m netgen.nos.sonic.lab_shim {{{','.join(COMMANDS)}}} ARGS...", file=sys.stderr)
        return 2
    program, rest = args[0], args[1:]
    try:
        hook("before_command", program)
        return COMMANDS[program](rest)
    except UsageError as exc:
        print(f"Usage: {exc.usage}\nTry \"{exc.usage.split(' [')[0]} -h\" for help.\n\nError: {exc}", file=sys.stderr)
        return exc.exit_code
    except ShimError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except FileNotFoundError as exc:
        print(f"Error: {exc.filename}: no such file (is this a netgen lab SONiC node?)", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `show ... | head`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (keeps the interpreter's final flush quiet)
        return 0


if __name__ == "__main__":
    sys.exit(main())
