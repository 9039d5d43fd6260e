"""SONiC driver (netmiko `linux`: community SONiC logs in to bash; netmiko has no `sonic` device type).

Change flow, as SONiC's generic config updater documents it (sonic-net/SONiC
doc/config-generic-update-rollback/SONiC_Generic_Config_Update_and_Rollback_Design.md; sonic-utilities
config/main.py and generic_config_updater/), with a way back
that does not depend on the connection:
  stage   : read the running CONFIG_DB (`show runningconfiguration all`), overlay the device-owned
            keys, compute the RFC 6902 patch; diff the running frr.conf against the intended one.
  commit  : `config checkpoint <id>`; arm a revert timer on the device; `config apply-patch` of the
            patch (GCU validates the result against YANG and rejects it whole); the new FRR config
            loaded with `frr-reload.py` from a file beside frr.conf, which stays the old one.
  confirm : disarm the timer, then the save.
  save    : `config save -y`, the new file becomes /etc/sonic/frr/frr.conf, delete the checkpoint.
  rollback: disarm the timer, `config rollback <id>`, FRR reloaded from the (old) frr.conf on disk.
  readback: the running CONFIG_DB and FRR's running config (fingerprinted), the saved
            /etc/sonic/config_db.json and frr.conf, and whether the revert timer is armed or its
            revert running.

The revert timer is a transient systemd timer (`systemd-run --on-active=SECONDS --unit=NAME`,
systemd-run(1): https://www.freedesktop.org/software/systemd/man/latest/systemd-run.html; SONiC
runs systemd): unless confirmed in time it runs a script that rolls back to the checkpoint and
reloads FRR from frr.conf, so an unconfirmed SONiC change reverts by itself, as on EOS. Nothing is
persistent before the confirm (CONFIG_DB unsaved, frr.conf untouched), so a reboot comes back on
the old config too. Rollback and confirm read what is on the device, never this object's memory,
so a driver rebuilt after a reconnect can finish either.

What the read-back relies on: the change is confirmed once neither the timer nor the revert it
starts is active (`systemctl is-active UNIT.timer UNIT.service` exits 0 when at least one of them is
active, systemctl(1): https://www.freedesktop.org/software/systemd/man/latest/systemctl.html ), and
saved once /etc/sonic/config_db.json equals the running CONFIG_DB and frr.conf is the new file: SONiC
loads config_db.json at boot and never writes CONFIG_DB back to it by itself, only `config save` does
(SONiC wiki, Configuration, "Config Load and Save": https://github.com/sonic-net/SONiC/wiki/Configuration ).

Files travel over SCP, so no rendered byte is ever interpreted by the shell.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, cast

from netmiko import file_transfer

from netgen.deploy.checks import Facts
from netgen.deploy.driver import (
    HOLDS_NEW,
    HOLDS_OLD,
    HOLDS_OTHER,
    Connection,
    DrainReadback,
    DriverError,
    Readback,
    StagedChange,
    check_change_id,
    digest,
    drain_word,
    json_object,
)
from netgen.deploy.ownership import DEVICE_OWNED, Ownership, OwnershipReport, Policy, first
from netgen.diff.config_db import DEVICE_OWNED_TABLES, json_patch, mask_row, overlay_device_owned, semantic_diff
from netgen.intent.secrets import redact
from netgen.platforms import frr_drain
from netgen.topology.model import Device

FRR_DIR = "/etc/sonic/frr"  # the bgp container sees it as /etc/frr
FRR_PATH = f"{FRR_DIR}/frr.conf"
SAVED_DB = "/etc/sonic/config_db.json"


def frr_reload(name: str) -> str:
    """Load FRR from a file in FRR_DIR, as split-unified mode's bgp container sees it."""
    return f"docker exec bgp /usr/lib/frr/frr-reload.py --reload /etc/frr/{name}"


def frr_digest(text: str) -> str:
    """FRR's running config, fingerprinted: vtysh's banner lines and blank lines dropped."""
    banner = ("Building configuration", "Current configuration")
    kept = (line.rstrip() for line in text.splitlines() if line.strip() and not line.startswith(banner))
    return digest("\n".join(kept))


def db_digest(config: Mapping[str, Any]) -> str:
    return digest(json.dumps({k: v for k, v in config.items() if k != "bgpraw"}, sort_keys=True))
# The CONFIG_DB tables netgen writes (config_db.py; tests/deploy/test_ownership.py
# checks every rendered table is listed): the intent's rows replace the device's, and a device's row that
# the intent does not have is removed. frr.conf is netgen's file as a whole (split-unified mode).
MANAGED_TABLES = ("DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "VLAN", "VLAN_MEMBER",
                  "VLAN_INTERFACE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
                  "MAP_PFC_PRIORITY_TO_QUEUE", "PORT_QOS_MAP", "QUEUE", "SCHEDULER", "WRED_PROFILE", "BUFFER_POOL",
                  "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH", "PFC_WD", "FLEX_COUNTER_TABLE",
                  "SWITCH_HASH",
                  # not rendered, but part of the buffer model netgen owns: a leftover list would point
                  # ports at profiles of the SKU defaults netgen's pools replaced
                  "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST")
# Written only when the intent declares the service (intent services:, sonic/services.py).
MANAGED_IF_RENDERED = ("MGMT_VRF_CONFIG", "MGMT_PORT", "MGMT_INTERFACE", "NTP", "NTP_SERVER", "SYSLOG_SERVER",
                       "DNS_NAMESERVER", "DNS_OPTIONS", "LLDP", "SFLOW", "SFLOW_COLLECTOR", "SFLOW_SESSION", "GNMI",
                       "BANNER_MESSAGE", "AAA", "TACPLUS", "TACPLUS_SERVER", "RADIUS", "RADIUS_SERVER",
                       "SNMP_USER", "SNMP_AGENT_ADDRESS_CONFIG")
SONIC_OWNERSHIP = Ownership(MANAGED_TABLES, DEVICE_OWNED_TABLES, managed_if_rendered=MANAGED_IF_RENDERED, exact=True)
RC_MARK = "__NETGEN_RC="
# Commands that only read (everything else drops the cached running CONFIG_DB).
READ_ONLY = ("show ", "vtysh -c 'show ", "cat ", "pfcwd show ", "pfc show ", "systemctl is-active ", "test ")


def parse_lldp_table(text: str) -> dict[str, list[tuple[str, str]]]:
    """`show lldp table` (sonic-utilities scripts/lldpshow: a `tabulate` table with the columns
    LocalPort, RemoteDevice, RemotePortID, Capability, RemotePortDescr) -> local port -> [(remote
    device, remote port ID)]. Columns are cut where the dashed rule under the header puts them: a
    neighbour that sends no system name leaves RemoteDevice empty, and descriptions hold spaces.
    lldpshow prints nothing at all when the lldp container is not running: that is an error here,
    not "no neighbours"."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.split()[:1] == ["LocalPort"]), None)
    if at is None or at + 1 >= len(lines):
        shown = text.strip()[:200] or "nothing (is the lldp feature running?)"
        raise DriverError(f"`show lldp table` printed no neighbour table: {shown}")
    starts = [m.start() for m in re.finditer(r"-+", lines[at + 1])]
    cuts = list(zip(starts, [*starts[1:], None], strict=True))
    header = [lines[at][a:b].strip() for a, b in cuts]
    try:
        local, device, port = (header.index(name) for name in ("LocalPort", "RemoteDevice", "RemotePortID"))
    except ValueError:
        raise DriverError(f"`show lldp table`: unexpected columns {header}") from None
    heard: dict[str, list[tuple[str, str]]] = {}
    for line in lines[at + 2:]:
        if not line.strip() or line.startswith(("---", "Total entries")):
            break
        cells = [line[a:b].strip() for a, b in cuts]
        heard.setdefault(cells[local], []).append((cells[device], cells[port]))
    return heard


class SonicDriver:
    nos: ClassVar[str] = "sonic"

    def __init__(self, conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
                 sudo: bool = True, command_timeout_s: float = 120.0, ownership: Ownership = SONIC_OWNERSHIP) -> None:
        self.conn = conn
        self.device = device
        self.name = device.name
        self.ownership = ownership
        self.intended_db: dict[str, Any] = json.loads(files["config_db.json"])
        self.intended_frr = files["frr.conf"]
        self.change_id = check_change_id(change_id)
        self.sudo = "sudo -n " if sudo else ""
        self.timeout = command_timeout_s
        self._staged: StagedChange | None = None
        # The running CONFIG_DB as last read: `show runningconfiguration all` dumps every table
        # (seconds on a large switch) and one round of checks needs it for PFC state, the diff
        # and facts. Kept until a command that may change the device, or the next round.
        self._running_db: dict[str, Any] | None = None

    # --- plumbing -----------------------------------------------------------------------------
    def run(self, command: str, check: bool = True) -> tuple[int, str]:
        if not command.removeprefix(self.sudo).startswith(READ_ONLY):
            self._running_db = None  # anything but a known read may change CONFIG_DB
        output = str(self.conn.send_command(f"{command}; echo {RC_MARK}$?", read_timeout=self.timeout))
        text, _, tail = output.rpartition(RC_MARK)
        try:
            rc = int(tail.strip().split()[0])
        except (ValueError, IndexError):
            raise DriverError(f"{self.name}: no exit status from `{command[:60]}`: {output[-300:]!r}") from None
        text = text.strip("\n")
        if check and rc != 0:
            raise DriverError(f"{self.name}: `{command[:80]}` failed (exit {rc}): {text[-500:]}")
        return rc, text

    def put_file(self, path: str, content: str) -> None:
        """Copy a file over SCP (netmiko file_transfer, md5-verified) and move it into place: no
        byte of it passes through the shell, and command lines stay short (bash wraps long ones
        past netmiko's terminal width)."""
        name = f"netgen-{self.change_id}-{PurePosixPath(path).name}"
        with tempfile.TemporaryDirectory() as folder:
            local = Path(folder) / name
            local.write_text(content)
            try:
                file_transfer(cast(Any, self.conn), source_file=str(local), dest_file=name, file_system="/tmp",
                              direction="put", overwrite_file=True)
            except Exception as exc:
                raise DriverError(f"{self.name}: copying {path} failed: {type(exc).__name__}: {exc}") from None
        if path != f"/tmp/{name}":
            self.run(f"{self.sudo}mv /tmp/{name} {shlex.quote(path)}")

    def new_round(self) -> None:
        self._running_db = None

    def running_config_db(self) -> dict[str, Any]:
        if self._running_db is None:
            self._running_db = self._read_running_db()
        return copy.deepcopy(self._running_db)  # callers may change their copy

    def _read_running_db(self) -> dict[str, Any]:
        _, text = self.run(f"{self.sudo}show runningconfiguration all")
        data = json_object(self.name, "`show runningconfiguration all`", text)
        # `show runningconfiguration all` adds FRR's running config as "bgpraw"; it is not a
        # CONFIG_DB table (GCU drops it too), and frr.conf is diffed on its own.
        data.pop("bgpraw", None)
        return data

    def _cat(self, path: str) -> str | None:
        rc, text = self.run(f"{self.sudo}cat {path}", check=False)
        return (text + "\n" if text else "") if rc == 0 else None

    def running_frr(self) -> str:
        """The FRR config file in effect: this change's new file while it waits for its confirm,
        else frr.conf."""
        pending = self._cat(f"{FRR_DIR}/{self._new_frr()}")
        return pending if pending is not None else (self._cat(FRR_PATH) or "")

    # --- read ---------------------------------------------------------------------------------
    def facts(self) -> Facts:
        meta = self.running_config_db().get("DEVICE_METADATA", {}).get("localhost", {})
        _, version = self.run("cat /etc/sonic/sonic_version.yml 2>/dev/null | grep build_version || true")
        return Facts(hostname=str(meta.get("hostname", "")), model=str(meta.get("hwsku", "")), nos="sonic",
                     version=version.split(":", 1)[-1].strip().strip("'") or "unknown")

    def bgp_peers(self) -> dict[str, str]:
        _, text = self.run(f"{self.sudo}vtysh -c 'show bgp summary json'")
        peers: dict[str, str] = {}
        for family in json_object(self.name, "`show bgp summary json`", text or "{}").values():
            if isinstance(family, dict):
                for address, info in family.get("peers", {}).items():
                    peers[address] = str(info.get("state", "?"))
        return peers

    def pfc_priorities(self) -> dict[str, set[int]]:
        qos = self.running_config_db().get("PORT_QOS_MAP", {})
        return {port: {int(p) for p in str(entry.get("pfc_enable", "")).split(",") if p.strip().isdigit()}
                for port, entry in qos.items() if port != "global"}

    def pfc_storms(self) -> list[str]:
        rc, text = self.run(f"{self.sudo}pfcwd show stats --check-storm", check=False)
        if rc == 0:
            return []
        return [line.split()[0] for line in text.splitlines() if "storm" in line.lower() and line.split()] or ["?"]

    def interface_errors(self) -> dict[str, int]:
        _, text = self.run(f"{self.sudo}show interfaces counters -j")
        data = json_object(self.name, "`show interfaces counters -j`", text or "{}")
        errors: dict[str, int] = {}
        for port, counters in data.items():
            total = 0
            for key in ("RX_ERR", "TX_ERR"):
                value = str(counters.get(key, "0")).replace(",", "")
                total += int(value) if value.isdigit() else 0
            errors[port] = total
        return errors

    def route_widths(self) -> dict[str, int]:
        widths: dict[str, int] = {}
        for family in ("ip", "ipv6"):
            _, text = self.run(f"{self.sudo}vtysh -c 'show {family} route bgp json'")
            for prefix, entries in json_object(self.name, f"`show {family} route bgp json`", text or "{}").items():
                for entry in entries:
                    if entry.get("selected"):
                        widths[prefix] = sum(1 for hop in entry.get("nexthops", []) if hop.get("active"))
        return widths

    def lldp_neighbors(self) -> dict[str, list[tuple[str, str]]]:
        _, text = self.run(f"{self.sudo}show lldp table")
        return parse_lldp_table(text)

    def config_diff(self) -> str:
        return self._compute().text  # read-only: the staged change (and its way back) stays as it is

    def stage(self) -> StagedChange:
        self._staged = self._compute()
        return self._staged

    def target_db(self, running: Mapping[str, Any]) -> tuple[dict[str, Any], OwnershipReport]:
        """What CONFIG_DB should hold: the intent, the device-owned fields of its rows, and each table
        the intent does not write, kept or dropped by its ownership."""
        target: dict[str, Any] = overlay_device_owned(self.intended_db, running, tables=())
        report = OwnershipReport()
        for table in sorted(running):
            if table in self.intended_db:
                continue
            kind = self.ownership.classify(table, self.intended_db)
            rows = [mask_row(table, key) for key in sorted(running[table])]
            if kind == DEVICE_OWNED:
                target[table] = copy.deepcopy(running[table])
                report.kept_device_owned.append(table)
            elif kind == Policy.KEEP:
                target[table] = copy.deepcopy(running[table])
                report.kept_unmanaged += rows
            elif kind == Policy.REMOVE:
                report.removed_unmanaged += rows
            elif kind == Policy.REFUSE:
                report.refused += rows
        return target, report

    def _compute(self) -> StagedChange:
        running = self.running_config_db()
        target, ownership = self.target_db(running)
        if ownership.refused:
            raise DriverError(f"{self.name}: not changed: CONFIG_DB has {len(ownership.refused)} row(s) in tables whose"
                              f" ownership policy is refuse: {first(ownership.refused)}. Render them, mark them"
                              " device-owned, or give them the policy keep or remove (deploy.yaml ownership.sonic),"
                              " or pass --remove-unmanaged")
        patch = json_patch(running, target)
        fields = semantic_diff(running, target)
        old_frr = self.running_frr()
        frr_diff = "".join(difflib.unified_diff(old_frr.splitlines(True), self.intended_frr.splitlines(True),
                                                f"{self.name}:{FRR_PATH} (running)", "frr.conf (intended)"))
        frr_lines = sum(1 for line in frr_diff.splitlines()
                        if line[:1] in "+-" and not line.startswith(("+++", "---")))
        text = "".join(f"{c.render()}\n" for c in fields) + frr_diff
        ownership.would_remove = [c.render() for c in fields if c.kind == "remove"] + [
            redact(f"{FRR_PATH}: {line[1:]}") for line in frr_diff.splitlines()
            if line.startswith("-") and not line.startswith("---")]
        before = f"{db_digest(running)}:{frr_digest(self._frr_running())}"
        return StagedChange(text, len(fields) + frr_lines,
                            {"patch": patch, "frr_diff": frr_diff, "config_db_changes": len(fields),
                             "ownership": ownership.as_dict(),
                             "frr_lines": frr_lines, "before": before})

    def discard(self) -> None:
        self._staged = None

    # names on the device, all derived from the change id (a rebuilt driver finds them again)
    def _checkpoint(self) -> str:
        return f"netgen-{self.change_id}"

    def _unit(self) -> str:
        return f"netgen-revert-{self.change_id}"

    def _new_frr(self) -> str:
        return f"netgen-{self.change_id}.conf"

    def _old_frr(self) -> str:
        return f"netgen-{self.change_id}-before.conf"

    def _disk_frr(self) -> str:
        return f"netgen-{self.change_id}-disk.conf"

    def _revert_script(self) -> str:
        return f"/etc/sonic/netgen-{self.change_id}-revert.sh"

    def _keep_disk_frr(self) -> str:
        # frr-reload.py makes what it loaded persistent (`vtysh write` over frr.conf) when the file it
        # loaded is not frr.conf itself: put the copy of frr.conf taken at commit back every time.
        return f"cp -p {FRR_DIR}/{self._disk_frr()} {FRR_PATH}"

    def _frr_restore(self) -> str:
        """FRR back to what it ran before the commit (saved at commit time), if this change reloaded it,
        and frr.conf on disk as it was."""
        return (f"if [ -f {FRR_DIR}/{self._new_frr()} ] && [ -f {FRR_DIR}/{self._old_frr()} ]; then"
                f" {frr_reload(self._old_frr())}; {self._keep_disk_frr()}; fi")

    def commit(self, confirm_timeout_s: int) -> None:
        staged = self._staged or self.stage()
        self.run(f"{self.sudo}config checkpoint {self._checkpoint()}")
        if staged.detail["frr_lines"]:  # FRR's running config as it is, to return to exactly; frr.conf too
            self.run(f"{self.sudo}cp -p {FRR_PATH} {FRR_DIR}/{self._disk_frr()}")
            self.run(f"{self.sudo}sh -c \"vtysh -c 'show running-config' | grep -v -e '^Building configuration'"
                     f" -e '^Current configuration' > {FRR_DIR}/{self._old_frr()}\"")
        # The way back is on the device before anything changes: a dropped connection from here
        # on still ends on the old config when the timer runs out.
        self.put_file(self._revert_script(),
                      f"#!/bin/sh\n# netgen change {self.change_id}: not confirmed in {confirm_timeout_s} s, back to"
                      f" checkpoint {self._checkpoint()} and FRR as it ran before\n"
                      f"config rollback {self._checkpoint()}\n{self._frr_restore()}\n"
                      f"config delete-checkpoint {self._checkpoint()}\n"
                      f"rm -f {FRR_DIR}/{self._new_frr()} {FRR_DIR}/{self._old_frr()} {FRR_DIR}/{self._disk_frr()}"
                      f" {self._revert_script()}\n")
        self.run(f"{self.sudo}systemd-run --on-active={confirm_timeout_s} --unit={self._unit()}"
                 f" --description='netgen {self.change_id}: revert unless confirmed' /bin/sh {self._revert_script()}")
        if staged.detail["patch"]:
            patch_file = f"/tmp/netgen-{self.change_id}-patch.json"
            self.put_file(patch_file, json.dumps(staged.detail["patch"], indent=1))
            self.run(f"{self.sudo}config apply-patch {patch_file}")
        if staged.detail["frr_lines"]:
            self.put_file(f"{FRR_DIR}/{self._new_frr()}", self.intended_frr)
            self.run(f"{self.sudo}{frr_reload(self._new_frr())}")
            self.run(f"{self.sudo}{self._keep_disk_frr()}")  # nothing persistent before the confirm

    def _disarm(self) -> None:
        self.run(f"{self.sudo}systemctl stop {self._unit()}.timer", check=False)

    def _has_checkpoint(self) -> bool:
        _, text = self.run(f"{self.sudo}config list-checkpoints", check=False)
        return self._checkpoint() in text

    def _cleanup(self) -> None:
        self.run(f"{self.sudo}config delete-checkpoint {self._checkpoint()}", check=False)
        self.run(f"{self.sudo}rm -f {self._revert_script()} {FRR_DIR}/{self._new_frr()} {FRR_DIR}/{self._old_frr()}"
                 f" {FRR_DIR}/{self._disk_frr()} /tmp/netgen-{self.change_id}-patch.json", check=False)

    def _revert_state(self) -> tuple[bool, bool]:
        """(the revert timer is armed, its revert is running), read from systemd."""
        _, text = self.run(f"{self.sudo}systemctl is-active {self._unit()}.timer {self._unit()}.service", check=False)
        states = [*text.split(), "", ""][:2]  # one line per unit, in the order asked
        return states[0] == "active", states[1] in ("active", "activating")

    def confirm(self) -> None:
        _, reverting = self._revert_state()
        if reverting:  # disarming stops the timer, not the revert it started
            raise DriverError(f"{self.name}: too late to confirm: the revert timer ran out and its revert is running")
        self._disarm()
        self.save()

    def save(self) -> None:
        self.run(f"{self.sudo}config save -y")
        rc, _ = self.run(f"test -f {FRR_DIR}/{self._new_frr()}", check=False)
        if rc == 0:
            self.run(f"{self.sudo}cp {FRR_DIR}/{self._new_frr()} {FRR_PATH}")
        self._cleanup()

    def rollback(self) -> None:
        self._disarm()
        if self._has_checkpoint():
            self.run(f"{self.sudo}config rollback {self._checkpoint()}")
        self.run(f"{self.sudo}sh -c \"{self._frr_restore()}\"")
        self._cleanup()

    def _frr_running(self) -> str:
        _, text = self.run(f"{self.sudo}vtysh -c 'show running-config'")
        return text

    def running_digest(self) -> str:
        self.new_round()
        return f"{db_digest(self.running_config_db())}:{frr_digest(self._frr_running())}"

    def readback(self, before: str, after: str | None) -> Readback:
        running = self.running_digest()
        holds = HOLDS_NEW if running == after else HOLDS_OLD if running == before else HOLDS_OTHER
        rc, saved_text = self.run(f"{self.sudo}cat {SAVED_DB}", check=False)
        saved_db = json_object(self.name, f"`cat {SAVED_DB}`", saved_text) if rc == 0 else {}
        db_saved = db_digest(saved_db) == running.split(":")[0]
        frr_saved = self._cat(FRR_PATH) == self.intended_frr if holds == HOLDS_NEW else True
        armed, reverting = self._revert_state()
        pending = ("SONiC revert running (systemd)" if reverting else
                   "SONiC revert timer (systemd)" if armed else "")
        saved = db_saved and frr_saved
        timer = "its revert running" if reverting else "armed" if armed else "off"
        detail = (f"CONFIG_DB and FRR are the {holds} ones, {SAVED_DB}"
                  f" {'equals' if db_saved else 'differs from'} CONFIG_DB, frr.conf"
                  f" {'is' if frr_saved else 'is not'} the running one, revert timer {timer}")
        return Readback(holds, saved, pending, detail)


    # --- drain (netgen/platforms/frr_drain.py: the prepend in FRR, which SONiC's own TSA cannot do on
    # netgen's route-map names; docs/developer/drain-sources.md) --------------------------------
    def drain_state(self) -> DrainReadback:
        running_conf, saved_conf = self._frr_running(), self._cat(FRR_PATH) or ""
        running, saved = frr_drain.drained_state(running_conf), frr_drain.drained_state(saved_conf)
        peers_running, peers_saved = frr_drain.drained_peers(running_conf), frr_drain.drained_peers(saved_conf)
        sessions = f"; sessions drained: {', '.join(sorted(peers_running | peers_saved))}" \
            if peers_running | peers_saved else ""
        return DrainReadback(running, saved, f"FRR running {drain_word(running)}, {FRR_PATH} {drain_word(saved)}"
                                             f" (AS-path prepend first in the outbound route-maps){sessions}",
                             peers_running, peers_saved)

    def _change_in_flight(self) -> str | None:
        """The revert script of a netgen change waiting for its confirm, if there is one: its revert
        puts back the frr.conf of before that change, which would undo a drain saved meanwhile."""
        rc, text = self.run(f"{self.sudo}sh -c 'ls /etc/sonic/netgen-*-revert.sh'", check=False)
        return text.split()[0] if rc == 0 and text.split() else None

    def _no_change_in_flight(self) -> None:
        in_flight = self._change_in_flight()
        if in_flight:
            raise DriverError(f"{self.name}: a netgen change waits for its confirm ({in_flight}): finish it first"
                              " (netgen recover), then drain")

    def _vtysh_then_keep(self, lines: list[str], keep: Callable[[str], str]) -> None:
        """vtysh's lines as a script over SCP (no byte of them passes through the login shell), then
        frr.conf, what the switch boots with, rewritten by `keep` (its owner and mode kept)."""
        script = f"/tmp/netgen-{self.change_id}-drain.sh"
        self.put_file(script, shlex.join(frr_drain.vtysh_argv(lines)) + "\n")
        self.run(f"{self.sudo}sh {script}; rc=$?; rm -f {script}; (exit $rc)")
        on_disk = self._cat(FRR_PATH)
        if on_disk is None:
            raise DriverError(f"{self.name}: {FRR_PATH} cannot be read: the drain runs, but a reboot would lose it")
        try:
            kept = keep(on_disk)
        except ValueError as exc:
            raise DriverError(f"{self.name}: {FRR_PATH}: {exc}: the drain runs, but a reboot would lose it") from None
        if kept != on_disk:
            staged = f"/tmp/netgen-{self.change_id}-frr.conf"
            self.put_file(staged, kept)
            self.run(f"{self.sudo}cp {staged} {FRR_PATH}; rc=$?; rm -f {staged}; (exit $rc)")

    def _change_sessions(self, peers: Sequence[str], drain: bool) -> None:
        wanted = frozenset(peers)
        state = self.drain_state()
        held_running, held_saved = state.peers_running & wanted, state.peers_saved & wanted
        if (held_running == held_saved == wanted) if drain else not (held_running | held_saved):
            return  # repeat-safe: already as asked, running and saved
        self._no_change_in_flight()
        running = self._frr_running()
        try:
            scope = frr_drain.link_scope_of_config(running, tuple(sorted(wanted)))
            lines = frr_drain.link_drain_commands(scope) if drain else frr_drain.link_undrain_commands(scope, running)
        except ValueError as exc:
            raise DriverError(f"{self.name}: FRR's running config: {exc}") from None
        self._vtysh_then_keep(lines, (lambda conf: frr_drain.with_link_drain(conf, scope)) if drain else
                              (lambda conf: frr_drain.without_link_drain(conf, wanted)))

    def drain_sessions(self, peers: Sequence[str]) -> None:
        self._change_sessions(peers, True)

    def undrain_sessions(self, peers: Sequence[str]) -> None:
        self._change_sessions(peers, False)

    def _change_drain(self, drain: bool) -> None:
        state = self.drain_state()
        if state.state is drain:
            return  # repeat-safe: already as asked, running and saved
        self._no_change_in_flight()
        running = self._frr_running()
        try:
            scope = frr_drain.scope_of_config(running)
            lines = frr_drain.drain_commands(scope) if drain else frr_drain.undrain_commands(scope)
        except ValueError as exc:
            raise DriverError(f"{self.name}: FRR's running config: {exc}") from None
        foreign = frr_drain.foreign_entries(running)
        if foreign:
            raise DriverError(f"{self.name}: route-map {foreign[0]} has an entry {frr_drain.DRAIN_SEQ} netgen did not"
                              " write: the drain would replace it (and the undrain remove it)")
        self._vtysh_then_keep(lines, (lambda conf: frr_drain.with_drain(conf, scope)) if drain else
                              (lambda conf: frr_drain.without_drain(conf, scope)))

    def drain(self) -> None:
        self._change_drain(True)

    def undrain(self) -> None:
        self._change_drain(False)

    def serial(self) -> str:
        """`show platform summary`: its `Serial Number: X` line (sonic-utilities show/platform.py,
        summary(): the chassis serial from STATE_DB or the platform API; "N/A" when unknown)."""
        _, text = self.run(f"{self.sudo}show platform summary")
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "Serial Number" and value.strip() not in ("", "N/A"):
                return value.strip()
        return ""

    def keep_drained(self, seen: DrainReadback) -> None:
        try:
            if seen.running is not False or seen.saved is not False:
                self.intended_frr = frr_drain.with_drain(self.intended_frr,
                                                         frr_drain.scope_of_config(self.intended_frr))
            if seen.peers:
                scope = frr_drain.link_scope_of_config(self.intended_frr, tuple(sorted(seen.peers)))
                self.intended_frr = frr_drain.with_link_drain(self.intended_frr, scope)
        except ValueError as exc:
            raise DriverError(f"{self.name}: the rendered frr.conf: {exc}") from None


def sonic_driver(conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
                 timeout: float, ownership: Ownership) -> SonicDriver:
    # root needs no sudo (lab endpoints log in as root; SONiC's admin is NOPASSWD in sudoers)
    return SonicDriver(conn, device, files, change_id, sudo=getattr(conn, "username", "") != "root",
                       command_timeout_s=timeout, ownership=ownership)
