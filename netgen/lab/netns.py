"""The network-namespace backend: every switch a namespace running the real FRR daemons, every
cable a veth pair, Loopback0 and Vlan1000 as Linux bridges (this kernel has no dummy driver).

Each router gets its own UTS and mount namespace too: FRR's config and socket directories of the
router are bind-mounted over /etc/frr and /run/frr, so inside a node `vtysh`, `vtysh -f
/etc/frr/frr.conf` and `frr-reload.py` work at their default paths, as on a SONiC box.

What this does not emulate: the ASIC. PFC, ECN, buffers, queues and UDF hashing exist only in the
rendered files and their render-time checks; the kernel forwards with plain 5-tuple ECMP.

Everything created is written to the lab's state file *before* it is created, so `netgen lab down`
removes exactly what `up` made, also after a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

from netgen.lab.backend import (
    BuildReport,
    DestroyReport,
    ExecResult,
    LabError,
    StageHook,
    StatefulBackend,
    check_lab_name,
    lab_root,
    list_states,
    must,
    parse_lldp_keyvalue,
    process_alive,
    run_command,
    stop_processes,
)
from netgen.lab.endpoints import stop_management
from netgen.lab.frr_vty import vty_command
from netgen.lab.grow import GrowSteps, LabGrowth
from netgen.lab.lab_only import FRR_ENVIRONMENT, LAB_CONF, ZEBRA_SETTING, LabOnly, lab_only, uses_bfd
from netgen.lab.link_up import cable_groups, ports_up, wait_for_cpu
from netgen.lab.plan import LabInterface, LabLink, LabNode, LabPlan
from netgen.lab.rtnetlink import NetlinkError, route_widths

FRR_DIR = Path("/usr/lib/frr")
STATE_FILE = "state.json"
ROUTER_SYSCTLS = {
    "net.ipv4.ip_forward": "1",
    "net.ipv6.conf.all.forwarding": "1",
    "net.ipv6.conf.default.accept_dad": "0",  # link-local usable at once
    "net.ipv6.conf.all.accept_dad": "0",
    # A switch keeps its configured IPv6 addresses when a link drops; Linux flushes them by default.
    "net.ipv6.conf.all.keep_addr_on_down": "1",
    "net.ipv6.conf.default.keep_addr_on_down": "1",
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv4.fib_multipath_hash_policy": "1",  # 5-tuple, the closest the kernel gets to the ASIC hash
    "net.ipv6.fib_multipath_hash_policy": "1",
}
HOST_SYSCTLS = {"net.ipv6.conf.default.accept_dad": "0", "net.ipv6.conf.all.accept_dad": "0"}
# The neighbour tables are shared by all namespaces, and their limits (gc_thresh1/2/3, 128/512/1024 by
# default) can be set only in the initial one; big labs overflow the defaults.
GC_THRESH = [f"net.{family}.neigh.default.gc_thresh{i}" for family in ("ipv4", "ipv6") for i in (1, 2, 3)]
STOP_GRACE_S = 5.0
# After SIGKILL a process still has to exit (a daemon of a loaded zone lab takes seconds to): `lab
# down` waits this long for the last of them before it says which are left.
EXIT_WAIT_S = 30.0
# Lab-only zebra setting (netgen/lab/lab_only.py), loaded at zebra start before the rendered frr.conf
# so no route is installed without it.
ZEBRA_LAB_CONF = "zebra-lab.conf"


def lab_conf_vtysh() -> list[str]:
    """vtysh's arguments that apply the node's lab-only settings (lab_only.LAB_CONF, written at its
    start) to a running router: after its frr.conf and after anything that reloads it, since
    `frr-reload.py` removes what frr.conf does not hold."""
    return ["vtysh", "-f", f"/etc/frr/{LAB_CONF}"]


_run, _must = run_command, must  # shared with the other lab modules (netgen/lab/backend.py)


def prerequisites() -> list[str]:
    """What is missing to run this backend here (empty = ready)."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (network namespaces and FRR need it)")
    for tool in ("ip", "nsenter", "unshare", "vtysh", "ping"):
        if shutil.which(tool) is None:
            missing.append(f"{tool} (apt-get install iproute2 util-linux frr iputils-ping)")
    for daemon in ("zebra", "bgpd", "staticd", "bfdd"):
        if not (FRR_DIR / daemon).exists():
            missing.append(f"{FRR_DIR / daemon} (apt-get install frr)")
    for tool in ("lldpd", "lldpcli"):
        if shutil.which(tool) is None:
            missing.append(f"{tool} (apt-get install lldpd)")
    return missing


def existing_namespaces() -> set[str]:
    result = _run(["ip", "-j", "netns", "list"])
    if not result.ok or not result.stdout.strip():
        return set()
    return {entry["name"] for entry in json.loads(result.stdout)}


def _read_sysctl(key: str) -> str:
    return Path("/proc/sys", *key.split(".")).read_text().strip()


def _write_sysctl(key: str, value: str) -> None:
    Path("/proc/sys", *key.split(".")).write_text(value)


def _is_frr_process(pid: int) -> bool:
    """Guards against PID reuse: only ever signal FRR daemons (or processes inside our namespaces)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(str(FRR_DIR).encode())
    except OSError:
        return False


LLDP_SAFE = re.compile(r"[A-Za-z0-9_.:/@+-]+(?: [A-Za-z0-9_.:/@+-]+)*")


def lldpd_config(node: LabNode, settings: LabOnly) -> str:
    """The node's lldpd commands (`lldpd -O`): the lab's interval (1 s in small labs) held at least
    30 s (lab_only.py), and per cabled port the port ID and
    description its NOS sends, the way SONiC's lldpmgrd configures its lldpd (`configure ports
    <port> lldp portidsubtype local <alias> description <description>`). An ID or description
    that is not plain text is left out (the lldpd default then shows), never quoted into a command."""
    # every second in a small lab, so it hears its neighbours at once; held at least 30 s, so a node
    # starved of CPU for a few seconds (a loaded CI machine, a drill reconverging FRR) does not lose
    # its neighbours. A re-cabled port loses its old neighbour at once anyway: its interface goes away.
    lines = [f"configure lldp tx-interval {settings.lldp_interval_s}", f"configure lldp tx-hold {settings.lldp_hold}"]
    for intf in node.interfaces:
        if intf.kind != "port" or not intf.lldp_id or not LLDP_SAFE.fullmatch(intf.lldp_id):
            continue
        line = f"configure ports {intf.name} lldp portidsubtype local {intf.lldp_id}"
        if intf.lldp_description and LLDP_SAFE.fullmatch(intf.lldp_description):
            line += f' description "{intf.lldp_description}"'
        lines.append(line)
    return "".join(f"{line}\n" for line in lines)


class NetnsBackend(StatefulBackend):
    kind: ClassVar[str] = "netns"

    def __init__(self, lab: str) -> None:
        super().__init__(lab, lab_root() / check_lab_name(lab))

    def namespace(self, node: str) -> str:
        return f"{self.lab}-{node}"

    # --- build --------------------------------------------------------------------------------
    def build(self, plan: LabPlan, progress: StageHook | None = None,
              files: Mapping[str, Mapping[str, str]] | None = None) -> BuildReport:
        missing = prerequisites()
        if missing:
            raise LabError("the netns lab needs: " + "; ".join(missing))
        if self.exists():
            raise LabError(f"lab {self.lab!r} is already up; `netgen lab down --name {self.lab}` first,"
                           " or pick another --name")
        names = {node: self.namespace(node) for node in plan.nodes}
        taken = sorted(set(names.values()) & existing_namespaces())
        if taken:
            raise LabError(f"namespace(s) {', '.join(taken[:3])} already exist and are not this lab's;"
                           " pick another --name")
        started = time.monotonic()
        stages: dict[str, float] = {}
        if self.dir.exists():  # no state file: left by a crash before anything was created
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        os.chmod(self.dir, 0o755)
        # Write-ahead: the state names every namespace before the first one exists.
        settings = lab_only(plan)
        self._state = {"lab": self.lab, "backend": self.kind, "status": "building", "dir": str(self.dir),
                       "created": time.time(), "namespaces": sorted(names.values()), "pids": {},
                       "sysctl_restore": {}, "lab_only": settings.describe(plan)}
        self._save_plan(plan)
        self._save()

        def stage(label: str, done: int, total: int) -> None:
            if progress:
                progress(label, done, total)

        try:
            mark = time.monotonic()
            self._raise_neighbour_limits(len(plan.links))
            self._add_namespaces(list(plan.nodes.values()), stage)
            stages["namespaces"] = time.monotonic() - mark

            mark = time.monotonic()
            stage("links", 0, len(plan.links))
            self._add_links(plan.links)
            for node in plan.nodes.values():
                _must(["ip", "-n", names[node.name], "-batch", "-"], f"{node.name}: interfaces and addresses",
                      self._interface_batch(node, hold=settings.hold_build and node.kind == "router"))
            stage("links", len(plan.links), len(plan.links))
            stages["links_and_addresses"] = time.monotonic() - mark

            mark = time.monotonic()
            routers = plan.routers()
            self._start_routers(routers, settings, stage, hold=settings.hold_build)
            stages["frr_start_and_config"] = time.monotonic() - mark

            mark = time.monotonic()
            self._state["lldp"] = {}
            (self.dir / "lldp").mkdir()
            self._start_lldps(plan, list(plan.nodes), settings, stage)
            stages["lldp"] = time.monotonic() - mark

            # A wide lab's cables come up last, a rack at a time, once every router runs: a router
            # started while its neighbours were already talking spent its start competing with their
            # sessions, BFD and updates (a whole zone's start took minutes longer). A small lab
            # starts with its cables up: held, it would wait for BGP's connect retry (10 s).
            if settings.hold_build:
                mark = time.monotonic()
                self._cables_up(plan, routers, stage)
                stages["cables_up"] = time.monotonic() - mark
                mark = time.monotonic()
                self._release_bfd(routers, settings, stage)
                stages["bfd_released"] = time.monotonic() - mark
            self._state["status"] = "up"
            self._save()
        except BaseException:
            self.destroy()
            raise
        return BuildReport(lab=self.lab, backend=self.kind, nodes=len(plan.nodes), routers=len(routers),
                           links=len(plan.links), seconds=time.monotonic() - started, stages=stages,
                           lab_only=self._state["lab_only"])

    def _add_namespaces(self, nodes: list[LabNode], stage: StageHook) -> None:
        """The nodes' namespaces, each with its sysctls (the state names them already)."""
        stage("namespaces", 0, len(nodes))
        _must(["ip", "-batch", "-"], "creating namespaces",
              "".join(f"netns add {self.namespace(node.name)}\n" for node in nodes))
        for i, node in enumerate(nodes, 1):
            sysctls = ROUTER_SYSCTLS if node.kind == "router" else HOST_SYSCTLS
            _must(["ip", "netns", "exec", self.namespace(node.name), "sysctl", "-q", "-w",
                   *(f"{k}={v}" for k, v in sysctls.items())], f"{node.name}: sysctl")
            stage("namespaces", i, len(nodes))

    def _add_links(self, links: Sequence[LabLink]) -> None:
        if links:
            _must(["ip", "-batch", "-"], "creating veth links",
                  "".join(f"link add name {link.a_if} netns {self.namespace(link.a)} type veth peer name"
                          f" {link.b_if} netns {self.namespace(link.b)}\n" for link in links))

    def _start_routers(self, routers: list[LabNode], settings: LabOnly, stage: StageHook, hold: bool = False) -> None:
        assert self._state is not None
        stage("routers", 0, len(routers))
        with ThreadPoolExecutor(max_workers=4) as pool:
            started = pool.map(lambda n: self._start_router(n, settings, hold), routers)
            for done, (name, pids) in enumerate(started, 1):
                self._state["pids"][name] = pids
                self._save()
                stage("routers", done, len(routers))

    def _start_lldps(self, plan: LabPlan, nodes: list[str], settings: LabOnly, stage: StageHook) -> None:
        assert self._state is not None
        # lldpd runs lldpcli on each node's file before it starts sending (-O): set after the
        # start, the interval raced lldpd's own start and left some agents silent after their
        # first frame. Written here, before any agent starts (threads raced to create one file).
        for name in nodes:
            (self.dir / "lldp" / f"{name}.conf").write_text(lldpd_config(plan.nodes[name], settings))
        stage("lldp", 0, len(nodes))
        with ThreadPoolExecutor(max_workers=4) as pool:
            for done, (name, pid) in enumerate(pool.map(lambda n: self._start_lldp(plan, n), nodes), 1):
                self._state["lldp"][name] = pid
                stage("lldp", done, len(nodes))
        self._save()

    @staticmethod
    def _interface_batch(node: LabNode, hold: bool = False) -> str:
        """What intfmgrd/vlanmgrd would do with the node's rendered interface tables; `hold`: its
        ports stay down (`build` brings every router's ports up once every node runs)."""
        lines = ["link set lo up", *NetnsBackend._interface_lines(node.interfaces, hold)]
        if node.gateway_v4:
            lines.append(f"route add default via {node.gateway_v4}")
        return "".join(line + "\n" for line in lines)

    @staticmethod
    def _interface_lines(interfaces: Sequence[LabInterface], hold: bool = False) -> list[str]:
        lines = []
        for intf in interfaces:
            if intf.kind == "bridge":
                lines.append(f"link add name {intf.name} type bridge")
            lines.append(f"link set {intf.name} mtu {intf.mtu}")
        for intf in interfaces:
            if intf.bridge:
                lines.append(f"link set {intf.name} master {intf.bridge}")
            lines += [f"addr add {prefix} dev {intf.name}" for prefix in intf.addresses]
            up = intf.up and not (hold and intf.kind == "port")
            lines.append(f"link set {intf.name} {'up' if up else 'down'}")
        return lines

    def _daemons(self, node: LabNode) -> list[str]:
        """The FRR daemons the node's config needs: staticd only for static routes and bfdd only for
        BFD (a zone's 208 idle staticd processes held half a gigabyte)."""
        conf = (node.frr_conf or "").splitlines()
        daemons = ["zebra", "bgpd"]
        if any(line.lstrip().startswith(("ip route ", "ipv6 route ")) for line in conf):
            daemons.append("staticd")
        if uses_bfd(node.frr_conf or ""):
            daemons.append("bfdd")
        return daemons

    def _start_router(self, node: LabNode, settings: LabOnly, hold: bool = False) -> tuple[str, dict[str, int]]:
        home = self.dir / "nodes" / node.name
        etc, run, log = home / "etc", home / "run", home / "log"
        for folder in (etc, run, log):
            folder.mkdir(parents=True)
        (etc / "frr.conf").write_text(node.frr_conf or "")
        (etc / "vtysh.conf").write_text("service integrated-vtysh-config\n")
        (etc / ZEBRA_LAB_CONF).write_text(f"! netgen lab only (netgen/lab/lab_only.py)\n{ZEBRA_SETTING}\n")
        (etc / LAB_CONF).write_text(settings.frr_conf(node))
        # FRR drops privileges to frr: its directories must be its own and traversable.
        for path in (home, etc, run, log, etc / "frr.conf", etc / "vtysh.conf", etc / ZEBRA_LAB_CONF, etc / LAB_CONF):
            shutil.chown(path, "frr", "frr")
        (etc / "frr.conf").chmod(0o640)  # it holds the BGP session key
        for path in (self.dir / "nodes", home):
            path.chmod(0o755)
        common = ["-d", "-F", "datacenter", "-u", "frr", "-g", "frr", "-P", "0"]
        pids: dict[str, int] = {}
        for daemon in self._daemons(node):
            args = ["env", *FRR_ENVIRONMENT, str(FRR_DIR / daemon), *common, "-i", f"/run/frr/{daemon}.pid",
                    "--log", f"file:{log}/{daemon}.log"]
            if daemon == "zebra":
                args += ["-f", f"/etc/frr/{ZEBRA_LAB_CONF}"]
                # A UTS namespace for the hostname (BGP's hostname capability) and a mount namespace
                # that puts this router's config and sockets at FRR's default paths.
                script = ('hostname "$0" && mount --bind "$1" /etc/frr && mount --bind "$2" /run/frr'
                          ' && shift 3 && exec "$@"')
                argv = ["ip", "netns", "exec", self.namespace(node.name), "unshare", "--uts", "--mount",
                        "--propagation", "private", "sh", "-c", script, node.name, str(etc), str(run), "-", *args]
            else:
                argv = self._enter(pids["zebra"], args)
            _must(argv, f"{node.name}: starting {daemon}")
            pids[daemon] = self._wait_pid(node.name, run, daemon)
        self._wait_sockets(node.name, run, list(pids))
        held = settings.held_conf(node) if hold else ""
        if held:
            (etc / "held.conf").write_text(held)
            result = _run(self._enter(pids["zebra"], ["vtysh", "-f", "/etc/frr/held.conf"]), timeout=60)
            if not result.ok:
                raise LabError(f"{node.name}: holding BFD while the lab is built:"
                               f" {(result.stdout + result.stderr).strip()[-300:]}")
        result = _run(self._enter(pids["zebra"], ["vtysh", "-f", "/etc/frr/frr.conf"]), timeout=120)
        if not result.ok:
            raise LabError(f"{node.name}: FRR rejected its config ({node.frr_source}): "
                           f"{(result.stdout + result.stderr).strip()[:800]}")
        self._apply_lab_only(node.name, pids["zebra"])
        return node.name, pids

    def _cables_up(self, plan: LabPlan, routers: list[LabNode], stage: StageHook) -> None:
        """The held routers' ports up, a leaf's cables at a time (`cable_groups`), each group once
        the machine has caught up with the last (`wait_for_cpu`): all 6,528 of a zone's at once made
        every session start together, and reads of the routers then took longer than their 30 s
        timeout; one `ip` process per router waited behind the sessions its predecessors began
        (docs/developer/benchmarks.md)."""
        groups = cable_groups(plan, routers)
        stage("cables up", 0, len(groups))
        for done, ports in enumerate(groups, 1):
            problems = ports_up({self.namespace(node): names for node, names in ports.items()})
            if problems:
                raise LabError("setting the routers' ports up: " + "; ".join(problems[:10]))
            stage("cables up", done, len(groups))
            if done < len(groups):
                wait_for_cpu()

    def _release_bfd(self, routers: list[LabNode], settings: LabOnly, stage: StageHook) -> None:
        """Every router's BFD profiles out of their build-time shutdown (lab_only.held_conf)."""
        pids = self.state()["pids"]

        def release(node: LabNode) -> None:
            args = settings.release_vtysh(node)
            if args:
                result = _run(self._enter(pids[node.name]["zebra"], ["vtysh", *args]), timeout=60)
                if not result.ok:
                    raise LabError(f"{node.name}: releasing BFD: {(result.stdout + result.stderr).strip()[-300:]}")

        stage("BFD released", 0, len(routers))
        with ThreadPoolExecutor(max_workers=4) as pool:
            for done, _ in enumerate(pool.map(release, routers), 1):
                stage("BFD released", done, len(routers))

    def _apply_lab_only(self, node: str, zebra: int) -> None:
        result = _run(self._enter(zebra, lab_conf_vtysh()), timeout=60)
        if not result.ok:
            raise LabError(f"{node}: the lab's own settings ({LAB_CONF}):"
                           f" {(result.stdout + result.stderr).strip()[-300:]}")

    def lldp_socket(self, node: str) -> Path:
        return self.dir / "lldp" / f"{node}.sock"

    def _start_lldp(self, plan: LabPlan, node: str) -> tuple[str, int]:
        """Debian's lldpd on the node's cabled interfaces, named after the node (its own UTS
        namespace) and sending every second so the lab hears its neighbours within seconds."""
        interfaces = sorted({link.a_if for link in plan.links if link.a == node}
                            | {link.b_if for link in plan.links if link.b == node})
        folder = self.dir / "lldp"
        socket, pidfile, conf = self.lldp_socket(node), folder / f"{node}.pid", folder / f"{node}.conf"
        if not interfaces:
            return node, 0
        script = 'hostname "$0" && exec lldpd -u "$1" -p "$2" -I "$3" -O "$4"'
        _must(["ip", "netns", "exec", self.namespace(node), "unshare", "--uts", "sh", "-c", script, node,
               str(socket), str(pidfile), ",".join(interfaces), str(conf)], f"{node}: starting lldpd")
        deadline = time.monotonic() + 10
        while not (socket.exists() and pidfile.exists() and pidfile.read_text().strip()):
            if time.monotonic() > deadline:
                raise LabError(f"{node}: lldpd did not start (no {socket})")
            time.sleep(0.05)
        return node, int(pidfile.read_text().strip())

    def lldp_neighbors(self, node: str) -> dict[str, tuple[str, str]] | None:
        socket = self.lldp_socket(node)
        if not socket.exists():
            return None
        result = _run(["lldpcli", "-u", str(socket), "show", "neighbors", "-f", "keyvalue"], timeout=15)
        if not result.ok:
            raise LabError(f"{node}: lldpcli failed: {(result.stdout + result.stderr).strip()[:300]}")
        return parse_lldp_keyvalue(result.stdout)

    @staticmethod
    def _enter(pid: int, argv: Sequence[str]) -> list[str]:
        return ["nsenter", "-t", str(pid), "--net", "--uts", "--mount", "--", *argv]

    @staticmethod
    def _wait_pid(node: str, run: Path, daemon: str, timeout: float = 10.0) -> int:
        path = run / f"{daemon}.pid"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                pid = int(path.read_text().strip())
                if Path(f"/proc/{pid}").exists():
                    return pid
            time.sleep(0.02)
        raise LabError(f"{node}: {daemon} did not start (no {path}); see {run.parent / 'log' / (daemon + '.log')}")

    @staticmethod
    def _wait_sockets(node: str, run: Path, daemons: list[str], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all((run / f"{d}.vty").exists() for d in daemons):
                return
            time.sleep(0.02)
        raise LabError(f"{node}: FRR daemons {daemons} did not open their vty sockets in {timeout:.0f} s")

    def _raise_neighbour_limits(self, links: int) -> None:
        need = 4 * links  # both ends, IPv4 + IPv6 (global and link-local) entries, rounded up
        assert self._state is not None
        for key in GC_THRESH:
            current = int(_read_sysctl(key))
            level = int(key[-1])
            wanted = need * 2 ** (level - 1)  # 1x / 2x / 4x what the lab needs
            if current < wanted:
                self._state["sysctl_restore"][key] = str(current)
                self._save()
                _write_sysctl(key, str(wanted))

    # --- grow ---------------------------------------------------------------------------------
    def grow(self, plan: LabPlan, growth: LabGrowth, progress: StageHook | None = None) -> GrowSteps:
        """Grow the running lab to `plan` as `growth` (netgen/lab/grow.py) says, in the order of
        `netgen grow`: the new nodes first (namespaces, cables, addresses, FRR, lldpd), then each
        existing router that gains ports, its new ports addressed as intfmgrd would and lldpd told
        about them, then its new FRR config loaded with `frr-reload.py --reload`, the way the SONiC
        deploy loads one (netgen/nos/sonic/driver.py): only the difference is applied, so the
        sessions it keeps are not touched. Write-ahead as `build`: the state names every new
        namespace before it exists, so `lab down` removes them whatever happens. A failure stops
        there (nothing is undone) and the error names the steps already taken."""
        state = self.state()
        if state.get("status") != "up":
            raise LabError(f"lab {self.lab!r} is {state.get('status')!r}, not up: `netgen lab down --name"
                           f" {self.lab}` and build it again")
        taken = sorted({self.namespace(n) for n in growth.new_nodes} & existing_namespaces())
        if taken:
            raise LabError(f"namespace(s) {', '.join(taken[:3])} already exist; nothing was changed")
        steps = GrowSteps()

        def stage(label: str, done: int, total: int) -> None:
            if progress:
                progress(label, done, total)

        state["namespaces"] = sorted({*state["namespaces"], *(self.namespace(n) for n in growth.new_nodes)})
        state["status"] = "growing"
        self._save()
        try:
            self._raise_neighbour_limits(len(plan.links))
            new_nodes = [plan.nodes[n] for n in growth.new_nodes]
            self._add_namespaces(new_nodes, stage)
            self._add_links(growth.new_links)
            for node in new_nodes:
                _must(["ip", "-n", self.namespace(node.name), "-batch", "-"],
                      f"{node.name}: interfaces and addresses", self._interface_batch(node))
            steps.done.append(f"{len(new_nodes)} node(s) and {len(growth.new_links)} cable(s) added")
            new_routers = [n for n in new_nodes if n.kind == "router"]
            settings = lab_only(plan)
            self._start_routers(new_routers, settings, stage)
            steps.done.append(f"FRR started on {', '.join(n.name for n in new_routers) or 'no new router'}")
            self._start_lldps(plan, growth.new_nodes, settings, stage)
            for name, ports in growth.new_ports.items():
                _must(["ip", "-n", self.namespace(name), "-batch", "-"], f"{name}: new ports",
                      "".join(line + "\n" for line in self._interface_lines(ports)))
                self._lldp_add_ports(plan, name, ports)
                steps.done.append(f"{name}: {len(ports)} new port(s) addressed")
            stage("FRR reloads", 0, len(growth.reloaded))
            for i, name in enumerate(growth.reloaded, 1):
                self._reload_frr(plan.nodes[name], settings)
                steps.done.append(f"{name}: FRR config reloaded")
                stage("FRR reloads", i, len(growth.reloaded))
            retuned = self._retune(plan, settings, set(growth.new_nodes) | set(growth.reloaded))
            if retuned:
                steps.done.append(f"lab-only settings of {retuned} existing node(s) follow the larger lab")
            state["lab_only"] = settings.describe(plan)
        except (LabError, OSError) as exc:
            state["status"] = "up"  # the old plan still describes every node it names
            self._save()
            done = "; ".join(steps.done) or "nothing"
            raise LabError(f"growing the lab stopped: {exc}. Done before it: {done}. `netgen lab down --name"
                           f" {self.lab}` removes all of it") from None
        self._save_plan(plan)
        state["status"] = "up"
        self._save()
        return steps

    def _lldp_add_ports(self, plan: LabPlan, node: str, ports: Sequence[LabInterface]) -> None:
        """lldpd of an existing node listens on its new ports too, with the port IDs its NOS sends
        (lldpcli(8): `configure system interface pattern` is lldpd's -I at run time)."""
        socket = self.lldp_socket(node)
        if not socket.exists():
            return
        interfaces = sorted({link.a_if for link in plan.links if link.a == node}
                            | {link.b_if for link in plan.links if link.b == node})
        commands = [f"configure system interface pattern {','.join(interfaces)}"]
        commands += [line for line in lldpd_config(plan.nodes[node], lab_only(plan)).splitlines()
                     if line.startswith("configure ports ") and line.split()[2] in {p.name for p in ports}]
        for command in commands:
            _must(["lldpcli", "-u", str(socket), *shlex.split(command)], f"{node}: lldpcli {command}")

    def _retune(self, plan: LabPlan, settings: LabOnly, done: set[str]) -> int:
        """The existing nodes' lab-only settings for the grown plan (a wider lab may need a higher
        BFD floor or a longer LLDP interval): each node whose settings differ is set again."""
        changed = 0
        for name, pids in self.state()["pids"].items():
            node = plan.nodes.get(name)
            conf = self.dir / "nodes" / name / "etc" / LAB_CONF
            if name in done or node is None or not conf.exists() or conf.read_text() == settings.frr_conf(node):
                continue
            conf.write_text(settings.frr_conf(node))
            self._apply_lab_only(name, pids["zebra"])
            changed += 1
        wanted = lldpd_config(plan.nodes[next(iter(plan.nodes))], settings).splitlines()[:2]
        for name in self.state().get("lldp", {}):
            conf = self.dir / "lldp" / f"{name}.conf"
            same = conf.exists() and conf.read_text().splitlines()[:2] == wanted
            if name in done or name not in plan.nodes or not conf.exists() or same:
                continue
            for command in wanted:
                _must(["lldpcli", "-u", str(self.lldp_socket(name)), *shlex.split(command)],
                      f"{name}: lldpcli {command}")
            conf.write_text(lldpd_config(plan.nodes[name], settings))
            changed += 1
        return changed

    def _reload_frr(self, node: LabNode, settings: LabOnly) -> None:
        """The node's new frr.conf in place, loaded by FRR's own frr-reload.py (it applies only the
        difference to the running config; its log goes to stdout, not /var/log/frr)."""
        pids = self.state()["pids"].get(node.name)
        if not pids:
            raise LabError(f"{node.name}: no FRR running")
        conf = self.dir / "nodes" / node.name / "etc" / "frr.conf"
        conf.write_text(node.frr_conf or "")
        shutil.chown(conf, "frr", "frr")
        conf.chmod(0o640)
        (conf.parent / LAB_CONF).write_text(settings.frr_conf(node))
        result = _run(self._enter(pids["zebra"], [str(FRR_DIR / "frr-reload.py"), "--reload", "--stdout",
                                                  "/etc/frr/frr.conf"]), timeout=120)
        if not result.ok:
            raise LabError(f"{node.name}: frr-reload.py failed: {(result.stdout + result.stderr).strip()[-800:]}")
        self._apply_lab_only(node.name, pids["zebra"])

    # --- use ----------------------------------------------------------------------------------
    def exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult:
        state = self.state()
        pids = state["pids"].get(node)
        if pids and Path(f"/proc/{pids['zebra']}").exists():
            return _run(self._enter(pids["zebra"], argv), timeout=timeout)
        if self.namespace(node) not in state["namespaces"]:
            raise LabError(f"lab {self.lab!r} has no node {node!r}")
        return _run(["ip", "netns", "exec", self.namespace(node), *argv], timeout=timeout)

    def show(self, node: str, daemon: str, command: str, timeout: float = 30.0) -> ExecResult:
        """Straight to the daemon's vty socket in the router's run directory (frr_vty): no
        nsenter and vtysh processes, 208 of them a poll at a zone's width."""
        if node not in self.state()["pids"]:
            raise LabError(f"lab {self.lab!r} has no router {node!r}")
        return vty_command(self.dir / "nodes" / node / "run" / f"{daemon}.vty", command, timeout)

    def kernel_routes(self, node: str, protocol: str) -> dict[str, int]:
        """Read over rtnetlink from this process (rtnetlink.route_widths): no `ip` process."""
        if self.namespace(node) not in self.state()["namespaces"]:
            raise LabError(f"lab {self.lab!r} has no node {node!r}")
        try:
            return route_widths(self.namespace(node), protocol)
        except (NetlinkError, OSError) as exc:
            raise LabError(f"{node}: reading its forwarding table: {exc}") from None

    def node_flavour(self, node: str) -> str:
        return "frr" if node in self.state()["pids"] else "host"

    def daemon_pids(self) -> dict[str, dict[str, int]]:
        return {node: dict(p) for node, p in self.state()["pids"].items()}

    def memory(self) -> dict[str, int]:
        """Proportional set size (bytes) of each router's FRR daemons, from smaps_rollup."""
        sizes: dict[str, int] = {}
        for node, pids in self.state()["pids"].items():
            total = 0
            for pid in pids.values():
                with contextlib.suppress(OSError, ValueError):
                    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                        if line.startswith("Pss:"):
                            total += int(line.split()[1]) * 1024
            sizes[node] = total
        return sizes

    # --- destroy ------------------------------------------------------------------------------
    def destroy(self) -> DestroyReport:
        report = DestroyReport(lab=self.lab)
        state = self.state() if self._state is None and self.exists() else self._state
        if state is None:
            raise LabError(f"no lab named {self.lab!r} (no {self.state_path})")
        # SSH management (netgen/lab/endpoints.py) goes first: its bridge and mounts live outside
        # the namespaces, and its record lives in the lab directory removed below.
        stop_management(self)
        present = existing_namespaces()
        ours = [ns for ns in state["namespaces"] if ns in present]
        stopped: set[int] = set()
        killed: set[int] = set()
        # Rescan until a pass finds nothing: a `lab up` killed mid-start can leave a daemon start in
        # flight that only appears after the first pass (it carries the lab directory in its argv).
        for _ in range(5):
            victims = self._lab_processes(ours, state) - stopped
            if not victims:
                break
            killed |= stop_processes(victims, STOP_GRACE_S)
            stopped |= victims
            time.sleep(0.2)
        report.processes, report.killed = sorted(stopped), sorted(killed)
        deadline = time.monotonic() + EXIT_WAIT_S
        left = self._lab_processes(ours, state)
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = self._lab_processes(ours, state)
        if left:  # the state stays, so `lab down` again finds what is left
            self._state = state
            raise LabError(f"lab {self.lab!r}: {len(left)} process(es) still running {EXIT_WAIT_S:.0f} s after"
                           f" SIGKILL (PIDs {', '.join(map(str, sorted(left)[:10]))}); its namespaces and files"
                           f" are kept: `netgen lab down --name {self.lab}` again")
        if ours:
            _run(["ip", "-force", "-batch", "-"], "".join(f"netns del {ns}\n" for ns in ours))
        report.namespaces = ours
        self._restore_sysctls(state)
        if self.dir.exists():
            shutil.rmtree(self.dir, ignore_errors=True)
            report.removed_dir = str(self.dir)
        self._state = self._plan = None
        return report

    def _lab_processes(self, namespaces: list[str], state: dict[str, Any]) -> set[int]:
        """Every live process of the lab, in one pass over /proc: those in its network namespaces
        (by the namespace's inode; `ip netns pids` per namespace scans /proc once for each, which
        took minutes for a zone's 400 namespaces on a loaded machine), its FRR daemons by PID,
        and any carrying the lab directory in its command line (a start in flight)."""
        inodes: set[tuple[int, int]] = set()
        for ns in namespaces:
            with contextlib.suppress(OSError):
                info = os.stat(f"/run/netns/{ns}")
                inodes.add((info.st_dev, info.st_ino))
        found = {pid for pids in state["pids"].values() for pid in pids.values() if _is_frr_process(pid)}
        marker = f"{self.dir}/".encode()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                info = os.stat(proc / "ns" / "net")
                if (info.st_dev, info.st_ino) in inodes or marker in (proc / "cmdline").read_bytes():
                    found.add(int(proc.name))
        return {pid for pid in found if process_alive(pid)}

    def _restore_sysctls(self, state: dict[str, Any]) -> None:
        others = [p for p in lab_root().glob(f"*/{STATE_FILE}") if p.parent != self.dir]
        if others:  # another lab may still need the raised limits; it restores them when it goes
            for path in others:
                with contextlib.suppress(OSError, json.JSONDecodeError):
                    other = json.loads(path.read_text())
                    for key, value in state.get("sysctl_restore", {}).items():
                        other.setdefault("sysctl_restore", {}).setdefault(key, value)
                    path.write_text(json.dumps(other, indent=1))
            return
        for key, value in state.get("sysctl_restore", {}).items():
            with contextlib.suppress(OSError):
                _write_sysctl(key, value)


def list_labs() -> list[dict[str, Any]]:
    return list_states(STATE_FILE)


