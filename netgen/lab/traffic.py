"""Traffic that counts its loss, for the lab's drills: sequence-numbered UDP flows between every
ordered pair of the lab's hosts (many source ports, so the routers' 5-tuple ECMP hash, which the
netns lab sets with net.ipv{4,6}.fib_multipath_hash_policy=1, spreads them over every spine), sent
at a fixed rate by udp_flows.py inside the hosts' namespaces, and per phase of a drill the datagrams
sent and lost.

A phase is a span of the controller's clock (CLOCK_MONOTONIC, which every namespace shares), begun
by `mark`; a datagram belongs to the phase it was sent in, and is lost when its receiver never got
it, however late it would have come: the receivers run until after the senders stop. The rounds
sent after the last phase ends are not counted."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from bisect import bisect_left
from dataclasses import dataclass
from ipaddress import ip_interface
from pathlib import Path
from typing import Any

from netgen.lab.backend import LabBackend, LabError
from netgen.lab.plan import LabPlan

AGENT = Path(__file__).with_name("udp_flows.py")
START_TIMEOUT_S = 10.0  # a Python start in a namespace; the agents say when they are up
STOP_TIMEOUT_S = 20.0


DEFAULT_FLOWS, DEFAULT_RATE = 64, 200.0


@dataclass(frozen=True, slots=True)
class TrafficSpec:
    flows: int = DEFAULT_FLOWS  # in all, spread evenly over every ordered pair of hosts
    rate: float = DEFAULT_RATE  # datagrams per second on each flow
    port: int = 47000  # the receivers' port
    sport_base: int = 40000  # each sender's flows use source ports sport_base, sport_base + 1, ...


@dataclass(frozen=True, slots=True)
class Flow:
    source: str  # host node
    target: str
    source_ip: str
    target_ip: str
    sport: int


def plan_flows(plan: LabPlan, spec: TrafficSpec) -> list[Flow]:
    """`spec.flows` flows over every ordered pair of hosts (of different racks: one host per rack),
    the first pairs one more each when they do not divide evenly."""
    hosts = sorted((h for h in plan.hosts() if h.host_ipv4), key=lambda h: h.name)
    pairs = [(a, b) for a in hosts for b in hosts if a is not b]
    if not pairs:
        raise LabError("traffic needs two hosts in the lab slice (two racks)")
    if spec.flows < len(pairs):
        raise LabError(f"--traffic-flows {spec.flows}: the slice has {len(pairs)} ordered host pairs; give each one")
    flows: list[Flow] = []
    next_port: dict[str, int] = {}
    for i, (a, b) in enumerate(pairs):
        count = spec.flows // len(pairs) + (1 if i < spec.flows % len(pairs) else 0)
        for _ in range(count):
            sport = next_port.get(a.name, spec.sport_base)
            next_port[a.name] = sport + 1
            flows.append(Flow(a.name, b.name, str(ip_interface(a.host_ipv4 or "").ip),
                              str(ip_interface(b.host_ipv4 or "").ip), sport))
    return flows


@dataclass(frozen=True, slots=True)
class PhaseLoss:
    phase: str
    seconds: float
    flows: int
    rate: float
    sent: int
    lost: int
    flows_with_loss: int

    def as_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "seconds": round(self.seconds, 3), "flows": self.flows, "rate_pps": self.rate,
                "sent": self.sent, "lost": self.lost, "flows_with_loss": self.flows_with_loss}

    def describe(self) -> str:
        hit = f" on {self.flows_with_loss} flow(s)" if self.lost else ""
        return (f"{self.flows} flows x {self.rate:g} pps, {self.seconds:.1f} s: {self.sent} sent,"
                f" {self.lost} lost{hit}")


def _received(ranges: list[list[int]], begin: int, end: int) -> int:
    """How many sequence numbers of [begin, end) the (sorted, disjoint) ranges hold."""
    return sum(max(0, min(hi, end) - max(lo, begin)) for lo, hi in ranges)


def phase_losses(phases: list[tuple[str, int, int]], flows: list[Flow], rounds_ns: dict[str, list[int]],
                 received: dict[str, list[list[int]]], rate: float) -> list[PhaseLoss]:
    """Per phase (name, start ns, end ns): what was sent in it and what of that never arrived.
    rounds_ns: per source host, each round's send time (round r carries sequence number r on every
    flow of that host); received: per flow key "source_ip:sport", the received sequence-number
    ranges. A send the kernel refused never arrived: it is lost like any other."""
    results = []
    for name, start, end in phases:
        sent = lost = hit = 0
        for flow in flows:
            times = rounds_ns.get(flow.source, [])
            first, last = bisect_left(times, start), bisect_left(times, end)
            missing = (last - first) - _received(received.get(f"{flow.source_ip}:{flow.sport}", []), first, last)
            sent += last - first
            lost += missing
            hit += 1 if missing else 0
        results.append(PhaseLoss(name, (end - start) / 1e9, len(flows), rate, sent, lost, hit))
    return results


@dataclass(frozen=True, slots=True)
class _Agent:
    node: str
    process: subprocess.Popen[str]


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    stdout = process.stdout
    assert stdout is not None
    ready, _, _ = select.select([stdout], [], [], timeout)
    return stdout.readline().strip() if ready else ""


class TrafficRun:
    """The flows of a drill: receivers on every host, then senders; `mark(phase)` begins a phase
    (ending the one before); `stop()` ends the last, stops the senders, then the receivers, and
    returns each phase's loss. A context manager: whatever happens, no agent outlives it."""

    def __init__(self, backend: LabBackend, plan: LabPlan, spec: TrafficSpec) -> None:
        namespace = getattr(backend, "namespace", None)
        if namespace is None:
            raise LabError("traffic runs in the hosts' network namespaces: the netns backend only")
        self._namespace = namespace
        self.spec = spec
        self.flows = plan_flows(plan, spec)
        self._agents: list[_Agent] = []
        self._senders: dict[str, _Agent] = {}
        self._receivers: dict[str, _Agent] = {}
        self._marks: list[tuple[str, int]] = []
        self.receiver_drops = 0  # datagrams the receivers' kernels dropped for a full socket buffer
        self.send_errors = 0  # sends the senders' kernels refused

    def __enter__(self) -> TrafficRun:
        return self

    def __exit__(self, *exc: object) -> None:
        for agent in self._agents:
            if agent.process.poll() is None:
                agent.process.kill()
            agent.process.wait()
            for stream in (agent.process.stdin, agent.process.stdout):
                if stream is not None:
                    stream.close()

    def _spawn(self, node: str, args: list[str], banner: str) -> _Agent:
        argv = ["ip", "netns", "exec", self._namespace(node), sys.executable, "-u", str(AGENT), *args]
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True)
        agent = _Agent(node, process)
        self._agents.append(agent)
        line = _read_line(process, START_TIMEOUT_S)
        if line != banner:
            raise LabError(f"{node}: the traffic agent did not start ({line or 'no answer'})")
        return agent

    def start(self) -> None:
        targets = sorted({f.target for f in self.flows})
        for node in targets:
            self._receivers[node] = self._spawn(node, ["receive", "--port", str(self.spec.port)], "ready")
        by_source: dict[str, list[Flow]] = {}
        for flow in self.flows:
            by_source.setdefault(flow.source, []).append(flow)
        for node, flows in sorted(by_source.items()):
            args = ["send", "--source", flows[0].source_ip, "--port", str(self.spec.port),
                    "--sport-base", str(flows[0].sport), "--rate", f"{self.spec.rate:g}"]
            for flow in flows:
                args += ["--flow", flow.target_ip]
            self._senders[node] = self._spawn(node, args, "started")

    def mark(self, phase: str) -> None:
        self._marks.append((phase, time.monotonic_ns()))

    def _finish(self, agent: _Agent) -> dict[str, Any]:
        try:  # its stdin closed: the agent's signal to stop and report
            out, _ = agent.process.communicate(input="", timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            agent.process.kill()
            agent.process.wait()
            raise LabError(f"{agent.node}: the traffic agent did not stop") from None
        try:
            data = json.loads(out.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            raise LabError(f"{agent.node}: the traffic agent's report is unreadable: {out[-200:]!r}") from None
        return data if isinstance(data, dict) else {}

    def stop(self) -> list[PhaseLoss]:
        self.mark("")  # the end of the last phase
        sent = {node: self._finish(agent) for node, agent in self._senders.items()}
        got = {node: self._finish(agent) for node, agent in self._receivers.items()}
        received: dict[str, list[list[int]]] = {}
        for report in got.values():
            received.update(report.get("flows", {}))
            self.receiver_drops += int(report.get("rcvbuf_drops", 0))
        phases = [(name, start, end) for (name, start), (_, end) in zip(self._marks, self._marks[1:], strict=False)]
        rounds = {node: list(report.get("rounds_ns", [])) for node, report in sent.items()}
        self.send_errors = sum(len(report.get("failed", [])) for report in sent.values())
        return phase_losses(phases, self.flows, rounds, received, self.spec.rate)
