"""The change lock as a change holds it: the scopes a set of switches needs, taken all at once or
refused (never waited for), renewed from a thread while the change runs, and given up at the end.

A scope is a zone (`zone-01`): a change in a zone takes it, so two changes of one zone cannot
interleave between the capacity guard's read and the read-back, while other zones go on in
parallel. A switch of no zone (an ATSW) or a whole-fabric change takes every zone's scope: an ATSW
carries part of every zone's CTSW-ATSW bandwidth."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from types import TracebackType
from typing import ClassVar

from netgen.lock.lease import Lease, LeaseLost, LockError
from netgen.lock.store import LockStore

FABRIC_SCOPE = "fabric"  # a fabric without zones: one scope for all of it


def zone_scope(zone: int) -> str:
    return f"zone-{zone:02d}"


def scopes_for(zones_of: Iterable[int | None], every_zone: Iterable[int]) -> list[str]:
    """The scopes of the switches whose zones are `zones_of` (None: no zone), in one order for
    everyone (so two acquirers never each hold what the other waits for)."""
    zones = set(zones_of)
    if None in zones:
        zones = set(every_zone)
    return sorted(zone_scope(z) for z in zones if z is not None) or [FABRIC_SCOPE]


class ChangeLock:
    """Held with `with`: acquire on enter (LockHeld when another holder has a scope), renewed every
    third of the TTL; `check()` before each step that changes a switch raises LeaseLost once a
    renewal failed or the lease was broken; release on exit."""

    def __init__(self, store: LockStore, scopes: list[str], lease: Lease, ttl_s: float) -> None:
        self.store, self.scopes, self.lease, self.ttl_s = store, scopes, lease, ttl_s
        self.lost: str = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self.outer: ChangeLock | None = None

    _active: ClassVar[list[ChangeLock]] = []  # the locks this process holds now, outermost first
    _active_guard: ClassVar[threading.Lock] = threading.Lock()

    def __enter__(self) -> ChangeLock:
        with ChangeLock._active_guard:
            # a step of a change that already holds these scopes (replace's join: its deploy, then its
            # undrain) goes on under the outer lease: nobody can slip in between the steps
            self.outer = next((held for held in ChangeLock._active if held.store.where == self.store.where
                               and set(self.scopes) <= set(held.scopes)), None)
            ChangeLock._active.append(self)
        if self.outer is not None:
            self.lease = self.outer.lease
            return self
        if self.scopes:
            try:
                self.lease = self.store.acquire(self.scopes, self.lease, self.ttl_s)
            except BaseException:
                self._forget()
                raise
            self._thread = threading.Thread(target=self._renew, name="netgen lock renewal", daemon=True)
            self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            if not self.renew_once():
                return

    def renew_once(self) -> bool:
        """One renewal; False once the lease is lost (broken, taken, or run out while the store did
        not answer): `check()` refuses from then on."""
        try:
            lease = self.store.renew(self.scopes, self.lease, self.ttl_s)
        except LockError as exc:  # LeaseLost, or the store did not answer: the lease may run out
            with self._guard:
                if isinstance(exc, LeaseLost) or self.lease.expired():
                    self.lost = str(exc)
                    return False
            return True
        with self._guard:
            self.lease = lease
        return True

    def _forget(self) -> None:
        with ChangeLock._active_guard:
            if self in ChangeLock._active:
                ChangeLock._active.remove(self)

    def check(self) -> None:
        if self.outer is not None:
            self.outer.check()
            return
        with self._guard:
            if self.lost:
                raise LeaseLost(f"the change lock was lost ({self.lost}): stopped before the next switch")
            if self.scopes and self.lease.expired():
                raise LeaseLost("the change lock's lease ran out before it could be renewed: stopped before the"
                                " next switch")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._forget()
        if self.outer is not None:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.ttl_s)
        if self.scopes:
            # what is still this lease's (a lost scope is another's now and is left alone)
            with contextlib.suppress(LockError):  # it runs out on its own after ttl_s
                self.store.release(self.scopes, self.lease)


__all__ = ["FABRIC_SCOPE", "ChangeLock", "scopes_for", "zone_scope"]
