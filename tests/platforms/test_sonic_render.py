"""Facts about rendered SONiC configs, each derived from the intent (not from a golden file)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.output.manifest import MARKER
from netgen.platforms import base
from netgen.platforms.render import render_devices, render_fabric
from netgen.topology import expand
from tests.conftest import META, SMALL, run_cli

pytestmark = pytest.mark.render

RTSW = "z01-rtsw001"


def _ctx(path: Path) -> DesignContext:
    loaded = load_fabric(path)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def _render(path: Path) -> dict[str, dict[str, str]]:
    ctx = _ctx(path)
    rendered, _ = render_devices(ctx, [d for d in ctx.topology.devices.values() if d.nos == "sonic"])
    # custom-config.json only beside files a custom_config block added to (test_custom_config.py)
    assert all({f.name for f in files} - {"custom-config.json"} == {"config_db.json", "frr.conf"}
               for files in rendered.values())
    return {device: {f.name: f.content for f in files} for device, files in rendered.items()}


@pytest.fixture(scope="module")
def small() -> dict[str, dict[str, str]]:
    return _render(SMALL)


@pytest.fixture(scope="module")
def db(small) -> dict[str, Any]:
    return json.loads(small[RTSW]["config_db.json"])


def test_sonic_files_are_rendered_for_the_sonic_devices_only(small):
    assert sorted(small) == [f"z01-rtsw00{i}" for i in range(1, 5)]
    assert set(base.renderers()) == {"sonic", "eos"}


def test_cts_queue_is_strict_and_lossless_queue_is_weighted(db):
    # small example: CTS -> queue 6 strict; RoCE -> queue 3 DWRR 50; best effort -> queue 0 DWRR 50
    schedulers = db["SCHEDULER"]
    for port in ("Ethernet0", "Ethernet448"):
        assert schedulers[db["QUEUE"][f"{port}|6"]["scheduler"]]["type"] == "STRICT"
        lossless = schedulers[db["QUEUE"][f"{port}|3"]["scheduler"]]
        assert lossless == {"type": "DWRR", "weight": "50"}
        assert schedulers[db["QUEUE"][f"{port}|0"]["scheduler"]] == {"type": "DWRR", "weight": "50"}


def test_pfc_only_on_the_lossless_priority_of_backend_ports(db):
    used = {name for name, port in db["PORT"].items() if port["admin_status"] == "up"}
    assert len(used) == 32  # 16 NIC ports + 16 uplinks
    per_port = {k: v for k, v in db["PORT_QOS_MAP"].items() if k != "global"}
    assert set(per_port) == used  # spare ports get no PFC at all
    assert {v["pfc_enable"] for v in per_port.values()} == {"3"}
    assert {v["pfcwd_sw_enable"] for v in per_port.values()} == {"3"}  # watchdog runs on the RTSW tier
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"]["3"] == "3"
    assert {pg for tc, pg in db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"].items() if tc != "3"} == {"0"}
    assert db["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"] == {"3": "3"}


def test_dscp_map_covers_all_64_values(db):
    dscp = db["DSCP_TO_TC_MAP"]["AZURE"]
    assert sorted(int(d) for d in dscp) == list(range(64))
    assert dscp["26"] == "3" and dscp["46"] == "6" and dscp["48"] == "6"
    assert {tc for d, tc in dscp.items() if d not in {"26", "46", "48"}} == {"0"}


def test_every_buffer_reference_resolves(db):
    profiles, pools = db["BUFFER_PROFILE"], db["BUFFER_POOL"]
    for table in ("BUFFER_PG", "BUFFER_QUEUE"):
        for key, entry in db[table].items():
            assert entry["profile"] in profiles, (table, key)
            assert key.split("|")[0] in db["PORT"]
    assert all(p["pool"] in pools for p in profiles.values())


# The switch vendor's own SONiC SKU for this hardware (sonic-buildimage @086b03bd, device/arista/
# x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-O128S2/): buffers_defaults_t1.j2, pg_profile_lookup.ini
# and port_config.ini. The expectations below are copied from those files by hand.
SKU_POOLS = {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": "166115492", "xoff": "29423360"},
    "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": "166115492"},
}
SKU_PROFILES = {
    "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "167546528"},
    "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778", "dynamic_th": "0"},
    "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "167546528"},
}
SKU_LOSSLESS_400G = {"pool": "ingress_lossless_pool", "size": "18796", "xon": "0", "xoff": "612140",
                     "xon_offset": "3556", "dynamic_th": "0"}  # the 5m, 40m and 150m rows alike


def test_pools_and_profiles_are_the_vendors(db):
    assert db["BUFFER_POOL"] == SKU_POOLS
    assert {k: v for k, v in db["BUFFER_PROFILE"].items() if k in SKU_PROFILES} == SKU_PROFILES


def test_egress_lossless_never_drops(db):
    # A static threshold above the whole egress pool: the queue is never the one that drops; PFC at
    # ingress stops the sender instead. Lossy queues keep a dynamic threshold.
    lossless = db["BUFFER_PROFILE"]["egress_lossless_profile"]
    assert "dynamic_th" not in lossless
    assert int(lossless["static_th"]) >= int(db["BUFFER_POOL"][lossless["pool"]]["size"])
    assert "dynamic_th" in db["BUFFER_PROFILE"]["egress_lossy_profile"]


def test_lossless_profiles_are_the_skus_rows(db):
    # Host port: 3 m DAC -> the 5m row; uplink: 100 m fibre -> the 150m row. The formula asks for
    # less (388620 and 535940 B, tests/topology/test_buffers.py): the vendor's figure wins.
    host = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]
    uplink = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet448|3"]["profile"]]
    assert host == uplink == SKU_LOSSLESS_400G
    assert db["BUFFER_PG"]["Ethernet0|3"]["profile"] == "pg_lossless_400000_3m_profile"
    assert db["BUFFER_PG"]["Ethernet0|0"]["profile"] == "ingress_lossy_profile"
    # buffermgrd must leave these alone: every CABLE_LENGTH is 0m on purpose
    assert set(db["CABLE_LENGTH"]["AZURE"].values()) == {"0m"}
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"


def test_every_port_carrying_the_lossless_class_is_bound(db):
    used = {name for name, port in db["PORT"].items() if port["admin_status"] == "up"}
    assert {k.split("|")[0] for k, v in db["BUFFER_PG"].items() if v["profile"].startswith("pg_lossless")} == used
    lossless_queues = {k for k, v in db["BUFFER_QUEUE"].items() if v["profile"] == "egress_lossless_profile"}
    assert lossless_queues == {f"{p}|3" for p in used}
    for port in used:  # every other queue of the port is lossy
        lossy = [k.split("|")[1] for k, v in db["BUFFER_QUEUE"].items()
                 if k.startswith(f"{port}|") and v["profile"] == "egress_lossy_profile"]
        assert lossy == ["0-2", "4-7"]


def test_a_cable_beyond_the_skus_table_gets_more_headroom(small_data, write_fabric):
    small_data["zones"][0]["cable_length_m"]["rtsw_ctsw_m"] = 300  # the SKU's table stops at 150m
    db = json.loads(_render(write_fabric(small_data))[RTSW]["config_db.json"])
    uplink = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet448|3"]["profile"]]
    assert uplink == {**SKU_LOSSLESS_400G, "xoff": "839724"}  # the formula (test_buffers.py, by hand)


def test_ports_are_the_skus_port_config(db):
    # port_config.ini: name, lanes, alias, index, speed, fec
    expected = {
        "Ethernet0": ("17,18,19,20", "etp1a", "1", "400000", "rs"),
        "Ethernet4": ("21,22,23,24", "etp1b", "1", "400000", "rs"),
        "Ethernet8": ("1,2,3,4", "etp2a", "2", "400000", "rs"),
        "Ethernet100": ("125,126,127,128", "etp13b", "13", "400000", "rs"),
        "Ethernet508": ("501,502,503,504", "etp64b", "64", "400000", "rs"),
        "Ethernet512": ("513", "etp65", "65", "10000", "none"),
        "Ethernet513": ("515", "etp66", "66", "10000", "none"),
    }
    for name, (lanes, alias, index, speed, fec) in expected.items():
        port = db["PORT"][name]
        assert (port["lanes"], port["alias"], port["index"], port["speed"], port["fec"]) == (
            lanes, alias, index, speed, fec), name
    assert len(db["PORT"]) == 130  # 64 cages x 2 + the two SFP ports
    for spare in ("Ethernet100", "Ethernet512", "Ethernet513"):
        assert db["PORT"][spare]["admin_status"] == "down"
    assert len({p["alias"] for p in db["PORT"].values()}) == 130


def test_routed_ports_vlan_members_and_loopback(db):
    interface = db["INTERFACE"]
    assert interface["Ethernet448"] == {} and "Ethernet448|10.1.16.1/31" in interface
    routed = {key.split("|")[0] for key in interface}
    members = {key.split("|")[1] for key in db["VLAN_MEMBER"]}
    assert len(members) == 16 and not routed & members  # SONiC rejects a VLAN member with an INTERFACE entry
    assert "Vlan1000|10.128.16.1/27" in db["VLAN_INTERFACE"]
    assert "Loopback0|10.0.1.1/32" in db["LOOPBACK_INTERFACE"]
    meta = db["DEVICE_METADATA"]["localhost"]
    assert meta["bgp_asn"] == "4201010001" and meta["type"] == "BackEndToRRouter"
    assert meta["docker_routing_config_mode"] == "split-unified"
    assert not [table for table in db if table.startswith("BGP_")]  # bgpcfgd would push them into FRR


def test_frr_matches_the_topology(small):
    frr = small[RTSW]["frr.conf"]
    assert "router bgp 4201010001" in frr and "bgp router-id 10.0.1.1" in frr
    assert frr.count("maximum-paths 16") == 2  # = the RTSW's 16 uplinks, for IPv4 and IPv6
    assert frr.count("remote-as 4200000001") == 32  # 16 IPv4 + 16 IPv6 sessions to zone 1's spines
    assert "network 10.128.16.0/27" in frr and "network 10.0.1.1/32" in frr
    # FRR's running-config form (both lines): with the profile alone frr-reload.py resets every session
    assert " neighbor UPLINK bfd\n neighbor UPLINK bfd profile netgen\n" in frr


def test_ecn_toggle_flips_exactly_the_wred_binding(small_data, write_fabric):
    on = copy.deepcopy(small_data)
    on["qos"]["ecn"]["enabled"] = True
    off_db = json.loads(_render(write_fabric(small_data))[RTSW]["config_db.json"])
    on_db = json.loads(_render(write_fabric(on))[RTSW]["config_db.json"])
    assert {t for t in on_db if on_db[t] != off_db[t]} == {"QUEUE"}
    changed = {k for k in on_db["QUEUE"] if on_db["QUEUE"][k] != off_db["QUEUE"][k]}
    assert changed == {k for k in on_db["QUEUE"] if k.endswith("|3")}
    assert all(on_db["QUEUE"][k] == {**off_db["QUEUE"][k], "wred_profile": "AZURE_LOSSLESS"} for k in changed)


def test_rdma_hash_fields_only_where_the_release_has_them():
    plain = json.loads(_render(SMALL)[RTSW]["config_db.json"])["SWITCH_HASH"]["GLOBAL"]
    assert "ecmp_hash_ipv4_rdma" not in plain and "RDMA_BTH_DEST_QP" not in plain["ecmp_hash"]
    ctx = _ctx(META)  # meta-24k's RTSW model declares a SONiC build with the RDMA hash fields
    rendered, _ = render_devices(ctx, [ctx.topology.devices["z01-rtsw001"]])
    rdma = json.loads(rendered["z01-rtsw001"][0].content)["SWITCH_HASH"]["GLOBAL"]
    assert rdma["ecmp_hash_ipv4_rdma"][-1] == "RDMA_BTH_DEST_QP"


def test_rendering_is_byte_identical(small):
    assert _render(SMALL) == small


def test_failed_render_leaves_the_previous_output_untouched(tmp_path, monkeypatch):
    ctx = _ctx(SMALL)
    out = tmp_path / "out"
    render_fabric(ctx, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    plugin = base.renderer("sonic")
    calls = {"n": 0}

    def flaky(ctx_, device):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("boom")
        return type(plugin).prepare(plugin, ctx_, device)

    monkeypatch.setattr(plugin, "prepare", flaky)  # prepare runs for every device, cached or not
    with pytest.raises(RuntimeError):
        render_fabric(ctx, out)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging directory left behind
    assert (out / MARKER).is_file()


def test_render_refuses_design_errors_and_writes_nothing(small_data, write_fabric, tmp_path):
    small_data["zones"][0]["ctsw_count"] = 2  # blocking zone: NG101
    out = tmp_path / "never"
    result = run_cli("render", str(write_fabric(small_data)), "-o", str(out), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["written"] is False
    assert not out.exists()


def test_render_cli_json_and_device_selection(tmp_path):
    out = tmp_path / "cfg"
    result = run_cli("render", str(SMALL), "-o", str(out), "--device", RTSW, "--json")
    payload = json.loads(result.stdout)
    # config_db.json, frr.conf and custom-config.json (the example's custom_config adds to this switch)
    assert result.exit_code == 0 and payload["devices"] == 1 and payload["files"] == 3
    assert sorted(p.name for p in out.iterdir()) == [MARKER, RTSW]
    bad = run_cli("render", str(SMALL), "-o", str(out), "--device", "z01-rtsw01")
    assert bad.exit_code == 2 and "did you mean" in bad.output


def test_render_refuses_a_foreign_directory(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = run_cli("render", str(SMALL), "-o", str(tmp_path))
    assert result.exit_code == 2
    assert (tmp_path / "notes.txt").read_text() == "mine"


VTYSH = shutil.which("vtysh")


@pytest.mark.skipif(VTYSH is None, reason="FRR is not installed (apt-get install frr); .ci/run installs it")
@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_every_frr_conf_loads_in_real_frr(fabric, tmp_path):
    ctx = _ctx(fabric)
    out = tmp_path / "cfg"
    result = render_fabric(ctx, out)
    files = sorted(out.glob("*/frr.conf"))
    assert len(files) == sum(1 for n in result.devices if ctx.topology.devices[n].nos == "sonic") > 0

    def dryrun(path: Path) -> tuple[Path, int, str]:
        proc = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, check=False)
        return path, proc.returncode, proc.stdout + proc.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [(p.parent.name, out_) for p, rc, out_ in pool.map(dryrun, files) if rc != 0]
    assert failures == []


@pytest.mark.skipif(VTYSH is None, reason="FRR is not installed (apt-get install frr); .ci/run installs it")
def test_frr_dryrun_catches_a_broken_line(tmp_path):
    # The gate above is only worth something if FRR rejects what it does not know.
    bad = tmp_path / "frr.conf"
    bad.write_text("router bgp 65000\n neighbor 10.0.0.1 remote-as banana\nexit\n")
    proc = subprocess.run([VTYSH, "--dryrun", "-f", str(bad)], capture_output=True, text=True, check=False)
    assert proc.returncode != 0


def test_check_only_renders_and_validates_without_writing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli("render", str(SMALL), "--check", "--json")
    payload = json.loads(result.stdout)
    assert result.exit_code == 0 and payload["checked_only"] is True and payload["devices"] == 18
    assert list(tmp_path.iterdir()) == []


def test_output_the_nos_would_reject_is_never_written(tmp_path, monkeypatch):
    plugin = base.renderer("sonic")
    monkeypatch.setattr(plugin, "check_device", lambda ctx, device, files: ["PORT|Ethernet0: mtu '99999' > 9216"])
    out = tmp_path / "cfg"
    result = run_cli("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 3
    assert "would be rejected by sonic" in result.stderr and "PORT|Ethernet0" in result.stderr
    assert not out.exists()


def test_static_per_port_buffers_use_static_thresholds(small_data, write_fabric):
    small_data["buffers"]["rtsw"] = {"mode": "static_per_port"}
    ctx = _ctx(write_fabric(small_data))
    db = json.loads(render_devices(ctx, [ctx.topology.devices[RTSW]])[0][RTSW][0].content)
    # the partition: the shared pool (166115492 - 29423360 shared headroom pool - 32 x 18796 reserved)
    # split over the 32 used ports
    partition = str(136090660 // 32)
    assert db["BUFFER_POOL"] == SKU_POOLS  # the vendor's pools in every mode
    lossless = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]
    assert lossless["static_th"] == partition and "dynamic_th" not in lossless
    assert db["BUFFER_PROFILE"]["egress_lossy_profile"]["static_th"] == partition
    # lossless egress still never drops; lossy ingress keeps the vendor's (drops happen at egress)
    assert db["BUFFER_PROFILE"]["egress_lossless_profile"] == SKU_PROFILES["egress_lossless_profile"]
    assert db["BUFFER_PROFILE"]["ingress_lossy_profile"] == SKU_PROFILES["ingress_lossy_profile"]


@pytest.mark.skipif(VTYSH is None, reason="FRR is not installed (apt-get install frr); .ci/run installs it")
def test_sonic_on_every_tier_renders_valid_configs(small_data, write_fabric, tmp_path):
    # A 7060DX5-64S (64 x 400G, SONiC) as CTSW and ATSW: 16 downlinks + 2 uplinks per spine.
    for zone in small_data["zones"]:
        zone["ctsw_model"] = "arista-7060dx5-64s-sonic"
    small_data["aggregation"]["atsw_model"] = "arista-7060dx5-64s-sonic"
    small_data["qos"]["pfc_watchdog"]["tiers"] = ["rtsw", "ctsw", "atsw"]
    ctx = _ctx(write_fabric(small_data))
    result = render_fabric(ctx, tmp_path / "cfg")  # every config_db is checked against the YANG models
    assert len(result.devices) == 8 + 8 + 2  # zone 2's RTSWs render through the EOS plugin
    spine = json.loads((tmp_path / "cfg" / "z01-ctsw01" / "config_db.json").read_text())
    assert spine["DEVICE_METADATA"]["localhost"]["type"] == "BackEndLeafRouter"
    assert "VLAN" not in spine  # no host ports on a spine
    # Arista-7060DX5-64S ships no buffer tables (the SDK's lossless MMU mode sets them): neither does
    # netgen, while PFC stays on; its port_config.ini aliases are Ethernet<N>/1.
    assert not {t for t in spine if t.startswith("BUFFER_") or t == "CABLE_LENGTH"}
    assert {v["pfc_enable"] for k, v in spine["PORT_QOS_MAP"].items() if k != "global"} == {"3"}
    assert spine["PORT"]["Ethernet0"]["alias"] == "Ethernet1/1" and spine["PORT"]["Ethernet512"]["lanes"] == "515"
    frr = (tmp_path / "cfg" / "z01-ctsw01" / "frr.conf").read_text()
    assert "maximum-paths 4" in frr  # 4 parallel links to each RTSW; 2 uplinks
    assert frr.count("peer-group DOWNLINK\n") == 16 and frr.count("peer-group UPLINK\n") == 2
    for path in (tmp_path / "cfg").glob("*/frr.conf"):
        proc = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, (path, proc.stdout + proc.stderr)


def test_maximum_paths_is_the_widest_equal_cost_group_per_tier(small_data, write_fabric, tmp_path):
    # All SONiC, so every tier renders: the RTSW has 16 uplinks into zone 1's CTSW layer; a CTSW
    # has 4 parallel links to each RTSW and 2 uplinks; an ATSW reaches a zone's racks through all
    # 4 of that zone's CTSWs.
    for zone in small_data["zones"]:
        zone["ctsw_model"] = "arista-7060dx5-64s-sonic"
    small_data["aggregation"]["atsw_model"] = "arista-7060dx5-64s-sonic"
    ctx = _ctx(write_fabric(small_data))
    rendered, _ = render_devices(ctx, [ctx.topology.devices[n] for n in ("z01-rtsw001", "z01-ctsw01", "atsw01")])
    paths = {name: next(f.content for f in files if f.name == "frr.conf").count(f"maximum-paths {n}\n")
             for name, files in rendered.items() for n in [{"z01-rtsw001": 16, "z01-ctsw01": 4, "atsw01": 4}[name]]}
    assert paths == {"z01-rtsw001": 2, "z01-ctsw01": 2, "atsw01": 2}  # once per address family
    assert ctx.topology.devices["atsw01"].ecmp_width == 4
