"""The containerlab export of a lab plan, and the containerlab backend's command sequence, on the
small example (no Docker, no containerlab, no root: the backend's commands go to a fake runner).

Expected interface names are computed here from the documented rules, not read from the module:
cEOS `ethA_B_C` is EthernetA/B/C, sonic-vs `ethN` is Ethernet(4*(N-1)), hosts keep their name."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from netgen.checks import DesignContext
from netgen.lab import backend as lab_backend
from netgen.lab import containerlab as clab
from netgen.lab.adapters import plan_lab, rendered_files
from netgen.lab.backend import LabError
from netgen.lab.containerlab import (
    MARKER,
    ClabImages,
    ContainerlabBackend,
    ceos_endpoint,
    export_containerlab,
    sonic_vs_endpoint,
)
from netgen.lab.plan import LabPlan, SliceRequest, select_devices

pytestmark = pytest.mark.render

IMAGES = ClabImages(ceos="ceos-test:4.33.1F", sonic_vs="sonic-vs-test:202411", linux="linux-test:1")
SAFE_TOKEN = re.compile(r"^[A-Za-z0-9./:_-]+$")


def _slice(ctx: DesignContext, lab: str, request: SliceRequest) -> tuple[LabPlan, dict[str, dict[str, str]]]:
    return plan_lab(lab, ctx, request), rendered_files(ctx, select_devices(ctx.topology, request), None)


@pytest.fixture(scope="module")
def zone1(ctx: DesignContext) -> tuple[LabPlan, dict[str, dict[str, str]]]:
    return _slice(ctx, "zone1", SliceRequest(zone=1))


@pytest.fixture(scope="module")
def whole(ctx: DesignContext) -> tuple[LabPlan, dict[str, dict[str, str]]]:
    return _slice(ctx, "whole", SliceRequest())


@pytest.fixture(params=["zone1", "whole"])
def lab(request: pytest.FixtureRequest) -> tuple[LabPlan, dict[str, dict[str, str]]]:
    value: tuple[LabPlan, dict[str, dict[str, str]]] = request.getfixturevalue(request.param)
    return value


def expected_endpoint(nos: str | None, port: str) -> str:
    if nos is None:  # a host
        return port
    number = port.removeprefix("Ethernet")
    if nos == "sonic":
        return f"eth{int(number) // 4 + 1}"
    return "eth" + number.replace("/", "_")


def _load(out: Path, lab: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((out / f"{lab}.clab.yml").read_text())
    return data


# --- the topology file ---------------------------------------------------------------------------


def test_topology_parses_with_every_node_of_the_right_kind(ctx, lab, tmp_path):
    plan, files = lab
    result = export_containerlab(plan, files, tmp_path / "out", IMAGES)
    topo = _load(tmp_path / "out", plan.lab)
    assert topo["name"] == plan.lab
    nodes = topo["topology"]["nodes"]
    assert set(nodes) == set(plan.nodes)
    want_kind = {"eos": "arista_ceos", "sonic": "sonic-vs"}
    want_image = {"arista_ceos": IMAGES.ceos, "sonic-vs": IMAGES.sonic_vs, "linux": IMAGES.linux}
    for name, node in nodes.items():
        device = ctx.topology.devices.get(name)  # the topology, not the plan, says what runs where
        kind = "linux" if device is None else want_kind[device.nos]
        assert node["kind"] == kind, name
        assert node["image"] == want_image[kind], name
    assert result.nodes == len(plan.nodes)
    assert result.links == len(plan.links)
    assert result.kinds == dict(Counter(n["kind"] for n in nodes.values()))
    assert result.topology == tmp_path / "out" / f"{plan.lab}.clab.yml"


def test_every_plan_link_appears_once_with_the_mapped_endpoints(lab, tmp_path):
    plan, files = lab
    out = tmp_path / "out"
    export_containerlab(plan, files, out, IMAGES)
    links = _load(out, plan.lab)["topology"]["links"]
    ports = json.loads((out / "interface-map.json").read_text())["nodes"]
    written = Counter(frozenset(link["endpoints"]) for link in links)
    expected: Counter[frozenset[str]] = Counter()
    for link in plan.links:
        ends = []
        for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
            endpoint = expected_endpoint(plan.nodes[node].nos, port)
            assert ports[node]["interfaces"][port] == {"endpoint": endpoint, "nos": port}
            ends.append(f"{node}:{endpoint}")
        expected[frozenset(ends)] += 1
    assert written == expected
    assert all(len(link["endpoints"]) == 2 for link in links)
    every_end = [end for link in links for end in link["endpoints"]]
    assert len(every_end) == len(set(every_end)), "an interface is cabled twice"


def test_known_cables_by_the_documented_rules(zone1, whole, tmp_path):
    plan, files = zone1
    export_containerlab(plan, files, tmp_path / "z1", IMAGES)
    links = {frozenset(link["endpoints"]) for link in _load(tmp_path / "z1", plan.lab)["topology"]["links"]}
    # z01-rtsw001 Ethernet448 is cabled to z01-ctsw01 Ethernet3/1/1; sonic-vs backs Ethernet448 with eth(448/4+1).
    assert frozenset({f"z01-rtsw001:eth{448 // 4 + 1}", "z01-ctsw01:eth3_1_1"}) in links
    assert frozenset({"z01-r001-h01:nic1", "z01-rtsw001:eth1"}) in links  # Ethernet0, the first data port
    plan, files = whole
    export_containerlab(plan, files, tmp_path / "all", IMAGES)
    links = {frozenset(link["endpoints"]) for link in _load(tmp_path / "all", plan.lab)["topology"]["links"]}
    assert frozenset({"z02-r001-h01:nic1", "z02-rtsw001:eth1_1"}) in links  # EOS Ethernet1/1


def test_interface_map_covers_every_cabled_port(lab, tmp_path):
    plan, files = lab
    export_containerlab(plan, files, tmp_path / "out", IMAGES)
    mapping = json.loads((tmp_path / "out" / "interface-map.json").read_text())
    assert set(mapping["nodes"]) == set(plan.nodes)
    for name, node in plan.nodes.items():
        ports = {i.rendered for i in node.interfaces if i.kind == "port"}
        assert set(mapping["nodes"][name]["interfaces"]) == ports, name


def test_configs_reach_the_nodes_unchanged(lab, tmp_path):
    plan, files = lab
    out = tmp_path / "out"
    export_containerlab(plan, files, out, IMAGES)
    topo_dir = out  # containerlab resolves relative paths against the topology file's directory
    nodes = _load(out, plan.lab)["topology"]["nodes"]
    for router in plan.routers():
        node = nodes[router.name]
        if router.nos == "eos":
            path = (topo_dir / node["startup-config"]).resolve()
            assert path.is_relative_to(out.resolve())
            assert path.read_text() == files[router.name][f"{router.name}.cfg"]
            assert node["enforce-startup-config"] is True
            assert "binds" not in node
        else:
            targets = {}
            for bind in node["binds"]:
                source, target, mode = bind.split(":")
                assert mode == "ro"
                path = (topo_dir / source).resolve()
                assert path.is_relative_to(out.resolve())
                targets[target] = path.read_text()
            assert targets == {"/var/sonic/config_db.json": files[router.name]["config_db.json"],
                               "/etc/netgen/frr.conf": files[router.name]["frr.conf"]}
            assert "startup-config" not in node
        copied = {p.name: p.read_text() for p in (out / "configs" / router.name).iterdir()}
        assert copied == files[router.name]
    assert {p.name for p in (out / "configs").iterdir()} == {r.name for r in plan.routers()}


def test_hosts_get_their_address_and_gateway(ctx, lab, tmp_path):
    plan, files = lab
    export_containerlab(plan, files, tmp_path / "out", IMAGES)
    nodes = _load(tmp_path / "out", plan.lab)["topology"]["nodes"]
    hosts = plan.hosts()
    assert hosts
    for host in hosts:
        nic = next(n for n in ctx.topology.host_nics if n.rtsw == host.attached_to)
        assert nic.host == host.name
        commands = [shlex.split(c) for c in nodes[host.name]["exec"]]
        assert ["ip", "addr", "add", str(nic.ipv4), "dev", "nic1"] in commands
        assert ["ip", "link", "set", "nic1", "up"] in commands
        assert commands[-1] == ["ip", "route", "replace", "default", "via", str(nic.gateway_ipv4), "dev", "nic1"]
        assert ["ip", "link", "set", "nic1", "mtu", str(ctx.fabric.mtu)] in commands


def test_exec_commands_and_binds_carry_no_shell_syntax(lab, tmp_path):
    plan, files = lab
    export_containerlab(plan, files, tmp_path / "out", IMAGES)
    for node in _load(tmp_path / "out", plan.lab)["topology"]["nodes"].values():
        for command in node.get("exec", []):
            assert all(SAFE_TOKEN.match(token) for token in shlex.split(command)), command
        for bind in node.get("binds", []):
            assert len(bind.split(":")) == 3 and all(SAFE_TOKEN.match(part) for part in bind.split(":")), bind


def test_the_stock_sonic_vs_limits_are_warned_about(zone1, tmp_path):
    plan, files = zone1
    result = export_containerlab(plan, files, tmp_path / "out", IMAGES)
    text = " ".join(result.warnings)
    assert "Ethernet448 -> eth113" in text
    assert "Arista-7060X6-64PE-O128S2" in text


# --- the output directory ------------------------------------------------------------------------


def test_a_foreign_non_empty_directory_is_refused(zone1, tmp_path):
    plan, files = zone1
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(LabError, match="not empty and not written by a netgen containerlab export"):
        export_containerlab(plan, files, out, IMAGES)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_file_is_not_a_directory(zone1, tmp_path):
    plan, files = zone1
    (tmp_path / "out").write_text("x")
    with pytest.raises(LabError, match="not a directory"):
        export_containerlab(plan, files, tmp_path / "out", IMAGES)


def test_a_previous_export_is_replaced(zone1, whole, tmp_path):
    out = tmp_path / "out"
    export_containerlab(*whole, out, IMAGES)
    (out / "keep.txt").write_text("someone's notes")  # not the export's: left alone
    plan, files = zone1
    export_containerlab(plan, files, out, IMAGES)
    assert not (out / "whole.clab.yml").exists()
    assert (out / "zone1.clab.yml").is_file()
    assert {p.name for p in (out / "configs").iterdir()} == {r.name for r in plan.routers()}
    assert (out / "keep.txt").read_text() == "someone's notes"


@pytest.mark.parametrize("planted", ["{lab}.clab.yml", "interface-map.json", "configs"])
def test_a_link_planted_where_the_export_writes_is_never_written_through(zone1, whole, tmp_path, planted):
    """A previous export's directory in which someone left a symbolic link (to a file the export's
    user may write, here one of the test's) where the new export writes: refused, the target untouched."""
    out = tmp_path / "out"
    export_containerlab(*whole, out, IMAGES)
    plan, files = zone1
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep me")
    name = planted.format(lab=plan.lab)
    target = victim if name == "configs" else victim / "precious"
    if (out / name).is_dir():
        shutil.rmtree(out / name)
    (out / name).unlink(missing_ok=True)
    # the old marker does not list it (a different lab's topology name), or the link replaced a listed entry
    (out / name).symlink_to(target)
    marker = json.loads((out / MARKER).read_text()) if (out / MARKER).exists() else None
    if marker is not None and name in marker["written"]:
        marker["written"].remove(name)
        (out / MARKER).write_text(json.dumps(marker))
    with pytest.raises(LabError, match="already exists"):
        export_containerlab(plan, files, out, IMAGES)
    assert (victim / "precious").read_text() == "keep me"
    assert [p.name for p in victim.iterdir()] == ["precious"]


def test_a_link_as_the_export_directory_is_refused(zone1, tmp_path):
    plan, files = zone1
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "real")
    with pytest.raises(LabError, match="symbolic link"):
        export_containerlab(plan, files, tmp_path / "out", IMAGES)
    assert list((tmp_path / "real").iterdir()) == []


# --- refused inputs ------------------------------------------------------------------------------


def _rename(plan: LabPlan, old: str, new: str) -> LabPlan:
    nodes = {(new if k == old else k): (n.model_copy(update={"name": new}) if k == old else n)
             for k, n in plan.nodes.items()}
    links = tuple(link.model_copy(update={"a": new if link.a == old else link.a, "b": new if link.b == old else link.b})
                  for link in plan.links)
    return plan.model_copy(update={"nodes": nodes, "links": links})


@pytest.mark.parametrize("bad", ["h1;reboot", "$(id)", "a b", "-rf", "x:eth1", "a/b", "é", "n" * 64, "trail-"])
def test_node_names_that_containerlab_or_a_shell_would_misread_are_refused(zone1, tmp_path, bad):
    plan, files = zone1
    host = plan.hosts()[0].name
    with pytest.raises(LabError, match="cannot be a containerlab node"):
        export_containerlab(_rename(plan, host, bad), files, tmp_path / "out", IMAGES)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("image", ["alpine:3; rm -rf /", "$(id)", "-v", ""])
def test_bad_image_references_are_refused(zone1, tmp_path, image):
    plan, files = zone1
    with pytest.raises(LabError, match="not a Docker image reference"):
        export_containerlab(plan, files, tmp_path / "out", ClabImages(linux=image))


def test_an_eos_config_containerlab_would_template_is_refused(zone1, tmp_path):
    plan, files = zone1
    bad = {k: dict(v) for k, v in files.items()}
    bad["z01-ctsw01"]["z01-ctsw01.cfg"] += "hostname {{ .ShortName }}\n"
    with pytest.raises(LabError, match="Go template"):
        export_containerlab(plan, bad, tmp_path / "out", IMAGES)


def test_a_host_address_that_is_not_one_is_refused(zone1, tmp_path):
    plan, files = zone1
    host = plan.hosts()[0]
    bad = plan.model_copy(update={"nodes": {**plan.nodes, host.name: host.model_copy(
        update={"gateway_v4": "10.0.0.1; reboot"})}})
    with pytest.raises(LabError, match="does not appear to be an IPv4 or IPv6 address"):
        export_containerlab(bad, files, tmp_path / "out", IMAGES)
    assert not (tmp_path / "out").exists()


def test_missing_rendered_files_are_named(zone1, tmp_path):
    plan, files = zone1
    bad = {k: dict(v) for k, v in files.items()}
    del bad["z01-rtsw002"]["frr.conf"]
    with pytest.raises(LabError, match=r"z01-rtsw002: no rendered frr\.conf"):
        export_containerlab(plan, bad, tmp_path / "out", IMAGES)


def test_port_name_rules():
    assert sonic_vs_endpoint("Ethernet0") == "eth1"
    assert sonic_vs_endpoint("Ethernet124") == "eth32"
    assert ceos_endpoint("Ethernet3/1/1") == "eth3_1_1"
    assert ceos_endpoint("Ethernet57/5") == "eth57_5"
    for bad in ("Ethernet449", "Ethernet01", "Eth0", "Ethernet4;x"):
        with pytest.raises(LabError):
            sonic_vs_endpoint(bad)
    for bad in ("Ethernet0", "Management1", "Ethernet3/1/1;reboot", "Ethernet3//1"):
        with pytest.raises(LabError):
            ceos_endpoint(bad)


# --- the backend, with a fake command runner -----------------------------------------------------


class FakeRunner:
    """Stands in for subprocess.run: records argv lists, refuses anything that is not one."""

    def __init__(self, lab: str, fail: set[str] | None = None) -> None:
        self.calls: list[tuple[list[str], Path | None]] = []
        self.lab = lab
        self.fail = fail or set()

    def __call__(self, args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert isinstance(args, list) and all(isinstance(a, str) for a in args), args
        assert not kwargs.get("shell"), "never through a shell"
        self.calls.append((args, kwargs.get("cwd")))
        if args[:2] == ["containerlab", "inspect"]:
            rows = [{"lab_name": self.lab, "name": f"clab-{self.lab}-z01-rtsw001", "kind": "sonic-vs",
                     "image": IMAGES.sonic_vs, "state": "running", "ipv4_address": "172.20.20.5/24",
                     "ipv6_address": "3fff:172:20:20::5/64"}]
            return subprocess.CompletedProcess(args, 0, json.dumps({self.lab: rows}), "")
        if " ".join(args[:2]) in self.fail:
            return subprocess.CompletedProcess(args, 1, "", "boom")
        out = "zebra RUNNING" if args[-2:] == ["status", "zebra"] else ""
        return subprocess.CompletedProcess(args, 0, out, "")


@pytest.fixture
def fake(monkeypatch, tmp_path, zone1):
    monkeypatch.setenv("NETGEN_LAB_ROOT", str(tmp_path / "labs"))
    monkeypatch.setattr(clab, "clab_prerequisites", lambda images=None: [])
    monkeypatch.setattr(ContainerlabBackend, "ready_timeout", 3.0)  # a regression fails fast, not in 5 min
    runner = FakeRunner(zone1[0].lab)
    monkeypatch.setattr(lab_backend.subprocess, "run", runner)  # containerlab runs commands through it
    return runner


def test_backend_deploys_loads_sonic_frr_and_destroys(zone1, fake, tmp_path):
    plan, files = zone1
    backend = ContainerlabBackend(plan.lab, files=files, images=IMAGES)
    report = backend.build(plan)
    assert report.nodes == len(plan.nodes) and report.links == len(plan.links)
    topo = backend.topology()
    assert topo.is_file() and topo.is_relative_to(tmp_path / "labs")
    deploy = [(argv, cwd) for argv, cwd in fake.calls if argv[0] == "containerlab"]
    assert deploy[0] == (["containerlab", "deploy", "-t", str(topo)], topo.parent)
    sonic = [r.name for r in plan.routers() if r.nos == "sonic"]
    for name in sonic:
        loads = [argv for argv, _ in fake.calls if argv[:3] == ["docker", "exec", f"clab-zone1-{name}"]]
        assert ["docker", "exec", f"clab-zone1-{name}", "vtysh", "-f", "/etc/netgen/frr.conf"] in loads
        assert ["docker", "exec", f"clab-zone1-{name}", "/usr/lib/frr/bfdd", "-d", "-A", "127.0.0.1"] in loads
    execs = [argv for argv, _ in fake.calls if argv[:2] == ["docker", "exec"]]
    assert not any(argv[2].startswith("clab-zone1-z01-ctsw") for argv in execs)  # cEOS boots its startup-config

    assert backend.node_flavour("z01-ctsw01") == "eos"
    assert backend.node_flavour("z01-rtsw001") == "frr"
    assert backend.node_flavour(plan.hosts()[0].name) == "host"
    assert backend.mgmt()["z01-rtsw001"]["ipv4_address"] == "172.20.20.5/24"
    seen = backend.plan()  # the plan as the containers name their interfaces
    cable = next(link for link in seen.links if link.a == "z01-rtsw001" and link.a_port == "Ethernet448")
    assert (cable.a_if, cable.b, cable.b_port, cable.b_if) == ("eth113", "z01-ctsw01", "Ethernet3/1/1", "eth3_1_1")
    assert seen.nodes["z01-ctsw01"].frr_conf is None

    fake.calls.clear()
    result = backend.exec("z01-rtsw001", ["vtysh", "-c", "show bgp summary json; reboot"])
    assert result.ok
    assert fake.calls[-1][0] == ["docker", "exec", "clab-zone1-z01-rtsw001", "vtysh", "-c",
                                 "show bgp summary json; reboot"]
    with pytest.raises(LabError, match="no node"):
        backend.exec("z09-nowhere", ["true"])

    down = backend.destroy()
    assert fake.calls[-1] == (["containerlab", "destroy", "-t", str(topo), "--cleanup"], topo.parent)
    assert down.removed_dir == str(backend.dir)
    assert not backend.dir.exists() and not backend.exists()


def test_a_failed_deploy_leaves_nothing(zone1, fake):
    plan, files = zone1
    fake.fail = {"containerlab deploy"}
    backend = ContainerlabBackend(plan.lab, files=files, images=IMAGES)
    with pytest.raises(LabError, match="containerlab deploy failed: boom"):
        backend.build(plan)
    assert fake.calls[-1][0][:2] == ["containerlab", "destroy"]
    assert not backend.dir.exists()


def test_a_failed_export_leaves_no_lab_directory(zone1, fake):
    plan, files = zone1
    bad = {k: v for k, v in files.items() if k != "z01-ctsw02"}
    backend = ContainerlabBackend(plan.lab, files=bad, images=IMAGES)
    with pytest.raises(LabError, match="z01-ctsw02: no rendered files"):
        backend.build(plan)
    assert not backend.dir.exists()
    assert not fake.calls  # containerlab was never started


def test_the_backend_names_what_is_missing(zone1, monkeypatch, tmp_path):
    plan, files = zone1
    monkeypatch.setenv("NETGEN_LAB_ROOT", str(tmp_path / "labs"))
    monkeypatch.setattr(clab, "clab_prerequisites", lambda images=None: ["containerlab (install it)"])
    backend = ContainerlabBackend(plan.lab, files=files)
    with pytest.raises(LabError, match=r"needs: containerlab \(install it\)"):
        backend.build(plan)
    assert not (tmp_path / "labs").exists()


def test_inspect_output_of_both_known_shapes_is_read():
    row = {"name": "clab-lab1-sw1", "kind": "arista_ceos", "image": "ceos", "state": "running",
           "ipv4_address": "172.20.20.2/24", "ipv6_address": ""}
    other = {**row, "name": "clab-lab2-sw1"}
    for text in (json.dumps({"lab1": [row], "lab2": [other]}), json.dumps({"containers": [row, other]})):
        assert clab.parse_inspect(text, "lab1") == {"sw1": {k: str(v) for k, v in row.items()}}


def test_the_backend_needs_the_rendered_files(zone1, fake):
    plan, _ = zone1
    with pytest.raises(LabError, match="rendered files"):
        ContainerlabBackend(plan.lab).build(plan)
