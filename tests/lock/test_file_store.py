"""The file store trusts only what an operator could have written: no world-writable directory, no
link followed, no FIFO opened (it would hang), no record past its size, no time that is not one;
an expired lease is taken over and the take-over journaled; and a race of many processes for one
scope has exactly one winner."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import time

import pytest

from netgen.lock.lease import Lease, LockError, LockHeld
from netgen.lock.store import FileStore


def _lease(ttl: float = 30) -> Lease:
    return Lease.new("netgen drain z01-ctsw01", "drain-x", "", ttl)


def test_a_world_writable_lock_directory_is_refused(tmp_path):
    root = tmp_path / "lock"
    root.mkdir()
    root.chmod(0o777)
    with pytest.raises(LockError, match="writable by every user"):
        FileStore(root, "fabric-1")


def test_a_lock_directory_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LockError, match="a link is never followed"):
        FileStore(tmp_path / "lock", "fabric-1")


def test_a_lease_record_that_is_a_link_or_a_fifo_counts_as_held_and_never_hangs(tmp_path):
    store = FileStore(tmp_path / "lock", "fabric-1")
    target = tmp_path / "forged.json"
    target.write_text(json.dumps(_lease().as_dict()))
    (store.folder / "lock" / "zone-01.json").symlink_to(target)
    with pytest.raises(LockError, match="cannot be trusted: a link"):
        store.acquire(["zone-01"], _lease(), 30)
    os.mkfifo(store.folder / "lock" / "zone-02.json")
    with pytest.raises(LockError, match="cannot be trusted: not a regular file"):
        store.acquire(["zone-02"], _lease(), 30)
    held, unreadable = store.leases()
    assert not held and set(unreadable) == {"zone-01", "zone-02"}


def test_drain_records_that_are_links_fifos_huge_or_not_json_are_skipped_and_named(tmp_path):
    store = FileStore(tmp_path / "lock", "fabric-1")
    folder = store.folder / "drained"
    (tmp_path / "real.json").write_text('{"device": "z01-ctsw02", "since": 1.8e9}')
    (folder / "z01-ctsw02.json").symlink_to(tmp_path / "real.json")
    os.mkfifo(folder / "z01-ctsw03.json")
    (folder / "z01-ctsw04.json").write_text(" " * (1 << 20))
    (folder / "z01-rtsw001.json").write_text('{"device": "z01-rtsw001", "since": NaN}')
    store.put_record("drained", "z01-ctsw01", {"device": "z01-ctsw01", "since": 1.8e9})
    records = store.records("drained")
    assert set(records.found) == {"z01-ctsw01"}
    assert set(records.skipped) == {"z01-ctsw02", "z01-ctsw03", "z01-rtsw001", "z01-ctsw04"}
    assert "a link" in records.skipped["z01-ctsw02"] and "not a regular file" in records.skipped["z01-ctsw03"]
    assert "more than a record" in records.skipped["z01-ctsw04"] and "JSON" in records.skipped["z01-rtsw001"]


def test_a_record_everyone_may_write_is_not_trusted(tmp_path):
    store = FileStore(tmp_path / "lock", "fabric-1")
    store.put_record("drained", "z01-ctsw01", {"device": "z01-ctsw01", "since": 1.8e9})
    (store.folder / "drained" / "z01-ctsw01.json").chmod(0o666)
    assert store.records("drained").skipped["z01-ctsw01"].endswith("writable by every user")


@pytest.mark.parametrize("since", [1e308, -1.0, 0.0, "yesterday", True])
def test_a_lease_with_a_time_netgen_never_writes_is_refused(since):
    data = {**_lease().as_dict(), "since": since}
    with pytest.raises(ValueError, match="since"):
        Lease.from_dict(data)
    assert not math.isnan(Lease.from_dict(_lease().as_dict()).since)


def test_an_expired_lease_is_taken_over_and_the_take_over_journaled(tmp_path):
    store = FileStore(tmp_path / "lock", "fabric-1")
    gone = Lease.new("netgen drain z01-ctsw01", "drain-dead", "", 30)
    expired = Lease(gone.user, gone.host, gone.pid, gone.command, gone.change_id, gone.why, gone.since - 120,
                    gone.since - 60, gone.token)
    store.acquire(["zone-01"], expired, 30)
    fresh = _lease()
    store.acquire(["zone-01"], fresh, 30)
    assert store.leases()[0]["zone-01"].token == fresh.token
    (event,) = [json.loads(line) for line in (store.folder / "events.jsonl").read_text().splitlines()]
    assert (event["event"], event["why"]) == ("lease taken over", "expired")
    assert event["old"]["change_id"] == "drain-dead"


def _race(root: str, start: float, results) -> None:  # runs in a child process
    store = FileStore(__import__("pathlib").Path(root), "fabric-1")
    while time.time() < start:
        pass
    try:
        store.acquire(["zone-01", "zone-02"], _lease(), 30)
        results.put("won")
    except LockHeld as exc:
        results.put(f"refused:{exc.scope}")


def test_of_many_processes_racing_for_one_zone_exactly_one_wins():
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as root:
        start = time.time() + 2.0  # every child waits for the same instant, then all go at once
        children = [context.Process(target=_race, args=(root, start, results)) for _ in range(8)]
        for child in children:
            child.start()
        outcomes = [results.get(timeout=120) for _ in children]
        for child in children:
            child.join(timeout=60)
    assert outcomes.count("won") == 1, outcomes
    assert all(o.startswith("refused:zone-0") for o in outcomes if o != "won")
