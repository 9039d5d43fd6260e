"""The push rules (netgen/sot/sync.py) against an in-memory source of truth: what is created,
updated, left alone, blocked and reported stale, and that a dry run writes nothing. The real
Nautobot is in test_push.py; this tier needs nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from netgen.sot.base import DeviceFacts, Held
from netgen.sot.objects import Wanted, wanted_objects
from netgen.sot.sync import push
from tests.conftest import SMALL

pytestmark = pytest.mark.render


@dataclass
class MemorySot:
    """Holds objects by (kind, key); `netgen` marks what netgen made."""

    name: str = "memory"
    store: dict[tuple[str, tuple[str, ...]], Held] = field(default_factory=dict)
    writes: list[tuple[str, str, int]] = field(default_factory=list)  # (create|update, kind, how many)

    def prepare(self, fabric: str, dry_run: bool) -> list[str]:
        return []

    def supports(self, kind: str) -> str | None:
        return None

    def held(self, fabric: str, kind: str) -> dict[tuple[str, ...], Held]:
        return {key: held for (k, key), held in self.store.items() if k == kind}

    def create(self, fabric: str, kind: str, objects: list[Wanted]) -> None:
        self.writes.append(("create", kind, len(objects)))
        for item in objects:
            self.store[(kind, item.key)] = Held(f"{kind}:{item.key}", dict(item.fields), netgen=True)

    def update(self, fabric: str, kind: str, changes: list[tuple[Held, Wanted]]) -> None:
        self.writes.append(("update", kind, len(changes)))
        for held, item in changes:
            self.store[(kind, item.key)] = Held(held.id, dict(item.fields), netgen=True)

    def device_facts(self, fabric: str) -> dict[str, DeviceFacts]:
        return {}


@pytest.fixture(scope="module")
def wanted(small_context) -> list[Wanted]:
    return wanted_objects(small_context)


@pytest.fixture(scope="module")
def small_context():
    from netgen.checks import DesignContext  # noqa: PLC0415
    from netgen.intent import load_fabric  # noqa: PLC0415
    from netgen.topology import expand  # noqa: PLC0415

    loaded = load_fabric(SMALL)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def by_kind(report):
    return {k.kind: k for k in report.kinds}


def test_every_object_has_one_key_and_its_parents_come_first(wanted):
    keys = [(w.kind, w.key) for w in wanted]
    assert len(keys) == len(set(keys)) == 1654
    seen: set = set()
    for item in wanted:
        assert all(parent in seen for parent in item.parents), f"{item.label} before its parent"
        seen.add((item.kind, item.key))


def test_empty_then_again_then_drift(wanted):
    sot = MemorySot()
    first = push(sot, "small-lab", wanted, dry_run=False)
    assert first.changes == len(wanted) and all(not k.updated for k in first.kinds)
    again = push(sot, "small-lab", wanted, dry_run=False)
    assert again.changes == 0 and sot.writes[-1][0] == "create"  # the second push wrote nothing
    key = ("interface", ("z01-rtsw001", "Ethernet448"))
    held = sot.store[key]
    sot.store[key] = Held(held.id, {**held.fields, "mtu": 1500}, netgen=True)
    fixed = by_kind(push(sot, "small-lab", wanted, dry_run=False))["interface"]
    assert fixed.updated == ["z01-rtsw001:Ethernet448: mtu 1500 -> 9100"]
    assert sot.store[key].fields["mtu"] == 9100


def test_a_dry_run_writes_nothing(wanted):
    sot = MemorySot()
    report = push(sot, "small-lab", wanted, dry_run=True)
    assert report.dry_run and report.changes == len(wanted) and sot.writes == [] and sot.store == {}


def test_a_device_netgen_did_not_make_is_left_alone_with_all_that_hangs_on_it(wanted):
    sot = MemorySot()
    sot.store[("device", ("z01-rtsw001",))] = Held("theirs", {"role": "leaf"}, netgen=False)
    report = by_kind(push(sot, "small-lab", wanted, dry_run=False))
    assert report["device"].foreign == ["z01-rtsw001"]
    assert sot.store[("device", ("z01-rtsw001",))] == Held("theirs", {"role": "leaf"}, netgen=False)
    # its 33 interfaces, the 32 cables on them, and every address on them (loopback v4+v6, 16
    # uplinks x 2 families, 16 host NIC cables carry no switch-side address) are not written
    assert len(report["interface"].blocked) == 33
    assert len(report["cable"].blocked) == 32
    assert len(report["ip_address"].blocked) == 2 + 16 * 2
    assert not any(kind == "interface" and key[0] == "z01-rtsw001" for kind, key in sot.store)
    # everything else landed
    assert ("interface", ("z01-rtsw002", "Ethernet448")) in sot.store


def test_shared_objects_are_used_as_they_are_and_stale_ones_are_reported_not_removed(wanted):
    sot = MemorySot()
    sot.store[("role", ("rtsw",))] = Held("their-role", {}, netgen=False)
    sot.store[("device", ("z09-rtsw001",))] = Held("old", {}, netgen=True)  # netgen's, gone from the fabric
    report = by_kind(push(sot, "small-lab", wanted, dry_run=False))
    assert report["role"].unchanged == 1 and "rtsw" not in report["role"].created
    assert report["device"].stale == ["z09-rtsw001"] and ("device", ("z09-rtsw001",)) in sot.store
