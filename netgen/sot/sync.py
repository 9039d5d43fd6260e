"""`netgen sot push`: compare what the fabric wants with what the source of truth holds, kind by
kind in creation order, and create what is missing and update what netgen made that has drifted.

Rules, per object (its netgen key: a device by name, an interface by device and name, ...):
* missing: created, carrying the fabric's netgen mark;
* held and netgen's (the mark): its netgen fields compared, changed ones updated;
* held, not netgen's: left exactly as it is and reported (`foreign`), so a push never takes over
  what someone else maintains; what hangs on it (a foreign device's interfaces, their cables and
  addresses) is not written either (`blocked`); shared objects (location, manufacturer, device type, role,
  platform, namespace) are used as they are, whoever made them;
* nothing is ever deleted: an object the fabric no longer has is reported (`stale`), not removed.

Each kind is read after the kinds before it were written, so references resolve; a dry run reads
only, and then later kinds are judged against what is held now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from netgen.sot.base import Held, SourceOfTruth
from netgen.sot.objects import KINDS, SHARED, Wanted

ProgressHook = Callable[[str, int, int], None]  # (kind, done, total)


@dataclass
class KindReport:
    kind: str
    wanted: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # "key: field old -> new; ..."
    unchanged: int = 0
    foreign: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)  # not written: hangs on an object that is not netgen's
    stale: list[str] = field(default_factory=list)
    skipped: str | None = None  # the backend cannot hold this kind: why

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "wanted": self.wanted, "created": len(self.created), "updated": len(self.updated),
                "unchanged": self.unchanged, "foreign": self.foreign, "blocked": self.blocked, "stale": self.stale,
                "skipped": self.skipped,
                "created_keys": self.created, "updates": self.updated}


@dataclass
class PushReport:
    backend: str
    fabric: str
    dry_run: bool
    prepared: list[str] = field(default_factory=list)
    kinds: list[KindReport] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return len(self.prepared) + sum(len(k.created) + len(k.updated) for k in self.kinds)

    def as_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "fabric": self.fabric, "dry_run": self.dry_run, "changes": self.changes,
                "prepared": self.prepared, "kinds": [k.as_dict() for k in self.kinds]}


def _differences(held: Held, want: Wanted) -> list[str]:
    return [f"{name} {held.fields.get(name)!r} -> {value!r}" for name, value in want.fields.items()
            if held.fields.get(name) != value]


NotOurs = set[tuple[str, tuple[str, ...]]]  # (kind, key) of objects foreign or blocked


def _judge(kind: str, items: list[Wanted], held: dict[tuple[str, ...], Held], not_ours: NotOurs,
           result: KindReport) -> tuple[list[Wanted], list[tuple[Held, Wanted]]]:
    """The push rules for one kind: what to create and what to update, each verdict recorded in
    `result`. What is foreign or blocked joins `not_ours`, so the kinds after it block what hangs on it."""
    create: list[Wanted] = []
    update: list[tuple[Held, Wanted]] = []
    for item in items:
        have = held.get(item.key)
        if any(parent in not_ours for parent in item.parents):
            result.blocked.append(":".join(item.key))
            not_ours.add((kind, item.key))
        elif have is None:
            create.append(item)
            result.created.append(":".join(item.key))
        elif kind in SHARED:
            result.unchanged += 1
        elif not have.netgen:
            result.foreign.append(":".join(item.key))
            not_ours.add((kind, item.key))
        elif differences := _differences(have, item):
            update.append((have, item))
            result.updated.append(f"{':'.join(item.key)}: " + "; ".join(differences))
        else:
            result.unchanged += 1
    return create, update


def _stale(items: list[Wanted], held: dict[tuple[str, ...], Held]) -> list[str]:
    """netgen's held objects of a kind that the fabric no longer wants, each by its first key. An
    object may be held under several keys (a cable by either end): it is matched by id."""
    matched = {held[item.key].id for item in items if item.key in held}
    first_key: dict[str, tuple[str, ...]] = {}
    for key, have in held.items():
        first_key.setdefault(have.id, key)
    return [":".join(first_key[i]) for i in first_key if i not in matched and held[first_key[i]].netgen]


def push(sot: SourceOfTruth, fabric: str, wanted: list[Wanted], *, dry_run: bool,
         progress: ProgressHook | None = None) -> PushReport:
    report = PushReport(sot.name, fabric, dry_run, prepared=sot.prepare(fabric, dry_run))
    not_ours: NotOurs = set()  # foreign or blocked: their children are not written
    by_kind: dict[str, list[Wanted]] = {kind: [] for kind in KINDS}
    for item in wanted:
        by_kind[item.kind].append(item)
    for kind in KINDS:
        items, result = by_kind[kind], KindReport(kind, wanted=len(by_kind[kind]))
        report.kinds.append(result)
        if progress:
            progress(kind, 0, len(items))
        why = sot.supports(kind)
        if why is not None:
            result.skipped = why
            continue
        # read this kind only now: the kinds before it are written, so its references resolve
        held = sot.held(fabric, kind)
        create, update = _judge(kind, items, held, not_ours, result)
        result.stale = _stale(items, held)
        if not dry_run:
            if create:
                sot.create(fabric, kind, create)
            if update:
                sot.update(fabric, kind, update)
        if progress:
            progress(kind, len(items), len(items))
    return report

__all__ = ["KindReport", "PushReport", "push"]
