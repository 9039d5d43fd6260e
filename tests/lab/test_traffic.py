"""The drill's traffic without a lab: flows spread over the host pairs, loss counted per phase from
the agents' reports, and the two agents (netgen/lab/udp_flows.py) talking over this machine's
loopback, no root needed. The lab tier runs them in the hosts' namespaces
(tests/lab/test_drain_traffic.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from netgen.lab.adapters import plan_lab
from netgen.lab.backend import LabError
from netgen.lab.plan import SliceRequest
from netgen.lab.traffic import AGENT, Flow, TrafficRun, TrafficSpec, phase_losses, plan_flows

pytestmark = pytest.mark.render


def test_flows_spread_over_every_ordered_pair_of_hosts(ctx):
    plan = plan_lab("t", ctx, SliceRequest(zone=1, racks=3, ctsw=4))
    flows = plan_flows(plan, TrafficSpec(flows=64))
    assert len(flows) == 64
    pairs = {}
    for f in flows:
        pairs[(f.source, f.target)] = pairs.get((f.source, f.target), 0) + 1
    assert len(pairs) == 6 and sorted(pairs.values()) == [10, 10, 11, 11, 11, 11]  # 3 hosts, 64 = 6 x 10 + 4
    assert all(f.source != f.target for f in flows)
    # each sender's flows have their own source ports, in order from the base
    for host in {f.source for f in flows}:
        ports = [f.sport for f in flows if f.source == host]
        assert ports == list(range(40000, 40000 + len(ports)))
    first = flows[0]
    assert (first.source, first.source_ip, first.target) == ("z01-r001-h01", "10.128.16.2", "z01-r002-h01")
    with pytest.raises(LabError, match="--traffic-flows 5: the slice has 6 ordered host pairs"):
        plan_flows(plan, TrafficSpec(flows=5))
    with pytest.raises(LabError, match="two hosts"):
        plan_flows(plan_lab("t", ctx, SliceRequest(zone=1, racks=1, ctsw=1)), TrafficSpec())


def test_loss_is_counted_by_the_phase_a_datagram_was_sent_in():
    flows = [Flow("a", "b", "10.0.0.1", "10.0.0.2", 40000), Flow("a", "b", "10.0.0.1", "10.0.0.2", 40001),
             Flow("b", "a", "10.0.0.2", "10.0.0.1", 40000)]
    rounds = {"a": [100, 200, 300, 400, 500, 600], "b": [150, 250, 350, 450, 550, 650]}
    received = {"10.0.0.1:40000": [[0, 6]],  # all
                "10.0.0.1:40001": [[0, 2], [4, 6]],  # rounds 2 and 3 (sent at 300, 400) lost
                "10.0.0.2:40000": [[0, 3], [4, 5]]}  # rounds 3 (450) and 5 (650) lost
    phases = [("before", 0, 250), ("drain", 250, 450), ("after", 450, 700)]
    losses = phase_losses(phases, flows, rounds, received, rate=10)
    assert [(p.phase, p.sent, p.lost, p.flows_with_loss) for p in losses] == [
        ("before", 5, 0, 0),  # a: rounds 0-1 on 2 flows; b: round 0
        ("drain", 6, 2, 1),  # a: rounds 2-3, both lost on flow 40001; b: rounds 1-2
        ("after", 7, 2, 1)]  # a: rounds 4-5; b: rounds 3-5, 3 and 5 lost
    assert losses[1].describe() == "3 flows x 10 pps, 0.0 s: 6 sent, 2 lost on 1 flow(s)"
    assert losses[0].as_dict() == {"phase": "before", "seconds": 0.0, "flows": 3, "rate_pps": 10, "sent": 5,
                                   "lost": 0, "flows_with_loss": 0}


def test_traffic_needs_a_backend_with_namespaces(ctx):
    class NoNamespaces:
        pass

    plan = plan_lab("t", ctx, SliceRequest(zone=1, racks=2, ctsw=1))
    with pytest.raises(LabError, match="netns backend only"):
        TrafficRun(NoNamespaces(), plan, TrafficSpec())  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_agents_count_every_datagram_over_loopback():
    port, sport = _free_port(), _free_port()
    receiver = subprocess.Popen([sys.executable, str(AGENT), "receive", "--port", str(port)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    sender = None
    try:
        assert receiver.stdout is not None and receiver.stdout.readline().strip() == "ready"
        sender = subprocess.Popen([sys.executable, str(AGENT), "send", "--source", "127.0.0.1", "--port", str(port),
                                   "--sport-base", str(sport), "--rate", "500", "--flow", "127.0.0.1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert sender.stdout is not None and sender.stdout.readline().strip() == "started"
        sent = json.loads(sender.communicate(input="", timeout=20)[0])
        got = json.loads(receiver.communicate(input="", timeout=20)[0])
    finally:
        for process in (receiver, sender):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    rounds = len(sent["rounds_ns"])
    assert rounds >= 1 and sent["failed"] == []
    assert sent["rounds_ns"] == sorted(sent["rounds_ns"])
    assert got["flows"] == {f"127.0.0.1:{sport}": [[0, rounds]]}
