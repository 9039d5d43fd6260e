"""SSH management access to a running netns lab, the way containerlab gives its nodes a management
network, plus the SONiC device side the deploy tests talk to.

`start_management(backend)` gives every chosen router node:

* a port on a host-side Linux bridge (`nm-<lab>`, the subnet's first address): a veth whose host
  end is enslaved to the bridge and whose node end is `eth0` inside the node's namespace, with the
  next free address of the subnet (198.18.0.0/15 benchmark space, one /24 per lab by default);
* inside the node's mount namespace (the one FRR's zebra runs in, see netns.py): its own /tmp and
  /root (the top-level entries of root's home that hold this Python stay visible, e.g. ~/.pyenv),
  and its own wtmp/btmp/lastlog, so SSH sessions leave nothing in the host's files; on SONiC
  nodes also `/etc/sonic` (a per-node directory: the emulated CONFIG_DB, checkpoints,
  sonic_version.yml, and `frr` -> the node's FRR directory, as split-unified mode mounts
  /etc/sonic/frr into the bgp container) and `/usr/local/sbin` (first on root's PATH) holding
  `config`, `show`, `pfc`, `pfcwd`, `sonic-cfggen` stand-ins (`sonic_shim.py`), a `sudo` that
  just runs the command (sessions are root) and a `docker` whose `exec CONTAINER CMD` runs CMD
  on the node (`docker exec bgp frr-reload.py ...` works);
* one OpenSSH `sshd -D -e -f <cfg>`, started with nsenter into zebra's net, UTS and mount
  namespaces, so an SSH session sees the node's hostname, routing table and FRR at the default
  paths (`vtysh`, `/etc/frr/frr.conf`, `frr-reload.py`), as on a SONiC box or a containerlab FRR
  node. One ed25519 host key and one client key per lab; root logs in by key only (`UsePAM no`);
  a known_hosts file lists every endpoint.

Real: OpenSSH, the Linux bridge, veths and addresses, FRR, the kernel FIB, netmiko's `linux`
driver on the client side. Emulated: SONiC's CLI and CONFIG_DB (see sonic_shim.py for exactly
what), on the node's real kernel interfaces. EOS nodes run FRR stand-ins (adapters.py) and get a
plain shell; there is no EOS CLI here. `shim_hooks` names a file of hooks the stand-in calls at
fixed points (sonic_shim.py's docstring); the tests inject their faults that way.

Device-owned keys. A real switch's CONFIG_DB holds values no generator writes. `seed_config_db`
adds these to the rendered config_db.json to make a node's initial running CONFIG_DB (see
DEVICE_OWNED): DEVICE_METADATA|localhost `mac` and `platform` (PORT alias and index are rendered,
from the SKU's port_config.ini). `config replace` of the plain rendered file therefore removes them,
exactly as SONiC's GCU would; a deploy must carry them over from the running config. Tables a real box also has but
netgen's model does not know (MGMT_INTERFACE, MGMT_PORT, FEATURE, ...) are not seeded: the shim
treats them as tables without YANG, and a rendered file never contains them.

State: `<lab dir>/management.json` names everything before it is created (write-ahead, as
netns.py does), and every host link carries the alias `netgen-mgmt:<lab dir>`.
`stop_management(backend)` removes exactly that, in order (SSH sessions, then listeners, then the
node mounts, then the veths and the bridge, then the files), and is idempotent, also after a
crash. It must run before `NetnsBackend.destroy()`, which removes the lab directory holding the
state.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
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
from typing import Any

import netgen
from netgen.lab import sonic_shim
from netgen.lab.backend import LabError, lab_root, must, process_alive, run_command, stop_processes
from netgen.lab.netns import NetnsBackend

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
# Host directories sshd and the shim need; created only if missing, marked, removed when unused.
PRIVSEP_DIR = Path("/run/sshd")
SONIC_ETC = Path("/etc/sonic")
HOME = Path("/root")  # root's home; each node gets its own
SHIM_BIN = Path("/usr/local/sbin")  # first on root's PATH (Debian /etc/profile, sshd's superuser path)
CREATED_MARKER = ".netgen-lab-created"
LOGIN_RECORDS = (Path("/var/log/wtmp"), Path("/var/log/btmp"), Path("/var/log/lastlog"))
# Keys of CONFIG_DB a switch owns (from its platform files and EEPROM), not the generator.
DEVICE_OWNED: dict[str, tuple[str, ...]] = {"DEVICE_METADATA": ("mac", "platform")}
ASIC_BY_VENDOR = {"Arista": "broadcom", "Mellanox": "mellanox", "Nvidia": "mellanox", "Dell": "broadcom",
                  "Celestica": "broadcom"}
EMULATED_VERSION = "netgen-lab-emulated"  # build_version in /etc/sonic/sonic_version.yml

# sshd listeners this process started, kept to reap them (and to keep Popen from warning).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


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
    sonic: bool = False  # the SONiC CLI stand-in and /etc/sonic are there
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


def _state_path(backend: NetnsBackend) -> Path:
    return backend.dir / MGMT_STATE


def _mgmt_dir(backend: NetnsBackend) -> Path:
    return backend.dir / MGMT_DIR


def _alias(backend: NetnsBackend) -> str:
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


def _remove_unused_host_dirs() -> list[str]:
    """Remove the host directories netgen created, once nothing uses them any more (another lab
    may still run sshd or have /etc/sonic mounted in its nodes)."""
    removed = []
    sshd_running = any(_exe(int(p.name)) == str(SSHD) and process_alive(int(p.name))
                       for p in Path("/proc").iterdir() if p.name.isdigit())
    mounted = _mount_points()
    for path, busy in ((PRIVSEP_DIR, sshd_running), (SONIC_ETC, str(SONIC_ETC) in mounted)):
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


# --- the SONiC device side -----------------------------------------------------------------------------


def platform_of(hwsku: str | None) -> str:
    """A platform string in SONiC's `x86_64-<vendor>_<model>` form, derived from the HwSKU
    (Arista-7060X6-64PE-O128S2 -> x86_64-arista_7060x6_64pe, as in sonic-buildimage's device/)."""
    parts = (hwsku or "").split("-")
    if len(parts) >= 3 and parts[0] == "Arista":
        return f"x86_64-arista_{parts[1].lower()}_{parts[2].lower()}"
    if len(parts) >= 2 and parts[0] in ("Mellanox", "Nvidia"):
        return f"x86_64-mlnx_{parts[1].lower()}-r0"
    return "x86_64-netgen_lab-r0"


def device_mac(node: str) -> str:
    """A stable, locally administered unicast MAC per node name."""
    digest = hashlib.sha256(node.encode()).digest()
    return ":".join(f"{b:02x}" for b in (0x02, *digest[:5]))


def seed_config_db(node: str, rendered_config_db: Mapping[str, Any]) -> dict[str, Any]:
    """The node's initial running CONFIG_DB: the rendered config_db.json plus the keys the device
    owns (DEVICE_OWNED): DEVICE_METADATA|localhost mac and platform. Device values win over rendered
    ones."""
    config = copy.deepcopy(dict(rendered_config_db))
    meta = config.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})
    meta["mac"] = device_mac(node)
    meta["platform"] = platform_of(meta.get("hwsku"))
    return config


def _uses_rdma_hash(config: dict[str, Any]) -> bool:
    """Whether the rendered config needs the RDMA hash extension to validate (as `netgen render`
    decided from the platform's capabilities)."""
    from netgen.platforms.sonic.schema import check_config_db  # noqa: PLC0415  (pydantic: only when needed)

    return bool(check_config_db(config)) and not check_config_db(config, rdma_hash=True)


def _device_facts(node: str, config: dict[str, Any]) -> dict[str, Any]:
    meta = config.get("DEVICE_METADATA", {}).get("localhost", {})
    hwsku = str(meta.get("hwsku", ""))
    return {"node": node, "rdma_hash": _uses_rdma_hash(config),
            "asic_type": ASIC_BY_VENDOR.get(hwsku.split("-", maxsplit=1)[0], "vs"),
            "serial": f"NGLAB{zlib.crc32(node.encode()):08X}", "model": hwsku or "N/A", "revision": "N/A",
            "emulated_by": "netgen/lab/sonic_shim.py"}


def _write_sonic_dir(folder: Path, node: str, rendered: Mapping[str, Any], lldp_socket: Path,
                     shim_hooks: Path | None) -> None:
    config = seed_config_db(node, rendered)
    for sub in (sonic_shim.RUNNING_DIR, sonic_shim.CHECKPOINTS_DIR):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    sonic_shim.write_json(folder / sonic_shim.RUNNING_DIR / sonic_shim.RUNNING_FILE, config)
    sonic_shim.write_json(folder / sonic_shim.SAVED_FILE, config)  # as if the box booted from it
    # `show lldp table` asks the node's lldpd (netns.py starts it) where SONiC asks its lldp container
    facts = {**_device_facts(node, config), "lldp_socket": str(lldp_socket)}
    if shim_hooks is not None:
        facts[sonic_shim.HOOKS_FACT] = str(shim_hooks)
    sonic_shim.write_json(folder / sonic_shim.DEVICE_FILE, facts)
    (folder / "sonic_version.yml").write_text(
        "# netgen lab: emulated SONiC (netgen/lab/sonic_shim.py), not a SONiC build\n"
        f"build_version: '{EMULATED_VERSION}'\nasic_type: {facts['asic_type']}\n")
    # split / split-unified routing config mode: FRR reads /etc/sonic/frr/*.conf (the bgp container
    # mounts it as /etc/frr). Here the node's own FRR config directory is /etc/frr.
    (folder / "frr").symlink_to("/etc/frr")


def _passthrough(shim_hooks: Path | None) -> list[tuple[Path, str]]:
    """The top-level entries of the directories a node gets privately (root's home, /tmp) that
    this interpreter, its prefixes, netgen and the shim's hooks file live in (pyenv keeps Python in
    ~/.pyenv; CI may clone the project under /tmp): they stay visible inside the node. (host path,
    node subdir)."""
    needed = [Path(os.path.realpath(sys.executable)), Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
              Path(netgen.__file__).resolve(), *([shim_hooks] if shim_hooks is not None else [])]
    tops: set[tuple[Path, str]] = set()
    for path in needed:
        for root, sub in ((HOME, "home"), (Path("/tmp"), "tmp")):
            with contextlib.suppress(ValueError):
                relative = path.relative_to(root)
                if relative.parts:
                    tops.add((root / relative.parts[0], sub))
    return sorted(tops)


def _write_shim_bin(folder: Path, hooks: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(netgen.__file__).resolve().parent.parent
    for program in sonic_shim.PROGRAMS:
        (folder / program).write_text(
            "#!/bin/sh\n"
            f"# netgen lab stand-in for SONiC's `{program}` (netgen/lab/sonic_shim.py); this is not SONiC.\n"
            f'PYTHONPATH="{source}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -m netgen.lab.sonic_shim'
            f' {program} "$@"\n')
    (folder / "sudo").write_text(
        "#!/bin/sh\n"
        "# netgen lab: sessions are root already; drop sudo's options and run the command.\n"
        'if [ "$(id -u)" -ne 0 ]; then echo "sudo: netgen lab sessions log in as root" >&2; exit 1; fi\n'
        "while [ $# -gt 0 ]; do\n"
        '  case "$1" in\n'
        "    --) shift; break ;;\n"
        "    -u|-g|-p|-C|-D|-r|-t|-U) shift 2 ;;\n"
        '    -s|-i) shift; [ $# -eq 0 ] && exec "${SHELL:-/bin/bash}" ;;\n'
        "    -*) shift ;;\n"
        "    *) break ;;\n"
        "  esac\n"
        "done\n"
        '[ $# -gt 0 ] || { echo "usage: sudo COMMAND [ARGS...]" >&2; exit 1; }\n'
        'exec "$@"\n')
    (folder / "docker").write_text(
        "#!/bin/sh\n"
        "# netgen lab: no containers; `docker exec [OPTIONS] CONTAINER CMD...` runs CMD on the node itself\n"
        "# (bgp, swss, ...: FRR and the SONiC stand-ins all live in the node's namespaces).\n"
        '[ "$1" = exec ] || { echo "docker: netgen lab emulates only docker exec" >&2; exit 1; }\n'
        "shift\n"
        'while [ $# -gt 0 ]; do case "$1" in -u|-w|-e|--user|--workdir|--env) shift 2 ;; -*) shift ;; *) break ;;'
        " esac; done\n"
        "shift\n"
        '[ $# -gt 0 ] || { echo "usage: docker exec CONTAINER COMMAND [ARGS...]" >&2; exit 1; }\n'
        '"$@"\nrc=$?\n'
        + (f'PYTHONPATH="{source}${{PYTHONPATH:+:$PYTHONPATH}}" "{sys.executable}" -m netgen.lab.sonic_shim hook'
           " after_docker_exec\n" if hooks else "")
        + "exit $rc\n")
    for path in folder.iterdir():
        path.chmod(0o755)


def node_sonic_dir(backend: NetnsBackend, node: str) -> Path:
    """The host directory a SONiC node sees as /etc/sonic."""
    return _mgmt_dir(backend) / "nodes" / node / "sonic"


def sonic_config_dbs(plan_nodes: Mapping[str, Any], files: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """The rendered config_db.json of every SONiC node, from `adapters.lab_inputs`' files."""
    return {name: json.loads(files[name]["config_db.json"]) for name, node in plan_nodes.items()
            if getattr(node, "nos", None) == "sonic" and "config_db.json" in files.get(name, {})}


# --- start ------------------------------------------------------------------------------------------------


def _pick_subnet(backend: NetnsBackend, size: int) -> ipaddress.IPv4Network:
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


def _zebra(backend: NetnsBackend, node: str) -> int:
    pids = backend.state()["pids"].get(node)
    if not pids or not process_alive(int(pids["zebra"])):
        raise LabError(f"{node}: no running FRR (zebra) to enter; management needs a router node of a running lab")
    return int(pids["zebra"])


def start_management(backend: NetnsBackend, nodes: Sequence[str] | None = None, *,
                     subnet: str | None = None, authorized_keys: str | None = None,
                     config_dbs: Mapping[str, Mapping[str, Any]] | None = None,
                     shim_hooks: Path | None = None, timeout: float = START_TIMEOUT_S) -> dict[str, Endpoint]:
    """Give the lab's router nodes (default: all) SSH management access; see the module docstring.

    config_dbs: the rendered config_db.json per SONiC node (`sonic_config_dbs`); every SONiC node
    chosen needs one, as its initial running CONFIG_DB is seeded from it. authorized_keys: more
    public keys (authorized_keys lines) allowed to log in as root, besides the lab's own key.
    shim_hooks: a Python file of hooks the SONiC stand-in calls (sonic_shim.py's docstring). Returns
    node -> Endpoint. On any failure everything created so far is removed again."""
    missing = prerequisites()
    if missing:
        raise LabError("lab management needs: " + "; ".join(missing))
    lab_state = backend.state()
    if lab_state.get("status") != "up":
        raise LabError(f"lab {backend.lab!r} is not up (status {lab_state.get('status')!r})")
    state_path = _state_path(backend)
    if state_path.exists():
        raise LabError(f"lab {backend.lab!r} already has management; stop_management() first")
    plan = backend.plan()
    chosen = sorted(nodes) if nodes is not None else sorted(n.name for n in plan.routers())
    for name in chosen:
        if name not in plan.nodes or plan.nodes[name].kind != "router":
            raise LabError(f"{name!r} is not a router of lab {backend.lab!r}")
    zebras = {name: _zebra(backend, name) for name in chosen}
    sonic_nodes = [n for n in chosen if plan.nodes[n].nos == "sonic"]
    config_dbs = config_dbs or {}
    shim_hooks = shim_hooks.resolve() if shim_hooks is not None else None  # the node reads it from any directory
    lacking = [n for n in sonic_nodes if n not in config_dbs]
    if lacking:
        raise LabError(f"SONiC node(s) {', '.join(lacking)} need their rendered config_db.json (config_dbs=)")
    network = ipaddress.ip_network(subnet) if subnet else _pick_subnet(backend, len(chosen))
    if not isinstance(network, ipaddress.IPv4Network):
        raise LabError(f"management subnet {subnet}: IPv4 only")
    hosts = [str(h) for h in network.hosts()]
    if len(hosts) < len(chosen) + 1:
        raise LabError(f"management subnet {network} has room for {len(hosts) - 1} nodes, not {len(chosen)}")
    tag = f"{zlib.crc32(str(backend.dir).encode()):08x}"[:6]
    bridge = f"nm-{backend.lab}"
    veths = {name: f"nm{tag}v{i}" for i, name in enumerate(chosen)}
    taken = sorted(({bridge, *veths.values()}) & _host_links().keys())
    if taken:
        raise LabError(f"host interface(s) {', '.join(taken)} already exist; stop_management() that lab first")

    mgmt, ssh_dir = _mgmt_dir(backend), _mgmt_dir(backend) / "ssh"
    records = [p for p in LOGIN_RECORDS if p.is_file()]
    state: dict[str, Any] = {
        "lab": backend.lab, "status": "starting", "dir": str(mgmt), "alias": _alias(backend), "subnet": str(network),
        "prefixlen": network.prefixlen, "bridge": {"name": bridge, "address": hosts[0]}, "host_dirs": [],
        "nodes": {name: {"veth": veths[name], "address": hosts[i + 1], "namespace": backend.namespace(name),
                         "zebra": zebras[name], "nos": plan.nodes[name].nos, "sonic": name in sonic_nodes,
                         "mounts": [], "sshd": None}
                  for i, name in enumerate(chosen)}}
    _save(state_path, state)  # write-ahead: everything below is named here first
    try:
        _ensure_host_dir(PRIVSEP_DIR, state, state_path)  # sshd's privilege-separation chroot
        if sonic_nodes:
            _ensure_host_dir(SONIC_ETC, state, state_path)  # a mount point for the nodes' /etc/sonic
        ssh_dir.mkdir(parents=True, exist_ok=True)
        for path in (mgmt, ssh_dir):
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
        if sonic_nodes:
            _write_shim_bin(mgmt / "bin", hooks=shim_hooks is not None)

        for name in chosen:
            node_dir = mgmt / "nodes" / name
            for sub, mode in (("home", 0o700), ("tmp", 0o1777)):
                (node_dir / sub).mkdir(parents=True, exist_ok=True)
                (node_dir / sub).chmod(mode)
            mounts = []
            for top, sub in _passthrough(shim_hooks):  # the shim's Python may be in ~ (pyenv) or /tmp (CI)
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
            if name in sonic_nodes:
                _write_sonic_dir(node_sonic_dir(backend, name), name, config_dbs[name], backend.lldp_socket(name),
                                 shim_hooks)
                mounts += [(node_sonic_dir(backend, name), SONIC_ETC), (mgmt / "bin", SHIM_BIN)]
            (node_dir / "sshd_config").write_text(_sshd_config(node_dir, ssh_dir, state["nodes"][name]["address"]))
            state["nodes"][name]["mounts"] = [[str(s), str(t)] for s, t in mounts]
        _save(state_path, state)

        alias = _alias(backend)
        batch = [f"link add name {bridge} type bridge", f"link set dev {bridge} alias {alias}",
                 f"addr add {hosts[0]}/{network.prefixlen} dev {bridge}", f"link set dev {bridge} up"]
        for name in chosen:
            veth = veths[name]
            batch += [f"link add name {veth} type veth peer name {NODE_IFNAME} netns {backend.namespace(name)}",
                      f"link set dev {veth} alias {alias}", f"link set dev {veth} master {bridge}",
                      f"link set dev {veth} up"]
        _must(["ip", "-batch", "-"], "management bridge and veths", "".join(line + "\n" for line in batch))
        for name in chosen:
            address = state["nodes"][name]["address"]
            _must(["ip", "-n", backend.namespace(name), "-batch", "-"], f"{name}: management address",
                  f"addr add {address}/{network.prefixlen} dev {NODE_IFNAME}\nlink set dev {NODE_IFNAME} up\n")
            script = 'while [ $# -gt 1 ]; do mount --rbind "$1" "$2" || exit 1; shift 2; done'
            flat = [part for pair in state["nodes"][name]["mounts"] for part in pair]
            _must(["nsenter", "-t", str(zebras[name]), "--mount", "--", "sh", "-c", script, "-", *flat],
                  f"{name}: node mounts")

        for name in chosen:
            node_dir = mgmt / "nodes" / name
            log = (node_dir / "sshd.log").open("ab")
            proc = subprocess.Popen(
                ["nsenter", "-t", str(zebras[name]), "--net", "--uts", "--mount", "--",
                 str(SSHD), "-D", "-e", "-f", str(node_dir / "sshd_config")],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
            _CHILDREN[proc.pid] = proc
            state["nodes"][name]["sshd"] = proc.pid
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


def endpoints(backend: NetnsBackend) -> dict[str, Endpoint]:
    """The endpoints of a lab whose management is up (read back from its state file)."""
    state = _load(_state_path(backend))
    if not state or state.get("status") != "up":
        raise LabError(f"lab {backend.lab!r} has no management up; start_management() first")
    mgmt = Path(state["dir"])
    return {name: Endpoint(node=name, host=info["address"], port=SSH_PORT, username=USERNAME,
                           key_file=mgmt / "ssh" / "id_ed25519", known_hosts=mgmt / "known_hosts",
                           nos=info.get("nos"), sonic=bool(info.get("sonic")))
            for name, info in sorted(state["nodes"].items())}


# --- stop -----------------------------------------------------------------------------------------------


def _our_sshd(pid: int, marker: bytes) -> bool:
    return _exe(pid) == str(SSHD) and marker in _cmdline(pid)


def stop_management(backend: NetnsBackend) -> ManagementReport:
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
    # revert timers (the systemd-run stand-in) outlive their session by design: theirs too
    sessions |= {pid for pid in pids if _netns_inode(pid) in namespaces and b"netgen.lab.sonic_shim" in _cmdline(pid)}
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
    report.host_dirs = _remove_unused_host_dirs()
    shutil.rmtree(mgmt, ignore_errors=True)
    state_path.unlink(missing_ok=True)
    return report
