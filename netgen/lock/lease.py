"""A lease: who holds which scopes of a fabric's change lock, since when, until when and why. One
record per scope, written by the holder and read by everyone else, so every field is validated
when read: another operator's netgen, an older netgen or a hand edit may have written it."""

from __future__ import annotations

import getpass
import math
import os
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Any

from netgen.safe_text import printable

MAX_TEXT = 300  # a holder's words (why, command) as a lease keeps them
MAX_RECORD_BYTES = 64 * 1024  # one lease or drain record; a larger one is not netgen's
# Times a lease may carry: after 2001 and before 2200. A record outside is not one netgen wrote.
EARLIEST, LATEST = 1e9, 7.3e9


class LockError(Exception):
    """The change lock could not be taken, kept or read. `exit_code` 1: another holder has it (the
    message names the holder); 2: the lock's store cannot be used as configured (what and where)."""

    exit_code = 2


class LockHeld(LockError):
    """Another holder has a scope this change needs: refused, never waited for."""

    exit_code = 1

    def __init__(self, scope: str, holder: Lease) -> None:
        super().__init__(f"the change lock of {scope} is held by {holder.describe()}; retry when it ends, or"
                         f" `netgen lock break FABRIC --scope {scope} --why ...` if that holder is gone")
        self.scope, self.holder = scope, holder


class LeaseLost(LockError):
    """This change's lease ran out or was broken while the change was under way."""

    exit_code = 1


def _text(value: object, name: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: not a string")
    return printable(value, limit)


def _time(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not EARLIEST <= value <= LATEST:
        raise ValueError(f"{name}: not a time netgen writes ({str(value)[:40]})")
    return float(value)


def checked_time(value: object, name: str) -> float:
    """A record's epoch time, validated (finite, between 2001 and 2200): ValueError otherwise."""
    return _time(value, name)


@dataclass(frozen=True, slots=True)
class Lease:
    """One holder's claim. `token` tells the holder's own records from anyone else's; it is not a
    secret (it authenticates nothing) and may be shown."""

    user: str
    host: str
    pid: int
    command: str  # e.g. "netgen drain z01-ctsw01"
    change_id: str
    why: str
    since: float  # epoch seconds, the holder's clock (file store) or when it was granted
    expires: float  # epoch seconds; the etcd store's leases expire on the server's own TTL instead
    token: str

    @staticmethod
    def new(command: str, change_id: str, why: str, ttl_s: float) -> Lease:
        now = time.time()
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = f"uid {os.geteuid()}"
        return Lease(printable(user, 64), printable(socket.gethostname(), 128), os.getpid(),
                     printable(command, MAX_TEXT), printable(change_id, 128), printable(why, MAX_TEXT),
                     round(now, 3), round(now + ttl_s, 3), secrets.token_hex(8))

    def renewed(self, ttl_s: float) -> Lease:
        return Lease(self.user, self.host, self.pid, self.command, self.change_id, self.why, self.since,
                     round(time.time() + ttl_s, 3), self.token)

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.expires

    def holder_gone(self) -> bool:
        """Whether the holder is known to be dead: it ran on this machine and its process is gone (a
        deploy killed by PID, a laptop's netgen that crashed). A holder on another machine is never
        judged from here: its lease runs out by its TTL, or is broken by hand."""
        if self.host != printable(socket.gethostname(), 128):
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive under another user (EPERM)
            return False
        return False

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        words = f"{self.user}@{self.host} (pid {self.pid}, `{self.command}`, change {self.change_id}, since {since}"
        return words + (f", why: {self.why})" if self.why else ")")

    def as_dict(self) -> dict[str, Any]:
        return {"user": self.user, "host": self.host, "pid": self.pid, "command": self.command,
                "change_id": self.change_id, "why": self.why, "since": self.since, "expires": self.expires,
                "token": self.token}

    @staticmethod
    def from_dict(data: object) -> Lease:
        """A lease record as read from the store; ValueError naming the field for anything netgen
        would not have written."""
        if not isinstance(data, dict):
            raise ValueError("not a mapping")
        pid = data.get("pid")
        if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 1 << 32:
            raise ValueError("pid: not a process id")
        token = _text(data.get("token"), "token", 64)
        if not token or not token.isalnum():
            raise ValueError("token: not a token netgen writes")
        since, expires = _time(data.get("since"), "since"), _time(data.get("expires"), "expires")
        return Lease(_text(data.get("user"), "user", 64), _text(data.get("host"), "host", 128), pid,
                     _text(data.get("command"), "command"), _text(data.get("change_id"), "change_id", 128),
                     _text(data.get("why"), "why"), since, expires, token)


__all__ = ["MAX_RECORD_BYTES", "Lease", "LeaseLost", "LockError", "LockHeld", "checked_time"]
