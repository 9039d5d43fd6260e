"""The InfiniBand alternative in the lab: the fat tree as a simulated fabric (ibsim), routed by the real
subnet manager (OpenSM) with netgen's files, and read back with the real diagnostics (infiniband-diags).

ibsim answers the management datagrams of every switch and HCA of the net file; `ibsim-run` runs a
program with libumad2sim preloaded, so OpenSM and the diagnostics talk to the simulator as to an HCA
(linux-rdma/ibsim README; docs/developer/infiniband-sources.md §8). Nothing here trusts what netgen
planned: the topology, the LIDs and the forwarding tables are what the tools read from the simulated
switches, and every check compares them with the plan.

Each simulator has its own socket name (IBSIM_SOCKNAME, an abstract Unix socket: ibsim.c sim_init_conn),
so several labs (and test workers) run side by side. Every program runs with a deadline; the simulator
is stopped (Quit, then killed) whatever happens.
"""

from __future__ import annotations

import codecs
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from netgen.infiniband.discovered import DiscoveredFabric, parse_ibnetdiscover
from netgen.topology.infiniband import IbCable, IbFabric, IbTier

IBSIM = "ibsim"
IBSIM_RUN = "ibsim-run"
PROMPT = "sim> "
# "<engine> tables configured on all switches": OpenSM osm_ucast_mgr.c at INFO (infiniband-sources.md §4);
# "minhop" there means ftree fell back
ROUTED = re.compile(r"(\w[\w-]*) tables configured on all switches")
TOOLS = (IBSIM, IBSIM_RUN, "opensm", "ibnetdiscover", "dump_lfts", "ibtracert", "smpquery")
# What one tool may print before netgen refuses to read it: dump_lfts prints a line per switch and LID,
# about 35 million lines for the whole of meta-24k (benchmarks: InfiniBand), more than a checker should hold.
OUTPUT_LIMIT = 512 * 1024 * 1024
CONSOLE_KEEP = 1024 * 1024  # the console output kept (a command's answer is read from its end)


class IbSimError(Exception):
    """The simulator or a tool failed, stalled or printed what cannot be read; the message says which."""


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


Port = tuple[str, int]  # (node description, port number)


def cable_ends(cable: IbCable) -> frozenset[Port]:
    return frozenset({(cable.lower, cable.lower_port), (cable.upper, cable.upper_port)})


@dataclass
class ForwardingTables:
    """dump_lfts: per switch, destination LID -> output port; and each LID's node description."""

    lft: dict[str, dict[int, int]] = field(default_factory=dict)
    hca_lids: dict[str, int] = field(default_factory=dict)


_LFT_HEAD = re.compile(r"^Unicast lids .* guid 0x[0-9a-f]+ \((.*)\):\s*$")
_LFT_ROW = re.compile(r"^0x([0-9a-f]+) (\d+) : \((Switch|Channel Adapter) portguid 0x[0-9a-f]+: '(.*)'\)")


def parse_dump_lfts(text: str) -> ForwardingTables:
    tables = ForwardingTables()
    current: dict[int, int] | None = None
    for line in text.splitlines():
        if (head := _LFT_HEAD.match(line)) is not None:
            current = tables.lft.setdefault(head.group(1), {})
        elif (row := _LFT_ROW.match(line)) is not None and current is not None:
            lid, port, kind, node = int(row.group(1), 16), int(row.group(2)), row.group(3), row.group(4)
            current[lid] = port
            if kind == "Channel Adapter":
                tables.hca_lids[node] = lid
    return tables


# What OpenSM logs when it cannot read a line of a file netgen gave it (osm_prtn_config.c, osm_subnet.c):
# it skips the line and goes on, so a clean exit proves nothing about netgen's files.
READ_PROBLEMS = ("PARSE ERROR", "PARSE WARN", "Fail to parse", "Cannot parse")


@dataclass
class SmRun:
    engine: str  # the routing engine OpenSM reports it configured the switches with ("" if none)
    log: Path
    read_problems: list[str] = field(default_factory=list)  # log lines where OpenSM could not read a file


class IbSim:
    """ibsim running one net file, with its console on a pipe. A context manager: stopped on exit."""

    def __init__(self, net: Path, workdir: Path, *, switches: int, nodes: int, ports: int,
                 timeout_s: float = 300.0) -> None:
        self.net, self.workdir, self.timeout_s = net, workdir, timeout_s
        self.limits = ["-N", str(nodes + 16), "-S", str(switches + 16), "-P", str(ports + 64)]
        self.socket = f"netgen-{os.getpid()}-{secrets.token_hex(4)}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._buffer = ""  # the last CONSOLE_KEEP characters ibsim printed
        self._dropped = 0  # characters dropped from the front of the buffer
        self._prompts = 0
        self._changed = threading.Condition()
        self._reader: threading.Thread | None = None

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # ibsim-run appends to it badly
        env["IBSIM_SOCKNAME"] = self.socket
        return env

    def __enter__(self) -> IbSim:
        self.proc = subprocess.Popen(
            [IBSIM, "-s", *self.limits, str(self.net)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=self.env, cwd=self.workdir, start_new_session=True)
        self._reader = threading.Thread(target=self._read, name="ibsim-console", daemon=True)
        self._reader.start()
        try:
            self._wait_prompts(1, "ibsim to load the net file")
            # the console is read only once the sockets are bound (ibsim.c sim_run): one round trip more
            self.console("Attached")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _read(self) -> None:
        """Everything ibsim prints, in chunks: prompts counted (one may straddle two chunks), the end kept."""
        stream = self.proc.stdout if self.proc is not None else None
        if stream is None:
            return
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := os.read(stream.fileno(), 65536):
            text = decoder.decode(chunk)
            with self._changed:
                self._prompts += (self._buffer[-(len(PROMPT) - 1):] + text).count(PROMPT)
                self._buffer += text
                if len(self._buffer) > CONSOLE_KEEP:
                    cut = len(self._buffer) - CONSOLE_KEEP
                    self._buffer, self._dropped = self._buffer[cut:], self._dropped + cut
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _wait_prompts(self, count: int, what: str) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._prompts >= count or self._exited(), timeout=self.timeout_s)
            if self._prompts >= count:
                return
        tail = self._buffer[-2000:].strip().splitlines()[-5:]
        state = "exited" if self._exited() else f"no answer within {self.timeout_s:g} s"
        raise IbSimError(f"waiting for {what}: ibsim {state}" + (f"; it said: {' | '.join(tail)}" if tail else ""))

    def _exited(self) -> bool:
        return self.proc is None or self.proc.poll() is not None

    def console(self, command: str) -> str:
        """Run one console command (e.g. `Unlink "node"[port]`) and return what ibsim printed for it."""
        if "\n" in command or self.proc is None or self.proc.stdin is None:
            raise IbSimError(f"not a console command: {command!r}")
        with self._changed:
            before, start = self._prompts, self._dropped + len(self._buffer)
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        self._wait_prompts(before + 1, f"ibsim to run {command!r}")
        with self._changed:
            return self._buffer[max(0, start - self._dropped):].removesuffix(PROMPT)

    def run(self, *argv: str, timeout_s: float | None = None) -> str:
        """A program attached to the simulator (`ibsim-run ARGV`): its standard output, or IbSimError. The
        output goes to files first, so what the program prints is bounded (OUTPUT_LIMIT) before it is read."""
        limit = timeout_s or self.timeout_s
        with tempfile.TemporaryFile(dir=self.workdir) as out, tempfile.TemporaryFile(dir=self.workdir) as err:
            try:
                done = subprocess.run([IBSIM_RUN, *argv], stdout=out, stderr=err, env=self.env, cwd=self.workdir,
                                      timeout=limit, check=False)
            except subprocess.TimeoutExpired:
                raise IbSimError(f"{argv[0]} gave no answer within {limit:g} s") from None
            if done.returncode != 0:
                err.seek(max(0, err.seek(0, os.SEEK_END) - 4096))
                tail = " | ".join(err.read().decode(errors="replace").strip().splitlines()[-3:])
                raise IbSimError(f"{argv[0]} exited {done.returncode}: {tail}")
            size = out.seek(0, os.SEEK_END)
            if size > OUTPUT_LIMIT:
                raise IbSimError(f"{argv[0]} printed {size // (1024 * 1024)} MB, more than the"
                                 f" {OUTPUT_LIMIT // (1024 * 1024)} MB netgen reads: run a smaller slice")
            out.seek(0)
            return out.read().decode(errors="replace")

    def opensm(self, config: Path, log: Path) -> SmRun:
        """One OpenSM sweep with netgen's configuration (`opensm -o -F`): discovers, assigns LIDs,
        routes, programs every switch, exits. The engine is what OpenSM's log says it configured."""
        self.run("opensm", "-o", "-F", str(config), "-f", str(log))
        text = log.read_text(errors="replace") if log.is_file() else ""
        engines = ROUTED.findall(text)
        problems = [line for line in text.splitlines() if any(p in line for p in READ_PROBLEMS)]
        return SmRun(engines[-1] if engines else "", log, problems)

    def discover(self) -> DiscoveredFabric:
        return parse_ibnetdiscover(self.run("ibnetdiscover"))

    def forwarding_tables(self) -> ForwardingTables:
        return parse_dump_lfts(self.run("dump_lfts"))

    def trace(self, source_lid: int, destination_lid: int) -> list[str]:
        """ibtracert's path: the node descriptions from source to destination."""
        text = self.run("ibtracert", str(source_lid), str(destination_lid))
        nodes = re.findall(r'"([^"]*)"\s*$', text, flags=re.MULTILINE)
        return [node for i, node in enumerate(nodes) if i == 0 or nodes[i - 1] != node]  # "To ca" repeats the last

    def pkeys(self, lid: int) -> set[int]:
        """The P_Key table of the port at `lid` as the subnet manager programmed it (smpquery pkeys):
        its non-empty entries, the membership bit (0x8000, full) included."""
        text = self.run("smpquery", "pkeys", str(lid))
        return {int(value, 16) for value in re.findall(r"0x([0-9a-f]{4})", text)} - {0}

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(b"Quit\n")
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=10)


# --- what the read-back must show ------------------------------------------------------------------
@dataclass
class Reachability:
    pairs: int = 0  # (switch or HCA, destination HCA) pairs walked
    failures: list[str] = field(default_factory=list)


def walk_tables(discovered: DiscoveredFabric, tables: ForwardingTables) -> Reachability:
    """From every switch towards every HCA's LID, following the switches' own forwarding tables over the
    discovered cables: each walk must end at that HCA, without a loop or a dead end. An HCA reaches a
    destination if its leaf does, so this covers every HCA pair."""
    peer: dict[Port, Port] = {}
    for cable in discovered.cables:
        a, b = tuple(cable)
        peer[a], peer[b] = b, a
    result = Reachability()
    for destination, lid in sorted(tables.hca_lids.items()):
        reaches: dict[str, bool] = {}  # switch -> its walk ends at the destination
        for start in sorted(tables.lft):
            path: list[str] = []
            node, verdict = start, None
            while verdict is None:
                if node == destination:
                    verdict = True
                elif node in reaches:
                    verdict = reaches[node]
                elif node in path:
                    result.failures.append(f"{start}: forwarding loop towards {destination} at {node}")
                    verdict = False
                elif node not in tables.lft:
                    result.failures.append(f"{path[-1]}: traffic for {destination} (LID {lid}) delivered to {node}")
                    verdict = False
                else:
                    path.append(node)
                    port = tables.lft[node].get(lid)
                    end = peer.get((node, port)) if port else None
                    if end is None:
                        result.failures.append(f"{node}: no route to {destination} (LID {lid})" if not port
                                               else f"{node}: port {port} towards {destination} has no cable")
                        verdict = False
                    else:
                        node = end[0]
            for hop in path:
                reaches[hop] = verdict
            result.pairs += 1
    return result


@dataclass
class LeafBalance:
    leaf: str
    per_uplink: dict[int, int]  # uplink port -> destination HCAs routed over it

    @property
    def spread(self) -> int:
        counts = self.per_uplink.values()
        return max(counts) - min(counts) if counts else 0


def leaf_balance(ib: IbFabric, discovered: DiscoveredFabric, tables: ForwardingTables) -> list[LeafBalance]:
    """For every leaf, how many remote HCAs its forwarding table sends over each of its uplinks."""
    switches = {s.name for s in ib.tier(IbTier.LEAF)}
    uplinks: dict[str, set[int]] = {}
    for cable in discovered.cables:
        a, b = tuple(cable)
        for (node, port), (other, _) in ((a, b), (b, a)):
            if node in switches and other in discovered.switches:
                uplinks.setdefault(node, set()).add(port)
    result = []
    for leaf in sorted(switches):
        counts = Counter(dict.fromkeys(uplinks.get(leaf, set()), 0))
        for lid in tables.hca_lids.values():
            out = tables.lft.get(leaf, {}).get(lid)
            if out is not None and out in counts:
                counts[out] += 1
        result.append(LeafBalance(leaf, dict(counts)))
    return result


def planned_cables(ib: IbFabric) -> set[frozenset[Port]]:
    return {cable_ends(c) for c in ib.cables}


def sim_limits(ib: IbFabric) -> dict[str, int]:
    """The simulator's table sizes for this fabric (ibsim -N -S -P): a switch has a port 0 besides its ports."""
    ports = sum(s.ports + 1 for s in ib.switches.values()) + 2 * len(ib.hcas)
    return {"switches": len(ib.switches), "nodes": len(ib.switches) + len(ib.hcas), "ports": ports}


# --- the proof, as `netgen lab ib` runs it ---------------------------------------------------------------
@dataclass
class Sweep:
    """One OpenSM sweep and what was read back after it."""

    label: str  # "as planned", or what was taken down before it
    engine: str
    read_problems: list[str]
    missing_cables: list[str]  # planned and up, but not discovered
    extra_cables: list[str]  # discovered, not planned
    pairs: int
    unreachable: list[str]
    max_spread: int | None  # leaf balance; only measured on the fabric as planned

    @property
    def ok(self) -> bool:
        balanced = self.max_spread is None or self.max_spread <= 1
        return (bool(self.engine) and not self.read_problems and not self.missing_cables and not self.extra_cables
                and not self.unreachable and balanced)


@dataclass
class IbProof:
    switches: int
    hcas: int
    cables: int
    wanted_engine: str
    sweeps: list[Sweep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.sweeps) and all(s.ok for s in self.sweeps) and self.sweeps[0].engine == self.wanted_engine


def _describe(ends: frozenset[Port]) -> str:
    (a, pa), (b, pb) = sorted(ends)
    return f"{a}[{pa}]--{b}[{pb}]"


def failure_targets(ib: IbFabric, names: list[str]) -> list[tuple[str, str, set[frozenset[Port]]]]:
    """Each --fail as (label, ibsim console command, the cables it takes down): a switch name takes the
    switch down, `NODE[PORT]` one cable. ValueError names what is not in the lab."""
    targets = []
    for name in names:
        match = re.fullmatch(r"(.+)\[(\d+)\]", name)
        node, port = (match.group(1), int(match.group(2))) if match else (name, None)
        if node not in ib.switches and (port is None or node not in {h.node for h in ib.hcas}):
            raise ValueError(f"--fail {name[:80]!r}: not a switch of the lab, nor NODE[PORT] of one of its cables")
        cables = {ends for ends in planned_cables(ib) if any(n == node and port in (None, p) for n, p in ends)}
        if not cables:
            raise ValueError(f"--fail {name[:80]!r}: no cable of the lab ends there")
        command = f'Unlink "{node}"' + (f"[{port}]" if port is not None else "")
        targets.append((f"{name} down", command, cables))
    return targets


def prove(ib: IbFabric, files: dict[str, dict[str, str]], workdir: Path, wanted_engine: str,
          failures: list[tuple[str, str, set[frozenset[Port]]]], timeout_s: float = 600.0) -> IbProof:
    """Run the fabric on ibsim with netgen's files (`files`: folder -> name -> text, as written by
    `netgen infiniband`, its opensm.conf naming `workdir/opensm`), route it with OpenSM and read it back;
    then take each failure down in turn and route and read again. Nothing is taken from the plan but what
    the readings are compared with."""
    for folder, items in files.items():
        (workdir / folder).mkdir(parents=True, exist_ok=True)
        for name, text in items.items():
            (workdir / folder / name).write_text(text)
    proof = IbProof(len(ib.switches), len(ib.hcas), len(ib.cables), wanted_engine)
    expected = planned_cables(ib)
    steps: list[tuple[str, str | None, set[frozenset[Port]]]] = [("as planned", None, set())]
    steps += [(label, command, cables) for label, command, cables in failures]
    with IbSim(workdir / "ibsim" / "net", workdir, timeout_s=timeout_s, **sim_limits(ib)) as sim:
        for index, (label, command, cables) in enumerate(steps):
            if command is not None:
                sim.console(command)
            expected -= cables
            run = sim.opensm(workdir / "opensm" / "opensm.conf", workdir / f"opensm-{index}.log")
            found = sim.discover()
            tables = sim.forwarding_tables()
            walk = walk_tables(found, tables)
            spread = max((b.spread for b in leaf_balance(ib, found, tables)), default=0) if index == 0 else None
            proof.sweeps.append(Sweep(
                label, run.engine, run.read_problems, sorted(_describe(c) for c in expected - found.cables)[:50],
                sorted(_describe(c) for c in found.cables - expected)[:50], walk.pairs, walk.failures[:50], spread))
    return proof
