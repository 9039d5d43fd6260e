"""`netgen hosts`: the hosts' NIC QoS and NCCL settings, read from the written files and checked against
the switch configs `netgen render` writes for the same fabric (SONiC config_db.json, EOS CLI). The
NG7xx checks that catch the two sides parting have their cases in tests/checks/test_design_checks.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from tests.conftest import ROOT, SMALL, findings_of, run_cli

pytestmark = pytest.mark.render


def _env_file(path: Path) -> dict[str, str]:
    """The NCCL settings of a class: nccl.conf's KEY=VALUE lines (tests/hosts/test_host_readers.py reads
    them the way NCCL does, and nccl.env the way sh does)."""
    conf = path.with_name("nccl.conf")
    pairs = [line.split("=", 1) for line in conf.read_text().splitlines() if line and not line.startswith("#")]
    return dict(pairs)


def _render_both(fabric: Path, base: Path) -> tuple[Path, Path]:
    hosts, switches = base / "hosts", base / "switches"
    assert run_cli("hosts", str(fabric), "-o", str(hosts)).exit_code == 0
    assert run_cli("render", str(fabric), "-o", str(switches)).exit_code == 0
    return hosts, switches


@pytest.fixture(scope="module")
def small_sides(tmp_path_factory) -> tuple[Path, Path]:
    return _render_both(SMALL, tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="module", params=["small", "meta-24k"])
def both_sides(request, tmp_path_factory) -> tuple[Path, Path]:
    """Both bundled fabrics, each side as netgen writes it."""
    if request.param == "small":
        return request.getfixturevalue("small_sides")
    return _render_both(ROOT / "inventory" / "meta-24k", tmp_path_factory.mktemp("meta"))


def _sonic_switches(switches: Path) -> list[dict]:
    return [orjson.loads(p.read_bytes()) for p in sorted(switches.glob("*/config_db.json"))]


def _eos_switches(switches: Path) -> list[str]:
    return [p.read_text() for p in sorted(switches.glob("*/*.cfg"))]


def test_nccl_data_rides_the_class_every_switch_pauses(both_sides):
    hosts, switches = both_sides
    env = _env_file(hosts / "connectx-8nic" / "nccl.env")
    dscp = int(env["NCCL_IB_TC"]) >> 2
    assert int(env["NCCL_IB_TC"]) & 3 == 0
    sonic = _sonic_switches(switches)
    assert sonic
    for db in sonic:
        tc = db["DSCP_TO_TC_MAP"]["AZURE"][str(dscp)]
        pg = db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"][tc]
        for row in db["PORT_QOS_MAP"].values():
            if "pfc_enable" in row:
                assert pg in row["pfc_enable"].split(",")
    eos = _eos_switches(switches)
    assert eos
    for config in eos:
        tc = re.search(rf"^qos map dscp (?:\d+ )*{dscp}(?: \d+)* to traffic-class (\d)$", config, re.M).group(1)
        assert f"priority-flow-control priority {tc} no-drop" in config
    # the NIC script pauses that same priority, and maps the DSCP to it
    script = (hosts / "connectx-8nic" / "nic-qos.sh").read_text()
    assert f"--dscp2prio set,{dscp},{tc}" in script
    flags = re.search(r"--pfc ([01,]+)", script).group(1).split(",")
    assert [i for i, f in enumerate(flags) if f == "1"] == [int(tc)]


def test_nccl_clear_to_send_rides_the_strict_queue_on_every_switch(both_sides):
    hosts, switches = both_sides
    env = _env_file(hosts / "connectx-8nic" / "nccl.env")
    dscp = int(env["NCCL_IB_FIFO_TC"]) >> 2
    for db in _sonic_switches(switches):
        tc = db["DSCP_TO_TC_MAP"]["AZURE"][str(dscp)]
        queue = db["TC_TO_QUEUE_MAP"]["AZURE"][tc]
        schedulers = {db["QUEUE"][key]["scheduler"] for key in db["QUEUE"] if key.endswith(f"|{queue}")}
        assert schedulers and all(db["SCHEDULER"][s]["type"] == "STRICT" for s in schedulers)
        for row in db["PORT_QOS_MAP"].values():
            assert tc not in row.get("pfc_enable", "").split(",")
    for config in _eos_switches(switches):
        tc = re.search(rf"^qos map dscp (?:\d+ )*{dscp}(?: \d+)* to traffic-class (\d)$", config, re.M).group(1)
        queue = re.search(rf"^qos map traffic-class {tc} to tx-queue (\d+)$", config, re.M).group(1)
        assert re.search(rf"tx-queue {queue}\n\s+priority strict", config)
    script = (hosts / "connectx-8nic" / "nic-qos.sh").read_text()
    tsa = re.search(r"--tsa ([a-z,]+)", script).group(1).split(",")
    prio = int(re.search(rf"--dscp2prio set,{dscp},(\d)", script).group(1))
    assert tsa[prio] == "strict" and tsa.count("strict") == 1


def test_qps_hca_order_and_dcqcn_follow_the_intent(small_sides, small_data):
    hosts, _ = small_sides
    env = _env_file(hosts / "connectx-8nic" / "nccl.env")
    assert env["NCCL_IB_QPS_PER_CONNECTION"] == str(small_data.get("hashing", {}).get("qps_per_connection", 16))
    assert env["NCCL_IB_SPLIT_DATA_ON_QPS"] == "0"
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in range(8))
    assert "NCCL_IB_GID_INDEX" not in env
    script = (hosts / "connectx-8nic" / "nic-qos.sh").read_text()
    assert "/ecn/roce_rp/enable/3" in script and not re.search(r"echo 1 > .*/ecn/", script)  # ECN off here
    doc = json.loads((hosts / "connectx-8nic" / "host.json").read_text())
    assert doc["qos"]["dcqcn"] is False and doc["qos"]["pfc_priority"] == 3 and doc["hosts"] == 16


def test_every_host_and_rail_is_in_the_inventory_with_its_switch_port(small_sides):
    hosts, switches = small_sides
    doc = json.loads((hosts / "inventory" / "hosts.json").read_text())
    assert len(doc["hosts"]) == 16
    first = doc["hosts"][0]
    assert [r["rdma_device"] for r in first["rails"]] == [f"mlx5_{i}" for i in range(8)]
    db = json.loads((switches / first["rtsw"] / "config_db.json").read_text())
    for rail in first["rails"]:
        assert db["PORT"][rail["rtsw_port"]]["description"] == f"{first['name']}:{rail['nic']}"


def test_the_scripts_parse_and_dcb_takes_their_mappings(small_sides, tmp_path, small_data, write_fabric):
    """`sh -n` parses each script; iproute2's dcb parses the DSCP-to-priority pairs (on `lo`, which has
    no DCB: the kernel refuses after the parse, where a bad pair is refused by the parser)."""
    hosts, _ = small_sides
    small_data["hosts"] = {"nic": "thor2", "dcqcn": True}
    small_data["qos"]["ecn"] = {"enabled": True}
    thor = tmp_path / "thor"
    assert run_cli("hosts", str(write_fabric(small_data)), "-o", str(thor)).exit_code == 0
    scripts = [*hosts.glob("*/*.sh"), *thor.glob("*/*.sh")]
    assert len(scripts) == 3
    for script in scripts:
        subprocess.run(["sh", "-n", str(script)], check=True)
    if shutil.which("dcb") is None:
        pytest.skip("iproute2's dcb is not installed")
    with_dcb = [script for script in scripts if "dcb app add" in script.read_text()]
    assert len(with_dcb) == 2  # ConnectX inbox, Thor2
    for script in with_dcb:
        text = script.read_text().replace("\\\n", "")  # sh joins a backslash-newline
        pairs = re.search(r"dcb app add dev \"\$netdev\" dscp-prio ([0-9: ]+)\n", text).group(1).split()
        assert len(pairs) == 64
        done = subprocess.run(["dcb", "app", "add", "dev", "lo", "dscp-prio", *pairs],
                              capture_output=True, text=True, check=False)
        assert "Operation not supported" in done.stderr, done.stderr
    bad = subprocess.run(["dcb", "app", "add", "dev", "lo", "dscp-prio", "26:9"], capture_output=True, text=True,
                         check=False)
    assert "Operation not supported" not in bad.stderr


def test_thor2_sets_congestion_control_through_configfs_and_applies_it(small_data, write_fabric, tmp_path):
    small_data["hosts"] = {"nic": "thor2"}
    small_data["qos"]["ecn"] = {"enabled": True}
    out = tmp_path / "out"
    result = run_cli("hosts", str(write_fabric(small_data)), "-o", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["classes"]["thor2-8nic"]["rdma_devices"][0] == "bnxt_re0"
    script = (out / "thor2-8nic" / "nic-qos.sh").read_text()
    lines = [line.strip() for line in script.splitlines()]
    assert 'echo -n 0x1 > "$cc/ports/1/cc/ecn_enable"' in lines
    # hex, as bnxt_re's configfs reads them (tests/hosts/test_host_readers.py): 0x1a = DSCP 26, 0x30 = 48
    assert 'echo -n 0x3 > "$cc/ports/1/cc/roce_prio"' in lines and 'echo -n 0x1a > "$cc/ports/1/cc/roce_dscp"' in lines
    assert 'echo -n 0x30 > "$cc/ports/1/cc/cnp_dscp"' in lines
    apply, enable = 'echo -n 0x1 > "$cc/ports/1/cc/apply"', 'echo -n 0x1 > "$cc/ports/1/cc/ecn_enable"'
    assert lines.index(apply) > lines.index(enable)
    assert not (out / "thor2-8nic" / "nic-qos-inbox.sh").exists()


def test_the_bundled_fabrics_hosts_agree_with_their_switches():
    assert not [f for f in findings_of(SMALL) if f.code.startswith("NG70")]
    # meta-24k's RTSWs hash on the QP, and its 16 QPs per connection are fewer than the what-if's 33
    found = [f for f in findings_of(ROOT / "inventory" / "meta-24k") if f.code.startswith("NG70")]
    assert [(f.code, f.subject) for f in found] == [("NG706", "zones 1, 2, 3, 4, 5, 6, 7, 8 RTSW uplinks")]


def test_a_design_error_writes_nothing_and_exits_1(small_data, write_fabric, tmp_path):
    small_data["hosts"] = {"nccl": {"traffic_class": 41}}
    out = tmp_path / "out"
    result = run_cli("hosts", str(write_fabric(small_data)), "-o", str(out), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and any(f["code"] == "NG701" for f in doc["findings"])
    assert not out.exists()


def test_hosts_without_an_output_prints_the_settings_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli("hosts", str(SMALL))
    assert result.exit_code == 0
    assert "NCCL_IB_TC=104" in result.stdout and "nothing written" in result.stdout
    assert list(tmp_path.iterdir()) == []
