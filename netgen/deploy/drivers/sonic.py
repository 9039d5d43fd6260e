"""SONiC driver (netmiko `linux`: SONiC logs in to bash; sonic.md section 7).

Change flow, as SONiC's generic config updater documents it (sonic.md section 5):
  stage   : read the running CONFIG_DB (`show runningconfiguration all`), overlay the device-owned
            keys, compute the RFC 6902 patch; diff the running frr.conf against the intended one.
  commit  : `config checkpoint <id>`, then `config apply-patch` of the patch (GCU validates the
            result against YANG and rejects it whole), then the new frr.conf at
            /etc/sonic/frr/frr.conf (split-unified mode reads it) loaded with `frr-reload.py`.
  confirm : `config save -y`, delete the checkpoint.
  rollback: `config rollback <id>` and the previous frr.conf reloaded.
SONiC has no commit timer: if the connection drops after commit, the device stays on the new
config and the report says it was not confirmed.

Files travel over SCP, so no rendered byte is ever interpreted by the shell.
"""

from __future__ import annotations

import copy
import difflib
import json
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, cast

from netmiko import file_transfer

from netgen.deploy.checks import Facts
from netgen.deploy.drivers.base import (
    Connection,
    DriverError,
    StagedChange,
    check_change_id,
    json_object,
    register,
)
from netgen.diff.config_db import json_patch, overlay_device_owned, semantic_diff
from netgen.topology.model import Device

FRR_PATH = "/etc/sonic/frr/frr.conf"  # the bgp container sees it as /etc/frr/frr.conf
FRR_RELOAD = "docker exec bgp /usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
RC_MARK = "__NETGEN_RC="
# Commands that only read (everything else drops the cached running CONFIG_DB).
READ_ONLY = ("show ", "vtysh -c 'show ", "cat ", "pfcwd show ", "pfc show ")


class SonicDriver:
    nos: ClassVar[str] = "sonic"

    def __init__(self, conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
                 sudo: bool = True, command_timeout_s: float = 120.0) -> None:
        self.conn = conn
        self.device = device
        self.name = device.name
        self.intended_db: dict[str, Any] = json.loads(files["config_db.json"])
        self.intended_frr = files["frr.conf"]
        self.change_id = check_change_id(change_id)
        self.sudo = "sudo -n " if sudo else ""
        self.timeout = command_timeout_s
        self._staged: StagedChange | None = None
        self._old_frr: str | None = None
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

    def running_frr(self) -> str:
        rc, text = self.run(f"{self.sudo}cat {FRR_PATH}", check=False)
        return text + "\n" if rc == 0 and text else ""

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

    def config_diff(self) -> str:
        return self._compute()[0].text  # read-only: the staged change (and its way back) stays as it is

    def stage(self) -> StagedChange:
        self._staged, self._old_frr = self._compute()
        return self._staged

    def _compute(self) -> tuple[StagedChange, str]:
        running = self.running_config_db()
        target = overlay_device_owned(self.intended_db, running)
        patch = json_patch(running, target)
        fields = semantic_diff(running, target)
        old_frr = self.running_frr()
        frr_diff = "".join(difflib.unified_diff(old_frr.splitlines(True), self.intended_frr.splitlines(True),
                                                f"{self.name}:{FRR_PATH} (running)", "frr.conf (intended)"))
        frr_lines = sum(1 for line in frr_diff.splitlines()
                        if line[:1] in "+-" and not line.startswith(("+++", "---")))
        text = "".join(f"{c.render()}\n" for c in fields) + frr_diff
        staged = StagedChange(text, len(fields) + frr_lines,
                              {"patch": patch, "frr_diff": frr_diff, "config_db_changes": len(fields),
                               "frr_lines": frr_lines})
        return staged, old_frr

    def discard(self) -> None:
        self._staged = None

    def _checkpoint(self) -> str:
        return f"netgen-{self.change_id}"

    def commit(self, confirm_timeout_s: int) -> None:
        staged = self._staged or self.stage()
        self.run(f"{self.sudo}config checkpoint {self._checkpoint()}")
        patch_file = f"/tmp/netgen-{self.change_id}-patch.json"
        if staged.detail["patch"]:
            self.put_file(patch_file, json.dumps(staged.detail["patch"], indent=1))
            self.run(f"{self.sudo}config apply-patch {patch_file}")
        if staged.detail["frr_lines"]:
            self.run(f"{self.sudo}cp -p {FRR_PATH} {FRR_PATH}.netgen-{self.change_id}", check=False)
            self.put_file(FRR_PATH, self.intended_frr)
            self.run(f"{self.sudo}{FRR_RELOAD}")

    def confirm(self) -> None:
        self.run(f"{self.sudo}config save -y")
        self.run(f"{self.sudo}config delete-checkpoint {self._checkpoint()}", check=False)
        self.run(f"{self.sudo}rm -f {FRR_PATH}.netgen-{self.change_id} /tmp/netgen-{self.change_id}-patch.json",
                 check=False)

    def rollback(self) -> None:
        self.run(f"{self.sudo}config rollback {self._checkpoint()}")
        if self._old_frr is not None and self._staged is not None and self._staged.detail["frr_lines"]:
            self.put_file(FRR_PATH, self._old_frr)
            self.run(f"{self.sudo}{FRR_RELOAD}")
        self.run(f"{self.sudo}config delete-checkpoint {self._checkpoint()}", check=False)


@register("sonic")
def sonic_driver(conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
                 timeout: float) -> SonicDriver:
    # root needs no sudo (lab endpoints log in as root; SONiC's admin is NOPASSWD in sudoers)
    return SonicDriver(conn, device, files, change_id, sudo=getattr(conn, "username", "") != "root",
                       command_timeout_s=timeout)
