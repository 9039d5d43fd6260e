"""`netgen drain TARGET` / `netgen undrain TARGET`: take switches out of service gracefully and put
them back, with the capacity guard before anything moves and the scheduler told first.

    resolve    the switches and links TARGET names (day2/targets.py); a link is drained at both ends,
               on the BGP sessions it carries only (Driver.drain_sessions)
    read       the drain state of every switch the guard needs, from the switches themselves: the
               targets and, when a spine is among them, every CTSW of their zones and every ATSW
               (read_set; an undrain, never refused, reads its targets only). A switch that cannot
               be read, or reads back partly drained, counts as drained: the guard never assumes
               capacity it could not see.
    guard      day2/capacity.py against the fabric file's `maintenance:` bounds; a change that
               breaks one is refused (exit 1, the rule named) unless --force gives a reason
    scheduler  drain: the Slurm nodes under the RTSW targets are drained (scontrol) and waited on
               until no job runs on them; undrain: resumed after the switches read back undrained
    change     each target's NOS driver drains (or undrains) it and reads it back (Driver.drain,
               drain_state): running and saved config alike; each end of a target link its sessions
               over that link (Driver.drain_sessions)
    journal    every step, before it is taken, in `drain/<change id>.jsonl` of netgen's state
               directory (the operator's reason and a --force reason with it)

Repeat-safe at every step: a switch already as asked is left as it is (and said so), a node netgen
drained already stays drained. An interrupted run is finished by running the same command again;
the journal says how far it got. What is reported is what was read back, never what was sent.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nornir.core.task import Result, Task

from netgen.context import DesignContext
from netgen.day2.capacity import CapacityReport, assess
from netgen.day2.targets import DrainSet, TargetError, resolve
from netgen.deploy.connect import connect_driver, disconnect, nornir_for
from netgen.deploy.driver import DrainReadback, drain_word
from netgen.deploy.journal import Journal, state_dir
from netgen.deploy.lock import change_lock, record_drained, record_undrained
from netgen.deploy.options import DeployOptions
from netgen.deploy.target import DeployTarget, prepare_target
from netgen.lock.change_lock import ChangeLock
from netgen.lock.lease import LockError
from netgen.scheduler import drain as slurm_drain
from netgen.topology.model import Device, Role, Topology

DEFAULT_JOB_WAIT_S = 3600.0  # how long a drain waits for the jobs on an RTSW's hosts to end
# A link drain's actions start so ("sessions drained", ...): the journal never takes them for a switch's
SESSIONS = "sessions "


class DrainError(Exception):
    """A drain that cannot be asked as given (a target that names nothing, a reason Slurm would not
    keep): exit 2, the message says what to change."""


@dataclass(frozen=True)
class DrainRequest:
    targets: tuple[str, ...]
    undrain: bool = False
    why: str = ""  # the operator's reason: journal, Slurm's node reason
    force: str | None = None  # the reason to go on although a maintenance bound breaks
    dry_run: bool = False  # read and judge only: nothing changes anywhere
    slurm: bool = False  # drain (resume) the RTSW targets' hosts in Slurm
    scontrol: slurm_drain.Scontrol = field(default_factory=slurm_drain.Scontrol)
    job_wait_s: float = DEFAULT_JOB_WAIT_S
    change_id: str = ""  # "" : drain-<time>-<random>
    journal: Path | None = None  # default: <state dir>/drain/<change id>.jsonl
    recovering: bool = False  # `netgen recover` of change_id's journal (day2/recover.py)


@dataclass
class SwitchResult:
    """One target switch: what it was read back as before and after, and what netgen did."""

    device: str
    nos: str
    action: str = "not reached"  # drained | undrained | already drained | already undrained | failed | not reached
    before: DrainReadback | None = None
    after: DrainReadback | None = None
    error: str = ""

    sessions: tuple[str, ...] = ()  # a link drain's: the peers of this switch's sessions over the links

    @property
    def ok(self) -> bool:
        return self.action.removeprefix(SESSIONS).startswith(("drained", "undrained", "already"))

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "nos": self.nos, "action": self.action, "ok": self.ok,
                "sessions": list(self.sessions),
                "before": self.before.as_dict() if self.before else None,
                "after": self.after.as_dict() if self.after else None, "error": self.error}


@dataclass
class DrainReport:
    request: DrainRequest
    change_id: str
    targets: DrainSet
    read: dict[str, DrainReadback] = field(default_factory=dict)  # the guard's view, read from each switch
    unreadable: dict[str, str] = field(default_factory=dict)  # switch -> why it could not be read
    capacity: CapacityReport | None = None
    refused: bool = False  # the guard refused and no --force was given
    switches: list[SwitchResult] = field(default_factory=list)
    nodes: list[slurm_drain.NodeResult] = field(default_factory=list)
    nodes_busy: list[str] = field(default_factory=list)  # nodes still running jobs when the wait ended
    journal: Path | None = None
    lock: dict[str, Any] | None = None  # the store and the scopes this change held

    @property
    def ok(self) -> bool:
        if self.request.dry_run:
            return not self.refused
        return not self.refused and not self.nodes_busy and all(s.ok for s in self.switches)

    def as_dict(self) -> dict[str, Any]:
        return {"change_id": self.change_id, "undrain": self.request.undrain, "dry_run": self.request.dry_run,
                "targets": self.targets.as_dict(), "why": self.request.why, "forced": self.request.force,
                "refused": self.refused, "recovering": self.request.recovering,
                "read": {name: seen.as_dict() for name, seen in sorted(self.read.items())},
                "unreadable": dict(sorted(self.unreadable.items())),
                "capacity": self.capacity.as_dict() if self.capacity else None,
                "switches": [s.as_dict() for s in self.switches],
                "scheduler": {"slurm": self.request.slurm, "nodes": [n.as_dict() for n in self.nodes],
                              "still_running_jobs": self.nodes_busy},
                "journal": str(self.journal) if self.journal else None, "lock": self.lock}


def new_change_id() -> str:
    return f"drain-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"


DRAINED_ACTIONS = frozenset({"drained", "already drained"})
UNDRAINED_ACTIONS = frozenset({"undrained", "already undrained"})


def read_set(topology: Topology, targets: DrainSet, undrain: bool = False) -> list[str]:
    """The switches whose drain state the guard reads, in topology order: the targets and, when a
    spine (a CTSW or an ATSW) is among them, every CTSW of the zones they are in and every ATSW.
    A rack switch's drain moves no bound but its own (its rack's demand leaves with its uplinks:
    capacity._zone_spine), so an RTSW drain reads only its targets; an undrain is never refused, so
    it reads only its targets too."""
    devices = topology.devices
    ends = {end.device for link in topology.links if link.key in targets.links for end in (link.lower, link.upper)}
    if undrain:
        return [name for name in devices if name in targets.devices | ends]
    wanted = set(targets.devices) | ends
    if any(devices[name].role in (Role.CTSW, Role.ATSW) for name in targets.devices | ends):
        zones = {devices[name].zone for name in targets.devices | ends}
        wanted |= {name for name, device in devices.items()
                   if (device.role is Role.CTSW and device.zone in zones) or device.role is Role.ATSW}
    return [name for name in devices if name in wanted]


def resolve_targets(ctx: DesignContext, targets: tuple[str, ...]) -> DrainSet:
    """The switches and links the targets name; DrainError for a target that names nothing
    (TargetError's message, with the closest names)."""
    try:
        return resolve(ctx.topology, targets)
    except TargetError as exc:
        raise DrainError(str(exc)) from None


def session_peers(topology: Topology, links: frozenset[str]) -> dict[str, dict[str, str]]:
    """switch -> {peer address of one of its sessions over `links` -> the link's key}: each end of a
    link drains the sessions to the other end (IPv4 and IPv6, as the link carries them)."""
    peers: dict[str, dict[str, str]] = {}
    for link in topology.links:
        if link.key not in links:
            continue
        for end, other in ((link.lower, link.upper), (link.upper, link.lower)):
            addresses = [other.ipv4.ip, *([other.ipv6.ip] if other.ipv6 is not None and end.ipv6 is not None else [])]
            for address in addresses:
                peers.setdefault(end.device, {})[str(address)] = link.key
    return peers


def _links_out(topology: Topology, read: dict[str, DrainReadback]) -> frozenset[str]:
    """The links whose sessions either end reads back drained (running or saved)."""
    out = set()
    every = frozenset(link.key for link in topology.links)
    for device, by_peer in session_peers(topology, every).items():
        seen = read.get(device)
        if seen is not None:
            out |= {key for peer, key in by_peer.items() if peer in seen.peers}
    return frozenset(out)


ReadHook = Callable[[str], None]


def _read_states(target: DeployTarget, names: list[str], options: DeployOptions, workers: int | None,
                 progress: ReadHook | None) -> tuple[dict[str, DrainReadback], dict[str, str]]:
    read: dict[str, DrainReadback] = {}
    unreadable: dict[str, str] = {}
    topology = target.ctx.topology

    def task(task: Task) -> Result:
        device = topology.devices[task.host.name]
        try:
            driver = connect_driver(task, device, target.files[device.name], options)
            read[device.name] = driver.drain_state()
        except Exception as exc:  # netmiko and the drivers raise many types: the switch could not be read
            unreadable[device.name] = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            disconnect(task)
        if progress:
            progress(device.name)
        return Result(host=task.host, result=None)

    nornir_for(target, workers).filter(filter_func=lambda host: host.name in names).run(
        task=task, name="netgen drain: read", on_failed=True)
    return read, unreadable


def _read_after_failure(task: Task, target: DeployTarget, device: Device,
                        options: DeployOptions) -> DrainReadback | None:
    """What a switch holds after a failed step, read on a new connection (the old one may be the
    one that failed): the failed report says what the device holds, never only what went wrong.
    None: it could not be read either (the report says so by its absence)."""
    disconnect(task)
    try:
        return connect_driver(task, device, target.files[device.name], options).drain_state()
    except Exception:  # unreachable as well: nothing more to learn
        return None


def _sessions_as_asked(seen: DrainReadback, peers: frozenset[str], undrain: bool) -> bool:
    if undrain:
        return not (seen.peers & peers)
    return peers <= seen.peers_running and peers <= seen.peers_saved


def _change(target: DeployTarget, names: list[str], options: DeployOptions, undrain: bool, journal: Journal,
            lock: ChangeLock, why: str, workers: int | None, progress: ReadHook | None,
            sessions: dict[str, tuple[str, ...]] | None = None) -> list[SwitchResult]:
    """Each switch of `names` drained (undrained) whole, or, when `sessions` names it, only its sessions
    with those peers (a link's end). The lock is checked before each switch is touched (a lost lease
    stops the change there), and a whole switch read back drained (undrained) is recorded in (taken
    out of) the store's shared drain state."""
    topology = target.ctx.topology
    sessions = sessions or {}
    results = {name: SwitchResult(name, topology.devices[name].nos, sessions=sessions.get(name, ()))
               for name in names}
    word = "undrain" if undrain else "drain"

    def task(task: Task) -> Result:
        result = results[task.host.name]
        device = topology.devices[result.device]
        peers = frozenset(result.sessions)
        prefix = SESSIONS if peers else ""
        try:
            lock.check()
            driver = connect_driver(task, device, target.files[device.name], options)
            result.before = driver.drain_state()
            if (_sessions_as_asked(result.before, peers, undrain) if peers else result.before.state is (not undrain)):
                # the driver still runs (it changes nothing here): it clears what a dead run of netgen
                # may have left beside the config (an EOS drain session never committed)
                (driver.undrain_sessions if undrain else driver.drain_sessions)(sorted(peers)) if peers else \
                    (driver.undrain if undrain else driver.drain)()
                result.action, result.after = f"{prefix}already {word}ed", result.before
            else:
                journal.write(device.name, f"{prefix}{word}ing", sessions=sorted(peers),
                              before=result.before.as_dict())
                if peers:
                    (driver.undrain_sessions if undrain else driver.drain_sessions)(sorted(peers))
                else:
                    (driver.undrain if undrain else driver.drain)()
                result.after = driver.drain_state()
                done = _sessions_as_asked(result.after, peers, undrain) if peers else \
                    result.after.state is (not undrain)
                result.action = f"{prefix}{word}ed" if done else "failed"
                if not done:
                    result.error = f"read back {drain_word(result.after.state)}: {result.after.detail}"
        except Exception as exc:
            result.action, result.error = "failed", f"{type(exc).__name__}: {exc}"[:500]
            result.after = _read_after_failure(task, target, device, options)
        finally:
            disconnect(task)
        if not peers and result.action in DRAINED_ACTIONS | UNDRAINED_ACTIONS:
            try:
                if result.action in DRAINED_ACTIONS:
                    record_drained(lock.store, device.name, lock.lease, why)
                else:
                    record_undrained(lock.store, device.name)
            except LockError as exc:  # the switch is as read back; only the shared record is missing
                result.error = (f"read back {result.action.split()[-1]}, but not recorded in the shared drain"
                                f" state: {exc}")
        journal.write(device.name, result.action, sessions=sorted(peers),
                      after=result.after.as_dict() if result.after else None, error=result.error)
        if progress:
            progress(device.name)
        return Result(host=task.host, result=result.action, failed=not result.ok)

    nornir_for(target, workers).filter(filter_func=lambda host: host.name in names).run(
        task=task, name=f"netgen {word}", on_failed=True)
    return [results[name] for name in names]


def _guard(ctx: DesignContext, report: DrainReport) -> CapacityReport:
    """The capacity the change leaves, judged from what was read: a switch not read back as
    undrained counts as drained. One that could not be read at all counts as drained after the
    change and not before it: the change is judged as if it took that switch out too, so a guard
    that sees nothing refuses instead of finding the change "no worse" than an unknown."""
    out_now = frozenset(name for name in report.read if report.read[name].state is not False)
    before = DrainSet(out_now, _links_out(ctx.topology, report.read))
    targets = report.targets
    if report.request.undrain:
        after = DrainSet(out_now - targets.devices, before.links - targets.links)
    else:
        after = before | targets | DrainSet(frozenset(report.unreadable), frozenset())
    return assess(ctx.topology, ctx.fabric.maintenance, before, after)


def _hosts_first(ctx: DesignContext, report: DrainReport, journal: Journal) -> None:
    """Drain: the Slurm nodes under the RTSW targets, drained and waited on."""
    rtsws = sorted(n for n in report.targets.devices if ctx.topology.devices[n].role is Role.RTSW)
    if not report.request.slurm or not rtsws:
        return
    nodes = slurm_drain.nodes_under(ctx.fabric, ctx.topology, rtsws)
    try:
        reason = slurm_drain.drain_reason(rtsws, report.request.why or f"change {report.change_id}")
    except ValueError as exc:
        raise DrainError(f"--why: {exc}") from None
    journal.write(None, "slurm-draining", nodes=nodes, reason=reason)
    report.nodes = slurm_drain.drain(nodes, reason, report.request.scontrol)
    states = slurm_drain.wait_drained(nodes, report.request.job_wait_s, scontrol=report.request.scontrol)
    report.nodes_busy = [s.name for s in states if s.drain not in slurm_drain.SETTLED]
    journal.write(None, "slurm-drained", busy=report.nodes_busy)


def _hosts_after(ctx: DesignContext, report: DrainReport, journal: Journal) -> None:
    """Undrain: the Slurm nodes under the RTSWs that read back undrained, resumed."""
    rtsws = sorted(s.device for s in report.switches
                   if s.ok and ctx.topology.devices[s.device].role is Role.RTSW)
    if not report.request.slurm or not rtsws:
        return
    nodes = slurm_drain.nodes_under(ctx.fabric, ctx.topology, rtsws)
    journal.write(None, "slurm-resuming", nodes=nodes)
    report.nodes = slurm_drain.resume(nodes, report.request.scontrol)
    journal.write(None, "slurm-resumed", nodes=[n.node.name for n in report.nodes])


@dataclass(frozen=True)
class DrainHooks:
    """Progress: each switch read, each switch changed (the CLI's bars)."""

    read: ReadHook | None = None
    changed: ReadHook | None = None


def default_journal(change_id: str) -> Path:
    """Where a drain (undrain) journals when --journal does not say."""
    return state_dir() / "drain" / f"{change_id}.jsonl"


def run_drain(target: DeployTarget, request: DrainRequest, workers: int | None = None,
              hooks: DrainHooks | None = None) -> DrainReport:
    """Drain (or undrain) the switches `request.targets` names. `target` gives access to every
    switch read_set() names (prepare_target with that --limit, changes=False)."""
    ctx = target.ctx
    hooks = hooks or DrainHooks()
    change_id = request.change_id or new_change_id()
    report = DrainReport(request, change_id, resolve_targets(ctx, request.targets))
    options = DeployOptions(change_id=change_id, command_timeout_s=target.deploy.ssh.command_timeout_s,
                            ownership=target.ownership())
    if request.dry_run:
        _judge(target, report, options, workers, hooks)
        return report
    command = f"netgen recover --change-id {change_id}" if request.recovering else \
        f"netgen {'undrain' if request.undrain else 'drain'} {' '.join(request.targets)}"
    lock = change_lock(ctx, target.fabric_file, target.deploy, _changed(ctx.topology, report.targets),
                       command=command, change_id=change_id, why=request.why)
    report.lock = {"store": lock.store.where, "scopes": lock.scopes}
    with lock:  # LockHeld (exit 1, the holder named) before anything is read
        _judge(target, report, options, workers, hooks)
        if report.refused:
            return report
        _run_locked(target, report, options, lock, workers, hooks)
    return report


def _changed(topology: Topology, targets: DrainSet) -> list[str]:
    """The switches a drain changes: its targets and both ends of its target links."""
    ends = {end.device for link in topology.links if link.key in targets.links for end in (link.lower, link.upper)}
    return [name for name in topology.devices if name in targets.devices | ends]


def _judge(target: DeployTarget, report: DrainReport, options: DeployOptions, workers: int | None,
           hooks: DrainHooks) -> None:
    ctx = target.ctx
    report.read, report.unreadable = _read_states(
        target, read_set(ctx.topology, report.targets, report.request.undrain), options, workers, hooks.read)
    report.capacity = _guard(ctx, report)
    report.refused = not report.capacity.allowed and report.request.force is None


def _run_locked(target: DeployTarget, report: DrainReport, options: DeployOptions, lock: ChangeLock,
                workers: int | None, hooks: DrainHooks) -> None:
    ctx, request, change_id = target.ctx, report.request, report.change_id
    report.journal = request.journal or default_journal(change_id)
    journal = Journal(report.journal, change_id)
    header = "recover" if request.recovering else "undrain" if request.undrain else "drain"
    journal.write(None, header, undrain=request.undrain, fabric=ctx.fabric.name,
                  targets=report.targets.as_dict(), why=request.why, forced=request.force,
                  violations=[v.as_dict() for v in report.capacity.violations] if report.capacity else [])
    if not request.undrain:
        _hosts_first(ctx, report, journal)
        if report.nodes_busy:
            journal.write(None, "stopped", reason="jobs still run on the hosts under the switches")
            return
    names = [n for n in ctx.topology.devices if n in report.targets.devices]
    report.switches = _change(target, names, options, request.undrain, journal, lock, request.why, workers,
                              hooks.changed)
    ends = {device: tuple(sorted(peers)) for device, peers in
            session_peers(ctx.topology, report.targets.links).items()}
    if ends:
        report.switches += _change(target, [n for n in ctx.topology.devices if n in ends], options, request.undrain,
                                   journal, lock, request.why, workers, hooks.changed, ends)
    if request.undrain:
        _hosts_after(ctx, report, journal)
    journal.write(None, "done", ok=report.ok)


def drain(ctx: DesignContext, fabric_file: Path, request: DrainRequest, *, credentials_file: Path | None = None,
          known_hosts: Path | None = None, verify_host_keys: bool = True, workers: int | None = None,
          hooks: DrainHooks | None = None) -> DrainReport:
    """`netgen drain` / `netgen undrain`: the switches to read and change, reached as deploy.yaml
    says (TargetError for what stops a deploy too), then run_drain."""
    names = read_set(ctx.topology, resolve_targets(ctx, request.targets), request.undrain)
    target = prepare_target(ctx, fabric_file, limit=",".join(names), credentials_file=credentials_file,
                            known_hosts=known_hosts, verify_host_keys=verify_host_keys, changes=False)
    return run_drain(target, request, workers, hooks)


__all__ = [
    "DRAINED_ACTIONS",
    "DrainError",
    "DrainHooks",
    "DrainReport",
    "DrainRequest",
    "SwitchResult",
    "default_journal",
    "drain",
    "new_change_id",
    "read_set",
    "resolve_targets",
    "run_drain",
    "session_peers",
]
