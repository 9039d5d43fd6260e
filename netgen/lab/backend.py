"""The lab backend contract: build a plan into running nodes, run commands on a node, destroy it all.

Two backends implement it: `netns` (FRR routers in Linux network namespaces, this machine's
default: no Docker, no NOS images needed) and `containerlab` (cEOS / sonic-vs containers where
Docker, containerlab and the images exist). Verification and, later, deploy tests talk only to
this interface, so the same tests run against either.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import ip_network
from pathlib import Path
from typing import Any, ClassVar, Protocol

from netgen.lab.plan import LabPlan

LAB_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]{0,11}$")  # no dash: "<lab>-<device>" stays unambiguous
DEFAULT_ROOT = Path("/run/netgen/labs")  # tmpfs: gone after a reboot, like the namespaces themselves


class LabError(Exception):
    """The lab cannot do what was asked (exists already, not found, prerequisite missing, FRR
    rejected a config). The message says what to do; the CLI maps it to exit code 2."""


def lab_root() -> Path:
    return Path(os.environ.get("NETGEN_LAB_ROOT", str(DEFAULT_ROOT)))


def check_lab_name(name: str) -> str:
    if not LAB_NAME_PATTERN.match(name):
        raise LabError(f"lab name {name!r}: use 1-12 lowercase letters and digits, starting with a letter"
                       " (it prefixes every namespace as <lab>-<device>)")
    return name


@dataclass(frozen=True, slots=True)
class ExecResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass
class BuildReport:
    lab: str
    backend: str
    nodes: int
    routers: int
    links: int
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    lab_only: list[str] = field(default_factory=list)  # what the lab runs that the rendered configs do not say

    def as_dict(self) -> dict[str, Any]:
        return {"lab": self.lab, "backend": self.backend, "nodes": self.nodes, "routers": self.routers,
                "links": self.links, "build_seconds": round(self.seconds, 2),
                "stages": {k: round(v, 2) for k, v in self.stages.items()}, "lab_only": self.lab_only}


@dataclass
class DestroyReport:
    lab: str
    namespaces: list[str] = field(default_factory=list)  # removed
    processes: list[int] = field(default_factory=list)  # stopped
    killed: list[int] = field(default_factory=list)  # needed SIGKILL
    removed_dir: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"lab": self.lab, "namespaces_removed": len(self.namespaces), "processes_stopped": len(self.processes),
                "processes_killed": len(self.killed), "removed_dir": self.removed_dir}


StageHook = Callable[[str, int, int], None]  # (stage, done, total)


def run_command(argv: Sequence[str], stdin: str | None = None, timeout: float = 60.0,
                cwd: Path | None = None) -> ExecResult:
    """Run an argv list (never a shell); never raises for its exit status (127: not found, 124:
    timed out)."""
    try:
        done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        return ExecResult(124, "", f"timed out after {timeout:.0f} s: {' '.join(argv)}")
    except FileNotFoundError as exc:
        return ExecResult(127, "", f"{argv[0]}: {exc.strerror}")
    return ExecResult(done.returncode, done.stdout, done.stderr)


def must(argv: Sequence[str], what: str, stdin: str | None = None) -> str:
    """Run a host command that has to work; LabError with its message otherwise."""
    result = run_command(argv, stdin)
    if not result.ok:
        raise LabError(f"{what} failed: {(result.stderr or result.stdout).strip()[:500]}")
    return result.stdout


class LabBackend(Protocol):
    kind: ClassVar[str]
    lab: str

    def exists(self) -> bool:
        """Whether a lab of this name is up (or half built) on this backend."""
        ...

    def build(self, plan: LabPlan, progress: StageHook | None = None,
              files: Mapping[str, Mapping[str, str]] | None = None) -> BuildReport:
        """Create every node and link of the plan. `files` are the rendered files per device, for
        backends that boot them directly (containerlab); the netns backend needs only the plan."""
        ...

    def exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult:
        """Run argv on a node: inside its network, hostname and FRR paths (routers), or its
        network (hosts). Never raises for a non-zero exit; returns it."""
        ...

    def show(self, node: str, daemon: str, command: str, timeout: float = 30.0) -> ExecResult:
        """One show command of an FRR router, answered by `daemon` (bgpd, zebra, ...): vtysh's
        output and status. Never raises for a failed command; returns it."""
        ...

    def kernel_routes(self, node: str, protocol: str) -> dict[str, int]:
        """The node's forwarding table (table main) routes of a routing protocol ("bgp"), as
        prefix -> number of next hops; LabError naming the node when it cannot be read."""
        ...

    def node_flavour(self, node: str) -> str:
        """How to talk to the node's routing stack: "frr" (vtysh + kernel FIB), "eos" (EOS CLI
        JSON) or "host"."""
        ...

    def lldp_neighbors(self, node: str) -> dict[str, tuple[str, str]] | None:
        """What the node's LLDP agent hears: local interface -> (neighbour's system name, the
        neighbour's port as it describes it); None where this backend cannot read LLDP on the node."""
        ...

    def plan(self) -> LabPlan: ...

    def destroy(self) -> DestroyReport: ...


class _Runs(Protocol):
    def exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult: ...


class ExecReads:
    """`show` and `kernel_routes` through processes on the node (`exec`: vtysh, `ip -j route`),
    for a backend that has no closer way in."""

    def show(self: _Runs, node: str, daemon: str, command: str, timeout: float = 30.0) -> ExecResult:
        return self.exec(node, ["vtysh", "-c", command], timeout)

    def kernel_routes(self: _Runs, node: str, protocol: str) -> dict[str, int]:
        routes: dict[str, int] = {}
        for flag, v6 in (("-4", False), ("-6", True)):
            result = self.exec(node, ["ip", "-j", flag, "route", "show", "proto", protocol])
            if not result.ok:
                raise LabError(f"{node}: ip route failed: {(result.stderr or result.stdout).strip()[:300]}")
            try:
                table = json.loads(result.stdout or "null") or []
            except json.JSONDecodeError:
                raise LabError(f"{node}: ip route did not return JSON: {result.stdout[:200]!r}") from None
            for route in table:
                routes[prefix_text(route["dst"], v6)] = len(route.get("nexthops") or [route])
        return routes


def prefix_text(dst: str, v6: bool) -> str:
    """A route's destination as `ip route` or EOS prints it ("default", a host address or a
    prefix), as a prefix."""
    if dst == "default":
        return "0.0.0.0/0" if not v6 else "::/0"
    return str(ip_network(dst if "/" in dst else f"{dst}/{128 if v6 else 32}", strict=False))


class NamespaceLab(Protocol):
    """A lab whose routers run in network namespaces on this host (the netns backend): what SSH
    management (endpoints.py) reads of it."""

    lab: str
    dir: Path

    def namespace(self, node: str) -> str: ...

    def lldp_socket(self, node: str) -> Path: ...

    def state(self) -> dict[str, Any]: ...

    def plan(self) -> LabPlan: ...


class StatefulBackend:
    """The state file every backend keeps: written before anything is created (write-ahead) and
    replaced atomically, so `down` after a crash still knows exactly what exists. The plan, which
    holds every router's FRR config (a zone's: megabytes), is its own file, written when it changes
    only: the state is saved after every router started."""

    state_file: ClassVar[str] = "state.json"
    plan_file: ClassVar[str] = "plan.json"
    lab: str
    dir: Path

    def __init__(self, lab: str, directory: Path) -> None:
        self.lab = check_lab_name(lab)
        self.dir = directory
        self.state_path = directory / self.state_file
        self._state: dict[str, Any] | None = None
        self._plan: LabPlan | None = None

    def exists(self) -> bool:
        return self.state_path.is_file()

    def state(self) -> dict[str, Any]:
        if self._state is None:
            if not self.exists():
                raise LabError(f"no lab named {self.lab!r} (no {self.state_path}); `netgen lab list` shows the labs")
            try:
                self._state = json.loads(self.state_path.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise LabError(f"{self.state_path} is unreadable ({exc}); remove the lab by hand") from None
        return self._state

    def _save(self) -> None:
        assert self._state is not None
        self._write(self.state_path, json.dumps(self._state, indent=1))

    def _save_plan(self, plan: LabPlan) -> None:
        """The plan beside the state, and what `lab list` shows of it in the state."""
        assert self._state is not None
        self._write(self.dir / self.plan_file, plan.model_dump_json())
        self._plan = plan
        self._state.update(fabric=plan.fabric, slice=plan.slice, nodes=len(plan.nodes))

    @staticmethod
    def _write(path: Path, text: str) -> None:
        tmp = path.with_suffix(".tmp")
        # Owner-only: the plan holds each router's FRR config with its secrets filled in.
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as stream:
            stream.write(text)
        tmp.replace(path)  # never a half-written file, even if we crash here

    def plan(self) -> LabPlan:
        if self._plan is None:
            self.state()
            try:
                self._plan = LabPlan.model_validate_json((self.dir / self.plan_file).read_bytes())
            except (OSError, ValueError) as exc:
                raise LabError(f"{self.dir / self.plan_file} is unreadable ({exc}); `netgen lab down --name"
                               f" {self.lab}` removes the lab") from None
        return self._plan


def list_states(state_file: str) -> list[dict[str, Any]]:
    """A summary of every lab whose state file has this name under the lab root."""
    labs = []
    for path in sorted(lab_root().glob(f"*/{state_file}")):
        with contextlib.suppress(OSError, json.JSONDecodeError):
            state = json.loads(path.read_text())
            labs.append({"lab": state.get("lab"), "backend": state.get("backend"), "status": state.get("status"),
                         "fabric": state.get("fabric"), "slice": state.get("slice"),
                         "nodes": state.get("nodes", 0), "created": state.get("created")})
    return labs


# --- processes the lab starts (FRR daemons, sshd): shared by the netns backend and endpoints ----


def process_alive(pid: int) -> bool:
    """The process exists and is not a zombie (a zombie has exited; only its parent's wait is due)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stop_processes(pids: set[int], grace: float, reap: Callable[[], None] = lambda: None) -> set[int]:
    """SIGTERM, wait up to `grace` seconds, then SIGKILL and wait up to 1 s more; returns the PIDs
    that needed SIGKILL. `reap` collects exited children of this process while waiting."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        reap()
        alive = {pid for pid in alive if process_alive(pid)}
        if alive:
            time.sleep(0.05)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and any(process_alive(pid) for pid in alive):
        time.sleep(0.02)
    reap()
    return alive


def parse_lldp_keyvalue(text: str) -> dict[str, tuple[str, str]]:
    """`lldpcli show neighbors -f keyvalue` -> local interface -> (system name, port ID). The port ID
    is `port.local` where the neighbour sets one (SONiC's lldpmgrd: the port alias; the netns lab
    sets every node's the way its NOS does), `port.ifname` where it sends its interface name, else
    `port.descr` (lldpd's default ID is a MAC, with the interface name as description). An
    interface with several neighbours keeps the first."""
    fields: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        parts = key.split(".")
        if len(parts) >= 3 and parts[0] == "lldp":
            fields.setdefault(parts[1], {}).setdefault(".".join(parts[2:]), value)
    return {local: (f.get("chassis.name", ""), f.get("port.local") or f.get("port.ifname") or f.get("port.descr", ""))
            for local, f in fields.items()}
