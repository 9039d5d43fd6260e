"""`netgen recover` for a drain's or an undrain's journal (a switch drain, a link drain, or the
undrain that ends `netgen replace --join`): what the interrupted run left in flight, put back as it
was before the change (the default, as a deploy's recover rolls back) or carried through
(`--confirm`, as a deploy's recover confirms).

In flight: a switch whose step was journaled (`draining`, `undraining`, `sessions draining`, ...:
written before the first command is sent) and never followed by a step that read it back as asked.
Everything else is settled: a switch never reached was not touched; one read back as asked is done.
The direction is the change's, the first run's in the journal (a drain or an undrain), not the last
line's: a recovery interrupted in turn is recovered again towards the same end.

The recovery is a drain or an undrain of those switches and links, run as `netgen drain` runs one
(day2/drain.run_drain: the change lock, the capacity guard, each switch read back, running and saved
config alike), journaled in the same journal under a `recover` header: an undrain gives back running
and startup byte for byte. Slurm is not touched: a drain's `--slurm` step is resumed by
`netgen undrain --slurm`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from netgen.context import DesignContext
from netgen.day2.drain import (
    DRAINED_ACTIONS,
    SESSIONS,
    UNDRAINED_ACTIONS,
    DrainHooks,
    DrainReport,
    DrainRequest,
    drain,
    session_peers,
)
from netgen.deploy.journal import JournalError, records

_STEPS = {"draining": False, "undraining": True}  # a step's announcement -> the undrain it is


@dataclass
class DrainJournalView:
    """A drain journal read: the change's direction and what it left in flight."""

    path: Path
    change_id: str = ""
    fabric: str | None = None
    undrain: bool = False  # the change (its first run) was an undrain
    forced: str | None = None  # the change's --force reason
    in_flight: dict[str, tuple[str, ...]] = field(default_factory=dict)  # switch -> its link sessions (() whole)


def read_drain_journal(path: Path) -> DrainJournalView:
    """JournalError for a journal that is no drain's, or a line that cannot be read."""
    view = DrainJournalView(path)
    header = False
    for record in records(path):
        view.change_id = str(record.get("change_id", view.change_id))
        device, state = record.get("device"), str(record.get("state", ""))
        if device is None:
            if state in ("drain", "undrain") and not header:
                header = True
                view.undrain, view.fabric = state == "undrain", str(record.get("fabric") or "") or None
                forced = record.get("forced")
                view.forced = str(forced) if isinstance(forced, str) and forced.strip() else None
            continue
        if not isinstance(device, str) or not header:
            continue
        step = state.removeprefix(SESSIONS)
        sessions = record.get("sessions")
        peers = tuple(str(p) for p in sessions) if isinstance(sessions, list) else ()
        if step in _STEPS:
            view.in_flight[device] = peers
        elif step in DRAINED_ACTIONS | UNDRAINED_ACTIONS:
            view.in_flight.pop(device, None)  # read back as its run asked: settled
        # "failed" keeps what was in flight in flight: the failed step may have half happened
    if not header:
        raise JournalError(f"journal {path}: not a drain's or an undrain's journal (no drain header)")
    return view


def recovery_request(ctx: DesignContext, view: DrainJournalView, confirm: bool) -> DrainRequest:
    """The drain (or undrain) that puts what is in flight back (or, `confirm`, carries it through):
    whole switches by name, link drains as the links their sessions run over (both ends, so a link
    is never left drained at one end only)."""
    by_peer = session_peers(ctx.topology, frozenset(link.key for link in ctx.topology.links))
    targets: set[str] = set()
    for device, peers in view.in_flight.items():
        if device not in ctx.topology.devices:
            raise JournalError(f"journal {view.path}: {device} is no switch of fabric {ctx.fabric.name}")
        if not peers:
            targets.add(device)
            continue
        links = {by_peer.get(device, {}).get(peer) for peer in peers}
        if None in links:
            raise JournalError(f"journal {view.path}: a session of {device} runs over no link of fabric"
                               f" {ctx.fabric.name}")
        targets |= {link for link in links if link is not None}
    undrain = view.undrain if confirm else not view.undrain
    how = "carried through" if confirm else "put back"
    return DrainRequest(tuple(sorted(targets)), undrain=undrain,
                        why=f"netgen recover: change {view.change_id} {how}",
                        force=view.forced if undrain is view.undrain else None,
                        change_id=view.change_id, journal=view.path, recovering=True)


def recover_drain(ctx: DesignContext, fabric_file: Path, view: DrainJournalView, *, confirm: bool = False,
                  credentials_file: Path | None = None, known_hosts: Path | None = None,
                  verify_host_keys: bool = True, workers: int | None = None,
                  hooks: DrainHooks | None = None) -> DrainReport:
    """Put back (or carry through) what the drain journal `view` left in flight; the report is a
    drain's (read back from each switch). Nothing in flight: call it only when there is."""
    return drain(ctx, fabric_file, recovery_request(ctx, view, confirm), credentials_file=credentials_file,
                 known_hosts=known_hosts, verify_host_keys=verify_host_keys, workers=workers, hooks=hooks)


__all__ = ["DrainJournalView", "read_drain_journal", "recover_drain", "recovery_request"]
