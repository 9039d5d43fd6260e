"""netgen.platforms.sonic.schema: rendered config_db.json files pass SONiC's YANG rules, and small
mutations of a real rendered config are caught with a problem naming the right table and key."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from netgen.checks import DesignContext, run_checks
from netgen.intent import load_fabric
from netgen.platforms.render import render_devices
from netgen.platforms.sonic.schema import TABLES, check_config_db
from netgen.topology import expand
from tests.conftest import META, SMALL

pytestmark = pytest.mark.render

Config = dict[str, Any]


@cache
def _config_dbs(path: Path, limit: int | None = None) -> dict[str, str]:
    """device -> its rendered config_db.json text (only SONiC devices; the first `limit` of them)."""
    loaded = load_fabric(path)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    devices = [d for d in ctx.topology.devices.values() if d.nos == "sonic"][:limit]
    rendered, _ = render_devices(ctx, devices)
    return {name: next(f.content for f in files if f.name == "config_db.json") for name, files in rendered.items()}


def _small() -> dict[str, Config]:
    return {name: json.loads(text) for name, text in _config_dbs(SMALL).items()}


@pytest.fixture
def cfg() -> Config:
    """A fresh copy of a real rendered config_db (small example, first rack switch)."""
    return copy.deepcopy(next(iter(_small().values())))


# ------------------------------------------------------------------ (a) rendered output is valid


def test_every_small_config_db_passes():
    configs = _small()
    assert len(configs) >= 4
    assert {name: check_config_db(db) for name, db in configs.items()} == {name: [] for name in configs}


def test_rendered_tables_are_exactly_the_modelled_ones():
    emitted = set().union(*(db.keys() for db in _small().values()))
    # netgen models two buffer tables it does not emit yet (profile lists); everything emitted is modelled
    assert emitted <= set(TABLES)
    assert set(TABLES) - emitted <= {"BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"}


def test_rdma_hash_config_needs_the_rdma_overlay():
    """meta-24k's rack switches are a SONiC build with the RDMA hash fields: valid only with rdma_hash."""
    configs = {name: json.loads(text) for name, text in _config_dbs(META, 2).items()}
    assert configs
    for db in configs.values():
        assert "RDMA_BTH_DEST_QP" in db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_ipv4_rdma"]
        assert check_config_db(db, rdma_hash=True) == []
        problems = check_config_db(db)
        assert problems
        assert all(p.startswith("SWITCH_HASH|GLOBAL: ecmp_hash_ipv") and "rdma_hash=True" in p for p in problems)


def _sixteen_queue_fabric(small_data: dict[str, Any], lossless: int, lossy: int) -> dict[str, Any]:
    small_data["catalog"] = "catalog.yaml"
    for zone, rtsw in zip(small_data["zones"], ("q16-sonic", "q16-eos"), strict=True):
        zone.update(rtsw_model=rtsw, ctsw_model="q16-spine")
    small_data["aggregation"]["atsw_model"] = "q16-spine"
    small_data["qos"]["lossless"]["queue"] = lossless
    small_data["qos"]["classes"][0]["queue"] = lossy
    return small_data


SIXTEEN_QUEUES = {"models": {name: {"extends": base, "description": "16 queues", "queues": 16} for name, base in {
    "q16-sonic": "arista-7060x6-64pe-sonic", "q16-eos": "arista-7060x6-64pe-eos",
    "q16-spine": "arista-7804r3a-36p-eos"}.items()}}


def test_queues_beyond_sonic_maps_are_a_design_error(write_fabric, small_data):
    # A 16-queue catalog model accepts queue 8 or 12, but SONiC's MAP_PFC_PRIORITY_TO_QUEUE takes
    # 0-7 and TC_TO_QUEUE_MAP 0-9: NG504 must stop it before anything is rendered.
    loaded = load_fabric(write_fabric(_sixteen_queue_fabric(small_data, 8, 12), catalog=SIXTEEN_QUEUES))
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    ng504 = [f for f in run_checks(ctx) if f.code == "NG504"]
    assert {f.subject for f in ng504} == {"rtsw model q16-sonic"}  # the EOS models are not SONiC
    assert any("lossless queue 8" in f.message for f in ng504)
    assert any("queue 12" in f.message for f in ng504)


def test_highest_queues_sonic_maps_take_render_valid(write_fabric, small_data):
    loaded = load_fabric(write_fabric(_sixteen_queue_fabric(small_data, 7, 9), catalog=SIXTEEN_QUEUES))
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    assert [f for f in run_checks(ctx) if f.severity.value == "error"] == []
    device = next(d for d in ctx.topology.devices.values() if d.nos == "sonic")
    rendered, _ = render_devices(ctx, [device])
    db = json.loads(next(f.content for f in rendered[device.name] if f.name == "config_db.json"))
    assert check_config_db(db) == []


# ------------------------------------------------------------------ (b) mutations that must fail


def _backend_port(c: Config) -> str:
    """A port with QoS, buffers, PFC watchdog (a key of PORT_QOS_MAP other than 'global')."""
    return str(next(k for k in c["PORT_QOS_MAP"] if k != "global" and f"{k}|0" in c["BUFFER_PG"] and k in c["PFC_WD"]))


def _routed_port(c: Config) -> str:
    return str(next(k for k in c["INTERFACE"] if "|" not in k))


def _member(c: Config) -> tuple[str, str]:
    vlan, port = next(iter(c["VLAN_MEMBER"])).split("|")
    return vlan, port


def _lossless_pg(c: Config) -> str:
    port = _backend_port(c)
    return str(next(k for k in c["BUFFER_PG"] if k.startswith(f"{port}|") and k != f"{port}|0"))


def unknown_table(c: Config) -> str:
    c["BGP_NEIGHBOR"] = {"10.0.0.1": {"asn": "65001"}}
    return "BGP_NEIGHBOR: unknown table"


def unknown_field(c: Config) -> str:
    port = _backend_port(c)
    c["PORT"][port]["speed_gbps"] = "400"
    return f"PORT|{port}: speed_gbps: unknown field"


def wrong_enum_fec(c: Config) -> str:
    port = _backend_port(c)
    c["PORT"][port]["fec"] = "rs544"
    return f"PORT|{port}: fec:"


def mtu_out_of_range(c: Config) -> str:
    port = _backend_port(c)
    c["PORT"][port]["mtu"] = "9300"
    return f"PORT|{port}: mtu: '9300' is not an integer in 68..9216"


def number_not_string(c: Config) -> str:
    port = _backend_port(c)
    c["PORT"][port]["mtu"] = 9100
    return f"PORT|{port}: mtu: Input should be a valid string"


def missing_speed(c: Config) -> str:
    port = _backend_port(c)
    del c["PORT"][port]["speed"]
    return f"PORT|{port}: speed: mandatory field missing"


def lanes_not_numeric(c: Config) -> str:
    port = _backend_port(c)
    c["PORT"][port]["lanes"] = "17;18"
    return f"PORT|{port}: lanes:"


def duplicate_lanes(c: Config) -> str:
    first, second = list(c["PORT"])[:2]
    c["PORT"][second]["lanes"] = c["PORT"][first]["lanes"]
    return f"PORT|{second}: lanes: {c['PORT'][first]['lanes']} already used by PORT|{first}"


def dangling_buffer_pg_profile(c: Config) -> str:
    key = _lossless_pg(c)
    c["BUFFER_PG"][key]["profile"] = "pg_lossless_nowhere_profile"
    return f"BUFFER_PG|{key}: profile 'pg_lossless_nowhere_profile' is not a BUFFER_PROFILE"


def buffer_pg_without_profile(c: Config) -> str:
    key = _lossless_pg(c)
    del c["BUFFER_PG"][key]["profile"]
    return f"BUFFER_PG|{key}: profile '0' is not a BUFFER_PROFILE"  # the YANG default dangles


def buffer_pg_bad_pg(c: Config) -> str:
    port = _backend_port(c)
    c["BUFFER_PG"][f"{port}|8"] = {"profile": "ingress_lossy_profile"}
    return f"BUFFER_PG|{port}|8: key part pg_num"


def buffer_pg_unknown_port(c: Config) -> str:
    c["BUFFER_PG"]["Ethernet9999|0"] = {"profile": "ingress_lossy_profile"}
    return "BUFFER_PG|Ethernet9999|0: port 'Ethernet9999' is not a PORT"


def buffer_queue_null(c: Config) -> str:
    key = next(iter(c["BUFFER_QUEUE"]))
    c["BUFFER_QUEUE"][key]["profile"] = "NULL"  # only BUFFER_PG has the NULL alternative
    return f"BUFFER_QUEUE|{key}: profile 'NULL' is not a BUFFER_PROFILE"


def buffer_queue_bad_qindex(c: Config) -> str:
    port = _backend_port(c)
    c["BUFFER_QUEUE"][f"{port}|16"] = {"profile": "egress_lossy_profile"}
    return f"BUFFER_QUEUE|{port}|16: key part qindex"


def dangling_buffer_pool(c: Config) -> str:
    c["BUFFER_PROFILE"]["ingress_lossy_profile"]["pool"] = "nowhere_pool"
    return "BUFFER_PROFILE|ingress_lossy_profile: pool 'nowhere_pool' is not a BUFFER_POOL"


def dangling_queue_scheduler(c: Config) -> str:
    key = next(iter(c["QUEUE"]))
    c["QUEUE"][key]["scheduler"] = "scheduler.nowhere"
    return f"QUEUE|{key}: scheduler 'scheduler.nowhere' is not a SCHEDULER"


def dangling_wred_profile(c: Config) -> str:
    key = next(iter(c["QUEUE"]))
    c["QUEUE"][key]["wred_profile"] = "NO_SUCH_WRED"
    return f"QUEUE|{key}: wred_profile 'NO_SUCH_WRED' is not a WRED_PROFILE"


def dangling_qos_map(c: Config) -> str:
    port = _backend_port(c)
    c["PORT_QOS_MAP"][port]["tc_to_pg_map"] = "NOWHERE"
    return f"PORT_QOS_MAP|{port}: tc_to_pg_map 'NOWHERE' is not a TC_TO_PRIORITY_GROUP_MAP"


def pfc_enable_semicolon(c: Config) -> str:
    port = _backend_port(c)
    c["PORT_QOS_MAP"][port]["pfc_enable"] = "3;4"
    return f"PORT_QOS_MAP|{port}: pfc_enable:"


def ip_without_bare_sibling(c: Config) -> str:
    port = _routed_port(c)
    del c["INTERFACE"][port]
    return f"INTERFACE|{port}|"  # every IP entry of the port names the missing bare entry


def loopback_ip_without_bare_sibling(c: Config) -> str:
    del c["LOOPBACK_INTERFACE"]["Loopback0"]
    return "LOOPBACK_INTERFACE|Loopback0|"


def vlan_ip_without_bare_sibling(c: Config) -> str:
    vlan, _ = _member(c)
    del c["VLAN_INTERFACE"][vlan]
    return f"VLAN_INTERFACE|{vlan}|"


def vlan_member_also_routed(c: Config) -> str:
    vlan, port = _member(c)
    c["INTERFACE"][port] = {}
    return f"VLAN_MEMBER|{vlan}|{port}: port {port} is also in INTERFACE"


def vlan_member_without_tagging_mode(c: Config) -> str:
    key = next(iter(c["VLAN_MEMBER"]))
    c["VLAN_MEMBER"][key] = {}
    return f"VLAN_MEMBER|{key}: tagging_mode: mandatory field missing"


def vlan_member_unknown_vlan(c: Config) -> str:
    _, port = _member(c)
    c["VLAN_MEMBER"][f"Vlan7|{port}"] = {"tagging_mode": "tagged"}
    return f"VLAN_MEMBER|Vlan7|{port}: name 'Vlan7' is not a VLAN"


def vlan1_name(c: Config) -> str:
    c["VLAN"]["Vlan1"] = {"vlanid": "1"}
    return "VLAN|Vlan1: key part name"


def vlanid_mismatch(c: Config) -> str:
    vlan, _ = _member(c)
    c["VLAN"][vlan]["vlanid"] = "42"
    return f"VLAN|{vlan}: vlanid 42 does not match the name {vlan}"


def pfcwd_detection_below_poll(c: Config) -> str:
    port = _backend_port(c)
    c["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] = "150"  # other ports keep their (>= 150) times
    c["PFC_WD"][port]["detection_time"] = "100"
    return f"PFC_WD|{port}: detection_time 100 is below PFC_WD|GLOBAL.POLL_INTERVAL 150"


def pfcwd_global_without_poll(c: Config) -> str:
    port = _backend_port(c)
    c["PFC_WD"]["GLOBAL"] = {}
    return f"PFC_WD|{port}: detection_time needs PFC_WD|GLOBAL.POLL_INTERVAL"


def pfcwd_action_on_global(c: Config) -> str:
    c["PFC_WD"]["GLOBAL"]["action"] = "drop"
    return "PFC_WD|GLOBAL: action is allowed only on ports"


def pfcwd_poll_on_port(c: Config) -> str:
    port = _backend_port(c)
    c["PFC_WD"][port]["POLL_INTERVAL"] = "200"
    return f"PFC_WD|{port}: POLL_INTERVAL is allowed only on GLOBAL"


def pfcwd_big_red_switch(c: Config) -> str:
    c["PFC_WD"]["GLOBAL"]["BIG_RED_SWITCH"] = "enable"
    return "PFC_WD|GLOBAL: BIG_RED_SWITCH: unknown field"


def wred_max_without_min(c: Config) -> str:
    name = next(iter(c["WRED_PROFILE"]))
    del c["WRED_PROFILE"][name]["green_min_threshold"]
    return f"WRED_PROFILE|{name}: green_max_threshold needs green_min_threshold"


def wred_max_below_min(c: Config) -> str:
    name = next(iter(c["WRED_PROFILE"]))
    c["WRED_PROFILE"][name]["green_min_threshold"] = str(int(c["WRED_PROFILE"][name]["green_max_threshold"]) + 1)
    return f"WRED_PROFILE|{name}: green_max_threshold"


def scheduler_pir_without_cir(c: Config) -> str:
    name = next(iter(c["SCHEDULER"]))
    c["SCHEDULER"][name]["pir"] = "12500000000"
    return f"SCHEDULER|{name}: pir needs cir > 0"


def scheduler_weight_zero(c: Config) -> str:
    c["SCHEDULER"]["scheduler.x"] = {"type": "DWRR", "weight": "0"}
    return "SCHEDULER|scheduler.x: weight: '0' is not an integer in 1..100"


def flex_counter_poll_on_pfcwd(c: Config) -> str:
    c["FLEX_COUNTER_TABLE"]["PFCWD"]["POLL_INTERVAL"] = "1000"
    return "FLEX_COUNTER_TABLE|PFCWD: POLL_INTERVAL: unknown field"


def flex_counter_unknown_group(c: Config) -> str:
    c["FLEX_COUNTER_TABLE"]["PFC_WD"] = {"FLEX_COUNTER_STATUS": "enable"}
    return "FLEX_COUNTER_TABLE|PFC_WD: key part name"


def rdma_hash_field(c: Config) -> str:
    c["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_ipv4_rdma"] = ["DST_IP", "SRC_IP", "RDMA_BTH_DEST_QP"]
    return "SWITCH_HASH|GLOBAL: ecmp_hash_ipv4_rdma: unknown field"


def rdma_hash_value(c: Config) -> str:
    c["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].append("RDMA_BTH_DEST_QP")
    return "SWITCH_HASH|GLOBAL: ecmp_hash[5]:"


def hash_list_as_string(c: Config) -> str:
    c["SWITCH_HASH"]["GLOBAL"]["lag_hash"] = "DST_IP,SRC_IP"
    return "SWITCH_HASH|GLOBAL: lag_hash: is a leaf-list: must be a JSON array"


def hash_inner_ipv4_rejected(c: Config) -> str:
    c["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = ["INNER_DST_IPV4"]
    return "SWITCH_HASH|GLOBAL: ecmp_hash[0]:"


def switch_hash_not_global(c: Config) -> str:
    c["SWITCH_HASH"]["global"] = {}
    return "SWITCH_HASH|global: key part name"


def map_name_with_dot(c: Config) -> str:
    c["TC_TO_QUEUE_MAP"]["roce.map"] = {"3": "3"}
    return "TC_TO_QUEUE_MAP|roce.map: key part name"


def dscp_key_64(c: Config) -> str:
    name = next(iter(c["DSCP_TO_TC_MAP"]))
    c["DSCP_TO_TC_MAP"][name]["64"] = "0"
    return f"DSCP_TO_TC_MAP|{name}: inner key '64'"


def pfc_queue_above_7(c: Config) -> str:
    name = next(iter(c["MAP_PFC_PRIORITY_TO_QUEUE"]))
    c["MAP_PFC_PRIORITY_TO_QUEUE"][name]["3"] = "8"
    return f"MAP_PFC_PRIORITY_TO_QUEUE|{name}: value of '3'"


def cable_length_without_unit(c: Config) -> str:
    port = _backend_port(c)
    c["CABLE_LENGTH"]["AZURE"][port] = "5"
    return f"CABLE_LENGTH|AZURE: value of '{port}'"


def cable_length_unknown_port(c: Config) -> str:
    c["CABLE_LENGTH"]["AZURE"]["Ethernet9999"] = "5m"
    return "CABLE_LENGTH|AZURE: port 'Ethernet9999' is not a PORT"


def profile_list_as_array(c: Config) -> str:
    port = _backend_port(c)
    c["BUFFER_PORT_INGRESS_PROFILE_LIST"] = {port: {"profile_list": ["ingress_lossy_profile"]}}
    return f"BUFFER_PORT_INGRESS_PROFILE_LIST|{port}: profile_list: must be one comma-separated string"


def device_metadata_removed_knob(c: Config) -> str:
    c["DEVICE_METADATA"]["localhost"]["async_swss_rec"] = "enable"
    return "DEVICE_METADATA|localhost: async_swss_rec: unknown field"


def device_metadata_asdot_asn(c: Config) -> str:
    c["DEVICE_METADATA"]["localhost"]["bgp_asn"] = "64100.1"
    return "DEVICE_METADATA|localhost: bgp_asn:"


def interface_bad_prefix(c: Config) -> str:
    port = _routed_port(c)
    c["INTERFACE"][f"{port}|10.0.0.300/31"] = {}
    return f"INTERFACE|{port}|10.0.0.300/31: key part ip-prefix"


def interface_family_mismatch(c: Config) -> str:
    key = next(k for k in c["INTERFACE"] if "|" in k and ":" not in k)
    c["INTERFACE"][key]["family"] = "IPv6"
    return f"INTERFACE|{key}: family IPv6 does not match"


Mutation = Callable[[Config], str]
MUTATIONS: list[Mutation] = [
    unknown_table, unknown_field, wrong_enum_fec, mtu_out_of_range, number_not_string, missing_speed,
    lanes_not_numeric, duplicate_lanes, dangling_buffer_pg_profile, buffer_pg_without_profile, buffer_pg_bad_pg,
    buffer_pg_unknown_port, buffer_queue_null, buffer_queue_bad_qindex, dangling_buffer_pool,
    dangling_queue_scheduler, dangling_wred_profile, dangling_qos_map, pfc_enable_semicolon,
    ip_without_bare_sibling, loopback_ip_without_bare_sibling, vlan_ip_without_bare_sibling,
    vlan_member_also_routed, vlan_member_without_tagging_mode, vlan_member_unknown_vlan, vlan1_name, vlanid_mismatch,
    pfcwd_detection_below_poll, pfcwd_global_without_poll, pfcwd_action_on_global, pfcwd_poll_on_port,
    pfcwd_big_red_switch, wred_max_without_min, wred_max_below_min, scheduler_pir_without_cir, scheduler_weight_zero,
    flex_counter_poll_on_pfcwd, flex_counter_unknown_group, rdma_hash_field, rdma_hash_value, hash_list_as_string,
    hash_inner_ipv4_rejected, switch_hash_not_global, map_name_with_dot, dscp_key_64, pfc_queue_above_7,
    cable_length_without_unit, cable_length_unknown_port, profile_list_as_array, device_metadata_removed_knob,
    device_metadata_asdot_asn, interface_bad_prefix, interface_family_mismatch,
]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
def test_mutation_is_caught_and_named(cfg, mutate):
    expected = mutate(cfg)
    problems = check_config_db(cfg)
    assert any(p.startswith(expected) for p in problems), problems
    # the problems are about the mutated table only: no knock-on noise elsewhere
    table = expected.split("|")[0].split(":")[0]
    assert all(p.startswith(table) for p in problems), problems


# ------------------------------------------------------------------ accepted variations


def test_rdma_hash_accepted_with_the_overlay(cfg):
    rdma_hash_field(cfg)
    rdma_hash_value(cfg)
    cfg["SWITCH_HASH"]["GLOBAL"]["lag_hash_ipv6_rdma"] = ["RDMA_BTH_OPCODE", "RDMA_BTH_DEST_QP"]
    assert check_config_db(cfg, rdma_hash=True) == []
    assert len(check_config_db(cfg)) == 3


def test_rdma_overlay_still_checks_hash_values(cfg):
    cfg["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_ipv4_rdma"] = ["RDMA_BTH_SRC_QP"]
    cfg["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_ipv6_rdma"] = ["DST_IP", "DST_IP"]
    problems = check_config_db(cfg, rdma_hash=True)
    assert [p.split(":")[1].strip() for p in problems] == ["ecmp_hash_ipv4_rdma[0]", "ecmp_hash_ipv6_rdma"], problems


def test_yang_valid_variations_pass(cfg):
    port = _backend_port(cfg)
    pg = _lossless_pg(cfg)
    cfg["BUFFER_PG"][pg]["profile"] = "NULL"
    cfg["BUFFER_PORT_INGRESS_PROFILE_LIST"] = {port: {"profile_list": "ingress_lossy_profile"}}
    cfg["BUFFER_PORT_EGRESS_PROFILE_LIST"] = {port: {"profile_list": "egress_lossless_profile,egress_lossy_profile"}}
    cfg["QUEUE"]["CPU|0"] = {}
    cfg["PORT_QOS_MAP"]["global"]["pfc_enable"] = ""
    cfg["SCHEDULER"]["shaper"] = {"cir": "100", "pir": "200", "cbs": "10", "pbs": "20", "meter_type": "bytes"}
    cfg["PORT"][port].update({"alias": "etp1", "index": "1", "autoneg": "off", "adv_speeds": "all"})
    cfg["FLEX_COUNTER_TABLE"]["QUEUE"]["POLL_INTERVAL"] = "10000"
    cfg["FLEX_COUNTER_TABLE"]["PORT_RATES"] = {"FLEX_COUNTER_STATUS": "enable"}
    key = next(k for k in cfg["INTERFACE"] if "|" in k and ":" in k)
    cfg["INTERFACE"][key] = {"family": "IPv6", "scope": "global"}
    assert check_config_db(cfg) == []


def test_not_an_object():
    assert check_config_db({"PORT": []}) == ["PORT: must be a JSON object of entries"]
    assert check_config_db({"PORT": {"Ethernet0": "up"}}) == ["PORT|Ethernet0: entry must be a JSON object, got 'up'"]
