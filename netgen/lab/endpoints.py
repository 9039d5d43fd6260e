"""SSH management access to a running netns lab, the way containerlab gives its nodes a management
network, with a stand-in for the NOS's CLI on the routers whose NOS bundle has one (its
`lab_shim` part, LabShim below: SONiC's, netgen/nos/sonic/lab_shim.py): what the deploy tests
talk to.

`start_management(backend)` gives every chosen router node:

* a port on a host-side Linux bridge (`nm-<lab>`, the subnet's first address): a veth whose host
  end is enslaved to the bridge and whose node end is `eth0` inside the node's namespace, with the
  next free address of the subnet (198.18.0.0/15 benchmark space, one /24 per lab by default);
* inside the node's mount namespace (the one FRR's zebra runs in, see netns.py): its own /tmp and
  /root (the top-level entries of root's home that hold this Python stay visible, e.g. ~/.pyenv),
  and its own wtmp/btmp/lastlog, so SSH sessions leave nothing in the host's files; on a node
  with a CLI stand-in also the stand-in's folder at its `etc` (SONiC: `/etc/sonic`, the emulated
  CONFIG_DB seeded from the rendered config_db.json, checkpoints, sonic_version.yml, and `frr` ->
  the node's FRR directory) and `/usr/local/sbin` (first on root's PATH) holding its commands
  (SONiC: `config`, `show`, `pfc`, `pfcwd`, `sonic-cfggen`, a `sudo` that just runs the command and
  a `docker` whose `exec CONTAINER CMD` runs CMD on the node);
* one OpenSSH `sshd -D -e -f <cfg>`, started with nsenter into zebra's net, UTS and mount
  namespaces, so an SSH session sees the node's hostname, routing table and FRR at the default
  paths (`vtysh`, `/etc/frr/frr.conf`, `frr-reload.py`), as on a SONiC box or a containerlab FRR
  node. One ed25519 host key and one client key per lab; root logs in by key only (`UsePAM no`);
  a known_hosts file lists every endpoint.

Real: OpenSSH, the Linux bridge, veths and addresses, FRR, the kernel FIB, netmiko's `linux`
driver on the client side. Emulated: what the stand-in says it emulates (SONiC's CLI and
CONFIG_DB), on the node's real kernel interfaces. EOS has no stand-in: its nodes run FRR stand-ins
(its lab adapter) and get a plain shell. `shim_hooks` names a file of hooks the stand-in calls at
fixed points (netgen/nos/sonic/lab_shim.py's docstring); the tests inject their faults that way.

State: `<lab dir>/management.json` names everything before it is created (write-ahead, as
netns.py does), and every host link carries the alias `netgen-mgmt:<lab dir>`.
`stop_management(backend)` removes exactly that, in order (SSH sessions, then listeners, then the
node mounts, then the veths and the bridge, then the files), and is idempotent, also after a
crash. It must run before `NetnsBackend.destroy()`, which removes the lab directory holding the
state.
"""

from __future__ import annotations

import contextlib
import inspect
import ipaddress
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import netgen
from netgen.lab.backend import LabError, NamespaceLab, lab_root, must, process_alive, run_command, stop_processes
from netgen.lab.plan import LabPlan
from netgen.registry import NOS

MGMT_STATE = "management.json"
MGMT_DIR = "management"
SSHD = Path("/usr/sbin/sshd")
MGMT_POOL = ipaddress.IPv4Network("198.18.0.0/15")  # RFC 2544 benchmarking space, never routed
MGMT_PREFIXLEN = 24
SSH_PORT = 22
USERNAME = "root"
NODE_IFNAME = "eth0"  # containerlab's management interface name
STOP_GRACE_S = 3.0
START_TIMEOUT_S = 15.0
# Host directories sshd and the shims need (PRIVSEP_DIR, each shim's `etc`); created only if
# missing, marked, removed when unused.
PRIVSEP_DIR = Path("/run/sshd")
HOME = Path("/root")  # root's home; each node gets its own
SHIM_BIN = Path("/usr/local/sbin")  # first on root's PATH (Debian /etc/profile, sshd's superuser path)
CREATED_MARKER = ".netgen-lab-created"
LOGIN_RECORDS = (Path("/var/log/wtmp"), Path("/var/log/btmp"), Path("/var/log/lastlog"))

# sshd listeners this process started, kept to reap them (and to keep Popen from warning).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


class LabShim(Protocol):
    """A stand-in for a NOS's CLI on a lab router (the `lab_shim` part of the NOS's bundle,
    netgen/registry.py): commands first on root's PATH (`write_bin`, the node's SHIM_BIN), over a
    folder of its own state that the node sees at `etc` (`write_node`, from the node's rendered
    files). Its commands run as `python -m <module> ...`: stop_management finds what they leave
    running (timers) by that name."""

    module: str  # the Python module its commands run
    etc: Path  # where a node sees its folder (SONiC: /etc/sonic)
    needs: tuple[str, ...]  # the rendered files write_node reads

    def write_node(self, folder: Path, node: str, files: Mapping[str, str], lldp_socket: Path,
                   hooks: Path | None) -> None:
        """Fill `folder` (the node's `etc`) from the node's rendered files. `lldp_socket`: the node's
        lldpd; `hooks`: a Python file of hooks its commands call (the tests' faults), or None."""
        ...

    def write_bin(self, folder: Path, hooks: Path | None) -> None:
        """Write its commands (executable scripts) into `folder`."""
        ...


def lab_shim(nos: str) -> LabShim | None:
    """The CLI stand-in of `nos` (its bundle's `lab_shim` part), None for a NOS without one: its
    routers get a plain shell."""
    if not NOS.has_part(nos, "lab_shim"):
        return None
    shim = NOS.part(nos, "lab_shim")
    if not (isinstance(getattr(shim, "module", None), str) and isinstance(getattr(shim, "etc", None), Path)
            and callable(getattr(shim, "write_node", None)) and callable(getattr(shim, "write_bin", None))):
        raise NOS.wrong_part(nos, "lab_shim", "a LabShim (module, etc, needs, write_node, write_bin)")
    return cast(LabShim, shim)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """How to reach one node over SSH. `netmiko()` gives ConnectHandler's arguments, with the host
    key checked against `known_hosts` (unknown or changed keys are rejected)."""

    node: str
    host: str
    port: int
    username: str
    key_file: Path
    known_hosts: Path
    nos: str | None = None
    shim: bool = False  # its NOS's CLI stand-in is there (SONiC: `config`, `show`, ... and /etc/sonic)
    password: str | None = None  # key login only, for now

    def netmiko(self, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "device_type": "linux", "host": self.host, "port": self.port, "username": self.username,
            "use_keys": True, "key_file": str(self.key_file), "allow_agent": False,
            "ssh_strict": True, "system_host_keys": False, "alt_host_keys": True,
            "alt_key_file": str(self.known_hosts)}
        return {**params, **extra}

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["key_file"], data["known_hosts"] = str(self.key_file), str(self.known_hosts)
        return data


@dataclass
class ManagementReport:
    lab: str
    processes: list[int] = field(default_factory=list)  # stopped
    killed: list[int] = field(default_factory=list)  # needed SIGKILL
    unmounted: int = 0
    links: list[str] = field(default_factory=list)  # removed
    host_dirs: list[str] = field(default_factory=list)  # removed

    def as_dict(self) -> dict[str, Any]:
        return {"lab": self.lab, "processes_stopped": len(self.processes), "processes_killed": len(self.killed),
                "mounts_removed": self.unmounted, "links_removed": self.links, "host_dirs_removed": self.host_dirs}


# --- small helpers ---------------------------------------------------------------------------------


_run, _must = run_command, must  # shared with the other lab modules (netgen/lab/backend.py)


def prerequisites() -> list[str]:
    """What is missing to start management here (empty = ready)."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root")
    if not SSHD.exists():
        missing.append(f"{SSHD} (apt-get install openssh-server)")
    for tool in ("ssh-keygen", "ip", "nsenter", "mount", "umount"):
        if shutil.which(tool) is None:
            missing.append(f"{tool} (apt-get install openssh-client iproute2 util-linux mount)")
    return missing


def _state_path(backend: NamespaceLab) -> Path:
    return backend.dir / MGMT_STATE


def _mgmt_dir(backend: NamespaceLab) -> Path:
    return backend.dir / MGMT_DIR


def _alias(backend: NamespaceLab) -> str:
    return f"netgen-mgmt:{backend.dir}"


def _save(path: Path, state: Mapping[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(path)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _host_links() -> dict[str, str]:
    """Host interface name -> its alias ("" if none)."""
    out = _run(["ip", "-j", "link", "show"]).stdout
    return {e["ifname"]: e.get("ifalias", "") for e in json.loads(out or "[]")}


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _parents() -> dict[int, int]:
    """pid -> parent pid, for every process."""
    parents = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    return parents


def _descendants(roots: Iterable[int], parents: Mapping[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def _reap() -> None:
    for pid, proc in list(_CHILDREN.items()):
        if proc.poll() is not None:
            del _CHILDREN[pid]


def _mount_points() -> set[str]:
    """Every mount point of every mount namespace on the host."""
    seen: set[int] = set()
    points: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            inode = os.stat(proc / "ns" / "mnt").st_ino
            if inode in seen:
                continue
            seen.add(inode)
            text = (proc / "mountinfo").read_text()
        except OSError:
            continue
        points |= {line.split()[4] for line in text.splitlines() if len(line.split()) > 4}
    return points


def _ensure_host_dir(path: Path, state: dict[str, Any], state_path: Path) -> None:
    """Create a missing host directory the nodes need, marked as ours (write-ahead)."""
    if path.is_dir():
        return
    state.setdefault("host_dirs", []).append(str(path))
    _save(state_path, state)
    path.mkdir(mode=0o755, parents=True)
    (path / CREATED_MARKER).write_text("created by netgen lab management (netgen/lab/endpoints.py)\n")


def _shim_etcs() -> list[Path]:
    """The host directories every registered CLI stand-in mounts its folder on."""
    return sorted({shim.etc for shim in map(lab_shim, NOS.names("lab_shim")) if shim is not None})


def _remove_unused_host_dirs(recorded: Iterable[str]) -> list[str]:
    """Remove the host directories netgen created (PRIVSEP_DIR, the stand-ins' `etc`, those the
    state recorded), once nothing uses them any more (another lab may still run sshd or have
    /etc/sonic mounted in its nodes)."""
    removed = []
    sshd_running = any(_exe(int(p.name)) == str(SSHD) and process_alive(int(p.name))
                       for p in Path("/proc").iterdir() if p.name.isdigit())
    mounted = _mount_points()
    others = sorted({*_shim_etcs(), *map(Path, recorded)} - {PRIVSEP_DIR})
    for path, busy in ((PRIVSEP_DIR, sshd_running), *((path, str(path) in mounted) for path in others)):
        marker = path / CREATED_MARKER
        if busy or not marker.is_file():
            continue
        if {p.name for p in path.iterdir()} != {CREATED_MARKER}:
            continue  # something else put files there: leave it
        marker.unlink()
        with contextlib.suppress(OSError):
            path.rmdir()
            removed.append(str(path))
    return removed


def _passthrough(shim_hooks: Path | None, shims: Iterable[LabShim] = ()) -> list[tuple[Path, str]]:
    """The top-level entries of the directories a node gets privately (root's home, /tmp) that
    this interpreter, its prefixes, netgen, the stand-ins' code and the shim's hooks file live in
    (pyenv keeps Python in ~/.pyenv; CI may clone the project under /tmp): they stay visible inside
    the node. (host path, node subdir)."""
    code = [Path(inspect.getfile(type(shim))).resolve() for shim in shims]
    needed = [Path(os.path.realpath(sys.executable)), Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
              Path(netgen.__file__).resolve(), *code, *([shim_hooks] if shim_hooks is not None else [])]
    tops: set[tuple[Path, str]] = set()
    for path in needed:
        for root, sub in ((HOME, "home"), (Path("/tmp"), "tmp")):
            with contextlib.suppress(ValueError):
                relative = path.relative_to(root)
                if relative.parts:
                    tops.add((root / relative.parts[0], sub))
    return sorted(tops)


def node_shim_dir(backend: NamespaceLab, node: str) -> Path:
    """The host directory a node with a CLI stand-in sees as the stand-in's `etc` (SONiC: /etc/sonic)."""
    return _mgmt_dir(backend) / "nodes" / node / "shim"


# --- start ------------------------------------------------------------------------------------------------


def _pick_subnet(backend: NamespaceLab, size: int) -> ipaddress.IPv4Network:
    """A /24 of 198.18.0.0/15 that no host address, route or other lab's management uses."""
    used: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in json.loads(_run(["ip", "-j", "-4", "addr", "show"]).stdout or "[]"):
        for addr in entry.get("addr_info", []):
            used.append(ipaddress.ip_network(f"{addr['local']}/{addr['prefixlen']}", strict=False))
    for route in json.loads(_run(["ip", "-j", "-4", "route", "show", "table", "all"]).stdout or "[]"):
        with contextlib.suppress(ValueError):
            used.append(ipaddress.ip_network(route.get("dst", ""), strict=False))
    for other in lab_root().glob(f"*/{MGMT_STATE}"):
        data = _load(other)
        if data and data.get("subnet"):
            used.append(ipaddress.ip_network(data["subnet"]))
    prefix = MGMT_PREFIXLEN if size <= 2 ** (32 - MGMT_PREFIXLEN) - 3 else 22
    candidates = list(MGMT_POOL.subnets(new_prefix=prefix))
    start = zlib.crc32(str(backend.dir).encode()) % len(candidates)
    for i in range(len(candidates)):
        candidate = candidates[(start + i) % len(candidates)]
        if not any(candidate.overlaps(u) for u in used if u.prefixlen > 0):
            return candidate
    raise LabError(f"no free /{prefix} left in {MGMT_POOL} for the management network; pass subnet=")


def _sshd_config(node_dir: Path, ssh_dir: Path, address: str) -> str:
    return "\n".join([
        "# netgen lab management sshd (netgen/lab/endpoints.py)",
        f"ListenAddress {address}",
        f"Port {SSH_PORT}",
        f"HostKey {ssh_dir / 'ssh_host_ed25519_key'}",
        f"PidFile {node_dir / 'sshd.pid'}",
        f"AuthorizedKeysFile {ssh_dir / 'authorized_keys'}",
        f"AllowUsers {USERNAME}",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "PrintMotd no",
        "PrintLastLog no",
        "UseDNS no",
        "X11Forwarding no",
        "AllowAgentForwarding no",
        "AllowTcpForwarding no",
        "PermitUserEnvironment no",
        "MaxStartups 64:30:128",
        "Subsystem sftp internal-sftp",
        "LogLevel INFO",
        "",
    ])


def _listening(pid: int, address: str, port: int) -> bool:
    """Whether the process's network namespace has a TCP listener on address:port."""
    local = "{:08X}:{:04X}".format(struct.unpack("=I", socket.inet_aton(address))[0], port)
    try:
        lines = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(line.split()[1] == local and line.split()[3] == "0A" for line in lines)


def _zebra(backend: NamespaceLab, node: str) -> int:
    pids = backend.state()["pids"].get(node)
    if not pids or not process_alive(int(pids["zebra"])):
        raise LabError(f"{node}: no running FRR (zebra) to enter; management needs a router node of a running lab")
    return int(pids["zebra"])


def _check_can_start(backend: NamespaceLab) -> None:
    """Refuse before anything is created: tools missing, the lab not up, or management already there."""
    missing = prerequisites()
    if missing:
        raise LabError("lab management needs: " + "; ".join(missing))
    lab_state = backend.state()
    if lab_state.get("status") != "up":
        raise LabError(f"lab {backend.lab!r} is not up (status {lab_state.get('status')!r})")
    if _state_path(backend).exists():
        raise LabError(f"lab {backend.lab!r} already has management; stop_management() first")


def _chosen_routers(backend: NamespaceLab, plan: LabPlan, nodes: Sequence[str] | None) -> list[str]:
    """The nodes to give management (default: every router), sorted; only routers have an FRR to enter."""
    chosen = sorted(nodes) if nodes is not None else sorted(n.name for n in plan.routers())
    for name in chosen:
        if name not in plan.nodes or plan.nodes[name].kind != "router":
            raise LabError(f"{name!r} is not a router of lab {backend.lab!r}")
    return chosen


def _check_shim_files(shims: Mapping[str, LabShim], files: Mapping[str, Mapping[str, str]]) -> None:
    """Every node with a CLI stand-in was given the rendered files its stand-in starts from."""
    lacking = [f"{name} ({', '.join(shim.needs)})" for name, shim in shims.items()
               if not set(shim.needs) <= set(files.get(name, {}))]
    if lacking:
        raise LabError(f"node(s) {', '.join(lacking)}: their CLI stand-ins start from these rendered files (files=)")


def _management_network(backend: NamespaceLab, subnet: str | None,
                        count: int) -> tuple[ipaddress.IPv4Network, list[str]]:
    """The management subnet (given, or a free one picked) and its addresses: the bridge's first,
    then one per node; it must hold them all."""
    network = ipaddress.ip_network(subnet) if subnet else _pick_subnet(backend, count)
    if not isinstance(network, ipaddress.IPv4Network):
        raise LabError(f"management subnet {subnet}: IPv4 only")
    hosts = [str(h) for h in network.hosts()]
    if len(hosts) < count + 1:
        raise LabError(f"management subnet {network} has room for {len(hosts) - 1} nodes, not {count}")
    return network, hosts


def _host_link_names(backend: NamespaceLab, chosen: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The bridge's name and each node's veth name on the host (short: IFNAMSIZ), none of them in use."""
    tag = f"{zlib.crc32(str(backend.dir).encode()):08x}"[:6]
    bridge = f"nm-{backend.lab}"
    veths = {name: f"nm{tag}v{i}" for i, name in enumerate(chosen)}
    taken = sorted(({bridge, *veths.values()}) & _host_links().keys())
    if taken:
        raise LabError(f"host interface(s) {', '.join(taken)} already exist; stop_management() that lab first")
    return bridge, veths


def _write_keys(backend: NamespaceLab, ssh_dir: Path, authorized_keys: str | None) -> None:
    """The lab's host key and client key, and the keys allowed to log in as root."""
    ssh_dir.mkdir(parents=True, exist_ok=True)
    for path in (ssh_dir.parent, ssh_dir):
        path.chmod(0o755)
    _must(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"netgen-lab-{backend.lab}-host",
           "-f", str(ssh_dir / "ssh_host_ed25519_key")], "host key")
    _must(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"netgen-lab-{backend.lab}",
           "-f", str(ssh_dir / "id_ed25519")], "client key")
    keys = (ssh_dir / "id_ed25519.pub").read_text()
    if authorized_keys:
        keys += authorized_keys.rstrip("\n") + "\n"
    (ssh_dir / "authorized_keys").write_text(keys)
    (ssh_dir / "authorized_keys").chmod(0o600)


def _private_mounts(node_dir: Path, shim_hooks: Path | None, shims: Iterable[LabShim],
                    records: Sequence[Path]) -> list[tuple[Path, Path]]:
    """The node's own /root, /tmp and login records (created under node_dir), as (source, target)
    mounts, with the entries of root's home and /tmp this Python needs passed through first."""
    for sub, mode in (("home", 0o700), ("tmp", 0o1777)):
        (node_dir / sub).mkdir(parents=True, exist_ok=True)
        (node_dir / sub).chmod(mode)
    mounts = []
    for top, sub in _passthrough(shim_hooks, shims):  # Python may be in ~ (pyenv) or /tmp (CI)
        inside = node_dir / sub / top.name
        if top.is_dir():
            inside.mkdir(exist_ok=True)
        else:
            inside.touch()
        mounts.append((top, inside))
    mounts += [(node_dir / "home", HOME), (node_dir / "tmp", Path("/tmp"))]
    for record in records:
        (node_dir / record.name).touch()
        (node_dir / record.name).chmod(record.stat().st_mode & 0o777)
        mounts.append((node_dir / record.name, record))
    return mounts


def _shim_mounts(backend: NamespaceLab, name: str, shim: LabShim, commands: Path,
                 files: Mapping[str, Mapping[str, str]], shim_hooks: Path | None) -> list[tuple[Path, Path]]:
    """The node's CLI stand-in: its folder, filled from the node's rendered files, at the stand-in's
    `etc`, and its NOS's commands first on root's PATH."""
    folder = node_shim_dir(backend, name)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        shim.write_node(folder, name, files[name], backend.lldp_socket(name), shim_hooks)
    except (ValueError, KeyError) as exc:  # a rendered file the stand-in cannot start from
        raise LabError(f"{name}: its CLI stand-in cannot start: {exc}") from None
    return [(folder, shim.etc), (commands, SHIM_BIN)]


def _create_links(backend: NamespaceLab, bridge: str, bridge_address: str, veths: Mapping[str, str]) -> None:
    """The host bridge and one veth per node (its node end `eth0` in the node's namespace), all
    carrying the alias stop_management finds them by; one `ip -batch`."""
    alias = _alias(backend)
    batch = [f"link add name {bridge} type bridge", f"link set dev {bridge} alias {alias}",
             f"addr add {bridge_address} dev {bridge}", f"link set dev {bridge} up"]
    for name, veth in veths.items():
        batch += [f"link add name {veth} type veth peer name {NODE_IFNAME} netns {backend.namespace(name)}",
                  f"link set dev {veth} alias {alias}", f"link set dev {veth} master {bridge}",
                  f"link set dev {veth} up"]
    _must(["ip", "-batch", "-"], "management bridge and veths", "".join(line + "\n" for line in batch))


def _enter_node(backend: NamespaceLab, name: str, zebra: int, address: str, mounts: Sequence[Sequence[str]]) -> None:
    """The node's management address on its `eth0`, and its recorded mounts made in zebra's mount namespace."""
    _must(["ip", "-n", backend.namespace(name), "-batch", "-"], f"{name}: management address",
          f"addr add {address} dev {NODE_IFNAME}\nlink set dev {NODE_IFNAME} up\n")
    script = 'while [ $# -gt 1 ]; do mount --rbind "$1" "$2" || exit 1; shift 2; done'
    flat = [part for pair in mounts for part in pair]
    _must(["nsenter", "-t", str(zebra), "--mount", "--", "sh", "-c", script, "-", *flat], f"{name}: node mounts")


def _start_sshd(node_dir: Path, zebra: int) -> int:
    """The node's sshd listener, in zebra's network, UTS and mount namespaces; its pid."""
    log = (node_dir / "sshd.log").open("ab")
    proc = subprocess.Popen(
        ["nsenter", "-t", str(zebra), "--net", "--uts", "--mount", "--",
         str(SSHD), "-D", "-e", "-f", str(node_dir / "sshd_config")],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    _CHILDREN[proc.pid] = proc
    return proc.pid


def start_management(backend: NamespaceLab, nodes: Sequence[str] | None = None, *,
                     subnet: str | None = None, authorized_keys: str | None = None,
                     files: Mapping[str, Mapping[str, str]] | None = None,
                     shim_hooks: Path | None = None, timeout: float = START_TIMEOUT_S) -> dict[str, Endpoint]:
    """Give the lab's router nodes (default: all) SSH management access; see the module docstring.

    files: each node's rendered files (`adapters.lab_inputs`' files, secrets filled); a node whose
    NOS has a CLI stand-in needs those the stand-in reads (LabShim.needs: SONiC's initial running
    CONFIG_DB is seeded from its config_db.json). authorized_keys: more public keys (authorized_keys
    lines) allowed to log in as root, besides the lab's own key. shim_hooks: a Python file of hooks
    the stand-ins call (SONiC: netgen/nos/sonic/lab_shim.py's docstring). Returns node -> Endpoint.
    On any failure everything created so far is removed again."""
    # Everything is decided and checked before the first thing is created, so a refusal leaves nothing.
    _check_can_start(backend)
    state_path = _state_path(backend)
    plan = backend.plan()
    chosen = _chosen_routers(backend, plan, nodes)
    zebras = {name: _zebra(backend, name) for name in chosen}
    shims = {name: shim for name in chosen if (shim := lab_shim(plan.nodes[name].nos or "")) is not None}
    files = files or {}
    shim_hooks = shim_hooks.resolve() if shim_hooks is not None else None  # the node reads it from any directory
    _check_shim_files(shims, files)
    network, hosts = _management_network(backend, subnet, len(chosen))
    bridge, veths = _host_link_names(backend, chosen)

    mgmt, ssh_dir = _mgmt_dir(backend), _mgmt_dir(backend) / "ssh"
    records = [p for p in LOGIN_RECORDS if p.is_file()]
    state: dict[str, Any] = {
        "lab": backend.lab, "status": "starting", "dir": str(mgmt), "alias": _alias(backend), "subnet": str(network),
        "prefixlen": network.prefixlen, "bridge": {"name": bridge, "address": hosts[0]}, "host_dirs": [],
        "nodes": {name: {"veth": veths[name], "address": hosts[i + 1], "namespace": backend.namespace(name),
                         "zebra": zebras[name], "nos": plan.nodes[name].nos,
                         "shim": shims[name].module if name in shims else None,
                         "mounts": [], "sshd": None}
                  for i, name in enumerate(chosen)}}
    _save(state_path, state)  # write-ahead: everything below is named here first
    try:
        # 1. Files on the host: the directories sshd and the stand-ins need, keys, the stand-ins' commands.
        _ensure_host_dir(PRIVSEP_DIR, state, state_path)  # sshd's privilege-separation chroot
        for etc in sorted({shim.etc for shim in shims.values()}):
            _ensure_host_dir(etc, state, state_path)  # a mount point for the stand-ins' folders (/etc/sonic)
        _write_keys(backend, ssh_dir, authorized_keys)
        for nos, shim in sorted({str(plan.nodes[name].nos): shim for name, shim in shims.items()}.items()):
            shim.write_bin(mgmt / "bin" / nos, shim_hooks)  # one folder of commands per NOS

        # 2. Each node's private folders and sshd_config; its mounts recorded before any is made.
        for name in chosen:
            node_dir = mgmt / "nodes" / name
            mounts = _private_mounts(node_dir, shim_hooks, shims.values(), records)
            if name in shims:
                commands = mgmt / "bin" / str(plan.nodes[name].nos)
                mounts += _shim_mounts(backend, name, shims[name], commands, files, shim_hooks)
            (node_dir / "sshd_config").write_text(_sshd_config(node_dir, ssh_dir, state["nodes"][name]["address"]))
            state["nodes"][name]["mounts"] = [[str(s), str(t)] for s, t in mounts]
        _save(state_path, state)

        # 3. The management network, then each node's address and mounts.
        _create_links(backend, bridge, f"{hosts[0]}/{network.prefixlen}", veths)
        for name in chosen:
            _enter_node(backend, name, zebras[name], f"{state['nodes'][name]['address']}/{network.prefixlen}",
                        state["nodes"][name]["mounts"])

        # 4. The listeners, each recorded as soon as it runs (stop_management stops what the state names).
        for name in chosen:
            state["nodes"][name]["sshd"] = _start_sshd(mgmt / "nodes" / name, zebras[name])
            _save(state_path, state)
        _wait_listening(mgmt, state, timeout)

        host_key = (ssh_dir / "ssh_host_ed25519_key.pub").read_text().split()
        (mgmt / "known_hosts").write_text("".join(f"{state['nodes'][n]['address']} {host_key[0]} {host_key[1]}\n"
                                                  for n in chosen))
        state["status"] = "up"
        _save(state_path, state)
    except BaseException:
        stop_management(backend)
        raise
    return endpoints(backend)


def _wait_listening(mgmt: Path, state: Mapping[str, Any], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    waiting = dict(state["nodes"])
    while waiting:
        for name, info in list(waiting.items()):
            pid = int(info["sshd"])
            if not process_alive(pid):
                log = (mgmt / "nodes" / name / "sshd.log").read_text(errors="replace").strip()
                raise LabError(f"{name}: sshd exited: {log[-500:]}")
            if _exe(pid) == str(SSHD) and _listening(pid, info["address"], SSH_PORT):
                del waiting[name]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise LabError(f"sshd did not listen within {timeout:.0f} s on {', '.join(sorted(waiting))}")
        time.sleep(0.02)


def endpoints(backend: NamespaceLab) -> dict[str, Endpoint]:
    """The endpoints of a lab whose management is up (read back from its state file)."""
    state = _load(_state_path(backend))
    if not state or state.get("status") != "up":
        raise LabError(f"lab {backend.lab!r} has no management up; start_management() first")
    mgmt = Path(state["dir"])
    return {name: Endpoint(node=name, host=info["address"], port=SSH_PORT, username=USERNAME,
                           key_file=mgmt / "ssh" / "id_ed25519", known_hosts=mgmt / "known_hosts",
                           nos=info.get("nos"), shim=bool(info.get("shim")))
            for name, info in sorted(state["nodes"].items())}


# --- stop -----------------------------------------------------------------------------------------------


def _our_sshd(pid: int, marker: bytes) -> bool:
    return _exe(pid) == str(SSHD) and marker in _cmdline(pid)


def stop_management(backend: NamespaceLab) -> ManagementReport:
    """Remove everything start_management created, in this order: SSH sessions (the per-connection
    sshd processes and whatever runs under them), the sshd listeners, the node mounts, the host
    veths and the bridge, unused host directories it created, its files. Safe to call again, with
    management never started, or after a crash at any point of start_management."""
    report = ManagementReport(lab=backend.lab)
    state_path, mgmt = _state_path(backend), _mgmt_dir(backend)
    state = _load(state_path) or {}
    nodes: dict[str, Any] = state.get("nodes", {})
    marker = f"{mgmt}/".encode()

    # 1. Processes: listeners are ours by their config path; sessions are the listeners'
    # descendants, plus any sshd left in a node's network namespace (a session orphaned by a crash).
    listeners = {int(info["sshd"]) for info in nodes.values() if info.get("sshd")}
    listeners = {pid for pid in listeners if _our_sshd(pid, marker)}
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
    listeners |= {pid for pid in pids if pid != os.getpid() and _our_sshd(pid, marker)}
    namespaces = set()
    for info in nodes.values():
        with contextlib.suppress(OSError):
            namespaces.add(os.stat(f"/run/netns/{info['namespace']}").st_ino)
    sessions = _descendants(listeners, _parents())
    sessions |= {pid for pid in pids if _exe(pid) == str(SSHD) and _netns_inode(pid) in namespaces}
    # what the stand-ins leave running outlives its session by design (SONiC's revert timers): theirs too
    shims = {str(info["shim"]).encode() for info in nodes.values() if info.get("shim")}
    sessions |= {pid for pid in pids if _netns_inode(pid) in namespaces and any(m in _cmdline(pid) for m in shims)}
    sessions -= listeners
    for group in (sessions, listeners):
        living = {pid for pid in group if process_alive(pid)}
        if living:
            report.killed += sorted(stop_processes(living, STOP_GRACE_S, _reap))
            report.processes += sorted(living)

    # 2. Mounts inside the nodes (only where the node's zebra still holds its mount namespace).
    for info in nodes.values():
        zebra = int(info.get("zebra") or 0)
        targets = [target for _, target in reversed(info.get("mounts", []))]
        is_zebra = zebra and process_alive(zebra) and _cmdline(zebra).startswith(b"/usr/lib/frr/zebra")
        if not targets or not is_zebra:
            continue
        script = 'n=0; for t; do umount -l "$t" 2>/dev/null && n=$((n+1)); done; echo $n'
        result = _run(["nsenter", "-t", str(zebra), "--mount", "--", "sh", "-c", script, "-", *targets])
        with contextlib.suppress(ValueError):
            report.unmounted += int(result.stdout.strip() or 0)

    # 3. Host links: the recorded names and anything carrying our alias, never someone else's.
    alias = _alias(backend)
    links = _host_links()
    names = [info["veth"] for info in nodes.values() if info.get("veth")]
    names += [state["bridge"]["name"]] if state.get("bridge") else []
    names += sorted(n for n, a in links.items() if a == alias and n not in names)
    for name in names:
        if links.get(name) == alias and _run(["ip", "link", "del", "dev", name]).ok:
            report.links.append(name)

    # 4. Host directories made for the nodes, once no lab uses them; 5. our files.
    report.host_dirs = _remove_unused_host_dirs(state.get("host_dirs", []))
    shutil.rmtree(mgmt, ignore_errors=True)
    state_path.unlink(missing_ok=True)
    return report
