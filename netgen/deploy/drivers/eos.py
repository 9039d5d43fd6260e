"""Arista EOS driver (netmiko `arista_eos`), with config sessions as EOS documents them
(eos.md section 5.7):

  stage   : `configure session <id>`, `rollback clean-config`, the whole intended config line by
            line (so the session holds exactly the intent: a replace, not a merge), then
            `show session-config diffs`.
  commit  : `commit timer hh:mm:ss` inside the session: applied now, reverted by EOS itself when
            the timer runs out unconfirmed (a lost connection therefore rolls back on its own).
  confirm : `configure session <id> commit` from exec mode, then `copy running-config startup-config`.
  rollback: `configure session <id> abort`: the previous running config comes back at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from netgen.deploy.checks import Facts
from netgen.deploy.drivers.base import Connection, DriverError, StagedChange, check_change_id, register
from netgen.topology.model import Device

ERROR_PATTERN = r"% ?(Invalid|Incomplete|Ambiguous|Error|Unrecognized)"
EXEC_PROMPT = r"[>#]\s*$"


def _timer(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def config_lines(text: str) -> list[str]:
    """The lines to type into a session: no comments, no blank lines, no `end` (it would leave the
    session), indentation kept so sub-modes nest as in the file."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        lines.append(line.rstrip())
    return lines


class EosDriver:
    nos: ClassVar[str] = "eos"

    def __init__(self, conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
                 command_timeout_s: float = 120.0) -> None:
        self.conn = conn
        self.device = device
        self.name = device.name
        self.intended = files[f"{device.name}.cfg"]
        self.session = f"netgen-{check_change_id(change_id)}"
        self.timeout = command_timeout_s
        self._staged: StagedChange | None = None
        conn.enable()

    # --- plumbing -----------------------------------------------------------------------------
    def show(self, command: str) -> str:
        output = str(self.conn.send_command(command, read_timeout=self.timeout))
        if re.search(ERROR_PATTERN, output):
            raise DriverError(f"{self.name}: `{command}` was refused: {output.strip()[:300]}")
        return output

    def show_json(self, command: str) -> dict[str, Any]:
        text = self.show(f"{command} | json")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise DriverError(f"{self.name}: `{command} | json` did not return JSON: {text[:200]!r}") from None
        if not isinstance(data, dict):
            raise DriverError(f"{self.name}: `{command} | json` is not an object")
        return data

    # --- read ---------------------------------------------------------------------------------
    def facts(self) -> Facts:
        version = self.show_json("show version")
        hostname = self.show_json("show hostname").get("hostname", "")
        return Facts(hostname=str(hostname), model=str(version.get("modelName", "")), nos="eos",
                     version=str(version.get("version", "")))

    def bgp_peers(self) -> dict[str, str]:
        peers: dict[str, str] = {}
        for command in ("show ip bgp summary", "show ipv6 bgp summary"):
            vrf = self.show_json(command).get("vrfs", {}).get("default", {})
            for address, info in vrf.get("peers", {}).items():
                peers[address] = str(info.get("peerState", "?"))
        return peers

    def pfc_priorities(self) -> dict[str, set[int]]:
        """What the running config enables: `priority-flow-control priority N no-drop` in a QoS
        profile, applied to an interface with `service-profile` (EOS shows no per-priority PFC
        status in JSON that this driver could rely on)."""
        profiles: dict[str, set[int]] = {}
        interfaces: dict[str, str] = {}
        section: tuple[str, str] | None = None
        for line in self.show("show running-config").splitlines():
            if not line.startswith(" "):
                words = line.split()
                section = (words[0], words[-1]) if len(words) >= 2 and words[0] in ("qos", "interface") else None
                if section and words[:2] == ["qos", "profile"]:
                    profiles.setdefault(words[2], set())
                continue
            words = line.split()
            if section is None:
                continue
            kind, name = section
            if kind == "qos" and words[:2] == ["priority-flow-control", "priority"] and words[-1] == "no-drop":
                profiles.setdefault(name, set()).add(int(words[2]))
            elif kind == "interface" and words[:1] == ["service-profile"]:
                interfaces[name] = words[1]
        return {intf: set(profiles.get(profile, set())) for intf, profile in interfaces.items()}

    def pfc_storms(self) -> list[str]:
        data = self.show_json("show priority-flow-control counters watchdog")
        storms = []
        for intf, counters in data.get("interfaces", data.get("interfaceCounters", {})).items():
            flat = json.dumps(counters).lower()
            if '"stormdetected": true' in flat or '"storm": true' in flat:
                storms.append(intf)
        return storms

    def interface_errors(self) -> dict[str, int]:
        data = self.show_json("show interfaces counters errors").get("interfaceErrorCounters", {})
        return {intf: sum(int(v) for v in counters.values() if isinstance(v, int)) for intf, counters in data.items()}

    def config_diff(self) -> str:
        staged = self.stage()
        self.discard()
        return staged.text

    # --- change -------------------------------------------------------------------------------
    def stage(self) -> StagedChange:
        lines = ["rollback clean-config", *config_lines(self.intended)]
        try:
            self.conn.send_config_set(lines, config_mode_command=f"configure session {self.session}",
                                      exit_config_mode=False, error_pattern=ERROR_PATTERN,
                                      read_timeout=self.timeout)
        except Exception as exc:  # netmiko ConfigInvalidException and friends: say which line
            self._abort_quietly()
            raise DriverError(f"{self.name}: EOS refused the intended config: {str(exc)[:400]}") from None
        diff = str(self.conn.send_command("show session-config diffs", expect_string=r"\)#\s*$",
                                          read_timeout=self.timeout))
        changed = sum(1 for line in diff.splitlines()
                      if line[:1] in "+-" and not line.startswith(("+++", "---")))
        self._staged = StagedChange(diff, changed, {"session": self.session})
        return self._staged

    def _abort_quietly(self) -> None:
        try:
            self.conn.send_command("abort", expect_string=EXEC_PROMPT, read_timeout=self.timeout)
        except Exception:  # the session may already be gone; EOS drops it after 24 h anyway
            return

    def discard(self) -> None:
        self._abort_quietly()
        self._staged = None

    def commit(self, confirm_timeout_s: int) -> None:
        output = str(self.conn.send_command(f"commit timer {_timer(confirm_timeout_s)}", expect_string=EXEC_PROMPT,
                                            read_timeout=self.timeout))
        if re.search(ERROR_PATTERN, output):
            raise DriverError(f"{self.name}: commit refused: {output.strip()[:300]}")

    def confirm(self) -> None:
        self.show(f"configure session {self.session} commit")
        self.show("copy running-config startup-config")

    def rollback(self) -> None:
        self.show(f"configure session {self.session} abort")


@register("eos")
def eos_driver(conn: Connection, device: Device, files: Mapping[str, str], change_id: str) -> EosDriver:
    return EosDriver(conn, device, files, change_id)
