"""Where the change lock and the fabric's shared drain state live: the contract every store keeps,
and the file store (one directory; one machine, or a directory every operator's machine mounts).

A store holds, per fabric identity:
    lock/<scope>     a Lease (lease.py) while a change holds that scope; gone when released,
                     broken, or (file store) seen past its expiry by the next acquirer
    drained/<name>   a switch netgen read back drained: who, when, which change, why
    events           what was done to the lock by hand (a lease broken, an expired one taken over)

The file store's trust rule: whoever can write its directory is an operator. The directory must not
be writable by everyone (a world-writable folder would let any local user forge a drain or a lock),
links are never followed, FIFOs and devices never opened, and every record is bounded and validated
when read. Its leases expire by the clocks of the machines that use it (see docs: the lock's
failure modes); the etcd store's expire by etcd's own TTL."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from netgen.lock.lease import MAX_RECORD_BYTES, Lease, LeaseLost, LockError, LockHeld
from netgen.safe_text import printable

MUTEX_WAIT_S = 10.0  # the file store's mutex is held for a few file operations: longer means a stopped holder


@dataclass
class Records:
    """The records of one kind, and the ones that could not be trusted (name -> why)."""

    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


class LockStore(Protocol):
    """One fabric identity's lock and drain records in one store."""

    where: str  # names the store in messages: "file store /srv/netgen/lock/<fabric>", "etcd http://..."

    def acquire(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        """Every scope for `lease`, all or none: LockHeld naming the first scope another lease holds."""

    def renew(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        """The lease extended by ttl_s; LeaseLost when any scope is no longer this lease's."""

    def release(self, scopes: Sequence[str], lease: Lease) -> None:
        """The scopes this lease still holds given up (another lease's are left alone)."""

    def leases(self) -> tuple[dict[str, Lease], dict[str, str]]:
        """scope -> the lease holding it, and the records that could not be read (scope -> why)."""

    def break_lease(self, scope: str) -> Lease | None:
        """The lease of `scope` removed, whoever holds it; the lease that was there (None: none)."""

    def put_record(self, kind: str, name: str, data: dict[str, Any]) -> None: ...

    def delete_record(self, kind: str, name: str) -> None: ...

    def records(self, kind: str) -> Records: ...

    def event(self, data: dict[str, Any]) -> None:
        """One line of the lock's own history (a break, a take-over), kept in the store."""


def record_name(name: str) -> str:
    """A scope or switch name as a key: what netgen's names are (letters, digits, '-', '_', '.')."""
    if not name or len(name) > 128 or not all(ch.isalnum() or ch in "-_." for ch in name) or name[0] == ".":
        raise LockError(f"{printable(name, 60)!r} is not a name the change lock keeps")
    return name


def _trusted_dir(path: Path, what: str) -> None:
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise LockError(f"{what} {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise LockError(f"{what} {path}: not a directory (a link is never followed)")
    if st.st_mode & 0o002:
        raise LockError(f"{what} {path}: writable by every user, so anyone could forge a lock or a drain;"
                        " give a directory only operators can write (chmod o-w, or a group of operators)")


def _read_file(path: Path) -> bytes | None:
    """The bytes of a record file netgen may trust, None when there is none; LockError (ValueError
    for the caller to name) for a link, a FIFO, a huge file or one everyone may write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError("a link (never followed)") from None
        raise ValueError(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_mode & 0o002:
            raise ValueError("writable by every user")
        if st.st_size > MAX_RECORD_BYTES:
            raise ValueError(f"{st.st_size:,} bytes, more than a record netgen writes ({MAX_RECORD_BYTES:,})")
        data = os.read(fd, MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise ValueError("grew past the size of a record netgen writes")
        return data
    finally:
        os.close(fd)


def parse_record(data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError("not a JSON record") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number netgen writes")


class FileStore:
    """The lock and the drain records of one fabric identity in `root/<identity>/`."""

    def __init__(self, root: Path, identity: str) -> None:
        self.root, self.identity = root, record_name(identity)
        self.folder = root / self.identity
        self.where = f"file store {self.folder}"
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise LockError(f"lock directory {root}: cannot create it: {exc.strerror}") from None
        _trusted_dir(root, "lock directory")
        for sub in (self.folder, self.folder / "lock", self.folder / "drained"):
            try:
                sub.mkdir(exist_ok=True, mode=0o770)
            except OSError as exc:
                raise LockError(f"lock directory {sub}: cannot create it: {exc.strerror}") from None
            _trusted_dir(sub, "lock directory")

    # --- the mutex every change of the lock is made under ----------------------------------------
    @contextmanager
    def _mutex(self) -> Iterator[None]:
        path = self.folder / ".mutex"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o660)
        except OSError as exc:
            raise LockError(f"{self.where}: cannot open {path}: {exc.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise LockError(f"{self.where}: {path} is not a regular file")
            deadline = time.monotonic() + MUTEX_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockError(f"{self.where}: {path} has been held for over {MUTEX_WAIT_S:.0f} s by a"
                                        " process that does not let go (stopped?)") from None
                    time.sleep(0.02)
            yield
        finally:
            os.close(fd)  # closing drops the flock

    # --- records ---------------------------------------------------------------------------------
    def _path(self, kind: str, name: str) -> Path:
        return self.folder / record_name(kind) / f"{record_name(name)}.json"

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        text = (json.dumps(data, sort_keys=True, allow_nan=False) + "\n").encode()
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o640)
            try:
                os.write(fd, text)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path)
        except OSError as exc:
            with suppress(OSError):
                os.unlink(temp)
            raise LockError(f"{self.where}: cannot write {path}: {exc.strerror}") from None

    def _read_lease(self, scope: str) -> Lease | None:
        """The lease of `scope`; an unreadable record is held by nobody netgen knows: LockError."""
        path = self._path("lock", scope)
        try:
            data = _read_file(path)
            return None if data is None else Lease.from_dict(parse_record(data))
        except ValueError as exc:
            raise LockError(f"{self.where}: the lease of {scope} ({path}) cannot be trusted: {exc}; inspect it,"
                            f" then `netgen lock break FABRIC --scope {scope} --why ...`") from None

    def acquire(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        with self._mutex():
            taken_over = []
            for scope in scopes:
                held = self._read_lease(scope)
                if held is not None and held.token != lease.token:
                    if not (held.expired() or held.holder_gone()):
                        raise LockHeld(scope, held)
                    taken_over.append((scope, held))
            for scope, old in taken_over:
                why = "expired" if old.expired() else "its holder's process is gone"
                self.event({"event": "lease taken over", "why": why, "scope": scope, "old": old.as_dict(),
                            "by": lease.as_dict()})
            for scope in scopes:
                self._write(self._path("lock", scope), lease.as_dict())
        return lease

    def renew(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        renewed = lease.renewed(ttl_s)
        with self._mutex():
            for scope in scopes:
                held = self._read_lease(scope)
                if held is None or held.token != lease.token:
                    raise LeaseLost(f"the change lock of {scope} is no longer this change's: "
                                    + (f"now held by {held.describe()}" if held else "it was broken"))
            for scope in scopes:
                self._write(self._path("lock", scope), renewed.as_dict())
        return renewed

    def release(self, scopes: Sequence[str], lease: Lease) -> None:
        with self._mutex():
            for scope in scopes:
                try:
                    held = self._read_lease(scope)
                except LockError:
                    continue
                if held is not None and held.token == lease.token:
                    with suppress(OSError):
                        os.unlink(self._path("lock", scope))

    def leases(self) -> tuple[dict[str, Lease], dict[str, str]]:
        found: dict[str, Lease] = {}
        skipped: dict[str, str] = {}
        for path in sorted((self.folder / "lock").glob("*.json")):
            scope = path.name.removesuffix(".json")
            try:
                data = _read_file(path)
                if data is not None:
                    found[scope] = Lease.from_dict(parse_record(data))
            except ValueError as exc:
                skipped[scope] = f"{path}: {exc}"
        return found, skipped

    def break_lease(self, scope: str) -> Lease | None:
        path = self._path("lock", scope)
        with self._mutex():
            try:
                held = self._read_lease(scope)
            except LockError:
                held = None
            try:
                os.unlink(path)
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise LockError(f"{self.where}: cannot remove {path}: {exc.strerror}") from None
        return held

    def put_record(self, kind: str, name: str, data: dict[str, Any]) -> None:
        self._write(self._path(kind, name), data)

    def delete_record(self, kind: str, name: str) -> None:
        try:
            os.unlink(self._path(kind, name))
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise LockError(f"{self.where}: cannot remove {self._path(kind, name)}: {exc.strerror}") from None

    def records(self, kind: str) -> Records:
        out = Records()
        folder = self.folder / record_name(kind)
        try:
            paths = sorted(folder.glob("*.json"))
        except OSError as exc:
            raise LockError(f"{self.where}: cannot list {folder}: {exc.strerror}") from None
        for path in paths:
            name = path.name.removesuffix(".json")
            try:
                data = _read_file(path)
                if data is not None:
                    out.found[name] = parse_record(data)
            except ValueError as exc:
                out.skipped[name] = f"{path}: {exc}"
        return out

    def event(self, data: dict[str, Any]) -> None:
        line = (json.dumps({"t": round(time.time(), 3), **data}, sort_keys=True, default=str) + "\n").encode()
        path = self.folder / "events.jsonl"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         0o640)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise LockError(f"{self.where}: {path} is not a regular file")
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise LockError(f"{self.where}: cannot write {path}: {exc.strerror}") from None


__all__ = ["FileStore", "LockStore", "Records", "parse_record", "record_name"]
