"""The deploy journal: each device's change as a state machine, every transition written to disk
before the step it announces, so an interrupted `netgen deploy` (killed, crashed, laptop closed)
can be finished from it: `netgen recover` rolls back (or confirms) whatever was in flight, and
`netgen deploy --resume CHANGE_ID` does that and carries on with the rollout.

One JSON object a line (append-only, flushed and fsync'ed per line), in the state directory
(`$NETGEN_STATE_DIR`, default `~/.local/state/netgen`) as `deploy/<change id>.jsonl`, or where
`--journal` says. A line never holds a configuration or a secret: only states, times, stages,
reasons, and the fingerprints of what a device ran before and after the commit (drivers.base.digest),
which is all a reconnecting driver needs to tell the old config from the new one.

    planned -> staged -> committing -> committed -> confirming -> changed
                  |                        |            `-> (answer lost, read back) -> confirmed_unsaved
                  |                        |                 -> changed, or confirmed_unsaved / unconfirmed / unknown
                  |                        `-> rolling_back -> rolled_back
                  `-> unchanged / dry_run  `-> (interrupted) -> unconfirmed
    any step -> failed (before the commit) or diverged (the device holds what the step did not ask for)

After a confirm whose answer was lost, what the device was read back holding decides: confirmed but
not saved (`confirmed_unsaved`: only a save is missing, `netgen recover` saves it), still waiting for
the confirm (`unconfirmed`), or nothing could be read (`unknown`). All three stay in flight.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


class State(StrEnum):
    PLANNED = "planned"
    STAGED = "staged"
    COMMITTING = "committing"  # written before the commit is sent
    COMMITTED = "committed"  # the commit returned; `after` is what the device runs now
    CONFIRMING = "confirming"
    ROLLING_BACK = "rolling_back"
    # ends (the deploy report's statuses)
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    DRY_RUN = "dry_run"
    FAILED = "failed"
    ROLLED_BACK = "rolled_back"
    UNCONFIRMED = "unconfirmed"
    CONFIRMED_UNSAVED = "confirmed_unsaved"  # read back confirmed, not saved: only the save is left
    UNKNOWN = "unknown"  # a confirm went out, its answer was lost and nothing could be read back
    DIVERGED = "diverged"


# The device may hold a change that is neither confirmed nor rolled back, or confirmed and not saved.
IN_FLIGHT = frozenset({State.COMMITTING, State.COMMITTED, State.CONFIRMING, State.ROLLING_BACK, State.UNCONFIRMED,
                       State.CONFIRMED_UNSAVED, State.UNKNOWN})
# Written once a confirm has been sent: from then on the device may hold a confirmed change, which
# has no revert left (a rollback cannot undo it) and at most lacks its save.
CONFIRM_SENT = frozenset({State.CONFIRMING, State.CONFIRMED_UNSAVED, State.UNKNOWN})
ROLLOUT = "rollout"  # the first record of a run: fabric, devices, options


def state_dir() -> Path:
    return Path(os.environ.get("NETGEN_STATE_DIR") or Path.home() / ".local" / "state" / "netgen").expanduser()


def default_path(change_id: str) -> Path:
    return state_dir() / "deploy" / f"{change_id}.jsonl"


class JournalError(Exception):
    """The journal cannot be written or read; the message names the file and the OS reason."""


class Journal:
    """Appends records; safe across Nornir's threads and across processes (one O_APPEND write a line)."""

    def __init__(self, path: Path, change_id: str) -> None:
        self.path, self.change_id = path, change_id
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise JournalError(f"deploy journal {path}: cannot create its directory: {exc.strerror}") from None

    def write(self, device: str | None, state: str, **data: Any) -> None:
        record = {"t": round(time.time(), 3), "change_id": self.change_id, "device": device, "state": str(state),
                  **data}
        line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode()
        with self._lock:
            try:
                # never through a link, never blocked on a FIFO: a journal is a regular file netgen writes
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                             | os.O_CLOEXEC, 0o600)
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        raise JournalError(f"journal {self.path}: not a regular file (a FIFO or a device)")
                    os.write(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                why = "a link (never followed)" if exc.errno == errno.ELOOP else exc.strerror
                raise JournalError(f"journal {self.path}: cannot write: {why}") from None


@dataclass
class DeviceRecord:
    """A device's latest state in a journal and what the change recorded for it."""

    device: str
    state: State
    stage: str = ""
    before: str | None = None
    after: str | None = None
    history: list[str] = field(default_factory=list)
    confirm_sent: bool = False  # this commit's confirm went out (CONFIRM_SENT): it may be confirmed

    @property
    def in_flight(self) -> bool:
        return self.state in IN_FLIGHT


@dataclass
class JournalView:
    path: Path
    change_id: str
    fabric: str | None
    devices: list[str]  # every device any run of this change planned, in plan order
    records: dict[str, DeviceRecord]

    def in_flight(self) -> list[DeviceRecord]:
        return [r for r in self.records.values() if r.in_flight]


MAX_JOURNAL_BYTES = 256 * 2**20  # a 10,000-switch deploy journals a few MiB: more is not netgen's journal


def _text(path: Path) -> str:
    """A journal's text: opened without following a link or blocking on a FIFO, a regular file, and
    bounded (MAX_JOURNAL_BYTES), as it is written (Journal.write)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "a link (never followed)" if exc.errno == errno.ELOOP else exc.strerror
        raise JournalError(f"journal {path}: cannot read: {why}") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise JournalError(f"journal {path}: not a regular file (a FIFO or a device)")
        data = file.read(MAX_JOURNAL_BYTES + 1)
    if len(data) > MAX_JOURNAL_BYTES:
        raise JournalError(f"journal {path}: over {MAX_JOURNAL_BYTES // 2**20} MiB: not a journal netgen wrote")
    return data.decode("utf-8", errors="replace")


def records(path: Path) -> Iterator[dict[str, Any]]:
    """The journal's records, in order (a deploy's or a drain's). The last line of a crashed write
    may be cut short: everything before it stands."""
    lines = _text(path).splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                return
            raise JournalError(f"journal {path}:{number}: not a JSON line") from None
        if isinstance(record, dict):
            yield record


def kind(path: Path) -> str | None:
    """What wrote the journal: "deploy" (its first record is the rollout's), "drain" (a drain's or
    an undrain's), None for neither."""
    for record in records(path):
        if record.get("device") is None:
            state = record.get("state")
            return "deploy" if state == ROLLOUT else "drain" if state in ("drain", "undrain") else None
    return None


def read(path: Path) -> JournalView:
    view = JournalView(path, "", None, [], {})
    for record in records(path):
        view.change_id = str(record.get("change_id", view.change_id))
        device, state = record.get("device"), record.get("state")
        if device is None and state == ROLLOUT:
            view.fabric = str(record.get("fabric")) if record.get("fabric") else view.fabric
            view.devices += [d for d in record.get("devices", []) if d not in view.devices]
            continue
        if not isinstance(device, str):
            continue
        try:
            parsed = State(str(state))
        except ValueError:
            raise JournalError(f"deploy journal {path}: unknown state {state!r} for {device}") from None
        entry = view.records.setdefault(device, DeviceRecord(device, parsed))
        entry.state = parsed
        entry.history.append(parsed.value)
        entry.stage = str(record.get("stage", entry.stage))
        if parsed is State.PLANNED:  # a new run of the change starts over for this device
            entry.before = entry.after = None
        if parsed in (State.PLANNED, State.COMMITTING):
            entry.confirm_sent = False
        entry.confirm_sent = entry.confirm_sent or parsed in CONFIRM_SENT
        entry.before = record.get("before", entry.before)
        entry.after = record.get("after", entry.after)
    return view


__all__ = ["CONFIRM_SENT", "IN_FLIGHT", "MAX_JOURNAL_BYTES", "ROLLOUT", "DeviceRecord", "Journal", "JournalError",
           "JournalView", "State", "default_path", "kind", "read", "records", "state_dir"]
