"""The deploy pipeline's decisions, against scripted fake devices on real Nornir: which status each
device ends in, that the old or the new config is what remains, and that a failed batch stops the
rollout before later batches are touched. (End-to-end runs against SSH endpoints are elsewhere.)"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from nornir.core.plugins.connections import ConnectionPluginRegister

from netgen.checks import DesignContext
from netgen.deploy import pipeline
from netgen.deploy.checks import Facts
from netgen.deploy.driver import DrainReadback, DriverError, Readback, StagedChange
from netgen.deploy.inventory import Credentials, DeployFile, RolloutPolicy, make_nornir, nornir_inventory
from netgen.deploy.journal import Journal
from netgen.deploy.journal import read as read_journal
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import DeviceOutcome, Status, check_timeouts, deploy_one, run_rollout
from netgen.deploy.rollout import plan_batches
from netgen.intent import load_fabric
from netgen.platforms.routing import bgp_plan
from netgen.topology import expand
from netgen.topology.selection import select
from tests.conftest import SMALL
from tests.support.nos import bundles_with

pytestmark = pytest.mark.render

LOADED = load_fabric(SMALL)
CTX = DesignContext(LOADED.fabric, LOADED.catalog, expand(LOADED.fabric, LOADED.catalog))


@dataclass
class FakeSwitch:
    """What a device holds: its running and saved config, a pending revert timer, scripted faults."""

    name: str
    running: str = "old"
    saved: str = "old"
    timer: bool = False  # a revert timer is armed (EOS commit timer, SONiC systemd timer)
    faults: set[str] = field(default_factory=set)
    events: list[tuple[str, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeDriver:
    """Acts on a FakeSwitch as a NOS driver does; keeps nothing a reconnect would lose: the old
    config to return to lives on the switch (`before`), as a checkpoint or a session does."""

    nos = "fake"
    BEFORE: ClassVar[dict[str, str]] = {}  # switch -> the config at commit time (the device's checkpoint)

    def __init__(self, switch: FakeSwitch, intended: str = "new") -> None:
        self.switch, self.name, self.intended = switch, switch.name, intended
        device = CTX.topology.devices[switch.name]
        self.peers = [n.address for n in bgp_plan(CTX, device).neighbors]
        self.ports = [p.name for p in CTX.topology.ports[switch.name]]
        self.rounds = 0

    def new_round(self) -> None:
        self.rounds += 1

    def facts(self) -> Facts:
        device = CTX.topology.devices[self.name]
        model = CTX.model(device)
        hwsku = model.sonic.hwsku if model.sonic else "x"
        return Facts("wrong-name" if "wrong_host" in self.switch.faults else self.name, hwsku, device.nos, "1.0")

    def bgp_peers(self) -> dict[str, str]:
        down = "bgp_down" in self.switch.faults and self.switch.running == self.intended
        return dict.fromkeys(self.peers, "Idle" if down else "Established")

    def pfc_priorities(self) -> dict[str, set[int]]:
        return {p: {3} for p in self.ports}

    def pfc_storms(self) -> list[str]:
        return ["Ethernet0"] if "storm" in self.switch.faults else []

    def interface_errors(self) -> dict[str, int]:
        return {}

    def route_widths(self) -> dict[str, int]:
        return {"10.0.1.2/32": 4 if "narrow" in self.switch.faults and self.switch.running == self.intended else 16}

    def lldp_neighbors(self) -> dict[str, list[tuple[str, str]]]:
        """Every port hears its planned neighbour; faults: two uplinks swapped (`miscabled`), or
        the change leaves the fabric ports silent (`lldp_lost`, as a change that shuts them would)."""
        plan = pipeline.lldp_plan(CTX, CTX.topology.devices[self.name])
        heard = {port: [(want.system, want.port_ids[0] if want.port_ids else "b8:00:00:00:00:01")]
                 for port, want in plan.items()}
        if "lldp_lost" in self.switch.faults and self.switch.running == self.intended:
            heard = {port: seen for port, seen in heard.items() if not plan[port].port_ids}
        if "miscabled" in self.switch.faults:
            a, b = [port for port, want in plan.items() if want.port_ids][:2]
            heard[a], heard[b] = heard[b], heard[a]
        return heard

    def config_diff(self) -> str:
        return "" if self.switch.running == self.intended else f"-{self.switch.running}\n+{self.intended}\n"

    def stage(self) -> StagedChange:
        if "refuse" in self.switch.faults:
            raise DriverError(f"{self.name}: % Invalid input")
        diff = self.config_diff()
        return StagedChange(diff, 0 if not diff else 2, {"before": self.switch.running})

    def discard(self) -> None:
        pass

    def commit(self, confirm_timeout_s: int) -> None:
        self.switch.events.append(("commit", time.time()))
        if "drop_before_commit" in self.switch.faults:
            raise EOFError("connection dropped")
        self.BEFORE[self.name] = self.switch.running
        self.switch.running, self.switch.timer = self.intended, True
        time.sleep(0.02)  # a commit window long enough to overlap if batches were wrong
        if "drop_after_commit" in self.switch.faults:
            raise EOFError("connection dropped")

    def confirm(self) -> None:
        self.switch.events.append(("confirm", time.time()))
        if "timer_expired" in self.switch.faults:  # the revert timer ran out just before the confirm
            self.switch.running, self.switch.timer = self.BEFORE[self.name], False
            return
        self.switch.timer = False
        if "drop_before_save" in self.switch.faults:
            self.switch.faults.discard("drop_before_save")
            raise EOFError("connection dropped")
        self.save()

    def save(self) -> None:
        self.switch.events.append(("save", time.time()))
        self.switch.saved = self.switch.running

    def rollback(self) -> None:
        if "rollback_fails" in self.switch.faults:
            raise OSError("device unreachable")
        if "rollback_refused" in self.switch.faults:
            raise DriverError(f"{self.name}: % Error: abort refused")
        if self.switch.timer:
            self.switch.running, self.switch.timer = self.BEFORE[self.name], False
        self.switch.events.append(("rollback", time.time()))

    def running_digest(self) -> str:
        return self.switch.running

    def drain_state(self) -> DrainReadback:
        drained = "drained" in self.switch.faults
        return DrainReadback(drained, drained, "drained" if drained else "not drained")

    def keep_drained(self, seen: DrainReadback) -> None:
        assert seen.state is not False  # what the pre-check read is what is kept
        self.intended = f"{self.intended}+drain"

    def readback(self, before: str, after: str | None) -> Readback:
        if "rollback_fails" in self.switch.faults:
            raise OSError("device unreachable")
        running = self.switch.running
        holds = "new" if running == after else "old" if running == before else "other"
        return Readback(holds, self.switch.saved == running, "timer" if self.switch.timer else "",
                        f"running {running}, saved {self.switch.saved}")


def _outcome(name: str) -> DeviceOutcome:
    device = CTX.topology.devices[name]
    return DeviceOutcome(name, device.role.value, device.zone, device.nos, 1)


def _deploy(switch: FakeSwitch, dry_run: bool = False, recover: bool = True) -> DeviceOutcome:
    driver = FakeDriver(switch)
    options = DeployOptions(change_id="t1", dry_run=dry_run, post_check_timeout_s=0.0)
    # a reconnect gives a fresh driver on the same device (what it committed is on the switch)
    reconnect = (lambda: _reconnect(driver)) if recover else None
    return deploy_one(driver, CTX, CTX.topology.devices[switch.name], options, _outcome(switch.name), reconnect)


def _reconnect(old: FakeDriver) -> FakeDriver:
    return FakeDriver(old.switch)


@pytest.mark.parametrize(("faults", "dry_run", "status", "running", "stage"), [
    (set(), False, Status.CHANGED, "new", "confirm"),
    (set(), True, Status.DRY_RUN, "old", "diff"),
    ({"bgp_down"}, False, Status.ROLLED_BACK, "old", "rollback"),
    ({"storm"}, False, Status.FAILED, "old", "pre-check"),
    ({"wrong_host"}, False, Status.FAILED, "old", "pre-check"),
    ({"refuse"}, False, Status.FAILED, "old", "diff"),
    ({"drop_before_commit"}, False, Status.ROLLED_BACK, "old", "commit"),
    ({"drop_after_commit"}, False, Status.ROLLED_BACK, "old", "commit"),
    ({"drop_after_commit", "rollback_fails"}, False, Status.UNCONFIRMED, "new", "commit"),
    ({"narrow"}, False, Status.ROLLED_BACK, "old", "rollback"),
    # cabling: a miscabled switch is not touched; a change after which ports go silent is undone
    ({"miscabled"}, False, Status.FAILED, "old", "pre-check"),
    ({"lldp_lost"}, False, Status.ROLLED_BACK, "old", "rollback"),
    # read back, not inferred: a confirm that found the old config, a refused rollback
    ({"timer_expired"}, False, Status.DIVERGED, "old", "confirm"),
    ({"bgp_down", "rollback_refused"}, False, Status.UNCONFIRMED, "new", "rollback"),
    # a drop between the confirm and the save: the reconnect finishes the confirm
    ({"drop_before_save"}, False, Status.CHANGED, "new", "confirm"),
])
def test_device_ends_in_old_or_new_config(faults, dry_run, status, running, stage):
    switch = FakeSwitch("z01-rtsw001", faults=set(faults))
    outcome = _deploy(switch, dry_run)
    assert outcome.status is status, outcome.error
    assert switch.running == running  # exactly old or exactly new, never in between
    assert outcome.stage == stage
    if status in (Status.FAILED, Status.ROLLED_BACK, Status.UNCONFIRMED, Status.DIVERGED):
        assert outcome.error
    if status is Status.UNCONFIRMED and "rollback_fails" in faults:
        assert "recovery after reconnect failed" in outcome.error and outcome.readback is None
    if status is Status.UNCONFIRMED and "rollback_refused" in faults:  # reachable: says what it holds
        assert outcome.readback == {"holds": "new", "saved": False, "pending": "timer",
                                    "detail": "running new, saved old"}
        assert "reverts by itself" in outcome.error
    if status is Status.CHANGED:
        assert switch.saved == "new" and not switch.timer and outcome.readback["holds"] == "new"
    if status is Status.DIVERGED:
        assert "the device was seen: running " + running in outcome.error
    if faults & {"miscabled", "lldp_lost"}:
        assert "lldp-neighbors: " in outcome.error
        assert ("miscabled: hears z01-ctsw" if "miscabled" in faults else "hears nothing, planned z01-ctsw") \
            in outcome.error


def test_every_transition_is_journaled_before_it_happens(tmp_path):
    journal = Journal(tmp_path / "j.jsonl", "t1")
    switch = FakeSwitch("z01-rtsw001", faults={"bgp_down"})
    options = DeployOptions(change_id="t1", post_check_timeout_s=0.0, journal=journal)
    outcome = deploy_one(FakeDriver(switch), CTX, CTX.topology.devices[switch.name], options,
                         _outcome(switch.name), None)
    assert outcome.status is Status.ROLLED_BACK
    view = read_journal(journal.path)
    record = view.records["z01-rtsw001"]
    assert record.history == ["staged", "committing", "committed", "rolling_back", "rolled_back"]
    assert (record.before, record.after) == ("old", "new")  # fingerprints, never the config
    assert not view.in_flight()


def test_an_interrupted_change_is_in_flight_in_the_journal(tmp_path):
    journal = Journal(tmp_path / "j.jsonl", "t1")
    switch = FakeSwitch("z01-rtsw001", faults={"drop_after_commit"})
    options = DeployOptions(change_id="t1", post_check_timeout_s=0.0, journal=journal)
    outcome = deploy_one(FakeDriver(switch), CTX, CTX.topology.devices[switch.name], options,
                         _outcome(switch.name), None)  # no reconnect possible
    assert outcome.status is Status.UNCONFIRMED
    (record,) = read_journal(journal.path).in_flight()
    # the drop came before the driver could read what it committed: only `before` is known
    assert (record.device, record.state, record.before, record.after) == ("z01-rtsw001", "unconfirmed", "old", None)


@pytest.mark.parametrize(("confirm", "post_check", "complaint"), [
    (300, 60, None),
    (90, 60, None),
    (60, 60, "does not cover --post-check-timeout 60 s plus 30 s"),
    (30, float("nan"), "--post-check-timeout nan"),
    (30, float("inf"), "--post-check-timeout inf"),
    (300, -1, "--post-check-timeout -1"),
    (0, 1, "--confirm-timeout 0"),
    (10**9, 1, "at most 3600"),
])
def test_timeouts_are_checked(confirm, post_check, complaint):
    problem = check_timeouts(confirm, post_check)
    if complaint is None:
        assert problem is None
    else:
        assert problem is not None and complaint in problem


def test_a_drained_switch_is_refused_unless_its_drain_is_kept():
    """A push of the rendered config would undrain a drained switch: refused before anything is
    staged; --keep-drained pushes the intent with the drain in it."""
    switch = FakeSwitch("z01-rtsw001", faults={"drained"})
    outcome = _deploy(switch)
    assert outcome.status is Status.FAILED and switch.running == "old" and switch.events == []
    drain = outcome.checks[0]
    assert (drain["check"], drain["outcome"]) == ("drain", "fail")
    assert "netgen undrain z01-rtsw001" in drain["detail"] and "--keep-drained" in outcome.error
    kept = FakeDriver(switch)
    options = DeployOptions(change_id="t1", post_check_timeout_s=0.0, keep_drained=True)
    outcome = deploy_one(kept, CTX, CTX.topology.devices[switch.name], options, _outcome(switch.name))
    assert outcome.status is Status.CHANGED and switch.running == "new+drain" == switch.saved
    assert outcome.checks[0]["detail"] == "drained: the change keeps the drain (--keep-drained)"


def test_converged_device_is_unchanged_and_not_committed():
    switch = FakeSwitch("z01-rtsw001", running="new")
    outcome = _deploy(switch)
    assert outcome.status is Status.UNCHANGED and outcome.changes == 0 and switch.events == []


def test_post_check_failure_reports_which_check():
    outcome = _deploy(FakeSwitch("z01-ctsw01", faults={"bgp_down"}))
    assert outcome.status is Status.ROLLED_BACK
    assert "bgp-established" in outcome.error and "not Established" in outcome.error
    failed = [c for c in outcome.checks if c["outcome"] != "pass"]
    assert [c["check"] for c in failed] == ["bgp-established"]


def test_limit_patterns():
    names = list(CTX.topology.devices)
    assert select(names, CTX.topology.devices, "z01-rtsw00[12]") == ["z01-rtsw001", "z01-rtsw002"]
    assert select(names, CTX.topology.devices, "role:atsw") == ["atsw01", "atsw02"]
    assert len(select(names, CTX.topology.devices, "zone:2,atsw01")) == 9


# --- the rollout on real Nornir with a fake connection plugin ---------------------------------------


class FakeConnection:
    """Stands in for nornir_netmiko's connection plugin: hands out the device's fake switch."""

    def open(self, hostname: Any, username: Any, password: Any, port: Any, platform: Any,
             extras: Any = None, configuration: Any = None) -> None:
        self.connection = hostname

    def close(self) -> None:
        pass


FLEET: dict[str, FakeSwitch] = {}  # the fake devices of the running test (fleet), by name


def fake_driver(conn, device, files, change_id, timeout, ownership):
    """The deploy driver of every NOS while `fleet` runs (the NOS bundles' `driver` part)."""
    return FakeDriver(FLEET[device.name])


@pytest.fixture
def fleet(monkeypatch):
    switches = {name: FakeSwitch(name) for name in CTX.topology.devices}
    monkeypatch.setitem(ConnectionPluginRegister.available, "netmiko", FakeConnection)
    FLEET.update(switches)
    try:
        with bundles_with(["eos", "sonic"], driver=f"{__name__}:fake_driver"):
            yield switches
    finally:
        FLEET.clear()


def _rollout(switches, names, policy=None, **options):
    policy = policy or RolloutPolicy(workers=8)
    creds = Credentials("u", None, None, "test")
    nr = make_nornir(nornir_inventory(CTX.topology, DeployFile(), names, creds, None), policy.workers)
    batches = plan_batches(CTX.topology, names, policy)
    files = {n: {} for n in names}
    return run_rollout(nr, CTX, batches, files, DeployOptions(change_id="t1", post_check_timeout_s=0.0, **options))


def test_rollout_changes_everything_in_batches(fleet):
    report = _rollout(fleet, list(CTX.topology.devices))
    assert report.ok and report.counts() == {"changed": 18}
    assert all(s.running == "new" for s in fleet.values())


def test_canary_post_check_failure_stops_before_anything_else_is_touched(fleet):
    fleet["z01-rtsw001"].faults.add("bgp_down")
    report = _rollout(fleet, list(CTX.topology.devices))
    assert not report.ok and report.stopped and "a canary failed" in report.stopped_reason
    assert report.devices["z01-rtsw001"].status is Status.ROLLED_BACK
    assert report.counts() == {"rolled_back": 1, "not_touched": 17}
    assert all(s.running == "old" and not s.events for n, s in fleet.items() if n != "z01-rtsw001")


def test_failed_batch_stops_later_batches_and_max_failures_allows_some(fleet):
    fleet["z01-rtsw003"].faults.add("refuse")  # lands in the second RTSW batch
    report = _rollout(fleet, list(CTX.topology.devices))
    assert report.stopped and report.devices["z01-rtsw003"].status is Status.FAILED
    later = [o for o in report.devices.values() if o.batch > report.devices["z01-rtsw003"].batch]
    assert later and all(o.status is Status.NOT_TOUCHED for o in later)
    for switch in fleet.values():
        switch.faults.clear()
        switch.running = switch.saved = "old"
    fleet["z01-rtsw003"].faults.add("refuse")
    report = _rollout(fleet, list(CTX.topology.devices), max_failures=1)
    assert not report.stopped and report.counts() == {"changed": 17, "failed": 1}


def test_no_two_spines_of_a_zone_in_the_commit_window_at_once(fleet):
    names = [n for n in CTX.topology.devices if "ctsw" in n]
    report = _rollout(fleet, names, RolloutPolicy(workers=20))
    windows: dict[int, list[tuple[float, float]]] = {}
    for outcome in report.devices.values():
        assert outcome.commit_started is not None and outcome.commit_ended is not None
        windows.setdefault(outcome.zone, []).append((outcome.commit_started, outcome.commit_ended))
    for spans in windows.values():
        spans.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
