"""Issue 34's proof in the lab: a CTSW drained gracefully and put back under traffic loses no
datagram, a cut loses some and says how many, and every RTSW's ECMP goes N -> N-1 -> N. One zone of
the small example (3 racks, 4 CTSWs: 7 FRR routers, 3 hosts), 64 UDP flows between every ordered
pair of hosts, each at 200 datagrams per second."""

from __future__ import annotations

import pytest

from netgen.lab.netns import NetnsBackend
from netgen.lab.verify import FRR_DRAIN
from netgen.platforms.frr_drain import drain_commands, drained_state, scope_of_config, undrain_commands, vtysh_argv
from tests.conftest import SMALL
from tests.lab.conftest import HostSnapshot, assert_nothing_left, cli_json, lab_name, needs_lab

pytestmark = [pytest.mark.lab, needs_lab]

TARGET = "z01-ctsw02"
RTSWS = ("z01-rtsw001", "z01-rtsw002", "z01-rtsw003")


@pytest.fixture(scope="module")
def zone_lab():
    before = HostSnapshot.take()
    name = lab_name("dt")
    code, report = cli_json("lab", "up", str(SMALL), "--name", name, "--zone", "1", "--racks", "3", "--ctsw", "4")
    try:
        assert code == 0, report
        assert report["build"]["routers"] == 7 and report["converged"] is True
        yield name
    finally:
        code, down = cli_json("lab", "down", "--name", name)
        assert code == 0, down
        assert_nothing_left(before, name)


def drill(name: str, mode: str) -> tuple[dict, dict[str, dict]]:
    code, report = cli_json("lab", "verify", "--name", name, "--drill", "--drill-device", TARGET, "--drill-mode", mode,
                            "--traffic")
    assert code == 0, [r for r in report["results"] if not r["ok"]]
    phases = {p["phase"]: p for p in report["drill"]["traffic"]}
    print(f"\n{mode} {TARGET}:", *(f"{p['phase']}: {p['sent']} sent, {p['lost']} lost ({p['seconds']} s),"
                                 f" {p['forwarded_by_device']} through {TARGET}" for p in phases.values()), sep="\n  ")
    return report, phases


def test_drain_and_undrain_under_traffic_lose_nothing(zone_lab):
    report, phases = drill(zone_lab, "drain")
    assert list(phases) == ["before", "drain", "drained", "undrain", "after"]
    for phase in phases.values():
        assert (phase["flows"], phase["rate_pps"]) == (64, 200)
        assert phase["sent"] > 0 and phase["lost"] == 0, phase
    assert report["drill"]["receiver_buffer_drops"] == 0 and report["drill"]["send_errors"] == 0
    # the flows did cross the CTSW, and none did while it was drained (its kernel's forwarded count)
    assert phases["before"]["forwarded_by_device"] > 0 and phases["undrain"]["forwarded_by_device"] > 0
    assert phases["drained"]["forwarded_by_device"] == 0
    # 4 links to each of 4 CTSWs: 16 next hops, 12 while one is drained, 16 again, on every RTSW
    assert report["drill"]["ecmp_widths"] == {rtsw: [[16], [12], [16]] for rtsw in RTSWS}
    results = {r["subject"].removeprefix(f"drain {TARGET}: "): r for r in report["results"] if r["check"] == "drill"}
    assert all(r["ok"] for r in results.values())
    # on each of its 4 links to the CTSW, each RTSW learns over IPv4 the CTSW's loopback and its two
    # neighbours' loopbacks and rack subnets, over IPv6 the three loopbacks: the same prefixes while
    # drained, their paths 3 x the CTSW's ASN longer
    assert results["no route leaked"]["detail"] == (
        "24 sessions: the same prefixes as before (3/5 each), every path longer by 3 x AS 4200000001")
    assert results["every session stays up"]["detail"] == "96 sessions stayed Established"
    assert results["read back drained"]["ok"] and results["read back undrained"]["ok"]
    assert results["drained twice adds nothing"]["ok"]


def test_cut_under_traffic_loses_and_says_how_many(zone_lab):
    report, phases = drill(zone_lab, "cut")
    assert list(phases) == ["before", "cut", "out", "restore", "after"]
    assert phases["cut"]["lost"] > 0
    assert phases["before"]["lost"] == 0 and phases["after"]["lost"] == 0
    assert phases["before"]["forwarded_by_device"] > 0 and phases["out"]["forwarded_by_device"] == 0
    detail = next(r["detail"] for r in report["results"] if r["subject"] == f"cut {TARGET}: traffic cut")
    assert f"{phases['cut']['lost']} lost on " in detail
    assert report["drill"]["ecmp_widths"] == {rtsw: [[16], [12], [16]] for rtsw in RTSWS}


def test_drain_twice_undrain_twice_leaves_the_config_as_it_was(zone_lab):
    """Repeat-safe both ways, and undrain removes exactly what drain added: the whole running config
    is the one the router started with."""
    backend = NetnsBackend(zone_lab)
    node = backend.plan().nodes[TARGET]
    assert node.frr_conf is not None
    scope = scope_of_config(node.frr_conf)

    def running() -> str:
        result = backend.exec(TARGET, ["vtysh", "-c", "show running-config"])
        assert result.ok, result
        return result.stdout

    def vtysh(lines: list[str]) -> None:
        result = backend.exec(TARGET, vtysh_argv(lines))
        assert result.ok and "%" not in result.stdout, result

    original = running()
    assert drained_state(original) is False
    vtysh(drain_commands(scope))
    drained = running()
    assert drained_state(drained) is True
    # as FRR 8.4 writes the entry: its exit policy first, then its set
    assert (f"route-map RM-FABRIC-OUT permit 1\n on-match next\n set as-path prepend {' '.join(['4200000001'] * 3)}\n"
            "exit\n") in drained
    vtysh(drain_commands(scope))
    assert running() == drained
    vtysh(undrain_commands(scope))
    assert running() == original
    vtysh(undrain_commands(scope))
    assert running() == original and drained_state(running()) is False
    assert FRR_DRAIN.drained(original) is False
