"""SONiC device endpoints in a real netns lab: sshd inside the router nodes, reached with netmiko
`linux` (host keys checked), and the SONiC `config` / `show` stand-in behind it.

One small lab (zone 1, 2 racks, 1 CTSW: two SONiC RTSWs and an EOS CTSW running its FRR stand-in)
serves the whole module; the last test takes it down and proves nothing is left on the host.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab import endpoints
from netgen.lab.adapters import lab_inputs
from netgen.lab.netns import NetnsBackend
from netgen.lab.netns import prerequisites as lab_prerequisites
from netgen.lab.plan import LabPlan, SliceRequest
from netgen.nos.sonic import lab_shim
from netgen.topology import expand
from tests.conftest import SMALL
from tests.lab.conftest import (
    HostSnapshot,
    assert_nothing_left,
    lab_name,
    lab_root,  # noqa: F401  (autouse: the private NETGEN_LAB_ROOT)
)
from tests.support import sonic_faults

try:
    from netmiko import ConnectHandler, file_transfer
except ImportError:  # pragma: no cover - the deploy extras are not installed
    ConnectHandler = file_transfer = None

MISSING = lab_prerequisites() + endpoints.prerequisites() + ([] if ConnectHandler else ["netmiko"])
pytestmark = [pytest.mark.deploy,
              pytest.mark.skipif(bool(MISSING), reason="SONiC endpoints need " + "; ".join(MISSING))]

SONIC, OTHER_SONIC, EOS = "z01-rtsw001", "z01-rtsw002", "z01-ctsw01"
RC = "__RC="


@dataclass
class SonicLab:
    name: str
    backend: NetnsBackend
    plan: LabPlan
    files: dict[str, dict[str, str]]  # node -> its rendered files
    rendered: dict[str, dict[str, Any]]  # SONiC node -> its rendered config_db.json
    eps: dict[str, endpoints.Endpoint]
    before: HostSnapshot
    sshd_before: set[int]
    conns: dict[str, Any] = field(default_factory=dict)
    down: bool = False

    def conn(self, node: str) -> Any:
        if node not in self.conns:
            self.conns[node] = ConnectHandler(**self.eps[node].netmiko(conn_timeout=15))
        return self.conns[node]


def sshd_pids() -> set[int]:
    pids = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.readlink(proc / "exe") == "/usr/sbin/sshd":
                    pids.add(int(proc.name))
            except OSError:
                continue
    return pids


def take_down(lab: SonicLab) -> None:
    for conn in lab.conns.values():
        conn.disconnect()
    lab.conns.clear()
    if not lab.down:
        lab.down = True
        endpoints.stop_management(lab.backend)
        lab.backend.destroy()


@pytest.fixture(scope="module")
def lab() -> Iterator[SonicLab]:
    before, sshd_before = HostSnapshot.take(), sshd_pids()
    name = lab_name("ep")
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    plan, files = lab_inputs(name, ctx, SliceRequest(zone=1, racks=2, ctsw=1))
    backend = NetnsBackend(name)
    backend.build(plan)
    rendered = {node: json.loads(files[node]["config_db.json"]) for node in files if "config_db.json" in files[node]}
    state = SonicLab(name, backend, plan, files, rendered, {}, before, sshd_before)
    try:
        state.eps = endpoints.start_management(backend, files=files, shim_hooks=sonic_faults.HOOKS)
        yield state
    finally:
        take_down(state)


def run(lab: SonicLab, node: str, command: str, timeout: float = 60) -> tuple[int, str]:
    """A command over SSH with its exit status (netmiko `linux` output starts with a newline)."""
    output = str(lab.conn(node).send_command(f"{command}; echo {RC}$?", read_timeout=timeout))
    text, _, tail = output.rpartition(RC)
    return int(tail.split()[0]), text.strip("\n")


def running(lab: SonicLab, node: str = SONIC) -> dict[str, Any]:
    rc, text = run(lab, node, "show runningconfiguration all")
    assert rc == 0, text
    config = json.loads(text)
    assert "router bgp" in config.pop("bgpraw")  # FRR's running config rides along, as on SONiC
    return dict(config)


def put(lab: SonicLab, node: str, tmp_path: Path, name: str, data: Any) -> str:
    """Copy a JSON file to the node's /tmp over SCP, as a deploy would."""
    local = tmp_path / name
    local.write_text(json.dumps(data, indent=1))
    result = file_transfer(lab.conn(node), source_file=str(local), dest_file=name, file_system="/tmp",
                           direction="put", overwrite_file=True)
    assert result["file_verified"]
    return f"/tmp/{name}"


def seeded(lab: SonicLab, node: str = SONIC) -> dict[str, Any]:
    return lab_shim.seed_config_db(node, lab.rendered[node])


def kernel_addresses(lab: SonicLab, node: str, device: str) -> set[str]:
    rc, text = run(lab, node, f"ip -j addr show dev {device}")
    assert rc == 0, text
    return {f"{a['local']}/{a['prefixlen']}" for link in json.loads(text) for a in link["addr_info"]}


# --- the endpoints ---------------------------------------------------------------------------------


def test_ssh_lands_inside_each_node_with_its_hostname(lab):
    assert set(lab.eps) == {SONIC, OTHER_SONIC, EOS}
    assert [n for n, e in lab.eps.items() if e.shim] == [SONIC, OTHER_SONIC]
    for node in lab.eps:
        rc, text = run(lab, node, "hostname")
        assert (rc, text) == (0, node)
    rc, text = run(lab, EOS, "command -v config || echo none")
    assert text == "none"  # no SONiC stand-in on the EOS node's FRR stand-in


def test_host_key_is_checked_against_known_hosts(lab, tmp_path):
    other = tmp_path / "known_hosts"
    other.write_text(lab.eps[SONIC].known_hosts.read_text().replace(lab.eps[SONIC].host, "192.0.2.1"))
    with pytest.raises(Exception, match=r"not found in known_hosts|[Nn]ot found in known"):
        ConnectHandler(**lab.eps[SONIC].netmiko(alt_key_file=str(other), conn_timeout=10))


def test_vtysh_sees_the_nodes_frr_over_ssh(lab):
    """The sessions to the CTSW in the lab come up (the rendered peers outside the slice never do)."""
    expected = {s.b_ip for s in lab.plan.sessions if s.a == SONIC and s.afi == "ipv4"}
    assert len(expected) == 4
    deadline = time.monotonic() + 30
    while True:
        rc, text = run(lab, SONIC, "vtysh -c 'show bgp summary json'")
        assert rc == 0
        peers = json.loads(text)["ipv4Unicast"]["peers"]
        if all(peers.get(ip, {}).get("state") == "Established" for ip in expected) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert {ip: peers[ip]["state"] for ip in expected} == dict.fromkeys(expected, "Established")
    rc, text = run(lab, SONIC, "cmp /etc/frr/frr.conf /etc/sonic/frr/frr.conf && echo same")
    assert (rc, text) == (0, "same")


# --- CONFIG_DB: running, checkpoint, apply-patch, rollback -------------------------------------------


def test_running_config_is_the_rendered_file_plus_device_owned_keys(lab):
    config = running(lab)
    assert config == seeded(lab)
    meta = config["DEVICE_METADATA"]["localhost"]
    assert meta["platform"] == "x86_64-arista_7060x6_64pe" and meta["mac"].startswith("02:")
    assert config["PORT"] == lab.rendered[SONIC]["PORT"]  # alias and index come rendered (the SKU's)
    assert "mac" not in lab.rendered[SONIC]["DEVICE_METADATA"]["localhost"]


def test_checkpoint_apply_patch_and_rollback_restores_exactly(lab, tmp_path):
    assert run(lab, SONIC, "sudo config checkpoint pre1")[0] == 0
    rc, text = run(lab, SONIC, "config list-checkpoints")
    assert rc == 0 and "pre1" in json.loads(text)
    patch = put(lab, SONIC, tmp_path, "p1.json",
                [{"op": "replace", "path": "/PORT/Ethernet448/description", "value": "netgen test"}])
    rc, text = run(lab, SONIC, f"sudo config apply-patch {patch}")
    assert rc == 0 and text.endswith("Patch applied successfully."), text
    assert running(lab)["PORT"]["Ethernet448"]["description"] == "netgen test"
    rc, text = run(lab, SONIC, "config rollback pre1")
    assert rc == 0 and "Config rolled back successfully." in text, text
    assert running(lab) == seeded(lab)
    assert run(lab, SONIC, "config delete-checkpoint pre1")[0] == 0
    assert json.loads(run(lab, SONIC, "config list-checkpoints")[1]) == []


@pytest.mark.parametrize(("patch", "error"), [
    ([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "99999"}], "mtu: '99999' is not an integer"),
    ([{"op": "add", "path": "/BUFFER_PG/Ethernet0|5", "value": {"profile": "no_such_profile"}}],
     "profile 'no_such_profile' is not a BUFFER_PROFILE"),
    ([{"op": "add", "path": "/VXLAN_TUNNEL", "value": {"vtep1": {"src_ip": "10.0.0.1"}}}],
     "tables without YANG models"),
    ([{"op": "add", "path": "/MGMT_INTERFACE", "value": {"eth0|10.0.0.1/24": {}}}], "gwaddr: mandatory field missing"),
    ([{"op": "remove", "path": "/PFC_WD/GLOBAL"}], "illegal on field: /PFC_WD/GLOBAL"),
    ([{"op": "remove", "path": "/bgpraw"}], "non-existent object 'bgpraw'"),
], ids=["bad-mtu", "dangling-buffer-profile", "table-without-yang", "mgmt-interface-without-gateway",
                        "gcu-illegal-removal", "bgpraw"])
def test_invalid_patch_is_rejected_whole(lab, tmp_path, patch, error):
    # the first operation is valid: nothing of the patch may be applied
    ops = [{"op": "replace", "path": "/PORT/Ethernet452/description", "value": "must not stick"}, *patch]
    path = put(lab, SONIC, tmp_path, "bad.json", ops)
    rc, text = run(lab, SONIC, f"config apply-patch {path}")
    assert rc == 2 and "Failed to apply patch due to:" in text and error in text, text
    assert running(lab) == seeded(lab)


def test_dry_run_changes_nothing(lab, tmp_path):
    path = put(lab, SONIC, tmp_path, "dry.json",
               [{"op": "replace", "path": "/PORT/Ethernet452/description", "value": "dry"}])
    rc, text = run(lab, SONIC, f"config apply-patch -d {path}")
    assert rc == 0 and text.startswith("** DRY RUN EXECUTION **"), text
    assert running(lab) == seeded(lab)


def test_replace_converges_and_drops_device_keys_the_file_lacks(lab, tmp_path):
    """Like GCU: `config replace` makes CONFIG_DB exactly the file. The plain rendered file has no
    device-owned keys, so they go; carried over from the running config, they stay."""
    rendered, seed = lab.rendered[SONIC], seeded(lab)
    rc, text = run(lab, SONIC, f"config replace {put(lab, SONIC, tmp_path, 'rendered.json', rendered)}")
    assert rc == 0 and "Config replaced successfully." in text, text
    assert running(lab) == rendered
    with_device_keys = copy.deepcopy(rendered)
    for table, fields in lab_shim.DEVICE_OWNED.items():
        for key, entry in with_device_keys[table].items():
            entry.update({f: seed[table][key][f] for f in fields if f in seed[table][key]})
    assert with_device_keys == seed
    rc, text = run(lab, SONIC, f"config replace {put(lab, SONIC, tmp_path, 'overlay.json', with_device_keys)}")
    assert rc == 0, text
    assert running(lab) == seed
    assert run(lab, SONIC, "config save -y")[0] == 0
    rc, text = run(lab, SONIC, "cat /etc/sonic/config_db.json")
    assert json.loads(text) == seed


def test_interface_address_change_reaches_the_kernel_and_fib(lab, tmp_path):
    assert run(lab, SONIC, "config checkpoint pre2")[0] == 0
    path = put(lab, SONIC, tmp_path, "addr.json",
               [{"op": "add", "path": "/INTERFACE/Ethernet448|10.99.0.1~131", "value": {}}])
    rc, text = run(lab, SONIC, f"config apply-patch {path}")
    assert rc == 0, text
    assert "10.99.0.1/31" in kernel_addresses(lab, SONIC, "Ethernet448")
    rc, text = run(lab, SONIC, "vtysh -c 'show ip route 10.99.0.0/31 json'")
    assert json.loads(text)["10.99.0.0/31"][0]["protocol"] == "connected"
    assert run(lab, SONIC, "config rollback pre2")[0] == 0
    assert "10.99.0.1/31" not in kernel_addresses(lab, SONIC, "Ethernet448")
    assert "10.1.16.1/31" in kernel_addresses(lab, SONIC, "Ethernet448")  # the rendered address stays


def test_failure_mid_patch_leaves_partial_state_that_rollback_repairs(lab, tmp_path):
    assert run(lab, SONIC, "config checkpoint pre3")[0] == 0
    sonic_faults.inject_fault(lab.backend, SONIC, "apply-fail-after", "2")
    path = put(lab, SONIC, tmp_path, "mid.json", [
        {"op": "replace", "path": "/PORT/Ethernet448/description", "value": "half"},  # change 1 (PORT)
        {"op": "add", "path": "/INTERFACE/Ethernet448|10.99.1.1~131", "value": {}},  # change 2 (INTERFACE)
        {"op": "replace", "path": "/PFC_WD/Ethernet0/detection_time", "value": "400"},  # change 3 fails
    ])
    rc, text = run(lab, SONIC, f"config apply-patch {path}")
    assert rc == 2 and "Failed to apply change 3 of 3" in text, text
    partial = running(lab)
    assert partial["PORT"]["Ethernet448"]["description"] == "half"
    assert "Ethernet448|10.99.1.1/31" in partial["INTERFACE"]
    assert partial["PFC_WD"]["Ethernet0"]["detection_time"] == "200"
    assert "10.99.1.1/31" in kernel_addresses(lab, SONIC, "Ethernet448")
    rc, text = run(lab, SONIC, "sudo config rollback pre3")
    assert rc == 0, text
    assert running(lab) == seeded(lab)
    assert "10.99.1.1/31" not in kernel_addresses(lab, SONIC, "Ethernet448")


# --- pre/post-check commands ------------------------------------------------------------------------


def test_precheck_commands(lab):
    rc, text = run(lab, SONIC, "show platform summary --json")
    summary = json.loads(text)
    assert rc == 0 and summary["hwsku"] == "Arista-7060X6-64PE-O128S2"
    assert summary["platform"] == "x86_64-arista_7060x6_64pe" and summary["asic_count"] == 1
    rc, text = run(lab, SONIC, "show interfaces counters -j")
    counters = json.loads(text)
    assert set(counters) == set(lab.rendered[SONIC]["PORT"])
    uplink = counters["Ethernet448"]
    assert set(uplink) == {"STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
                           "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"}
    assert uplink["STATE"] == "U" and int(uplink["RX_OK"].replace(",", "")) > 0  # BGP traffic, real counters
    assert counters["Ethernet464"]["STATE"] == "D"  # admin up, its CTSW is not in this lab
    assert counters["Ethernet100"]["STATE"] == "X"  # a spare, admin down
    rc, text = run(lab, SONIC, "pfc show priority Ethernet0")
    assert rc == 0 and text.split("\n")[-1].split() == ["Ethernet0", "3"]
    assert "Lossless priorities" in text


def test_pfc_storm_fault_fails_the_storm_check(lab):
    assert run(lab, SONIC, "pfcwd show stats --check-storm")[0] == 0
    sonic_faults.inject_fault(lab.backend, SONIC, "pfc-storm", "Ethernet0:3\n")
    try:
        assert run(lab, SONIC, "sudo pfcwd show stats --check-storm")[0] == 1
        rc, text = run(lab, SONIC, "show pfcwd stats")
        assert rc == 0 and "Ethernet0:3   stormed" in text
    finally:
        sonic_faults.clear_faults(lab.backend, SONIC)
    assert run(lab, SONIC, "pfcwd show stats --check-storm")[0] == 0


def test_the_other_sonic_node_is_independent(lab):
    config = running(lab, OTHER_SONIC)
    assert config == lab_shim.seed_config_db(OTHER_SONIC, lab.rendered[OTHER_SONIC])
    assert config["DEVICE_METADATA"]["localhost"]["mac"] != seeded(lab)["DEVICE_METADATA"]["localhost"]["mac"]


# --- teardown ---------------------------------------------------------------------------------------


def test_stop_and_destroy_leave_nothing_behind(lab, monkeypatch):
    state = json.loads((lab.backend.dir / endpoints.MGMT_STATE).read_text())
    links = [state["bridge"]["name"], *(n["veth"] for n in state["nodes"].values())]
    for conn in lab.conns.values():  # sessions stay open: stop_management must end them first
        assert conn.is_alive()
    report = endpoints.stop_management(lab.backend)
    assert sorted(report.links) == sorted(links)
    assert not report.killed  # everything went on SIGTERM, sessions before listeners
    assert endpoints.stop_management(lab.backend).as_dict()["links_removed"] == []  # idempotent
    lab.conns.clear()

    # A start that fails after creating everything (sshd never answers) removes it all again.
    def never(*_: Any) -> None:
        raise endpoints.LabError("sshd did not listen (simulated)")

    monkeypatch.setattr(endpoints, "_wait_listening", never)
    with pytest.raises(endpoints.LabError, match="simulated"):
        endpoints.start_management(lab.backend, files=lab.files)
    assert not (lab.backend.dir / endpoints.MGMT_STATE).exists()
    assert not (lab.backend.dir / endpoints.MGMT_DIR).exists()

    lab.down = True
    lab.backend.destroy()
    assert_nothing_left(lab.before, lab.name)
    assert sshd_pids() <= lab.sshd_before, "sshd processes left"
    host = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    assert not any(e.get("ifalias", "").startswith("netgen-mgmt:") and lab.name in e["ifalias"]
                   for e in json.loads(host))
    assert not {e["ifname"] for e in json.loads(host)} & set(links)
    for path in (lab_shim.NODE_ETC, endpoints.PRIVSEP_DIR):
        assert not (path / endpoints.CREATED_MARKER).exists()
