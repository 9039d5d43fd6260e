"""Device checks, data-driven: each check class against device states that must pass and fail."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from netgen.deploy.checks import (
    CHECKS,
    Facts,
    Outcome,
    PlannedNeighbor,
    VerifyBgpBaseline,
    VerifyBgpEstablished,
    VerifyEcmpWidth,
    VerifyInterfaceErrors,
    VerifyLldpNeighbors,
    VerifyModel,
    VerifyNoDiff,
    VerifyNoPfcStorm,
    VerifyPfcEnabled,
)

pytestmark = pytest.mark.render


SONIC_FACTS = Facts("z01-rtsw001", "Arista-7060X6-64PE-O128S2", "sonic", "202505")


@dataclass
class FakeDevice:
    name: str = "z01-rtsw001"
    facts_: Facts = SONIC_FACTS
    peers: dict[str, str] = field(default_factory=lambda: {"10.1.16.0": "Established", "10.1.16.2": "Established"})
    pfc: dict[str, set[int]] = field(default_factory=lambda: {"Ethernet0": {3}, "Ethernet448": {3}})
    storms: list[str] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=lambda: {"Ethernet0": 5, "Ethernet448": 0})
    diff: str = ""
    broken: bool = False
    widths: dict[str, int] = field(default_factory=lambda: {"10.0.1.2/32": 16, "10.128.16.32/27": 16})
    # what LLDP hears: the two uplinks as planned (SONiC CTSWs send their port alias), the host NIC
    lldp: dict[str, list[tuple[str, str]]] | None = field(default_factory=lambda: {
        "Ethernet448": [("z01-ctsw001", "etp1")], "Ethernet456": [("z01-ctsw002", "etp1")],
        "Ethernet0": [("z01-r001-h01", "b8:3f:d2:00:00:01")]})

    def facts(self) -> Facts:
        if self.broken:
            raise ConnectionError("session dropped")
        return self.facts_

    def bgp_peers(self) -> dict[str, str]:
        return self.peers

    def pfc_priorities(self) -> dict[str, set[int]]:
        return self.pfc

    def pfc_storms(self) -> list[str]:
        return self.storms

    def interface_errors(self) -> dict[str, int]:
        return self.errors

    def config_diff(self) -> str:
        return self.diff

    def route_widths(self) -> dict[str, int]:
        return self.widths

    def lldp_neighbors(self) -> dict[str, list[tuple[str, str]]]:
        if self.lldp is None:  # as the SONiC driver says when the lldp container is not running
            raise RuntimeError("`show lldp table` printed no neighbour table")
        return self.lldp


MODEL = VerifyModel(VerifyModel.Inputs(hostname="z01-rtsw001", nos="sonic",
                                       models=("arista-7060x6-64pe-sonic", "Arista-7060X6-64PE-O128S2")))
BGP = VerifyBgpEstablished(VerifyBgpEstablished.Inputs(peers=("10.1.16.0", "10.1.16.2")))
PFC = VerifyPfcEnabled(VerifyPfcEnabled.Inputs(interfaces=("Ethernet0", "Ethernet448"), priority=3))
ERRORS = VerifyInterfaceErrors(VerifyInterfaceErrors.Inputs(baseline={"Ethernet0": 5}))

LLDP_PORTS = {"Ethernet448": PlannedNeighbor(system="z01-ctsw001", port="Ethernet0", port_ids=("etp1",)),
              "Ethernet456": PlannedNeighbor(system="z01-ctsw002", port="Ethernet0", port_ids=("etp1",)),
              "Ethernet0": PlannedNeighbor(system="z01-r001-h01", port="nic1")}
NAMES = frozenset({"z01-rtsw001", "z01-ctsw001", "z01-ctsw002", "z01-r001-h01", "z01-r002-h01"})
LLDP_RECORDING = VerifyLldpNeighbors(VerifyLldpNeighbors.Inputs(ports=LLDP_PORTS, fabric_names=NAMES))
LLDP_STRICT = VerifyLldpNeighbors(VerifyLldpNeighbors.Inputs(ports=LLDP_PORTS, fabric_names=NAMES,
                                                             required=("Ethernet448", "Ethernet456")))
SWAPPED = {"Ethernet448": [("z01-ctsw002", "etp1")], "Ethernet456": [("z01-ctsw001", "etp1")]}

CASES = [
    # (check, device, outcome, text in detail)
    (MODEL, FakeDevice(), Outcome.PASS, "sonic 202505"),
    (MODEL, FakeDevice(facts_=Facts("z01-rtsw001", "Arista-7060X6-64PE-O128S2", "eos", "4.33")), Outcome.FAIL,
     "runs eos, intent says sonic"),
    (MODEL, FakeDevice(facts_=Facts("z01-rtsw002", "Arista-7060X6-64PE-O128S2", "sonic", "x")), Outcome.FAIL,
     "hostname 'z01-rtsw002', expected 'z01-rtsw001'"),
    (MODEL, FakeDevice(facts_=Facts("z01-rtsw001", "Force10-S6000", "sonic", "x")), Outcome.FAIL, "Force10-S6000"),
    (MODEL, FakeDevice(broken=True), Outcome.ERROR, "ConnectionError: session dropped"),
    (VerifyModel(VerifyModel.Inputs(hostname="z01-rtsw001", nos="sonic")),
     FakeDevice(facts_=Facts("z01-rtsw001", "anything", "sonic", "x")), Outcome.PASS, "model not checked"),
    (BGP, FakeDevice(), Outcome.PASS, "2 neighbours Established"),
    (BGP, FakeDevice(peers={"10.1.16.0": "Established", "10.1.16.2": "Active"}), Outcome.FAIL, "10.1.16.2 Active"),
    (BGP, FakeDevice(peers={"10.1.16.0": "Established"}), Outcome.FAIL, "10.1.16.2 not configured"),
    (VerifyBgpBaseline(VerifyBgpBaseline.Inputs(peers=("10.1.16.0", "10.1.16.2"), allow_down=1)),
     FakeDevice(peers={"10.1.16.0": "Idle", "10.1.16.2": "Established"}), Outcome.PASS, "down: 10.1.16.0"),
    (VerifyBgpBaseline(VerifyBgpBaseline.Inputs(peers=("10.1.16.0", "10.1.16.2"))),
     FakeDevice(peers={"10.1.16.0": "Idle", "10.1.16.2": "Established"}), Outcome.FAIL, "1/2 Established"),
    (PFC, FakeDevice(), Outcome.PASS, "priority 3 on 2 ports"),
    (PFC, FakeDevice(pfc={"Ethernet0": {3, 4}, "Ethernet448": {3}}), Outcome.FAIL, "Ethernet0 [3, 4]"),
    (PFC, FakeDevice(pfc={"Ethernet0": {3}}), Outcome.FAIL, "Ethernet448 []"),
    (VerifyNoPfcStorm(VerifyNoPfcStorm.Inputs()), FakeDevice(), Outcome.PASS, "no storm"),
    (VerifyNoPfcStorm(VerifyNoPfcStorm.Inputs()), FakeDevice(storms=["Ethernet448"]), Outcome.FAIL,
     "storm on Ethernet448"),
    (ERRORS, FakeDevice(), Outcome.PASS, "no new errors"),
    (ERRORS, FakeDevice(errors={"Ethernet0": 9, "Ethernet448": 0}), Outcome.FAIL, "Ethernet0 +4"),
    (VerifyNoDiff(VerifyNoDiff.Inputs()), FakeDevice(), Outcome.PASS, "running = intended"),
    (VerifyNoDiff(VerifyNoDiff.Inputs()), FakeDevice(diff="--- a\n+++ b\n@@\n-mtu 1500\n+mtu 9100\n"),
     Outcome.FAIL, "2 line(s) still differ"),
    (VerifyEcmpWidth(VerifyEcmpWidth.Inputs(baseline={"10.0.1.2/32": 16})), FakeDevice(), Outcome.PASS,
     "1 BGP routes, none narrower (widths [16])"),
    (VerifyEcmpWidth(VerifyEcmpWidth.Inputs(baseline={"10.0.1.2/32": 16})),
     FakeDevice(widths={"10.0.1.2/32": 12}), Outcome.FAIL, "10.0.1.2/32 16->12"),
    (VerifyEcmpWidth(VerifyEcmpWidth.Inputs(baseline={"10.0.1.2/32": 16})), FakeDevice(widths={}), Outcome.FAIL,
     "10.0.1.2/32 16->0"),
    (LLDP_STRICT, FakeDevice(), Outcome.PASS, "3/3 ports hear their planned neighbour"),
    # two uplinks swapped: both ports named, each with what it hears and what the plan says
    (LLDP_RECORDING, FakeDevice(lldp=SWAPPED), Outcome.FAIL,
     "Ethernet448 miscabled: hears z01-ctsw002 etp1, planned z01-ctsw001 Ethernet0 (port ID etp1); "
     "Ethernet456 miscabled: hears z01-ctsw001 etp1, planned z01-ctsw002 Ethernet0 (port ID etp1)"),
    # the planned switch, another of its ports
    (LLDP_RECORDING, FakeDevice(lldp={"Ethernet448": [("z01-ctsw001", "etp2")]}), Outcome.FAIL,
     "Ethernet448 miscabled: hears z01-ctsw001 etp2"),
    # another rack's host on this rack's NIC port (a host's port ID is not judged, its name is)
    (LLDP_RECORDING, FakeDevice(lldp={"Ethernet0": [("z01-r002-h01", "eth0")]}), Outcome.FAIL,
     "Ethernet0 miscabled: hears z01-r002-h01 eth0, planned z01-r001-h01 nic1"),
    # a peer not named yet ("sonic") and a silent port: recorded before a change, not judged ...
    (LLDP_RECORDING, FakeDevice(lldp={"Ethernet448": [("sonic", "etp1")]}), Outcome.PASS,
     "0/3 ports hear their planned neighbour, 2 silent, 1 unidentified"),
    # ... but a port that must hear its neighbour fails either way
    (LLDP_STRICT, FakeDevice(lldp={"Ethernet448": [("sonic", "etp1")]}), Outcome.FAIL,
     "Ethernet448 hears sonic etp1, planned z01-ctsw001 Ethernet0 (port ID etp1); Ethernet456 hears nothing"),
    # an FQDN and another case are the same system; a second neighbour on the port does not hide the planned one
    (LLDP_STRICT, FakeDevice(lldp={"Ethernet448": [("Z01-CTSW001.fabric.example", "etp1")],
                                   "Ethernet456": [("sonic", "etp9"), ("z01-ctsw002", "etp1")]}), Outcome.PASS,
     "2/3 ports hear their planned neighbour, 1 silent"),
    (LLDP_RECORDING, FakeDevice(lldp=None), Outcome.ERROR, "RuntimeError: `show lldp table` printed no"),
]


@pytest.mark.parametrize(("check", "device", "outcome", "needle"), CASES,
                         ids=[f"{c.name}-{o.value}-{i}" for i, (c, _, o, _) in enumerate(CASES)])
def test_check(check, device, outcome, needle):
    result = check.run(device)
    assert result.outcome is outcome, result.detail
    assert needle in result.detail
    assert result.device == device.name and result.check == check.name


def test_every_registered_check_has_a_passing_and_a_failing_case():
    covered = {(c.name, o) for c, _, o, _ in CASES}
    for name in CHECKS:
        assert (name, Outcome.PASS) in covered, f"{name} has no passing case"
        assert (name, Outcome.FAIL) in covered, f"{name} has no failing case"


def test_inputs_reject_unknown_fields():
    with pytest.raises(ValueError, match="extra"):
        VerifyPfcEnabled.Inputs(interfaces=("Ethernet0",), priority=3, priorty=4)
