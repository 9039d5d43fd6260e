"""The containerlab export and backend: a lab plan as a containerlab topology that boots the rendered
files themselves (cEOS runs a device's rendered EOS CLI, sonic-vs its rendered config_db.json and
frr.conf, Linux containers stand in for the GPU hosts), and a LabBackend that deploys that topology
with `containerlab` and runs commands on its nodes with `docker exec`.

Unlike the netns backend, nothing here is a stand-in: an EOS device runs its EOS CLI, not FRR.

What this cannot do here: this machine class has no Docker engine, no containerlab and no cEOS or
sonic-vs image, so the backend has never deployed from this repository. The export is
tested for structure (tests/lab/test_containerlab_export.py), the backend's command sequence is
tested with a fake runner, and tests/lab/test_clab.py skips. Neither cEOS nor sonic-vs implements
PFC, ECN, buffers or QP hashing (verify.NOT_EXERCISED). The stock docker-sonic-vs image has 32
front-panel ports of another SKU; see the sonic-vs facts below and the export's warnings.
"""

# Facts this module relies on, and where they come from (containerlab docs and code read at
# srl-labs/containerlab 39ff2b7, sonic-buildimage files as stored by the code index):
#
# Topology file (https://containerlab.dev/manual/topo-def-file/):
#   * `name` plus `topology.nodes.<node>` (kind, image, startup-config, binds, exec, ...) and
#     `topology.links[].endpoints: ["<node>:<interface>", "<node>:<interface>"]` (brief format).
#   * Containers are named `clab-<lab>-<node>`; the lab directory `clab-<lab>` is created next to
#     the topology file (https://containerlab.dev/manual/conf-artifacts/).
#   * JSON schema (https://github.com/srl-labs/containerlab/blob/main/schemas/clab.schema.json):
#     node names match ^[a-zA-Z0-9][a-zA-Z0-9-._|]*$, lab names ^[a-zA-Z0-9][a-zA-Z0-9-._]*$; the
#     kind enum lists `arista_ceos`, `sonic-vs`, `linux`. We accept less (see NODE_NAME): node names
#     also become container hostnames, so they are held to one RFC 1123 label.
#   * `binds` use docker's -v format; a relative host path is relative to the topology file
#     (https://containerlab.dev/manual/nodes/#binds).
#   * `startup-config`: the docs say a relative path is relative to the current directory
#     (https://containerlab.dev/manual/config-mgmt/), the code resolves it against the topology
#     file's directory (core/config.go processStartupConfig). Conservative: paths are relative, and
#     the backend runs containerlab with the topology's directory as its working directory, so both
#     readings name the same file. `enforce-startup-config: true` makes a re-deploy use the file
#     rather than a config left in the lab directory (https://containerlab.dev/manual/nodes/).
#   * `exec` commands run after the node is deployed; each string is split like a shell would
#     split it (exec/exec.go uses shlex) but not run by a shell
#     (https://containerlab.dev/manual/nodes/#exec). We build them with shlex.join from validated
#     tokens only.
#   * `containerlab destroy --cleanup` also removes the lab directory
#     (https://containerlab.dev/cmd/destroy/). `containerlab inspect --format json` prints an
#     object keyed by lab name, each a list of containers with name, kind, image, state,
#     ipv4_address, ipv6_address (https://containerlab.dev/cmd/inspect/). Older releases printed
#     {"containers": [...]} (not confirmed from the docs); both shapes are read.
#
# cEOS (https://containerlab.dev/manual/kinds/ceos/, nodes/ceos/ceos.go):
#   * Kind `arista_ceos`; the code also accepts `ceos` (KindNames), the schema only `arista_ceos`,
#     so we write `arista_ceos`.
#   * eth0 is management; `ethN` is EthernetN; underscores add the slashes: `eth2_1_1` is
#     Ethernet2/1/1. (Cannot be combined with an EosIntfMapping.json, which we do not use.) The
#     code's interface check is `eth[1-9][\w.]*$`.
#   * startup-config: the file is copied to clab-<lab>/<node>/flash/startup-config and replaces
#     containerlab's default config, after being run through Go text/template and env-var
#     substitution (nodes/default_node.go GenerateConfig, utils/template.go). So a config with
#     `{{` is refused here, and a `$` is warned about. containerlab's post-deploy still sets the
#     Management0 address. The rendered config has no `admin` user and no management API:
#     `docker exec ... Cli` works, SSH/eAPI logins do not.
#
# sonic-vs (https://containerlab.dev/manual/kinds/sonic-vs/, nodes/sonic/sonic.go):
#   * Kind `sonic-vs`; eth0 is management and `eth1` is Ethernet0 (the only mapping the docs give).
#   * containerlab documents no startup-config for sonic-vs (the kind's code ignores it; its
#     post-deploy runs `supervisord` and `supervisorctl start bgpd`; the docs configure the node by
#     hand). The documented generic mechanism left is `binds`, so:
#       - config_db.json is bound read-only to /var/sonic/config_db.json: the image's start.sh
#         copies that file, when present, to /etc/sonic/config_db.json and merges it with its
#         init_cfg.json before loading it
#         (https://github.com/sonic-net/sonic-buildimage/blob/master/platform/vs/docker-sonic-vs/start.sh).
#         Binding /etc/sonic/config_db.json directly would break start.sh, which replaces that file.
#       - frr.conf is bound read-only to /etc/netgen/frr.conf and loaded by the backend with
#         `vtysh -f` once zebra, staticd and bgpd run: the image deletes /etc/frr/frr.conf and its
#         supervisord starts zebra/bgpd/staticd with autostart=false and no config file; there is
#         no bfdd program, so the backend starts /usr/lib/frr/bfdd when the config uses BFD
#         (platform/vs/docker-sonic-vs/Dockerfile.j2 and supervisord.conf.j2). Unverified here.
#   * ethN -> Ethernet(4*(N-1)): the image runs HWSKU Force10-S6000 (Dockerfile.j2) whose
#     virtual lanemap.ini gives 32 ethN interfaces 4 lanes each
#     (device/virtual/x86_64-kvm_x86_64-r0/Force10-S6000/lanemap.ini, read in a fork of
#     sonic-buildimage; the upstream copy was not in the index), i.e. eth1..eth32 back the SKU's
#     4-lane ports Ethernet0..Ethernet124. Only eth1 -> Ethernet0 is confirmed by containerlab's
#     docs; the SKU's port_config.ini was not read. Past eth32 the rule is an
#     extrapolation, and the stock image has no such port: start.sh keeps only lanemap entries of
#     existing ethN. The rendered PORT table carries the production SKU's lanes, which the stock
#     lanemap does not list either, so a stock image may not bring those ports up. The export
#     warns; a lab image with a matching SKU is needed (unverified here).
#
# Linux hosts (https://containerlab.dev/manual/kinds/linux/, nodes/linux/linux.go): any interface
# name but eth0, so a host keeps the plan's `nic1`. Its address and default route are set by
# `exec` with iproute2 commands (the docs suggest exec for exactly this). The default image is
# alpine:3, whose ping is busybox's; that it takes every flag verify.py uses (-n -q -c -i -W -I)
# was not confirmed: use an image with iputils ping if host pings fail on the flags.

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_interface
from pathlib import Path
from typing import Any, ClassVar

import yaml

from netgen.lab.backend import (
    BuildReport,
    DestroyReport,
    ExecReads,
    ExecResult,
    LabError,
    StageHook,
    StatefulBackend,
    check_lab_name,
    lab_root,
    list_states,
    parse_lldp_keyvalue,
    run_command,
)
from netgen.lab.plan import LabNode, LabPlan
from netgen.registry import NOS

KIND_CEOS = "arista_ceos"
KIND_SONIC = "sonic-vs"
KIND_LINUX = "linux"
FLAVOURS = {KIND_CEOS: "eos", KIND_SONIC: "frr", KIND_LINUX: "host"}

MARKER = ".netgen-clab-export"  # names what an export wrote, so a re-export may replace it
INTERFACE_MAP = "interface-map.json"
CONFIGS = "configs"
SONIC_CONFIG_DB_TARGET = "/var/sonic/config_db.json"
SONIC_FRR_TARGET = "/etc/netgen/frr.conf"
SONIC_LANES_PER_PORT = 4
SONIC_VS_STOCK_PORTS = 32  # Force10-S6000, the docker-sonic-vs default HWSKU
SONIC_VS_STOCK_HWSKU = "Force10-S6000"
CONTAINER_PREFIX = "clab"

NODE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
HOST_IFNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,14}$")
IMAGE_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")
SONIC_PORT = re.compile(r"^Ethernet(0|[1-9][0-9]*)$")
EOS_PORT = re.compile(r"^Ethernet([1-9][0-9]*(?:/[1-9][0-9]*)*)$")
LINUX_IFNAME_MAX = 15

STATE_FILE = "clab-state.json"  # not state.json: the netns backend reads every <root>/*/state.json as its own
EXPORT_DIR = "topology"
DEPLOY_TIMEOUT_S = 1800.0
DESTROY_TIMEOUT_S = 600.0
FRR_READY_TIMEOUT_S = 300.0


# --- interface names ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PortMapping:
    rendered: str  # the name in the rendered config
    endpoint: str  # the containerlab endpoint: the Linux interface inside the container
    nos: str  # the name the NOS shows for it

    def as_dict(self) -> dict[str, str]:
        return {"endpoint": self.endpoint, "nos": self.nos}


def ceos_endpoint(rendered: str) -> str:
    """`Ethernet3/1/1` -> `eth3_1_1` (cEOS maps underscores back to slashes)."""
    match = EOS_PORT.match(rendered)
    if not match:
        raise LabError(f"EOS port {rendered!r} has no cEOS interface name (expected EthernetN[/N...])")
    name = "eth" + match.group(1).replace("/", "_")
    if len(name) > LINUX_IFNAME_MAX:
        raise LabError(f"EOS port {rendered!r}: cEOS interface {name!r} is longer than {LINUX_IFNAME_MAX} characters")
    return name


def sonic_vs_endpoint(rendered: str) -> str:
    """`Ethernet448` -> `eth113`: sonic-vs backs EthernetX with eth(X/4 + 1), 4 lanes per port."""
    match = SONIC_PORT.match(rendered)
    if not match or int(match.group(1)) % SONIC_LANES_PER_PORT:
        raise LabError(f"SONiC port {rendered!r} has no sonic-vs interface: sonic-vs backs Ethernet0, Ethernet4, ..."
                       f" (every {SONIC_LANES_PER_PORT} lanes) with eth1, eth2, ...")
    return f"eth{int(match.group(1)) // SONIC_LANES_PER_PORT + 1}"


def host_endpoint(rendered: str) -> str:
    if not HOST_IFNAME.match(rendered) or rendered == "eth0":
        raise LabError(f"host interface {rendered!r}: use a Linux name of letters, digits and _ (not eth0, which"
                       " containerlab keeps for management)")
    return rendered


def node_kind(node: LabNode) -> str:
    if node.kind == "host":
        return KIND_LINUX
    kind = NOS.bundle(node.nos).containerlab_kind if node.nos and node.nos in NOS.names() else None
    if kind is None:  # the kind is the NOS bundle's; what a kind's nodes are (interfaces, image) is said here
        raise LabError(f"{node.name}: no containerlab kind for NOS {node.nos!r}")
    if kind not in _ENDPOINT:
        raise LabError(f"{node.name}: NOS {node.nos!r} runs as containerlab kind {kind!r}, which netgen's"
                       f" containerlab backend does not know (it knows {', '.join(sorted(_ENDPOINT))})")
    return kind


_ENDPOINT: dict[str, Callable[[str], str]] = {KIND_CEOS: ceos_endpoint, KIND_SONIC: sonic_vs_endpoint,
                                              KIND_LINUX: host_endpoint}


def check_node_name(name: str) -> str:
    if not NODE_NAME.match(name):
        raise LabError(f"node name {name!r} cannot be a containerlab node: use letters, digits and inner dashes,"
                       " at most 63 characters (it becomes the container's hostname)")
    return name


def port_map(plan: LabPlan) -> dict[str, dict[str, PortMapping]]:
    """node -> rendered port -> its containerlab endpoint and NOS name, for every cabled port."""
    result: dict[str, dict[str, PortMapping]] = {}
    for node in plan.nodes.values():
        kind = node_kind(node)
        ports: dict[str, PortMapping] = {}
        for intf in node.interfaces:
            if intf.kind == "port":
                ports[intf.rendered] = PortMapping(intf.rendered, _ENDPOINT[kind](intf.rendered), intf.rendered)
        for link in plan.links:  # a link's port must be one the node lists
            for end, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if end == node.name and port not in ports:
                    raise LabError(f"{node.name}: the plan cables {port}, which the node has no interface for")
        seen = Counter(p.endpoint for p in ports.values())
        clash = sorted(e for e, n in seen.items() if n > 1)
        if clash:
            raise LabError(f"{node.name}: several ports map to containerlab interface(s) {', '.join(clash)}")
        result[node.name] = ports
    return result


# --- export ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClabImages:
    ceos: str = "ceos:4.33.1F"
    sonic_vs: str = "docker-sonic-vs:latest"
    linux: str = "alpine:3"

    def for_kind(self, kind: str) -> str:
        return {KIND_CEOS: self.ceos, KIND_SONIC: self.sonic_vs, KIND_LINUX: self.linux}[kind]

    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.ceos, self.sonic_vs, self.linux)))

    def check(self) -> None:
        for image in self.all():
            if not IMAGE_REF.match(image):
                raise LabError(f"image {image!r} is not a Docker image reference")


@dataclass(frozen=True, slots=True)
class ExportResult:
    topology: Path
    interface_map: Path
    nodes: int
    links: int
    kinds: dict[str, int]  # containerlab kind -> nodes
    warnings: tuple[str, ...] = ()
    ports: dict[str, dict[str, PortMapping]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"topology": str(self.topology), "interface_map": str(self.interface_map), "nodes": self.nodes,
                "links": self.links, "kinds": dict(self.kinds), "warnings": list(self.warnings)}


def _node_files(node: LabNode, kind: str, files: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    if kind == KIND_LINUX:
        return {}
    rendered = files.get(node.name)
    if rendered is None:
        raise LabError(f"{node.name}: no rendered files were given for it")
    for name in rendered:
        if not FILE_NAME.match(name):
            raise LabError(f"{node.name}: rendered file name {name!r} is not a plain file name")
    needed = [f"{node.name}.cfg"] if kind == KIND_CEOS else ["config_db.json", "frr.conf"]
    missing = [name for name in needed if name not in rendered]
    if missing:
        raise LabError(f"{node.name}: no rendered {', '.join(missing)} (have {', '.join(sorted(rendered)) or 'none'})")
    if kind == KIND_CEOS and "{{" in rendered[needed[0]]:
        raise LabError(f"{node.name}: {needed[0]} contains '{{{{', which containerlab would read as a Go template")
    return dict(rendered)


def _host_exec(node: LabNode, ports: Mapping[str, PortMapping]) -> list[str]:
    try:
        return [shlex.join(argv) for argv in _host_commands(node, ports)]
    except ValueError as exc:  # an address that is not one: never written into a command
        raise LabError(f"{node.name}: {exc}") from None


def _host_commands(node: LabNode, ports: Mapping[str, PortMapping]) -> list[list[str]]:
    commands: list[list[str]] = []
    first: str | None = None
    for intf in node.interfaces:
        if intf.kind != "port":
            continue
        ifname = ports[intf.rendered].endpoint
        first = first or ifname
        commands.append(["ip", "link", "set", ifname, "mtu", str(int(intf.mtu))])
        commands += [["ip", "addr", "add", str(ip_interface(prefix)), "dev", ifname] for prefix in intf.addresses]
        commands.append(["ip", "link", "set", ifname, "up"])
    if node.gateway_v4:
        if first is None:
            raise LabError(f"{node.name}: a gateway but no interface")
        # Replaces the management default route: the host's traffic goes into the fabric, as a GPU's does.
        commands.append(["ip", "route", "replace", "default", "via", str(ip_address(node.gateway_v4)), "dev", first])
    return commands


def _warnings(kinds: Mapping[str, str], ports: Mapping[str, Mapping[str, PortMapping]],
              copies: Mapping[str, Mapping[str, str]]) -> list[str]:
    notes: list[str] = []
    beyond: dict[str, list[str]] = {}
    skus: dict[str, set[str]] = {}
    dollars: list[str] = []
    for name, kind in kinds.items():
        if kind == KIND_SONIC:
            late = [p.rendered for p in ports[name].values()
                    if int(p.endpoint[3:]) > SONIC_VS_STOCK_PORTS]
            if late:
                beyond[name] = late
            with contextlib.suppress(ValueError, TypeError, AttributeError, KeyError):
                sku = json.loads(copies[name]["config_db.json"])["DEVICE_METADATA"]["localhost"]["hwsku"]
                if sku != SONIC_VS_STOCK_HWSKU:
                    skus.setdefault(str(sku), set()).add(name)
        elif kind == KIND_CEOS and "$" in copies[name][f"{name}.cfg"]:
            dollars.append(name)
    if beyond:
        count = sum(len(v) for v in beyond.values())
        example = next(iter(beyond.items()))
        notes.append(f"{count} port(s) on {len(beyond)} sonic-vs node(s) lie beyond the {SONIC_VS_STOCK_PORTS} ports"
                     f" (Ethernet0-Ethernet{(SONIC_VS_STOCK_PORTS - 1) * SONIC_LANES_PER_PORT}) of the stock"
                     f" docker-sonic-vs SKU, e.g. {example[0]} {example[1][0]} ->"
                     f" {ports[example[0]][example[1][0]].endpoint}: they need a sonic-vs image whose lanemap.ini and"
                     " port_config.ini have them")
    for sku, names in sorted(skus.items()):
        notes.append(f"config_db.json of {len(names)} sonic-vs node(s) is for HWSKU {sku}; docker-sonic-vs runs"
                     f" {SONIC_VS_STOCK_HWSKU} unless its image says otherwise, and its PORT lanes are that SKU's")
    if dollars:
        notes.append(f"{len(dollars)} EOS config(s) contain '$' (e.g. {dollars[0]}); containerlab substitutes set"
                     " environment variables in startup-configs")
    return notes


def _claim(out: Path) -> None:
    """Make `out` ours: new, empty, or written by an earlier export (whose files are removed)."""
    if out.exists() and not out.is_dir():
        raise LabError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        marker = out / MARKER
        if not marker.is_file():
            raise LabError(f"{out}: not empty and not written by a netgen containerlab export (no {MARKER});"
                           " choose a new or empty directory")
        try:
            written = json.loads(marker.read_text(encoding="utf-8"))["written"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LabError(f"{marker} is unreadable ({exc}); remove {out} by hand") from None
        for name in written:
            if not isinstance(name, str) or not FILE_NAME.match(name):
                raise LabError(f"{marker} names {name!r}, which an export never writes; remove {out} by hand")
            path = out / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    if out.is_symlink():
        raise LabError(f"{out}: a symbolic link; name the directory it points to")
    out.mkdir(parents=True, exist_ok=True)


def _write_new(path: Path, text: str) -> None:
    """PATH created (never an existing file, nor through a link someone left there): everything an
    export writes is new after _claim, so anything found in its place is not netgen's."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        raise LabError(f"{path}: already exists and was not written by the export this directory's"
                       f" {MARKER} lists; choose a new or empty directory") from None
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)


def _make_dir(path: Path) -> None:
    try:
        path.mkdir()
    except FileExistsError:
        if path.is_symlink() or not path.is_dir():
            raise LabError(f"{path}: already exists and is not a directory the export made; choose a new or"
                           " empty directory") from None


def export_containerlab(plan: LabPlan, files: Mapping[str, Mapping[str, str]], out: Path,
                        images: ClabImages | None = None) -> ExportResult:
    """Write `<lab>.clab.yml`, the rendered files under configs/<device>/ and interface-map.json into `out`."""
    images = images or ClabImages()
    images.check()
    check_lab_name(plan.lab)
    for name in plan.nodes:
        check_node_name(name)
    ports = port_map(plan)
    kinds = {name: node_kind(node) for name, node in plan.nodes.items()}

    copies: dict[str, dict[str, str]] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for name, node in plan.nodes.items():
        kind = kinds[name]
        entry: dict[str, Any] = {"kind": kind, "image": images.for_kind(kind)}
        copies[name] = _node_files(node, kind, files)
        where = f"{CONFIGS}/{name}"  # relative to the topology file
        if kind == KIND_CEOS:
            entry["startup-config"] = f"{where}/{name}.cfg"
            entry["enforce-startup-config"] = True
        elif kind == KIND_SONIC:
            entry["binds"] = [f"{where}/config_db.json:{SONIC_CONFIG_DB_TARGET}:ro",
                              f"{where}/frr.conf:{SONIC_FRR_TARGET}:ro"]
        else:
            commands = _host_exec(node, ports[name])
            if commands:
                entry["exec"] = commands
        nodes[name] = entry

    links: list[dict[str, Any]] = []
    used: set[str] = set()
    for link in plan.links:
        ends = [f"{link.a}:{ports[link.a][link.a_port].endpoint}", f"{link.b}:{ports[link.b][link.b_port].endpoint}"]
        for end in ends:
            if end in used:
                raise LabError(f"containerlab endpoint {end} is cabled twice in the plan")
            used.add(end)
        links.append({"endpoints": ends})

    topology = {"name": plan.lab, "topology": {"nodes": nodes, "links": links}}
    mapping = {"lab": plan.lab,
               "rules": {KIND_CEOS: "EthernetA/B/C -> ethA_B_C (cEOS shows EthernetA/B/C)",
                         KIND_SONIC: f"EthernetX -> eth(X/{SONIC_LANES_PER_PORT}+1) (sonic-vs shows EthernetX)",
                         KIND_LINUX: "the plan's interface name, unchanged"},
               "nodes": {name: {"kind": kinds[name], "interfaces": {p: m.as_dict() for p, m in ports[name].items()}}
                         for name in plan.nodes}}

    topo_name = f"{plan.lab}.clab.yml"
    _claim(out)
    marker = out / MARKER
    marker.unlink(missing_ok=True)
    _write_new(marker, json.dumps({"tool": "netgen containerlab export", "lab": plan.lab,
                                   "written": [topo_name, CONFIGS, INTERFACE_MAP]}, indent=1) + "\n")
    if any(copies.values()):
        _make_dir(out / CONFIGS)
    for name, rendered in copies.items():
        if rendered:
            folder = out / CONFIGS / name
            _make_dir(folder)
            for filename, content in rendered.items():
                _write_new(folder / filename, content)
    header = (f"# containerlab topology written by netgen from a lab plan; {CONFIGS}/ holds the rendered files\n"
              f"# it boots, {INTERFACE_MAP} maps rendered port names to the interfaces below. Do not edit.\n")
    topo_path = out / topo_name
    _write_new(topo_path, header + yaml.safe_dump(topology, sort_keys=False, default_flow_style=False))
    map_path = out / INTERFACE_MAP
    _write_new(map_path, json.dumps(mapping, indent=1) + "\n")
    return ExportResult(topology=topo_path, interface_map=map_path, nodes=len(nodes), links=len(links),
                        kinds=dict(Counter(kinds.values())),
                        warnings=tuple(_warnings(kinds, ports, copies)), ports=ports)


def container_plan(plan: LabPlan, ports: Mapping[str, Mapping[str, PortMapping]]) -> LabPlan:
    """The plan as the containers see it: ports and links carry the container interface names (so
    the cut drill takes the right interface down), and each router says what config it really runs."""
    nodes: dict[str, LabNode] = {}
    for name, node in plan.nodes.items():
        interfaces = tuple(intf.model_copy(update={"name": ports[name][intf.rendered].endpoint})
                           if intf.kind == "port" else intf for intf in node.interfaces)
        update: dict[str, Any] = {"interfaces": interfaces}
        if node.kind == "router" and node_kind(node) == KIND_CEOS:
            update |= {"frr_conf": None, "frr_source": "the rendered EOS CLI, as cEOS startup-config"}
        elif node.kind == "router":
            update["frr_source"] = "the rendered frr.conf, unchanged, loaded with vtysh -f in sonic-vs"
        nodes[name] = node.model_copy(update=update)
    links = tuple(link.model_copy(update={"a_if": ports[link.a][link.a_port].endpoint,
                                          "b_if": ports[link.b][link.b_port].endpoint}) for link in plan.links)
    return plan.model_copy(update={"nodes": nodes, "links": links})


# --- running commands -----------------------------------------------------------------------------


def _run(argv: Sequence[str], timeout: float = 60.0, cwd: Path | None = None) -> ExecResult:
    return run_command(argv, timeout=timeout, cwd=cwd)


def _first_line(result: ExecResult) -> str:
    text = (result.stderr or result.stdout).strip()
    return text.splitlines()[0][:200] if text else f"exit code {result.returncode}"


def clab_prerequisites(images: ClabImages | None = None) -> list[str]:
    """What is missing to run the containerlab backend here (empty = ready)."""
    images = images or ClabImages()
    images.check()
    missing: list[str] = []
    if shutil.which("containerlab") is None:
        missing.append("containerlab (https://containerlab.dev/install/)")
    if shutil.which("docker") is None:
        return [*missing, "docker CLI and engine", *(f"image {i} (not checked: no docker)" for i in images.all())]
    engine = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=20)
    if not engine.ok:
        return [*missing, f"a reachable Docker engine (docker info: {_first_line(engine)})",
                *(f"image {i} (not checked: no engine)" for i in images.all())]
    for image in images.all():
        if not _run(["docker", "image", "inspect", "--format", "{{.Id}}", image], timeout=20).ok:
            missing.append(f"image {image} (docker image inspect found none; import or pull it)")
    return missing


def parse_inspect(text: str, lab: str) -> dict[str, dict[str, str]]:
    """`containerlab inspect --format json` -> node -> its container facts."""
    data = json.loads(text or "{}")
    rows: list[Any] = []
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, list):
                rows += value
    elif isinstance(data, list):
        rows = data
    prefix = f"{CONTAINER_PREFIX}-{lab}-"
    nodes: dict[str, dict[str, str]] = {}
    for row in rows:
        if isinstance(row, dict) and str(row.get("name", "")).startswith(prefix):
            nodes[str(row["name"])[len(prefix):]] = {
                k: str(row.get(k, "")) for k in ("name", "kind", "image", "state", "ipv4_address", "ipv6_address")}
    return nodes


def _uses_bfd(conf: str | None) -> bool:
    return any(line.strip() == "bfd" or " bfd" in line for line in (conf or "").splitlines())


# --- the backend ----------------------------------------------------------------------------------


class ContainerlabBackend(StatefulBackend, ExecReads):
    kind: ClassVar[str] = "containerlab"
    state_file: ClassVar[str] = STATE_FILE
    ready_timeout: float = FRR_READY_TIMEOUT_S  # per sonic-vs node, for supervisord and vtysh to answer

    def __init__(self, lab: str, files: Mapping[str, Mapping[str, str]] | None = None,
                 images: ClabImages | None = None) -> None:
        # lab names have no dash: "<lab>-clab" is never a netns lab's directory
        super().__init__(lab, lab_root() / f"{check_lab_name(lab)}-clab")
        self.files = files  # the rendered files build() exports, unless build() is given them
        self.images = images or ClabImages()

    def container(self, node: str) -> str:
        return f"{CONTAINER_PREFIX}-{self.lab}-{node}"

    def topology(self) -> Path:
        return Path(self.state()["topology"])

    # --- build --------------------------------------------------------------------------------
    def build(self, plan: LabPlan, progress: StageHook | None = None,
              files: Mapping[str, Mapping[str, str]] | None = None) -> BuildReport:
        files = files if files is not None else self.files
        if files is None:
            raise LabError("the containerlab backend boots the rendered files: give it them"
                           " (ContainerlabBackend(lab, files=...) or build(plan, files=...))")
        if plan.lab != self.lab:
            raise LabError(f"the plan is for lab {plan.lab!r}, this backend for {self.lab!r}")
        missing = clab_prerequisites(self.images)
        if missing:
            raise LabError("the containerlab lab needs: " + "; ".join(missing))
        if self.exists():
            raise LabError(f"lab {self.lab!r} is already up; `netgen lab down --name {self.lab}` first,"
                           " or pick another --name")
        started = time.monotonic()
        stages: dict[str, float] = {}
        if self.dir.exists():  # no state file: left by a crash before anything was deployed
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        try:
            export = export_containerlab(plan, files, self.dir / EXPORT_DIR, self.images)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        stages["export"] = time.monotonic() - started
        seen = container_plan(plan, export.ports)
        kinds = {name: node_kind(node) for name, node in plan.nodes.items()}
        # Write-ahead: the state names the topology before containerlab creates anything from it.
        self._state = {"lab": self.lab, "backend": self.kind, "status": "deploying", "dir": str(self.dir),
                       "created": time.time(), "topology": str(export.topology),
                       "containers": {name: self.container(name) for name in plan.nodes},
                       "flavours": {name: FLAVOURS[kind] for name, kind in kinds.items()}, "mgmt": {},
                       "warnings": list(export.warnings)}
        self._save_plan(seen)
        self._save()

        def stage(label: str, done: int, total: int) -> None:
            if progress:
                progress(label, done, total)

        try:
            mark = time.monotonic()
            stage("containerlab deploy", 0, 1)
            result = _run(["containerlab", "deploy", "-t", str(export.topology)], timeout=DEPLOY_TIMEOUT_S,
                          cwd=export.topology.parent)
            if not result.ok:
                raise LabError(f"containerlab deploy failed: {(result.stderr or result.stdout).strip()[-800:]}")
            stage("containerlab deploy", 1, 1)
            stages["deploy"] = time.monotonic() - mark

            mark = time.monotonic()
            sonic = [node for node in plan.routers() if kinds[node.name] == KIND_SONIC]
            done = 0
            stage("sonic-vs FRR config", 0, len(sonic))
            with ThreadPoolExecutor(max_workers=4) as pool:
                for _ in pool.map(self._load_sonic_frr, sonic):
                    done += 1
                    stage("sonic-vs FRR config", done, len(sonic))
            stages["sonic_frr"] = time.monotonic() - mark

            inspect = _run(["containerlab", "inspect", "-t", str(export.topology), "--format", "json"],
                           cwd=export.topology.parent)
            if inspect.ok:
                with contextlib.suppress(ValueError):
                    self._state["mgmt"] = parse_inspect(inspect.stdout, self.lab)
            self._state["status"] = "up"
            self._save()
        except BaseException:
            with contextlib.suppress(LabError):
                self.destroy()
            raise
        return BuildReport(lab=self.lab, backend=self.kind, nodes=len(plan.nodes), routers=len(plan.routers()),
                           links=len(plan.links), seconds=time.monotonic() - started, stages=stages)

    def _wait(self, node: str, argv: Sequence[str], accept: Callable[[ExecResult], bool], what: str) -> None:
        timeout = self.ready_timeout
        deadline = time.monotonic() + timeout
        interval = 0.5
        while True:
            result = self._docker_exec(node, argv, timeout=30)
            if accept(result):
                return
            if time.monotonic() >= deadline:
                raise LabError(f"{node}: {what} not ready after {timeout:.0f} s: {_first_line(result)}")
            time.sleep(interval)
            interval = min(interval * 1.5, 5.0)

    def _load_sonic_frr(self, node: LabNode) -> None:
        """Start FRR's daemons the way the image's supervisord defines them and load the rendered
        frr.conf (sonic-vs has no startup-config; see the facts at the top)."""
        name = node.name
        self._wait(name, ["supervisorctl", "status", "zebra"], lambda r: "zebra" in r.stdout, "supervisord")
        for program in ("zebra", "staticd", "bgpd"):
            self._docker_exec(name, ["supervisorctl", "start", program])  # "already started" is fine
        if _uses_bfd(node.frr_conf):
            self._docker_exec(name, ["/usr/lib/frr/bfdd", "-d", "-A", "127.0.0.1"])
        self._wait(name, ["vtysh", "-c", "show version"], lambda r: r.ok, "vtysh")
        result = self._docker_exec(name, ["vtysh", "-f", SONIC_FRR_TARGET], timeout=120)
        if not result.ok:
            detail = (result.stdout + result.stderr).strip()[:800]
            raise LabError(f"{name}: FRR rejected its rendered frr.conf: {detail}")

    # --- use ----------------------------------------------------------------------------------
    def _docker_exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult:
        return _run(["docker", "exec", self.container(node), *argv], timeout=timeout)

    def exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult:
        if node not in self.state()["containers"]:
            raise LabError(f"lab {self.lab!r} has no node {node!r}")
        return self._docker_exec(node, argv, timeout)

    def node_flavour(self, node: str) -> str:
        try:
            return str(self.state()["flavours"][node])
        except KeyError:
            raise LabError(f"lab {self.lab!r} has no node {node!r}") from None

    def lldp_neighbors(self, node: str) -> dict[str, tuple[str, str]] | None:
        """sonic-vs and linux nodes run lldpd: its lldpcli answers. cEOS speaks LLDP but has no
        lldpcli, and its `show lldp neighbors` is not read here yet: None (not checked)."""
        if self.node_flavour(node) == "eos":
            return None
        result = self._docker_exec(node, ["lldpcli", "show", "neighbors", "-f", "keyvalue"], timeout=15)
        return parse_lldp_keyvalue(result.stdout) if result.ok else None

    def mgmt(self) -> dict[str, dict[str, str]]:
        """node -> container facts from `containerlab inspect` (management addresses), as of `build`."""
        return {node: dict(facts) for node, facts in self.state().get("mgmt", {}).items()}

    # --- destroy ------------------------------------------------------------------------------
    def destroy(self) -> DestroyReport:
        state = self.state() if self._state is None and self.exists() else self._state
        if state is None:
            raise LabError(f"no containerlab lab named {self.lab!r} (no {self.state_path})")
        report = DestroyReport(lab=self.lab)
        topology = Path(state["topology"])
        if topology.is_file():
            result = _run(["containerlab", "destroy", "-t", str(topology), "--cleanup"], timeout=DESTROY_TIMEOUT_S,
                          cwd=topology.parent)
            if not result.ok:
                raise LabError(f"containerlab destroy failed, {self.dir} kept for another try:"
                               f" {(result.stderr or result.stdout).strip()[-500:]}")
        report.namespaces = sorted(state.get("containers", {}).values())  # each container had its own
        if self.dir.exists():
            shutil.rmtree(self.dir, ignore_errors=True)
            report.removed_dir = str(self.dir)
        self._state = self._plan = None
        return report


def list_clab_labs() -> list[dict[str, Any]]:
    return list_states(STATE_FILE)


