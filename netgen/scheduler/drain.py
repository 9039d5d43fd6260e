"""Slurm's side of draining a rack switch: the hosts under the RTSW are drained in Slurm first (no new
job starts on them, running jobs finish), and resumed after the switch is back.

Everything goes through `scontrol` (an argv list, never a shell; each call bounded in time) and is
read back from `scontrol show node -o` (one line per node), so a result says what the controller
holds, not what was sent. Slurm node names are the host names `netgen scheduler --format slurm`
writes into topology.conf (netgen.scheduler.model.scheduler_topology).

netgen only undoes its own drains: it drains with a reason starting with REASON_PREFIX and resumes
only the nodes whose reason still starts with it. A node drained (or failed, or down) for another
reason is left alone both ways, its reason kept: an operator's drain is not netgen's to undo, and a
DOWN node takes no job anyway (draining it would replace its reason, and RESUME would then bring it
back up).

Slurm as read (scontrol(1), "update" NodeName: State=, Reason=; sinfo(1), NODE STATE CODES):
`State=` is the base state with its flags, `IDLE+DRAIN+NOT_RESPONDING`; `Reason=<text> [user@time]`
follows the other fields and only `Comment=` / `Extra=` may come after it (src/api/node_info.c,
slurm_sprint_node_table, 22.05 to 25.x). Checked against Debian 12's slurmctld 22.05
(tests/scheduler/test_slurm_drain.py).
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from netgen.intent.fabric import Fabric
from netgen.safe_text import visible
from netgen.scheduler.hostlist import compress
from netgen.scheduler.model import scheduler_topology
from netgen.topology.model import Topology

REASON_PREFIX = "netgen drain "  # every reason netgen sets starts so; resume() undoes only these
MAX_WHY = 200  # characters of the operator's own words in the reason
SHOWN = 300  # characters of scontrol's output quoted in an error

# Slurm's node state names (src/common/slurm_protocol_defs.c: node_states[], node_state_flags[]).
# sinfo(1), NODE STATE CODES: DRAINED "unavailable for use per system administrator request";
# DRAINING "currently executing a job, but will not be allocated additional jobs. The node state will
# be changed to state DRAINED when the last job on it completes"; DOWN "unavailable for use"; FAIL /
# FAILING as DRAINED / DRAINING, "expected to fail soon". Slurm's own rule (node_state_string(), the
# same from 22.05 to 25.x): the DRAIN flag with the COMPLETING flag or base ALLOCATED or MIXED is
# DRAINING; with any other base (IDLE, DOWN, UNKNOWN...) it is DRAINED.
DRAIN_FLAG = "DRAIN"
FAIL_FLAG = "FAIL"
COMPLETING_FLAG = "COMPLETING"  # a job's processes or epilog still ending
BASES_WITH_JOBS = frozenset({"ALLOCATED", "MIXED"})
DOWN_BASE = "DOWN"  # its jobs were killed when it went down; it takes none


class Drain(Enum):
    """What a node is to a network drain."""

    DRAINED = "drained"  # DRAIN (or FAIL) flag and no job: nothing runs or starts on it
    DRAINING = "draining"  # DRAIN (or FAIL) flag, jobs still running: nothing new starts
    DOWN = "down"  # DOWN without a drain: nothing runs or starts, drained by no one
    NOT_DRAINED = "not drained"  # takes new jobs


SETTLED = frozenset({Drain.DRAINED, Drain.DOWN})  # no job runs or can start: the network may go


class Action(Enum):
    """What netgen did to a node."""

    DRAINED = "drained"
    RESUMED = "resumed"
    ALREADY_DRAINED = "already drained by netgen"
    NOT_DRAINED = "not drained: nothing to resume"
    LEFT_ALONE = "left alone: drained or down for another reason, its reason kept"


class SchedulerDrainError(Exception):
    """scontrol could not be run, did not answer in time, refused a change or read back otherwise:
    one line naming the command, the nodes and what scontrol said (exit 2 in the CLI)."""


@dataclass(frozen=True, slots=True)
class NodeState:
    """One node as `scontrol show node -o` holds it. `reason` is Slurm's text (anyone may have set
    it): show it with netgen.safe_text.visible."""

    name: str
    state: str  # e.g. IDLE+DRAIN+NOT_RESPONDING
    reason: str  # "" when there is none; without Slurm's "[user@time]" stamp

    @property
    def base(self) -> str:
        return self.state.split("+", 1)[0]

    @property
    def flags(self) -> frozenset[str]:
        return frozenset(self.state.split("+")[1:])

    @property
    def drain(self) -> Drain:
        flags = self.flags
        if flags & {DRAIN_FLAG, FAIL_FLAG}:
            jobs = COMPLETING_FLAG in flags or self.base in BASES_WITH_JOBS
            return Drain.DRAINING if jobs else Drain.DRAINED
        return Drain.DOWN if self.base == DOWN_BASE else Drain.NOT_DRAINED

    @property
    def by_netgen(self) -> bool:
        """Drained by netgen: the DRAIN flag with a reason netgen set."""
        return DRAIN_FLAG in self.flags and self.reason.startswith(REASON_PREFIX)

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.name, "state": self.state, "drain": self.drain.value, "reason": self.reason,
                "by_netgen": self.by_netgen}


@dataclass(frozen=True, slots=True)
class NodeResult:
    """A node after netgen's change, as read back, and what netgen did to it."""

    node: NodeState
    action: Action

    def as_dict(self) -> dict[str, Any]:
        return {**self.node.as_dict(), "action": self.action.value}


@dataclass(frozen=True, slots=True)
class Scontrol:
    """How scontrol is run: the program, the time each call may take, the environment (None: this
    process's; SLURM_CONF there names the cluster's slurm.conf)."""

    program: str = "scontrol"
    timeout_s: float = 30.0
    env: Mapping[str, str] | None = None

    def run(self, args: Sequence[str], nodes: str) -> tuple[int, str]:
        """scontrol's exit status and its output (stdout, then stderr); SchedulerDrainError when it
        cannot be run or does not answer in time, naming `nodes`."""
        # its words without the nodes, options and reason: scontrol show node, scontrol update State=DRAIN
        words = [a for a in args if a.startswith("State=") or ("=" not in a and a[:1] != "-" and a != nodes)]
        command = " ".join(["scontrol", *words])
        try:
            done = subprocess.run([self.program, *args], capture_output=True, text=True, errors="replace",
                                  stdin=subprocess.DEVNULL, timeout=self.timeout_s, check=False,
                                  env=None if self.env is None else dict(self.env))
        except subprocess.TimeoutExpired:
            raise SchedulerDrainError(f"{command} for {nodes}: no answer within {self.timeout_s:g} s") from None
        except OSError as exc:  # not installed, not executable
            hint = " (Debian: slurm-client)" if isinstance(exc, FileNotFoundError) else ""
            raise SchedulerDrainError(f"{command} for {nodes}: cannot run {visible(self.program, SHOWN)}: "
                                      f"{exc.strerror or exc}{hint}") from None
        return done.returncode, done.stdout + done.stderr


def nodes_under(fabric: Fabric, topology: Topology, rtsws: Iterable[str]) -> list[str]:
    """The Slurm nodes (hosts, named as topology.conf names them) under the rack switches `rtsws`, in
    the fabric's order; ValueError naming a switch that is no RTSW of the fabric."""
    wanted = set(rtsws)
    racks = [rack for zone in scheduler_topology(fabric, topology).zones for rack in zone.racks]
    unknown = sorted(wanted - {rack.switch for rack in racks})
    if unknown:
        raise ValueError(f"not a rack switch (RTSW) of fabric {fabric.name}: {', '.join(unknown)}")
    hosts: dict[str, None] = {}  # a host wired to two of the RTSWs once
    for rack in racks:
        if rack.switch in wanted:
            hosts.update(dict.fromkeys(rack.hosts))
    return list(hosts)


def drain_reason(rtsws: Iterable[str], why: str) -> str:
    """The reason netgen gives Slurm: `netgen drain z01-rtsw003: <why>`. `why` is refused (ValueError)
    rather than escaped where scontrol or a reader of its output would take it otherwise: a line break
    or other control or format character (scontrol shows each line of a reason as a line of its own),
    a quote (scontrol strips a leading and a trailing '"', src/scontrol/update_node.c; ' and ` break
    the reason where it is pasted into a shell), '=' (the one-line output is `Key=value` words), '['
    or ']' (Slurm stamps a reason `[user@time]`), or more than MAX_WHY characters."""
    text = why.strip()
    if not text:
        raise ValueError("the drain reason is empty (Slurm needs one to drain a node)")
    if len(text) > MAX_WHY:
        raise ValueError(f"the drain reason is longer than {MAX_WHY} characters")
    refused = sorted({ch for ch in text if not ch.isprintable() or ch in "\"'`=[]"})
    if refused:
        shown = " ".join(visible(ch) for ch in refused)
        raise ValueError(f"the drain reason holds characters Slurm would not keep as one plain line: {shown}")
    return f"{REASON_PREFIX}{compress(sorted(set(rtsws)))}: {text}"


# One node of `scontrol show node -o`: its reason ends at Slurm's " [user@time]" stamp or, without
# one, at the Comment= / Extra= fields that may follow it, or at the line's end.
_STATE = re.compile(r" State=(\S+)")
_REASON = re.compile(r" Reason=(?P<reason>.*?)(?: \[[^\[\]\s@]*@[^\[\]\s]*\])?(?= Comment=| Extra=|$)")


def parse_nodes(output: str) -> dict[str, NodeState]:
    """The nodes of `scontrol show node -o` output by name (lines that are no node are skipped)."""
    found: dict[str, NodeState] = {}
    for line in output.splitlines():
        if not line.startswith("NodeName="):
            continue
        name = line.split(None, 1)[0].split("=", 1)[1]
        reason_at = line.find(" Reason=")
        state = _STATE.search(line if reason_at < 0 else line[:reason_at])
        if state is None:
            continue
        reason = _REASON.match(line, reason_at) if reason_at >= 0 else None
        found[name] = NodeState(name, state.group(1), reason.group("reason") if reason else "")
    return found


def _failed(command: str, nodes: str, status: int, output: str) -> SchedulerDrainError:
    said = visible(output.strip(), SHOWN) or "nothing"
    return SchedulerDrainError(f"scontrol {command} for {nodes}: exit {status}: {said}")


def states(nodes: Sequence[str], scontrol: Scontrol | None = None) -> list[NodeState]:
    """`nodes` as the controller holds them, in the given order; SchedulerDrainError when scontrol
    fails or a node is unknown to Slurm."""
    if not nodes:
        return []
    scontrol = scontrol or Scontrol()
    names = compress(nodes)
    status, output = scontrol.run(["show", "node", "-o", names], names)
    found = parse_nodes(output)
    if status and not found:  # no controller, no permission... (or not one of the nodes known)
        raise _failed("show node", names, status, output)
    missing = [n for n in nodes if n not in found]
    if missing:  # scontrol exits 1 saying "Node x not found": a host of the fabric Slurm does not have
        said = visible(" ".join(line for line in output.splitlines() if not line.startswith("NodeName=")).strip(),
                       SHOWN) or "no line for it"
        raise SchedulerDrainError(f"scontrol show node for {names}: not a Slurm node: {compress(missing)} ({said})")
    if status:
        raise _failed("show node", names, status, output)
    return [found[n] for n in nodes]


def _update(nodes: Sequence[str], state: str, fields: Sequence[str], scontrol: Scontrol,
            reached: Callable[[NodeState], bool]) -> dict[str, NodeState]:
    """`scontrol update NodeName=<nodes> State=<state> <fields>`, then the nodes read back. The change
    stands when every node reads back as `reached` says, whatever scontrol's exit status (22.05 exits
    1, "Invalid node state specified", on RESUME of an UNKNOWN+DRAIN node and clears its drain all
    the same); SchedulerDrainError otherwise, with what scontrol said."""
    names = compress(nodes)
    status, output = scontrol.run(["update", f"NodeName={names}", f"State={state}", *fields], names)
    try:
        after = {s.name: s for s in states(nodes, scontrol)}
    except SchedulerDrainError:
        if status:  # what the update said comes first
            raise _failed(f"update State={state}", names, status, output) from None
        raise
    wrong = [n for n in nodes if not reached(after[n])]
    if wrong:
        if status:
            raise _failed(f"update State={state}", names, status, output)
        shown = ", ".join(f"{n} {visible(after[n].state, 80)}" for n in wrong)
        raise SchedulerDrainError(f"scontrol update State={state} for {names}: accepted, but reads back as {shown}")
    return after


def drain(nodes: Sequence[str], reason: str, scontrol: Scontrol | None = None) -> list[NodeResult]:
    """Drain `nodes` in Slurm (`scontrol update NodeName=... State=DRAIN Reason=...`) with `reason`
    (from drain_reason()), read back. Repeat-safe: a node netgen drained already is left as it is; a
    node drained, failed or down for another reason is left alone, its reason kept."""
    if not reason.startswith(REASON_PREFIX):
        raise ValueError(f"a drain reason netgen sets starts with {REASON_PREFIX!r} (drain_reason())")
    scontrol = scontrol or Scontrol()
    before = states(nodes, scontrol)
    to_drain = [s.name for s in before if s.drain is Drain.NOT_DRAINED]
    after = {s.name: s for s in before}
    if to_drain:
        after.update(_update(to_drain, "DRAIN", [f"Reason={reason}"], scontrol,
                             lambda node: node.by_netgen and node.reason == reason))
    results = []
    for old in before:
        if old.name in to_drain:
            action = Action.DRAINED
        elif old.by_netgen:
            action = Action.ALREADY_DRAINED
        else:
            action = Action.LEFT_ALONE
        results.append(NodeResult(after[old.name], action))
    return results


def wait_drained(nodes: Sequence[str], timeout_s: float, poll_s: float = 10.0, scontrol: Scontrol | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> list[NodeState]:
    """Read `nodes` every `poll_s` until none runs a job or can take one (each SETTLED: drained, or
    down) or `timeout_s` has passed; the last states read (the caller sees which still drain)."""
    deadline = clock() + timeout_s
    while True:
        read = states(nodes, scontrol)
        left = deadline - clock()
        if all(s.drain in SETTLED for s in read) or left <= 0:
            return read
        sleep(min(poll_s, left))


def resume(nodes: Sequence[str], scontrol: Scontrol | None = None) -> list[NodeResult]:
    """Resume the nodes netgen drained (`scontrol update NodeName=... State=RESUME`), read back.
    Repeat-safe: a node not drained is left as it is; a node drained, failed or down for another
    reason than netgen's is left alone, its reason kept."""
    scontrol = scontrol or Scontrol()
    before = states(nodes, scontrol)
    to_resume = [s.name for s in before if s.by_netgen]
    after = {s.name: s for s in before}
    if to_resume:
        after.update(_update(to_resume, "RESUME", [], scontrol, lambda node: DRAIN_FLAG not in node.flags))
    results = []
    for old in before:
        if old.name in to_resume:
            action = Action.RESUMED
        elif old.drain is Drain.NOT_DRAINED:
            action = Action.NOT_DRAINED
        else:
            action = Action.LEFT_ALONE
        results.append(NodeResult(after[old.name], action))
    return results


__all__ = ["REASON_PREFIX", "SETTLED", "Action", "Drain", "NodeResult", "NodeState", "SchedulerDrainError",
           "Scontrol", "drain", "drain_reason", "nodes_under", "parse_nodes", "resume", "states", "wait_drained"]
