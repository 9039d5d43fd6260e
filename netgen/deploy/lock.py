"""The change lock for a fabric as deploy.yaml reaches it: which store (`lock:`), under which
identity, and the drain state netgen keeps beside it.

The identity is the fabric's name and a digest of where its switches are reached (every switch's
management host and port, as the deploy would connect): a lab built from a copy of a fabric reaches
other addresses, so nothing it locks or records is the real fabric's, and two checkouts of one
fabric that reach the same switches share one lock."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.context import DesignContext
from netgen.deploy.inventory import DeployFile, device_access, load_deploy
from netgen.deploy.journal import state_dir
from netgen.lock.change_lock import ChangeLock, scopes_for
from netgen.lock.etcd import EtcdStore
from netgen.lock.lease import Lease, LeaseLost, LockError, checked_time
from netgen.lock.store import FileStore, LockStore
from netgen.safe_text import printable

DRAINED = "drained"  # the kind of record a drained switch has in the store


def fabric_identity(ctx: DesignContext, deploy: DeployFile) -> str:
    where = "\n".join(f"{name} {host} {port}" for name, device in sorted(ctx.topology.devices.items())
                      for host, port in [device_access(deploy, device)])
    name = re.sub(r"[^A-Za-z0-9_-]", "-", ctx.fabric.name)[:60] or "fabric"
    return f"{name}-{hashlib.sha256(where.encode()).hexdigest()[:12]}"


def open_store(ctx: DesignContext, fabric_file: Path, deploy: DeployFile) -> LockStore:
    settings = deploy.lock
    identity = fabric_identity(ctx, deploy)
    if settings.backend == "etcd":
        if not settings.endpoint:
            raise LockError(f"{fabric_file.parent / 'deploy.yaml'} lock.endpoint: give the etcd client URL for"
                            " backend etcd")
        return EtcdStore(settings.endpoint, identity, settings.prefix)
    if settings.path:
        root = Path(settings.path).expanduser()
        root = root if root.is_absolute() else fabric_file.parent / root
    else:
        root = state_dir() / "lock"
    return FileStore(root, identity)


def change_lock(ctx: DesignContext, fabric_file: Path, deploy: DeployFile, names: list[str], *, command: str,
                change_id: str, why: str = "") -> ChangeLock:
    """The lock a change of the switches `names` takes (enter it with `with`)."""
    devices = ctx.topology.devices
    zones = sorted({d.zone for d in devices.values() if d.zone is not None})
    scopes = scopes_for((devices[n].zone if n in devices else None for n in names), zones)
    lease = Lease.new(command, change_id, why, deploy.lock.ttl_s)
    return ChangeLock(open_store(ctx, fabric_file, deploy), scopes, lease, deploy.lock.ttl_s)


def held_by(ctx: DesignContext, fabric_file: Path, deploy: DeployFile, names: list[str],
            token: str) -> Callable[[], None]:
    """A lock check for a step run under another process's lease (an Ansible task under `netgen
    rollout`): raises LeaseLost unless every scope of `names` is held by the lease with `token`.
    Checked once at once, and again wherever the change checks its lock."""
    devices = ctx.topology.devices
    zones = sorted({d.zone for d in devices.values() if d.zone is not None})
    scopes = scopes_for((devices[n].zone if n in devices else None for n in names), zones)
    store = open_store(ctx, fabric_file, deploy)

    def check() -> None:
        leases, _ = store.leases()
        missing = [s for s in scopes if s not in leases or leases[s].token != token or leases[s].expired()]
        if missing:
            held = leases.get(missing[0])
            raise LeaseLost(f"the change lock of {missing[0]} is not the rollout's"
                            + (f": held by {held.describe()}" if held else ": nobody holds it"))

    check()
    return check


@dataclass
class DrainState:
    """What the store says netgen left drained: switch -> the record; records it could not trust."""

    where: str
    drained: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def since(self) -> dict[str, float]:
        return {name: record["since"] for name, record in sorted(self.drained.items())}


def record_drained(store: LockStore, device: str, lease: Lease, why: str) -> None:
    store.put_record(DRAINED, device, {"device": device, "since": round(time.time(), 3), "by": lease.as_dict(),
                                       "change_id": lease.change_id, "why": printable(why, 300)})


def record_undrained(store: LockStore, device: str) -> None:
    store.delete_record(DRAINED, device)


def drain_state(ctx: DesignContext, fabric_file: Path, deploy: DeployFile) -> DrainState:
    """The switches of this fabric the shared store says netgen left drained (read back drained
    when recorded); a record that is not valid is named in `skipped`, never used."""
    store = open_store(ctx, fabric_file, deploy)
    records = store.records(DRAINED)
    state = DrainState(store.where, skipped=dict(records.skipped))
    for name, record in records.found.items():
        try:
            if record.get("device") != name or name not in ctx.topology.devices:
                raise ValueError("names no switch of this fabric")
            record["since"] = checked_time(record.get("since"), "since")
        except ValueError as exc:
            state.skipped[name] = f"{store.where}: {DRAINED}/{name}: {exc}"
            continue
        state.drained[name] = record
    return state


def fabric_store(ctx: DesignContext, fabric_file: Path) -> LockStore:
    """The lock store of the fabric file `fabric_file`, as its deploy.yaml configures it."""
    return open_store(ctx, fabric_file, load_deploy(fabric_file.parent))


@dataclass
class LockStatus:
    """`netgen lock status`: every lease of the fabric's lock, and the drain records beside it."""

    where: str
    leases: dict[str, Lease]
    unreadable: dict[str, str]
    drains: DrainState

    def as_dict(self) -> dict[str, Any]:
        now = time.time()
        return {"store": self.where,
                "leases": {scope: {**lease.as_dict(), "expired": lease.expired(now)}
                           for scope, lease in sorted(self.leases.items())},
                "unreadable": dict(sorted(self.unreadable.items())),
                "drained": self.drains.drained, "skipped_drain_records": self.drains.skipped}


def lock_status(ctx: DesignContext, fabric_file: Path) -> LockStatus:
    deploy = load_deploy(fabric_file.parent)
    store = open_store(ctx, fabric_file, deploy)
    leases, unreadable = store.leases()
    return LockStatus(store.where, leases, unreadable, drain_state(ctx, fabric_file, deploy))


def break_lock(ctx: DesignContext, fabric_file: Path, scope: str, why: str) -> Lease | None:
    """The lease of `scope` broken, whoever holds it, and the break journaled in the store (who,
    why, the lease that was there); None: there was none."""
    store = fabric_store(ctx, fabric_file)
    by = Lease.new(f"netgen lock break {scope}", "lock-break", why, 0)
    old = store.break_lease(scope)
    store.event({"event": "lease broken", "scope": scope, "why": printable(why, 300), "by": by.as_dict(),
                 "old": old.as_dict() if old else None})
    return old


def shared_drain_state(ctx: DesignContext, fabric_file: Path | None) -> DrainState:
    """drain_state for the fabric file `fabric_file` (its deploy.yaml; None: a fabric read from
    standard input, which has none: the defaults)."""
    if fabric_file is None:
        return drain_state(ctx, Path.cwd() / "-", DeployFile())
    return drain_state(ctx, fabric_file, load_deploy(fabric_file.parent))


__all__ = [
    "DRAINED",
    "DrainState",
    "LockStatus",
    "break_lock",
    "change_lock",
    "drain_state",
    "fabric_identity",
    "fabric_store", "held_by",
    "lock_status",
    "open_store",
    "record_drained",
    "record_undrained",
    "shared_drain_state",
]
