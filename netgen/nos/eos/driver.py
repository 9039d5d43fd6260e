"""Arista EOS driver (netmiko `arista_eos`), with config sessions as EOS documents them
(https://arista.com/en/um-eos/eos-configure-session ):

  stage   : `configure session <id>`, `rollback clean-config`, the whole intended config line by
            line (so the session holds exactly the intent: a replace, not a merge), then
            `show session-config diffs`.
  commit  : `commit timer hh:mm:ss` inside the session: applied now, reverted by EOS itself when
            the timer runs out unconfirmed (a lost connection therefore rolls back on its own).
  confirm : `configure session <id> commit` from exec mode, then the save.
  save    : `copy running-config startup-config`.
  rollback: `configure session <id> abort`: the previous running config comes back at once.
  readback: `show running-config` and `show startup-config` (fingerprinted, comments dropped) and
            `show configuration sessions detail` (the session's state and the timer left).
Confirm and rollback look at the session first, so both are safe to repeat after a reconnect.

What the read-back relies on, as Arista documents it:
* After `commit timer`, a second commit of the session confirms it; a session not confirmed when
  its timer runs out is rolled back by EOS itself (EOS Central, "Config Session Commit Timer":
  https://eos.arista.com/author/7261-skommu/ ; the session-management commands:
  https://arista.com/en/um-eos/eos-session-management-commands ). So a session still pending with a
  timer is unconfirmed, and once the second commit is in, nothing is left to revert the change.
* A commit copies the session into running-config (https://arista.com/en/um-eos/eos-configure-session ),
  not into startup-config: a confirmed change is saved only when startup-config equals
  running-config, which is read back here, never assumed from the confirm.
* `show configuration sessions detail` lists each session's state and the time left on its commit
  timer (https://advertisingemergency.net/?p=112 ).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

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
from netgen.deploy.ownership import DEVICE_OWNED as DEVICE_OWNED_SECTION
from netgen.deploy.ownership import Ownership, OwnershipReport, Policy, first
from netgen.intent.secrets import redact
from netgen.nos.eos import drain as eos_drain
from netgen.topology.model import Device

ERROR_PATTERN = r"% ?(Invalid|Incomplete|Ambiguous|Error|Unrecognized)"
EXEC_PROMPT = r"[>#]\s*$"
# What netgen's templates render (one entry per top-level block kind of templates/eos/device.cfg.j2;
# tests/deploy/test_ownership.py checks every rendered block is covered): replaced by the intent,
# and what else a device has of these kinds is removed.
MANAGED = ("service routing protocols model", "load-balance policies", "hostname ", "spanning-tree mode", "qos ",
           "vlan ", "interface Ethernet", "interface Loopback", "interface Vlan", "interface Port-Channel",
           "ip routing", "no ip routing", "ipv6 unicast-routing", "priority-flow-control ", "ip prefix-list ",
           "ipv6 prefix-list ", "route-map ", "router bfd", "router bgp ")
# Blocks the device owns and netgen does not render (management interface and VRF, users, AAA,
# management APIs, NTP, logging, ...). A replace-style session (`rollback clean-config` + the intent)
# would delete them and lock the switch out, so they are carried over from the running config unless
# the intent renders a block with the same header.
DEVICE_OWNED = ("interface Management", "username ", "aaa ", "management ", "vrf instance ", "ip route vrf ",
                "ipv6 route vrf ", "ip routing vrf ", "ntp ", "logging ", "snmp-server ", "ip name-server ",
                "dns domain", "ip domain", "enable password", "enable secret", "banner ", "clock timezone",
                "tacacs-server ", "radius-server ", "ip host ", "ip ssh ", "daemon ", "event-handler ", "alias ")
# Rendered only when the intent declares them (intent services:); on a device whose config has one
# they are netgen's, elsewhere the lists above and below decide (the longest prefix is the section).
MANAGED_IF_RENDERED = ("lldp ", "logging vrf ", "ip name-server ", "dns domain", "sflow ", "vrf instance ",
                       "banner login", "management api gnmi", "interface Management", "ip route vrf ", "ntp ",
                       "tacacs-server host ", "ip tacacs vrf ", "radius-server host ", "ip radius vrf ",
                       "aaa authentication login ", "aaa authorization exec ",
                       "snmp-server view ", "snmp-server group ", "snmp-server user ", "snmp-server vrf ")
EOS_OWNERSHIP = Ownership(MANAGED, DEVICE_OWNED, managed_if_rendered=MANAGED_IF_RENDERED)
BANNERS = ("banner login", "banner motd")  # their text lines sit at column 0 up to a line `EOF`


def blocks(config: str) -> list[list[str]]:
    """Top-level blocks: a line at column 0 and the indented lines under it (comments dropped); a
    banner with its text and its `EOF` line."""
    result: list[list[str]] = []
    in_banner = False
    for line in config.splitlines():
        if in_banner:
            result[-1].append(line.rstrip("\r"))
            in_banner = line.strip() != "EOF"
            continue
        if not line.strip() or line.lstrip().startswith("!") or line.strip() == "end":
            continue
        if line[0] != " " or not result:
            result.append([line.rstrip()])
            in_banner = line.strip() in BANNERS
        else:
            result[-1].append(line.rstrip())
    return result


def identity(header: str) -> str:
    """What a top-level line configures, for lines EOS keeps one of per key: `username NAME` (its
    privilege, role and secret together), `username NAME ssh-key [secondary]`; any other line is
    its own identity. A running line with the identity of a rendered one is replaced by it, never
    typed in again after it (EOS keeps the last: the device's old password would win)."""
    words = header.split()
    if words[:1] == ["username"] and len(words) > 2:
        if words[2] == "ssh-key":
            return " ".join(words[:4] if words[3:4] == ["secondary"] else words[:3])
        return " ".join(words[:2])
    return header


def carried_over(running: str, intended: str, ownership: Ownership) -> tuple[list[str], OwnershipReport]:
    """The running config's lines a replace must type in again after the intent (device-owned
    blocks, unmanaged blocks whose policy is keep), and what happens to every other block."""
    rendered = {block[0] for block in blocks(intended)}
    rendered_ids = {identity(header) for header in rendered}
    carry: list[str] = []
    report = OwnershipReport()
    for block in blocks(running):
        header = block[0]
        if header in rendered or identity(header) in rendered_ids:
            continue  # the intent's block replaces it
        kind = ownership.classify(header, rendered)
        if kind == DEVICE_OWNED_SECTION:
            carry += block
            report.kept_device_owned.append(redact(header))
        elif kind == Policy.KEEP:
            carry += block
            report.kept_unmanaged += [redact(line) for line in block]
        elif kind == Policy.REMOVE:
            report.removed_unmanaged += [redact(line) for line in block]
        elif kind == Policy.REFUSE:
            report.refused += [redact(line) for line in block]
    return carry, report


def config_digest(text: str) -> str:
    """The fingerprint of a config as EOS shows it: comment lines (`! Command:`, `! device:`, ...),
    blank lines and `end` dropped, so only configuration counts."""
    return digest("\n".join(line.rstrip() for line in text.splitlines()
                            if line.strip() and not line.lstrip().startswith("!") and line.strip() != "end"))


def _timer(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def config_lines(text: str) -> list[str]:
    """The lines to type into a session: no comments, no blank lines, no `end` (it would leave the
    session), indentation kept so sub-modes nest as in the file; banner text as it is."""
    return [line for block in blocks(text) for line in block]


class EosDriver:
    nos: ClassVar[str] = "eos"

    def __init__(self, conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
                 command_timeout_s: float = 120.0, ownership: Ownership = EOS_OWNERSHIP) -> None:
        self.conn = conn
        self.device = device
        self.name = device.name
        self.ownership = ownership
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
        return json_object(self.name, f"`{command} | json`", self.show(f"{command} | json"))

    # --- read ---------------------------------------------------------------------------------
    def new_round(self) -> None:
        """Nothing is kept between reads on EOS."""

    def facts(self) -> Facts:
        version = self.show_json("show version")
        hostname = self.show_json("show hostname").get("hostname", "")
        return Facts(hostname=str(hostname), model=str(version.get("modelName", "")), nos="eos",
                     version=str(version.get("version", "")))

    def bgp_peers(self) -> dict[str, str]:
        peers: dict[str, str] = {}
        for command in ("show ip bgp summary", "show ipv6 bgp summary"):
            if "BGP inactive" in self.show(f"{command} | json"):  # no `router bgp` yet: no peers
                continue
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

    def route_widths(self) -> dict[str, int]:
        widths: dict[str, int] = {}
        for command in ("show ip route", "show ipv6 route"):
            routes = self.show_json(command).get("vrfs", {}).get("default", {}).get("routes", {})
            for prefix, info in routes.items():
                if "bgp" in str(info.get("routeType", "")).lower():
                    widths[prefix] = len(info.get("vias", []))
        return widths

    def lldp_neighbors(self) -> dict[str, list[tuple[str, str]]]:
        """`show lldp neighbors detail | json`: lldpNeighbors -> interface -> lldpNeighborInfo[],
        each with systemName and neighborInterfaceInfo.interfaceId_v2 (older releases: only
        interfaceId, the ID in double quotes). Shape: Arista's ANTA VerifyLLDPNeighbors test data."""
        data = self.show_json("show lldp neighbors detail").get("lldpNeighbors", {})
        heard: dict[str, list[tuple[str, str]]] = {}
        for intf, info in data.items():
            for neighbor in info.get("lldpNeighborInfo", []) if isinstance(info, dict) else []:
                port = neighbor.get("neighborInterfaceInfo", {})
                port_id = port.get("interfaceId_v2") or str(port.get("interfaceId", "")).strip('"')
                heard.setdefault(intf, []).append((str(neighbor.get("systemName", "")), str(port_id)))
        return heard

    def config_diff(self) -> str:
        """A throw-away second session (the change's own may be waiting for confirmation)."""
        session, staged_before = self.session, self._staged
        self.session = f"{session}-v"
        try:
            text = self.stage().text
            self.discard()
        finally:
            self.session, self._staged = session, staged_before
        return text

    # --- change -------------------------------------------------------------------------------
    def stage(self) -> StagedChange:
        running = self.show("show running-config")
        owned, ownership = carried_over(running, self.intended, self.ownership)
        if ownership.refused:
            raise DriverError(f"{self.name}: not changed: the running config has {len(ownership.refused)} line(s)"
                              f" in sections whose ownership policy is refuse: {first(ownership.refused)}. Render them,"
                              " mark them device-owned, or give them the policy keep or remove (deploy.yaml"
                              " ownership.eos), or pass --remove-unmanaged")
        lines = ["rollback clean-config", *config_lines(self.intended), *owned]
        # Pasted in one write, not typed and verified line by line: netmiko waits on each line's
        # echo, too slow for 2,000-line spines (docs/developer/benchmarks.md, Deploy). EOS prints an
        # error for every refused line; both outputs below are scanned for them.
        output = str(self.conn.config_mode(config_command=f"configure session {self.session}"))
        self.conn.write_channel("".join(f"{line}\n" for line in lines))
        # a big config takes the switch a while: allow the command timeout plus 50 ms a line
        output += str(self.conn.read_channel_timing(last_read=0.5, read_timeout=self.timeout + 0.05 * len(lines)))
        diff = str(self.conn.send_command("show session-config diffs", expect_string=r"\)#\s*$",
                                          read_timeout=self.timeout))
        refused = [line for line in (output + "\n" + diff).splitlines() if re.search(ERROR_PATTERN, line)]
        if refused:
            self._abort_quietly()
            raise DriverError(f"{self.name}: EOS refused the intended config ({len(refused)} error(s)): "
                              + redact("; ".join(refused[:3]))[:400])
        diff = redact(diff)
        changed = sum(1 for line in diff.splitlines()
                      if line[:1] in "+-" and not line.startswith(("+++", "---")))
        ownership.would_remove = [line[1:].rstrip() for line in diff.splitlines()  # `!` separators are not config
                                  if line.startswith("-") and not line.startswith("---") and line[1:].strip() != "!"]
        self._staged = StagedChange(diff, changed, {"session": self.session, "kept_device_lines": len(owned),
                                                    "ownership": ownership.as_dict(),
                                                    "before": config_digest(running)})
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

    def session_state(self) -> tuple[str, float | None]:
        """This change's session as EOS lists it: (state, seconds left on its commit timer);
        state "" when the session is gone (aborted, or rolled back when its timer ran out)."""
        sessions = self.show_json("show configuration sessions detail").get("sessions", {})
        mine = sessions.get(self.session) or {}
        left = mine.get("timeRemaining")
        return str(mine.get("state", "")), float(left) if isinstance(left, (int, float)) else None

    def confirm(self) -> None:
        state, _ = self.session_state()
        if state == "pendingCommitTimer":  # the second commit: EOS's confirm (module docstring)
            self.show(f"configure session {self.session} commit")
        self.save()

    def save(self) -> None:
        self.show("copy running-config startup-config")

    def rollback(self) -> None:
        state, _ = self.session_state()
        if state == "completed":
            raise DriverError(f"{self.name}: session {self.session} was already confirmed: there is no commit"
                              " timer left to roll back")
        if state:
            self.show(f"configure session {self.session} abort")

    def running_digest(self) -> str:
        return config_digest(self.show("show running-config"))

    def readback(self, before: str, after: str | None) -> Readback:
        running = self.running_digest()
        holds = HOLDS_NEW if running == after else HOLDS_OLD if running == before else HOLDS_OTHER
        saved = config_digest(self.show("show startup-config")) == running
        state, left = self.session_state()
        pending = ""
        if state == "pendingCommitTimer":  # unconfirmed: EOS rolls it back when the timer runs out
            pending = "EOS commit timer" + (f", {left:.0f} s left" if left is not None else "")
        detail = (f"running-config is the {holds} one, startup-config {'equals' if saved else 'differs from'} it,"
                  f" session {self.session}: {state or 'gone'}")
        return Readback(holds, saved, pending, detail)


    # --- drain (netgen/nos/eos/drain.py) ------------------------------------------------------
    def drain_state(self) -> DrainReadback:
        running_conf, saved_conf = self.show("show running-config"), self.show("show startup-config")
        running, saved = eos_drain.drain_state(running_conf), eos_drain.drain_state(saved_conf)
        peers_running, peers_saved = eos_drain.drained_peers(running_conf), eos_drain.drained_peers(saved_conf)
        sessions = f"; sessions drained: {', '.join(sorted(peers_running | peers_saved))}" \
            if peers_running | peers_saved else ""
        return DrainReadback(running, saved, f"running-config {drain_word(running)}, startup-config"
                                             f" {drain_word(saved)} (AS-path prepend in the outbound route-maps)"
                                             f"{sessions}", peers_running, peers_saved)

    def _drain_scope(self, running: str) -> eos_drain.EosDrainScope:
        scope = eos_drain.scope_of(running)
        if scope is None:
            raise DriverError(f"{self.name}: no `router bgp` with an outbound route-map to drain through")
        return scope

    def _before_drain_change(self) -> tuple[str, bool]:
        """The running config, once nothing else is in the way of a drain and its save: no change
        waiting for its confirm (its revert would take the drain too), and nothing unsaved but
        netgen's own drain (the save that keeps the drain across a reboot would keep that too). And
        whether it is unsaved: a drain (or an undrain) committed and not saved, because the run was
        killed, its answer lost or its save refused, is finished by the next one."""
        sessions = self.show_json("show configuration sessions detail").get("sessions", {})
        pending = [name for name, info in sessions.items()
                   if isinstance(info, dict) and info.get("state") == "pendingCommitTimer"]
        if pending:
            raise DriverError(f"{self.name}: session {pending[0]} waits for its confirm: finish that change first"
                              " (netgen recover), then drain")
        running, startup = self.show("show running-config"), self.show("show startup-config")
        if config_digest(running) == config_digest(startup):
            return running, False
        if not _only_the_drain_differs(running, startup):
            raise DriverError(f"{self.name}: running-config differs from startup-config by more than netgen's drain:"
                              " netgen will not save a change it did not make along with the drain; save or revert"
                              " it first")
        return running, True

    def _abort_abandoned(self) -> None:
        """Abort each drain session a dead run left uncommitted (killed while typing its lines):
        nothing of it runs, and no live run of netgen types into it (the change lock holds this
        switch). Done by every drain and undrain, even one with nothing left to change, so an
        interrupted run leaves nothing behind once it is rerun or recovered."""
        sessions = self.show_json("show configuration sessions detail").get("sessions", {})
        for name, info in sessions.items():
            if isinstance(info, dict) and info.get("state") == "pending" and _ABANDONED_DRAIN.fullmatch(name):
                self.show(f"configure session {name} abort")

    def _apply_drain(self, lines: list[str]) -> None:
        """`lines` in a config session of their own, committed at once, then saved."""
        # a session of its own each time: a rerun or `netgen recover` of the same change (same id)
        # after a run died past its commit would find that session completed, and EOS does not
        # let a completed session be entered again
        session = f"{self.session}-drain-{secrets.token_hex(2)}"
        output = str(self.conn.config_mode(config_command=f"configure session {session}"))
        self.conn.write_channel("".join(f"{line}\n" for line in lines))
        output += str(self.conn.read_channel_timing(last_read=0.5, read_timeout=self.timeout))
        refused = [line for line in output.splitlines() if re.search(ERROR_PATTERN, line)]
        if refused:
            self._abort_quietly()
            raise DriverError(f"{self.name}: EOS refused the drain: {'; '.join(refused[:3])[:300]}")
        output = str(self.conn.send_command("commit", expect_string=EXEC_PROMPT, read_timeout=self.timeout))
        if re.search(ERROR_PATTERN, output):
            raise DriverError(f"{self.name}: the drain's commit was refused: {output.strip()[:300]}")
        self.save()

    def _change_drain(self, drain: bool) -> None:
        self._abort_abandoned()
        state = self.drain_state()
        if state.state is drain:
            return  # repeat-safe: already as asked, running and saved
        running, unsaved = self._before_drain_change()
        scope = self._drain_scope(running)
        foreign = [f"{name} {seq}: {prepend}" for name, seq, prepend in scope.entries
                   if prepend and prepend != scope.drain_line]
        if foreign:
            raise DriverError(f"{self.name}: route-map {foreign[0]}: a prepend netgen did not set; the drain would"
                              " replace it (and the undrain remove it)")
        lines = eos_drain.drain_lines(scope) if drain else eos_drain.undrain_lines(scope)
        if eos_drain.drain_state(running) is drain:
            lines = []  # running is as asked already: only its save is missing
        if lines:
            self._apply_drain(lines)
        elif unsaved:
            self.save()

    def _change_sessions(self, peers: Sequence[str], drain: bool) -> None:
        wanted = tuple(sorted(set(peers)))
        self._abort_abandoned()
        state = self.drain_state()
        held_running, held_saved = state.peers_running & set(wanted), state.peers_saved & set(wanted)
        if (held_running == held_saved == set(wanted)) if drain else not (held_running | held_saved):
            return  # repeat-safe: already as asked, running and saved
        running, unsaved = self._before_drain_change()
        as_asked = (held_running == set(wanted)) if drain else not held_running
        try:
            lines = [] if as_asked else eos_drain.session_drain_lines(running, wanted) if drain else \
                eos_drain.session_undrain_lines(running, wanted)
        except ValueError as exc:
            raise DriverError(f"{self.name}: {exc}") from None
        if lines:
            self._apply_drain(lines)
        elif unsaved:  # running is as asked already (an earlier run's save never happened): save it
            self.save()

    def drain_sessions(self, peers: Sequence[str]) -> None:
        self._change_sessions(peers, True)

    def undrain_sessions(self, peers: Sequence[str]) -> None:
        self._change_sessions(peers, False)

    def drain(self) -> None:
        self._change_drain(True)

    def undrain(self) -> None:
        self._change_drain(False)

    def serial(self) -> str:
        """`show version | json` serialNumber (its shape: Arista's ANTA unit-test data for show version)."""
        return str(self.show_json("show version").get("serialNumber", ""))

    def keep_drained(self, seen: DrainReadback) -> None:
        if seen.running is not False or seen.saved is not False:
            scope = eos_drain.scope_of(self.intended)
            if scope is None:
                raise DriverError(f"{self.name}: the rendered config has no outbound route-map to keep the drain in")
            self.intended = eos_drain.with_drain(self.intended, scope)
        if seen.peers:
            try:
                self.intended = eos_drain.with_session_drain(self.intended, tuple(sorted(seen.peers)))
            except ValueError as exc:
                raise DriverError(f"{self.name}: the rendered config: {exc}") from None


_ABANDONED_DRAIN = re.compile(r"netgen-[a-z0-9-]{1,32}-drain-[0-9a-f]{4}")  # _apply_drain's session names


def _only_the_drain_differs(running: str, startup: str) -> bool:
    """Whether running and startup config differ by netgen's drains alone (a switch drain, link
    drains or both): equal once netgen's link drains are taken out of both (exact copies only), and
    then either equal or differing by the switch drain alone: the same outbound map entries, no
    prepend but the drain's in either, and equal once both carry the drain."""
    running, startup = eos_drain.without_session_drains(running), eos_drain.without_session_drains(startup)
    if config_digest(running) == config_digest(startup):
        return True
    scope, saved = eos_drain.scope_of(running), eos_drain.scope_of(startup)
    if scope is None or saved is None or saved.asn != scope.asn:
        return False
    if {(n, q) for n, q, _ in scope.entries} != {(n, q) for n, q, _ in saved.entries}:
        return False
    if any(prepend and prepend != scope.drain_line for *_, prepend in (*scope.entries, *saved.entries)):
        return False
    return config_digest(eos_drain.with_drain(running, scope)) == config_digest(eos_drain.with_drain(startup, scope))


def eos_driver(conn: Connection, device: Device, files: Mapping[str, str], change_id: str,
               timeout: float, ownership: Ownership) -> EosDriver:
    return EosDriver(conn, device, files, change_id, command_timeout_s=timeout, ownership=ownership)
