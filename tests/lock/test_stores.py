"""The change lock's contract, held by both stores alike (the file store and real etcd): all or
none of a change's scopes, the loser refused naming the holder, renewal that notices a break,
release that leaves another holder's scopes alone, and the drain records beside the lock."""

from __future__ import annotations

import pytest

from netgen.lock.change_lock import ChangeLock
from netgen.lock.lease import Lease, LeaseLost, LockHeld

TTL = 30


def lease(command: str = "netgen drain z01-ctsw01", why: str = "optics") -> Lease:
    return Lease.new(command, "drain-20261207-000000-abcd", why, TTL)


def test_the_loser_is_refused_naming_the_holder_and_gets_none_of_its_scopes(store_factory):
    first, second = store_factory(), store_factory()
    alice = lease()
    first.acquire(["zone-02"], alice, TTL)
    with pytest.raises(LockHeld) as refused:
        second.acquire(["zone-01", "zone-02"], lease("netgen deploy --change-id x", ""), TTL)
    assert refused.value.scope == "zone-02" and refused.value.holder.token == alice.token
    assert "netgen drain z01-ctsw01" in str(refused.value) and "why: optics" in str(refused.value)
    assert refused.value.exit_code == 1
    held, unreadable = second.leases()
    assert set(held) == {"zone-02"} and not unreadable  # all or none: zone-01 was not taken
    # once released, the other change gets both
    first.release(["zone-02"], alice)
    bob = lease("netgen deploy --change-id x", "")
    second.acquire(["zone-01", "zone-02"], bob, TTL)
    assert {s: h.token for s, h in first.leases()[0].items()} == {"zone-01": bob.token, "zone-02": bob.token}


def test_a_release_never_frees_another_holders_scope(store_factory):
    store = store_factory()
    alice, bob = lease(), lease()
    store.acquire(["zone-01"], alice, TTL)
    store.release(["zone-01"], bob)
    assert store.leases()[0]["zone-01"].token == alice.token


def test_a_broken_lease_is_noticed_at_the_next_renewal(store_factory):
    holder, operator = store_factory(), store_factory()
    alice = lease()
    holder.acquire(["zone-01"], alice, TTL)
    renewed = holder.renew(["zone-01"], alice, TTL)
    assert renewed.token == alice.token and renewed.expires >= alice.expires
    broken = operator.break_lease("zone-01")
    assert broken is not None and broken.token == alice.token
    with pytest.raises(LeaseLost):
        holder.renew(["zone-01"], alice, TTL)
    assert operator.break_lease("zone-01") is None  # nothing left to break


def test_change_lock_refuses_a_step_once_its_lease_is_lost_and_nests_for_one_change(store_factory):
    store, operator = store_factory(), store_factory()
    with ChangeLock(store, ["zone-01", "zone-02"], lease(), TTL) as outer:
        outer.check()
        # a step of the same change (replace's deploy, then its undrain) goes on under the outer lease
        with ChangeLock(store, ["zone-01"], lease("netgen undrain z01-ctsw01"), TTL) as inner:
            assert inner.lease.token == outer.lease.token
            inner.check()
        assert set(operator.leases()[0]) == {"zone-01", "zone-02"}  # the inner exit released nothing
        operator.break_lease("zone-01")
        assert outer.renew_once() is False
        with pytest.raises(LeaseLost):
            outer.check()
    assert not operator.leases()[0]  # what was still its own, released


def test_drain_records_are_shared_between_operators(store_factory):
    mine, theirs = store_factory(), store_factory()
    mine.put_record("drained", "z01-ctsw01", {"device": "z01-ctsw01", "since": 1.8e9})
    assert theirs.records("drained").found == {"z01-ctsw01": {"device": "z01-ctsw01", "since": 1.8e9}}
    theirs.delete_record("drained", "z01-ctsw01")
    assert mine.records("drained").found == {}
    mine.event({"event": "lease broken", "scope": "zone-01"})  # a line of the lock's own history


def test_a_lease_whose_holder_died_on_this_machine_is_taken_over(store_factory):
    """A deploy killed by PID leaves its lease; `netgen recover` on the same machine must not wait
    for the TTL: the holder's process is gone, so the lease is taken over (and that recorded)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = Lease.new("netgen deploy --change-id killed", "killed", "", TTL)
    gone = Lease(gone.user, gone.host, dead.pid, gone.command, gone.change_id, gone.why, gone.since, gone.expires,
                 gone.token)
    store = store_factory()
    store.acquire(["zone-01"], gone, TTL)
    alive = lease("netgen recover --change-id killed")
    store.acquire(["zone-01"], alive, TTL)
    assert store.leases()[0]["zone-01"].token == alive.token
    # a living holder is never taken over
    with pytest.raises(LockHeld):
        store_factory().acquire(["zone-01"], lease(), TTL)
