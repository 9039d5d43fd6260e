"""netgen.nos.sonic.schema: rendered config_db.json files pass SONiC's YANG rules, and small
mutations of a real rendered config are caught with a problem naming the right table and key."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.checks import DesignContext, run_checks
from netgen.intent import load_fabric
from netgen.nos.sonic.schema import TABLES, check_config_db
from netgen.platforms.render import render_devices
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
    # netgen models tables it does not emit yet (buffer profile lists, the management plane);
    # everything emitted is modelled
    assert emitted <= set(TABLES)
    assert set(TABLES) - emitted <= {"BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST",
                                     *MANAGEMENT_PLANE}


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


# ------------------------------------------------------------------ (c) the management plane
# Every example below was checked with SONiC's own sonic_yang (libyang 3) against SONiC master's
# YANG models (sonic-buildimage 086b03bd): put in place of the management tables of the `cfg`
# fixture's rendered config, the base MANAGEMENT_PLANE and each ACCEPTED variation load and
# validate; each REJECTED variation (and NO_MGMT_VRF) fails there for the reason named.
# NETGEN_STRICTER variations pass sonic_yang: netgen rejects them on purpose (the reason is on each).


def _secret(name_length: int) -> str:
    """netgen's deploy-time placeholder for a secret, with a NAME of the given length."""
    return f"__NETGEN_SECRET_{'N' * name_length}__"


MANAGEMENT_PLANE: Config = {
    "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
    "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0", "description": "out-of-band", "speed": "1000",
                           "autoneg": "on", "mtu": "1500"}},
    "MGMT_INTERFACE": {
        "eth0|10.250.0.11/24": {"gwaddr": "10.250.0.1", "forced_mgmt_routes": ["10.250.64.0/18", "10.250.128.5"]},
        "eth0|fd00:250::11/64": {"gwaddr": "fd00:250::1", "forced_mgmt_routes": ["fd00:251::/48"]},
    },
    "NTP": {"global": {"src_intf": "eth0", "vrf": "mgmt", "authentication": "enabled", "dhcp": "disabled",
                       "server_role": "disabled", "admin_state": "enabled"}},
    "NTP_SERVER": {
        "10.250.0.123": {"association_type": "server", "iburst": "on", "key": "1", "admin_state": "enabled",
                         "trusted": "yes", "version": "4"},
        "pool.ntp.example.com": {"association_type": "pool", "iburst": "off", "version": "3",
                                 "resolve_as": "10.250.0.124"},
    },
    "NTP_KEY": {"1": {"type": "sha256", "trusted": "yes", "value": "__NETGEN_SECRET_NTP_KEY_1__"}},
    "SYSLOG_SERVER": {
        "10.250.0.50": {"source": "10.250.0.11", "port": "514", "vrf": "mgmt", "protocol": "udp", "severity": "notice",
                        "filter": "exclude", "filter_regex": "^debug"},
        "fd00:250::50": {"source": "fd00:250::11", "port": "6514", "protocol": "tcp", "vrf": "default"},
    },
    "DNS_NAMESERVER": {"10.250.0.53": {}, "fd00:250::53": {}},
    "DNS_OPTIONS": {"GLOBAL": {"search": ["mgmt.example.com", "example.com"], "ndots": "1", "timeout": "2",
                               "attempts": "3"}},
    "LLDP": {"GLOBAL": {"enabled": "true", "hello_time": "10", "multiplier": "3", "system_name": "z01-rtsw001",
                        "system_description": "AI backend fabric", "supp_mgmt_address_tlv": "false",
                        "supp_system_capabilities_tlv": "false"}},
    "LLDP_PORT": {"Ethernet0": {"enabled": "true", "mode": "RECEIVE"}},
    "SFLOW": {"global": {"admin_state": "up", "polling_interval": "20", "agent_id": "Loopback0",
                         "sample_direction": "rx"}},
    "SFLOW_COLLECTOR": {"collector1": {"collector_ip": "10.250.0.60", "collector_port": "6343",
                                       "collector_vrf": "mgmt"}},
    "SFLOW_SESSION": {"all": {"admin_state": "up", "sample_direction": "rx"},
                      "Ethernet0": {"admin_state": "up", "sample_rate": "32768", "sample_direction": "both"}},
    "BANNER_MESSAGE": {"global": {"state": "enabled", "login": "Authorized access only.\n",
                                  "motd": "z01-rtsw001: managed by netgen", "logout": ""}},
    "GNMI": {
        "gnmi": {"client_auth": "true", "log_level": "2", "port": "50052", "save_on_set": "false", "enable_crl": "true",
                 "crl_expire_duration": "86400", "user_auth": "cert", "vrf": "mgmt"},
        "certs": {"ca_crt": "/etc/sonic/telemetry/dsmsroot.cer",
                  "server_crt": "/etc/sonic/telemetry/streamingtelemetryserver.cer",
                  "server_key": "/etc/sonic/telemetry/streamingtelemetryserver.key"},
    },
    "GNMI_CLIENT_CERT": {"collector.example.com": {"role": ["gnmi_readonly"]}},
    "SNMP": {"LOCATION": {"Location": "zone 1, rack 001"}, "CONTACT": {"Contact": "noc@example.com"}},
    "SNMP_COMMUNITY": {"__NETGEN_SECRET_SNMP_RO__": {"TYPE": "RO"}},
    "SNMP_USER": {"netgen-ro": {"SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO",
                                "SNMP_USER_AUTH_TYPE": "HMAC-SHA-2",
                                "SNMP_USER_AUTH_PASSWORD": "__NETGEN_SECRET_AUTH__",
                                "SNMP_USER_ENCRYPTION_TYPE": "AES",
                                "SNMP_USER_ENCRYPTION_PASSWORD": "__NETGEN_SECRET_PRIV__"}},
    "SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.11|161|mgmt": {}},
    "AAA": {"authentication": {"login": "tacacs+,local", "failthrough": "True", "fallback": "True", "debug": "False",
                               "trace": "False"},
            "authorization": {"login": "tacacs+,local"}, "accounting": {"login": "tacacs+,local"}},
    "TACPLUS": {"global": {"auth_type": "pap", "timeout": "5", "passkey": "__NETGEN_SECRET_TACACS__",
                           "src_intf": "Loopback0"}},
    "TACPLUS_SERVER": {"10.250.0.49": {"priority": "10", "tcp_port": "49", "timeout": "5", "auth_type": "pap",
                                       "vrf": "mgmt"},
                       "tacacs2.example.com": {"priority": "5"}},
    "RADIUS": {"global": {"passkey": "__NETGEN_SECRET_RADIUS__", "auth_type": "pap", "src_ip": "10.250.0.11",
                          "nas_ip": "10.250.0.11", "statistics": "true", "timeout": "5", "retransmit": "3"}},
    "RADIUS_SERVER": {"10.250.0.18": {"auth_port": "1812", "auth_type": "chap", "priority": "1", "timeout": "5",
                                      "retransmit": "3", "vrf": "mgmt", "src_intf": "Loopback0"}},
}

Patch = dict[str, dict[str, Any] | None]


def apply_patch(c: Config, patch: Patch) -> Config:
    """A table None is dropped, a key None is dropped, an existing entry takes the given fields (a field
    None is dropped), a new entry is added as given."""
    for table, entries in copy.deepcopy(patch).items():
        if entries is None:
            c.pop(table, None)
            continue
        rows = c.setdefault(table, {})
        for key, entry in entries.items():
            if entry is None:
                rows.pop(key, None)
            elif isinstance(entry, dict) and isinstance(rows.get(key), dict):
                rows[key].update(entry)
                rows[key] = {f: v for f, v in rows[key].items() if v is not None}
            else:
                rows[key] = entry
        if not rows:
            del c[table]
    return c


NO_MGMT_VRF: Patch = {"MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "false"}}}

ACCEPTED: list[tuple[str, Patch]] = [
    ("mgmt-port-minimal", {"MGMT_PORT": {"eth0": {"admin_status": None, "alias": None, "description": None,
                                                  "speed": None, "autoneg": None, "mtu": None}}}),
    ("mgmt-port-mtu-speed-bounds", {"MGMT_PORT": {"eth0": {"mtu": "9216", "speed": "10"}}}),
    ("mgmt-interface-only-v6", {"MGMT_INTERFACE": {"eth0|10.250.0.11/24": None}}),
    ("ntp-src-intf-eth0-without-mgmt-port", {"MGMT_PORT": None, "MGMT_INTERFACE": None}),
    ("ntp-src-intf-loopback", {"NTP": {"global": {"src_intf": "Loopback0"}}}),
    ("ntp-src-intf-port", {"NTP": {"global": {"src_intf": "Ethernet0"}}}),
    ("ntp-global-defaults", {"NTP": {"global": {"src_intf": None, "vrf": None, "authentication": None, "dhcp": None,
                                                "server_role": None, "admin_state": None}}}),
    ("ntp-server-ipv6-no-fields", {"NTP_SERVER": {"fd00:250::123": {}}}),
    ("ntp-server-ten", {"NTP_SERVER": {f"10.250.1.{i}": {} for i in range(1, 9)}}),
    ("ntp-key-ref-leading-zero", {"NTP_SERVER": {"10.250.0.123": {"key": "01"}}}),  # libyang compares numbers
    ("ntp-key-65535-md5", {"NTP_KEY": {"65535": {"type": "md5", "value": "x"}}}),
    ("ntp-key-longest-placeholder", {"NTP_KEY": {"1": {"value": _secret(46)}}}),
    ("syslog-hostname-with-dot-and-ipv4-source", {"SYSLOG_SERVER": {"log.example.com": {"source": "10.250.0.11"}}}),
    ("syslog-hostname-no-fields", {"SYSLOG_SERVER": {"loghost": {}}}),
    ("syslog-port-0", {"SYSLOG_SERVER": {"10.250.0.50": {"port": "0"}}}),
    ("dns-options-bounds", {"DNS_OPTIONS": {"GLOBAL": {"ndots": "15", "timeout": "30", "attempts": "5",
                                                       "search": ["corp", "a_b.example.com."]}}}),
    ("dns-options-no-fields", {"DNS_OPTIONS": {"GLOBAL": {"search": None, "ndots": None, "timeout": None,
                                                          "attempts": None}}}),
    ("dns-three-nameservers", {"DNS_NAMESERVER": {"10.250.0.54": {}}}),
    ("lldp-bounds", {"LLDP": {"GLOBAL": {"hello_time": "254", "multiplier": "10", "mode": "TRANSMIT",
                                         "supp_mgmt_address_tlv": "true"}},
                     "LLDP_PORT": {"Ethernet0": {"enabled": "false", "mode": None}}}),
    ("sflow-polling-0-agent-port", {"SFLOW": {"global": {"polling_interval": "0", "agent_id": "Ethernet0"}}}),
    ("sflow-polling-5-300", {"SFLOW": {"global": {"polling_interval": "5"}},
                             "SFLOW_SESSION": {"Ethernet0": {"sample_rate": "256"}}}),
    ("sflow-agent-mgmt-port", {"SFLOW": {"global": {"agent_id": "eth0"}}}),
    ("sflow-agent-vlan-pattern", {"SFLOW": {"global": {"agent_id": "Vlan4094"}}}),  # no VLAN leafref in YANG
    ("sflow-two-collectors", {"SFLOW_COLLECTOR": {"c" * 64: {"collector_ip": "fd00:250::60"}}}),
    ("sflow-session-rate-max", {"SFLOW_SESSION": {"Ethernet0": {"sample_rate": "8388608"}}}),
    ("banner-multiline", {"BANNER_MESSAGE": {"global": {"state": "disabled", "motd": "line 1\nline 2\n"}}}),
    ("gnmi-bounds", {"GNMI": {"gnmi": {"log_level": "100", "port": "0", "crl_expire_duration": "4294967295",
                                       "user_auth": "none", "vrf": "default"}}}),
    ("gnmi-client-cert-roles", {"GNMI_CLIENT_CERT": {"client2": {
        "role": ["gnmi_readwrite", "gnmi_config_db_readwrite"]}}}),
    ("snmp-text-255", {"SNMP": {"LOCATION": {"Location": "x" * 255}}}),
    ("snmp-community-rw-and-bare", {"SNMP_COMMUNITY": {"rw-community": {"TYPE": "RW"}, "abcd": {}}}),
    ("snmp-community-longest-placeholder", {"SNMP_COMMUNITY": {_secret(14): {"TYPE": "RO"}}}),
    ("snmp-user-noauth", {"SNMP_USER": {"user1": {"SNMP_USER_TYPE": "noAuthNoPriv", "SNMP_USER_PERMISSION": "RO",
                                                  "SNMP_USER_ENCRYPTION_PASSWORD": ""}}}),
    ("snmp-user-noauth-explicit-empty", {"SNMP_USER": {"user1": {
        "SNMP_USER_TYPE": "noAuthNoPriv", "SNMP_USER_PERMISSION": "RW", "SNMP_USER_AUTH_TYPE": "",
        "SNMP_USER_AUTH_PASSWORD": "", "SNMP_USER_ENCRYPTION_TYPE": "", "SNMP_USER_ENCRYPTION_PASSWORD": ""}}}),
    ("snmp-user-authnopriv", {"SNMP_USER": {"user1": {
        "SNMP_USER_TYPE": "AuthNoPriv", "SNMP_USER_PERMISSION": "RO", "SNMP_USER_AUTH_TYPE": "SHA",
        "SNMP_USER_AUTH_PASSWORD": "8chars!!", "SNMP_USER_ENCRYPTION_PASSWORD": ""}}}),
    ("snmp-user-longest-placeholders", {"SNMP_USER": {"netgen-ro": {
        "SNMP_USER_AUTH_TYPE": "MD5", "SNMP_USER_AUTH_PASSWORD": _secret(46), "SNMP_USER_ENCRYPTION_TYPE": "DES",
        "SNMP_USER_ENCRYPTION_PASSWORD": _secret(46)}}}),
    ("snmp-agent-address-empty-port-and-vrf", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.11||": {},
                                                                            "fd00:250::11|1161|Vrf_mgmt-1": {}}}),
    ("aaa-defaults", {"AAA": {"authentication": {"login": None, "failthrough": None, "fallback": None, "debug": None,
                                                 "trace": None}}}),
    ("aaa-all-methods", {"AAA": {"authentication": {"login": "radius,ldap,tacacs+,default,local",
                                                    "failthrough": "false", "fallback": "true"}}}),
    ("aaa-tacacs-authorization-without-passkey", {"TACPLUS": {"global": {"passkey": None}},
                                                  "AAA": {"authentication": {"login": "local"}}}),
    ("tacacs-src-intf-vlan-pattern", {"TACPLUS": {"global": {"src_intf": "Vlan10"}}}),
    ("tacacs-src-intf-mgmt-port", {"TACPLUS": {"global": {"src_intf": "eth0", "auth_type": "login",
                                                          "timeout": "60", "key_encrypt": "false"}}}),
    ("tacacs-longest-placeholder", {"TACPLUS": {"global": {"passkey": _secret(64)}},
                                    "TACPLUS_SERVER": {"10.250.0.49": {"passkey": _secret(64), "priority": "64",
                                                                       "auth_type": "mschap", "key_encrypt": "true"}}}),
    ("tacacs-server-eight", {"TACPLUS_SERVER": {f"10.250.2.{i}": {} for i in range(1, 7)}}),
    ("radius-bounds", {"RADIUS": {"global": {"auth_type": "mschapv2", "timeout": "1", "retransmit": "0",
                                             "nas_ip": "fd00:250::11"}},
                       "RADIUS_SERVER": {"10.250.0.18": {"retransmit": "10", "priority": "64", "src_intf": "eth0"},
                                         "radius2.example.com": {"src_intf": "Vlan007"}}}),
    ("radius-longest-placeholder", {"RADIUS": {"global": {"passkey": _secret(47)}},
                                    "RADIUS_SERVER": {"10.250.0.18": {"passkey": _secret(47)}}}),
]

REJECTED: list[tuple[str, Patch, str]] = [
    # sonic-mgmt_vrf / sonic-mgmt_port / sonic-mgmt_interface
    ("mgmt-vrf-python-boolean", {"MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "True"}}},
     "MGMT_VRF_CONFIG|vrf_global: mgmtVrfEnabled: 'True' is not one of 'true' or 'false'"),
    ("mgmt-vrf-unknown-field", {"MGMT_VRF_CONFIG": {"vrf_global": {"in_band_mgmt_enabled": "false"}}},
     "MGMT_VRF_CONFIG|vrf_global: in_band_mgmt_enabled: unknown field"),
    ("mgmt-port-name", {"MGMT_PORT": {"eth01": {}}}, "MGMT_PORT|eth01: key part name"),
    ("mgmt-port-name-4000", {"MGMT_PORT": {"eth4000": {}}}, "MGMT_PORT|eth4000: key part name"),
    ("mgmt-port-mtu", {"MGMT_PORT": {"eth0": {"mtu": "1400"}}},
     "MGMT_PORT|eth0: mtu: '1400' is not an integer in 1500..9216"),
    ("mgmt-port-speed", {"MGMT_PORT": {"eth0": {"speed": "25"}}}, "MGMT_PORT|eth0: speed: '25' is not one of"),
    ("mgmt-port-autoneg", {"MGMT_PORT": {"eth0": {"autoneg": "true"}}}, "MGMT_PORT|eth0: autoneg:"),
    ("mgmt-interface-bare-key", {"MGMT_INTERFACE": {"eth0": {}}},
     "MGMT_INTERFACE|eth0: key must be <name>|<ip-prefix>"),
    ("mgmt-interface-prefix-without-length", {"MGMT_INTERFACE": {"eth0|10.250.0.12": {"gwaddr": "10.250.0.1"}}},
     "MGMT_INTERFACE|eth0|10.250.0.12: key part ip-prefix"),
    ("mgmt-interface-without-gateway", {"MGMT_INTERFACE": {"eth0|10.250.0.11/24": {"gwaddr": None}}},
     "MGMT_INTERFACE|eth0|10.250.0.11/24: gwaddr: mandatory field missing"),
    ("mgmt-interface-gateway-family", {"MGMT_INTERFACE": {"eth0|fd00:250::11/64": {"gwaddr": "10.250.0.1"}}},
     "MGMT_INTERFACE|eth0|fd00:250::11/64: gwaddr 10.250.0.1 is not in the address family of fd00:250::11/64"),
    ("mgmt-interface-bad-gateway", {"MGMT_INTERFACE": {"eth0|10.250.0.11/24": {"gwaddr": "10.250.0.256"}}},
     "MGMT_INTERFACE|eth0|10.250.0.11/24: gwaddr: '10.250.0.256' is not an IP address"),
    ("mgmt-interface-unknown-port", {"MGMT_INTERFACE": {"eth1|10.251.0.11/24": {"gwaddr": "10.251.0.1"}}},
     "MGMT_INTERFACE|eth1|10.251.0.11/24: name 'eth1' is not a MGMT_PORT"),
    ("mgmt-interface-routes-as-string", {"MGMT_INTERFACE": {"eth0|10.250.0.11/24": {
        "forced_mgmt_routes": "10.250.64.0/18"}}},
     "MGMT_INTERFACE|eth0|10.250.0.11/24: forced_mgmt_routes: is a leaf-list: must be a JSON array"),
    # sonic-ntp
    ("ntp-vrf-not-mgmt-or-default", {"NTP": {"global": {"vrf": "Vrf_red"}}},
     "NTP|global: vrf: 'Vrf_red' is not one of 'default' or 'mgmt'"),
    ("ntp-src-intf-unknown-loopback", {"NTP": {"global": {"src_intf": "Loopback9"}}},
     "NTP|global: src_intf 'Loopback9' is not a PORT, LOOPBACK_INTERFACE or MGMT_PORT name, nor 'eth0'"),
    ("ntp-src-intf-vlan", {"NTP": {"global": {"src_intf": "Vlan100"}}},  # no Vlan member in NTP's union
     "NTP|global: src_intf 'Vlan100' is not a PORT, LOOPBACK_INTERFACE or MGMT_PORT name, nor 'eth0'"),
    ("ntp-src-intf-comma", {"NTP": {"global": {"src_intf": "eth0,Loopback0"}}},
     "NTP|global: src_intf 'eth0,Loopback0' is not a PORT"),
    ("ntp-authentication-enable", {"NTP": {"global": {"authentication": "enable"}}},
     "NTP|global: authentication: 'enable' is not one of 'enabled' or 'disabled'"),
    ("ntp-key-upper-global", {"NTP": {"GLOBAL": {"admin_state": "enabled"}}}, "NTP|GLOBAL: key part name"),
    ("ntp-server-version-5", {"NTP_SERVER": {"10.250.0.123": {"version": "5"}}},
     "NTP_SERVER|10.250.0.123: version: '5' is not an integer in 3..4"),
    ("ntp-server-iburst-true", {"NTP_SERVER": {"10.250.0.123": {"iburst": "true"}}},
     "NTP_SERVER|10.250.0.123: iburst: 'true' is not one of 'on' or 'off'"),
    ("ntp-server-dangling-key", {"NTP_SERVER": {"10.250.0.123": {"key": "42"}}},
     "NTP_SERVER|10.250.0.123: key '42' is not a NTP_KEY"),
    ("ntp-server-name-with-space", {"NTP_SERVER": {"ntp server": {}}},
     "NTP_SERVER|ntp server: key part server_address: 'ntp server' is neither an IP address nor a host name"),
    ("ntp-server-label-ends-with-dash", {"NTP_SERVER": {"ntp-.example.com": {}}},
     "NTP_SERVER|ntp-.example.com: key part server_address"),
    ("ntp-server-eleven", {"NTP_SERVER": {f"10.250.1.{i}": {} for i in range(1, 10)}},
     "NTP_SERVER: 11 entries, SONiC allows at most 10"),
    ("ntp-key-id-0", {"NTP_KEY": {"0": {"value": "x"}}}, "NTP_KEY|0: key part id: '0' is not an integer in 1..65535"),
    ("ntp-key-type", {"NTP_KEY": {"1": {"type": "md4"}}}, "NTP_KEY|1: type: 'md4' is not one of"),
    ("ntp-key-empty-value", {"NTP_KEY": {"1": {"value": ""}}},
     "NTP_KEY|1: value: must be 1..64 characters long (has 0)"),
    ("ntp-key-placeholder-too-long", {"NTP_KEY": {"1": {"value": _secret(47)}}},
     "NTP_KEY|1: value: must be 1..64 characters long (has 65; a placeholder's NAME may have at most 46 characters"),
    # sonic-syslog
    ("syslog-source-family", {"SYSLOG_SERVER": {"10.250.0.50": {"source": "fd00:250::11"}}},
     "SYSLOG_SERVER|10.250.0.50: source fd00:250::11 and the server address are not the same family"),
    ("syslog-source-with-dotless-hostname", {"SYSLOG_SERVER": {"loghost": {"source": "10.250.0.11"}}},
     "SYSLOG_SERVER|loghost: source 10.250.0.11 and the server address are not the same family"),
    ("syslog-source-bad-address", {"SYSLOG_SERVER": {"10.250.0.50": {"source": "10.250.0.500"}}},
     "SYSLOG_SERVER|10.250.0.50: source: '10.250.0.500' is not an IP address"),
    ("syslog-port-65536", {"SYSLOG_SERVER": {"10.250.0.50": {"port": "65536"}}},
     "SYSLOG_SERVER|10.250.0.50: port: '65536' is not an integer in 0..65535"),
    ("syslog-severity-warning", {"SYSLOG_SERVER": {"10.250.0.50": {"severity": "warning"}}},
     "SYSLOG_SERVER|10.250.0.50: severity: 'warning' is not one of"),
    ("syslog-protocol-relp", {"SYSLOG_SERVER": {"10.250.0.50": {"protocol": "relp"}}},
     "SYSLOG_SERVER|10.250.0.50: protocol: 'relp' is not one of 'tcp' or 'udp'"),
    ("syslog-filter-regex-newline", {"SYSLOG_SERVER": {"10.250.0.50": {"filter_regex": "a\nb"}}},
     "SYSLOG_SERVER|10.250.0.50: filter_regex:"),
    ("syslog-filter-regex-empty", {"SYSLOG_SERVER": {"10.250.0.50": {"filter_regex": ""}}},
     "SYSLOG_SERVER|10.250.0.50: filter_regex:"),
    ("syslog-vrf-unknown", {"SYSLOG_SERVER": {"10.250.0.50": {"vrf": "Vrf_red"}}},
     "SYSLOG_SERVER|10.250.0.50: vrf 'Vrf_red' is not a VRF"),
    # sonic-dns
    ("dns-four-nameservers", {"DNS_NAMESERVER": {"10.250.0.54": {}, "10.250.0.55": {}}},
     "DNS_NAMESERVER: 4 entries, SONiC allows at most 3"),
    ("dns-nameserver-hostname", {"DNS_NAMESERVER": {"dns.example.com": {}}},
     "DNS_NAMESERVER|dns.example.com: key part ip: 'dns.example.com' is not an IP address"),
    ("dns-nameserver-field", {"DNS_NAMESERVER": {"10.250.0.53": {"vrf": "mgmt"}}},
     "DNS_NAMESERVER|10.250.0.53: vrf: unknown field"),
    ("dns-options-without-nameserver", {"DNS_NAMESERVER": None},
     "DNS_OPTIONS|GLOBAL: needs at least one DNS_NAMESERVER"),
    ("dns-ndots-16", {"DNS_OPTIONS": {"GLOBAL": {"ndots": "16"}}},
     "DNS_OPTIONS|GLOBAL: ndots: '16' is not an integer in 0..15"),
    ("dns-timeout-0", {"DNS_OPTIONS": {"GLOBAL": {"timeout": "0"}}},
     "DNS_OPTIONS|GLOBAL: timeout: '0' is not an integer in 1..30"),
    ("dns-search-repeats", {"DNS_OPTIONS": {"GLOBAL": {"search": ["example.com", "example.com"]}}},
     "DNS_OPTIONS|GLOBAL: search: repeats example.com"),
    ("dns-search-as-string", {"DNS_OPTIONS": {"GLOBAL": {"search": "example.com"}}},
     "DNS_OPTIONS|GLOBAL: search: is a leaf-list: must be a JSON array"),
    ("dns-search-bad-name", {"DNS_OPTIONS": {"GLOBAL": {"search": ["exa mple.com"]}}},
     "DNS_OPTIONS|GLOBAL: search[0]: 'exa mple.com' is neither an IP address nor a host name"),
    ("dns-options-lower-global", {"DNS_OPTIONS": {"global": {"ndots": "2"}}}, "DNS_OPTIONS|global: key part name"),
    # sonic-lldp
    ("lldp-hello-4", {"LLDP": {"GLOBAL": {"hello_time": "4"}}},
     "LLDP|GLOBAL: hello_time: '4' is not an integer in 5..254"),
    ("lldp-hello-255", {"LLDP": {"GLOBAL": {"hello_time": "255"}}},
     "LLDP|GLOBAL: hello_time: '255' is not an integer in 5..254"),
    ("lldp-multiplier-11", {"LLDP": {"GLOBAL": {"multiplier": "11"}}},
     "LLDP|GLOBAL: multiplier: '11' is not an integer in 1..10"),
    ("lldp-mode-both", {"LLDP": {"GLOBAL": {"mode": "BOTH"}}},
     "LLDP|GLOBAL: mode: 'BOTH' is not one of 'RECEIVE' or 'TRANSMIT'"),
    ("lldp-enabled-python-boolean", {"LLDP": {"GLOBAL": {"enabled": "True"}}}, "LLDP|GLOBAL: enabled:"),
    ("lldp-key-global", {"LLDP": {"global": {"enabled": "true"}}}, "LLDP|global: key part name"),
    ("lldp-port-unknown", {"LLDP_PORT": {"Ethernet9999": {}}},
     "LLDP_PORT|Ethernet9999: port 'Ethernet9999' is not a PORT"),
    ("lldp-port-mgmt", {"LLDP_PORT": {"eth0": {}}}, "LLDP_PORT|eth0: port 'eth0' is not a PORT"),
    ("lldp-port-global-field", {"LLDP_PORT": {"Ethernet0": {"hello_time": "10"}}},
     "LLDP_PORT|Ethernet0: hello_time: unknown field"),
    # sonic-sflow
    ("sflow-polling-4", {"SFLOW": {"global": {"polling_interval": "4"}}},
     "SFLOW|global: polling_interval: '4' is not 0 or 5..300"),
    ("sflow-polling-301", {"SFLOW": {"global": {"polling_interval": "301"}}},
     "SFLOW|global: polling_interval: '301' is not an integer in 0..300"),
    ("sflow-agent-unknown-mgmt-port", {"SFLOW": {"global": {"agent_id": "eth1"}}},
     "SFLOW|global: agent_id 'eth1' is not a PORT, LOOPBACK_INTERFACE or MGMT_PORT name, nor Vlan0..Vlan4094"),
    ("sflow-agent-vlan-4095", {"SFLOW": {"global": {"agent_id": "Vlan4095"}}},
     "SFLOW|global: agent_id 'Vlan4095' is not a PORT"),
    ("sflow-direction", {"SFLOW": {"global": {"sample_direction": "ingress"}}},
     "SFLOW|global: sample_direction: 'ingress' is not one of 'rx', 'tx' or 'both'"),
    ("sflow-key-upper", {"SFLOW": {"GLOBAL": {"admin_state": "up"}}}, "SFLOW|GLOBAL: key part name"),
    ("sflow-three-collectors", {"SFLOW_COLLECTOR": {"c2": {"collector_ip": "10.250.0.61"},
                                                    "c3": {"collector_ip": "10.250.0.62"}}},
     "SFLOW_COLLECTOR: 3 entries, SONiC allows at most 2"),
    ("sflow-collector-without-ip", {"SFLOW_COLLECTOR": {"collector1": {"collector_ip": None}}},
     "SFLOW_COLLECTOR|collector1: collector_ip: mandatory field missing"),
    ("sflow-collector-hostname", {"SFLOW_COLLECTOR": {"collector1": {"collector_ip": "collector.example.com"}}},
     "SFLOW_COLLECTOR|collector1: collector_ip: 'collector.example.com' is not an IP address"),
    ("sflow-collector-name-65", {"SFLOW_COLLECTOR": {"collector1": None, "c" * 65: {"collector_ip": "10.250.0.60"}}},
     f"SFLOW_COLLECTOR|{'c' * 65}: key part name"),
    ("sflow-collector-port", {"SFLOW_COLLECTOR": {"collector1": {"collector_port": "70000"}}},
     "SFLOW_COLLECTOR|collector1: collector_port: '70000' is not an integer in 0..65535"),
    ("sflow-collector-vrf", {"SFLOW_COLLECTOR": {"collector1": {"collector_vrf": "Vrf_red"}}},
     "SFLOW_COLLECTOR|collector1: collector_vrf: 'Vrf_red' is not one of 'default' or 'mgmt'"),
    ("sflow-session-all-with-rate", {"SFLOW_SESSION": {"all": {"sample_rate": "4096"}}},
     "SFLOW_SESSION|all: sample_rate is not allowed on 'all'"),
    ("sflow-session-rate-255", {"SFLOW_SESSION": {"Ethernet0": {"sample_rate": "255"}}},
     "SFLOW_SESSION|Ethernet0: sample_rate: '255' is not an integer in 256..8388608"),
    ("sflow-session-rate-too-high", {"SFLOW_SESSION": {"Ethernet0": {"sample_rate": "8388609"}}},
     "SFLOW_SESSION|Ethernet0: sample_rate: '8388609' is not an integer in 256..8388608"),
    ("sflow-session-unknown-port", {"SFLOW_SESSION": {"Ethernet9999": {}}},
     "SFLOW_SESSION|Ethernet9999: port 'Ethernet9999' is not a PORT"),
    ("sflow-session-upper-all", {"SFLOW_SESSION": {"ALL": {}}}, "SFLOW_SESSION|ALL: port 'ALL' is not a PORT"),
    ("sflow-session-admin-enabled", {"SFLOW_SESSION": {"Ethernet0": {"admin_state": "enabled"}}},
     "SFLOW_SESSION|Ethernet0: admin_state: 'enabled' is not one of 'up' or 'down'"),
    # sonic-banner
    ("banner-state", {"BANNER_MESSAGE": {"global": {"state": "enable"}}},
     "BANNER_MESSAGE|global: state: 'enable' is not one of 'enabled' or 'disabled'"),
    ("banner-field", {"BANNER_MESSAGE": {"global": {"message": "hi"}}},
     "BANNER_MESSAGE|global: message: unknown field"),
    ("banner-key", {"BANNER_MESSAGE": {"GLOBAL": {"state": "enabled"}}}, "BANNER_MESSAGE|GLOBAL: key part name"),
    # sonic-gnmi
    ("gnmi-log-level-101", {"GNMI": {"gnmi": {"log_level": "101"}}},
     "GNMI|gnmi: log_level: '101' is not an integer in 0..100"),
    ("gnmi-user-auth-list", {"GNMI": {"gnmi": {"user_auth": "password,cert"}}},
     "GNMI|gnmi: user_auth: 'password,cert' is not one of"),
    ("gnmi-client-auth-python-boolean", {"GNMI": {"gnmi": {"client_auth": "True"}}}, "GNMI|gnmi: client_auth:"),
    ("gnmi-port-negative", {"GNMI": {"gnmi": {"port": "-1"}}}, "GNMI|gnmi: port: '-1' is not an integer in 0..65535"),
    ("gnmi-crl-duration-overflow", {"GNMI": {"gnmi": {"crl_expire_duration": "4294967296"}}},
     "GNMI|gnmi: crl_expire_duration:"),
    ("gnmi-key-on-gnmi", {"GNMI": {"gnmi": {"server_key": "/etc/sonic/a.key"}}},
     "GNMI|gnmi: server_key: unknown field"),
    ("gnmi-ca-pem", {"GNMI": {"certs": {"ca_crt": "/etc/sonic/ca.pem"}}}, "GNMI|certs: ca_crt: '/etc/sonic/ca.pem'"),
    ("gnmi-ca-relative", {"GNMI": {"certs": {"ca_crt": "ca.cer"}}}, "GNMI|certs: ca_crt: 'ca.cer'"),
    ("gnmi-ca-dotted-name", {"GNMI": {"certs": {"ca_crt": "/etc/sonic/ca.v2.cer"}}}, "GNMI|certs: ca_crt:"),
    ("gnmi-other-key", {"GNMI": {"telemetry": {"port": "50051"}}}, "GNMI|telemetry: key part name"),
    ("gnmi-client-cert-without-role", {"GNMI_CLIENT_CERT": {"client2": {}}},
     "GNMI_CLIENT_CERT|client2: role: mandatory field missing"),
    ("gnmi-client-cert-empty-role", {"GNMI_CLIENT_CERT": {"client2": {"role": []}}},
     "GNMI_CLIENT_CERT|client2: role: is empty"),
    ("gnmi-client-cert-repeated-role", {"GNMI_CLIENT_CERT": {"client2": {"role": ["ro", "ro"]}}},
     "GNMI_CLIENT_CERT|client2: role: repeats ro"),
    # sonic-snmp
    ("snmp-location-empty", {"SNMP": {"LOCATION": {"Location": ""}}},
     "SNMP|LOCATION: Location: '' must be 1..255 characters long"),
    ("snmp-location-256", {"SNMP": {"LOCATION": {"Location": "x" * 256}}},
     "SNMP|LOCATION: Location:"),
    ("snmp-location-newline", {"SNMP": {"LOCATION": {"Location": "rack 1\nrow 2"}}},
     "SNMP|LOCATION: Location:"),
    ("snmp-location-key", {"SNMP": {"location": {"Location": "x"}}}, "SNMP|location: key part name"),
    ("snmp-contact-in-location", {"SNMP": {"LOCATION": {"Contact": "x"}}}, "SNMP|LOCATION: Contact: unknown field"),
    ("snmp-community-short", {"SNMP_COMMUNITY": {"abc": {}}},
     "SNMP_COMMUNITY|abc: key part name: 'abc' must be 4..32 characters long"),
    ("snmp-community-33", {"SNMP_COMMUNITY": {"a" * 33: {}}}, f"SNMP_COMMUNITY|{'a' * 33}: key part name"),
    ("snmp-community-at", {"SNMP_COMMUNITY": {"pub@lic": {}}},
     "SNMP_COMMUNITY|pub@lic: key part name: must not contain '@'"),
    ("snmp-community-quote", {"SNMP_COMMUNITY": {"pub'lic": {}}}, "SNMP_COMMUNITY|pub'lic: key part name"),
    ("snmp-community-backslash", {"SNMP_COMMUNITY": {"pub\\lic": {}}}, "SNMP_COMMUNITY|pub\\lic: key part name"),
    ("snmp-community-type", {"SNMP_COMMUNITY": {"abcd": {"TYPE": "ro"}}},
     "SNMP_COMMUNITY|abcd: TYPE: 'ro' is not one of 'RO' or 'RW'"),
    ("snmp-community-placeholder-too-long", {"SNMP_COMMUNITY": {_secret(15): {"TYPE": "RO"}}},
     f"SNMP_COMMUNITY|{_secret(15)}: key part name"),
    ("snmp-user-without-type", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_TYPE": None}}},
     "SNMP_USER|netgen-ro: SNMP_USER_TYPE: mandatory field missing"),
    ("snmp-user-without-encryption-password", {"SNMP_USER": {"user1": {
        "SNMP_USER_TYPE": "noAuthNoPriv", "SNMP_USER_PERMISSION": "RO"}}},
     "SNMP_USER|user1: SNMP_USER_ENCRYPTION_PASSWORD: mandatory field missing"),
    ("snmp-user-auth-without-type", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_AUTH_TYPE": None}}},
     "SNMP_USER|netgen-ro: SNMP_USER_TYPE Priv needs SNMP_USER_AUTH_TYPE MD5, SHA or HMAC-SHA-2"),
    ("snmp-user-auth-type-sha256", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_AUTH_TYPE": "SHA256"}}},
     "SNMP_USER|netgen-ro: SNMP_USER_AUTH_TYPE: 'SHA256' is not one of"),
    ("snmp-user-short-auth-password", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_AUTH_PASSWORD": "7chars!"}}},
     "SNMP_USER|netgen-ro: SNMP_USER_AUTH_PASSWORD must have at least 8 characters for Priv"),
    ("snmp-user-noauth-with-password", {"SNMP_USER": {"user1": {
        "SNMP_USER_TYPE": "noAuthNoPriv", "SNMP_USER_PERMISSION": "RO", "SNMP_USER_AUTH_PASSWORD": "8chars!!",
        "SNMP_USER_ENCRYPTION_PASSWORD": ""}}},
     "SNMP_USER|user1: SNMP_USER_AUTH_PASSWORD must be empty for SNMP_USER_TYPE noAuthNoPriv"),
    ("snmp-user-priv-without-encryption-type", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_ENCRYPTION_TYPE": None}}},
     "SNMP_USER|netgen-ro: SNMP_USER_TYPE Priv needs SNMP_USER_ENCRYPTION_TYPE DES or AES"),
    ("snmp-user-priv-empty-encryption-password", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_ENCRYPTION_PASSWORD": ""}}},
     "SNMP_USER|netgen-ro: SNMP_USER_ENCRYPTION_PASSWORD must have at least 8 characters for Priv"),
    ("snmp-user-authnopriv-with-encryption", {"SNMP_USER": {"netgen-ro": {
        "SNMP_USER_TYPE": "AuthNoPriv", "SNMP_USER_ENCRYPTION_PASSWORD": ""}}},
     "SNMP_USER|netgen-ro: SNMP_USER_ENCRYPTION_TYPE must be empty for SNMP_USER_TYPE AuthNoPriv"),
    ("snmp-user-encryption-3des", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_ENCRYPTION_TYPE": "3DES"}}},
     "SNMP_USER|netgen-ro: SNMP_USER_ENCRYPTION_TYPE: '3DES' is not one of '', 'DES' or 'AES'"),
    ("snmp-user-password-at", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_AUTH_PASSWORD": "pass@word1"}}},
     "SNMP_USER|netgen-ro: SNMP_USER_AUTH_PASSWORD: must not contain '@'"),
    ("snmp-user-placeholder-too-long", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_ENCRYPTION_PASSWORD": _secret(47)}}},
     "SNMP_USER|netgen-ro: SNMP_USER_ENCRYPTION_PASSWORD: must be 0..64 characters long (has 65; a placeholder's"),
    ("snmp-user-name-colon", {"SNMP_USER": {"us:er": {"SNMP_USER_TYPE": "noAuthNoPriv", "SNMP_USER_PERMISSION": "RO",
                                                      "SNMP_USER_ENCRYPTION_PASSWORD": ""}}},
     "SNMP_USER|us:er: key part name: must not contain ':'"),
    ("snmp-user-permission", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_PERMISSION": "WO"}}},
     "SNMP_USER|netgen-ro: SNMP_USER_PERMISSION: 'WO' is not one of 'RO' or 'RW'"),
    ("snmp-agent-address-repeated", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.11|161|": {}}},
     "SNMP_AGENT_ADDRESS_CONFIG|10.250.0.11|161|: agent_ip and port already used by"
     " SNMP_AGENT_ADDRESS_CONFIG|10.250.0.11|161|mgmt"),
    ("snmp-agent-address-two-parts", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.12|161": {}}},
     "SNMP_AGENT_ADDRESS_CONFIG|10.250.0.12|161: key must be <agent_ip>|<port>|<vrf_name>"),
    ("snmp-agent-address-vrf-default", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.12|161|default": {}}},
     "SNMP_AGENT_ADDRESS_CONFIG|10.250.0.12|161|default: key part vrf_name"),
    ("snmp-agent-address-port", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.12|70000|": {}}},
     "SNMP_AGENT_ADDRESS_CONFIG|10.250.0.12|70000|: key part port"),
    ("snmp-agent-address-ip", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.500|161|": {}}},
     "SNMP_AGENT_ADDRESS_CONFIG|10.250.0.500|161|: key part agent_ip"),
    ("snmp-agent-address-field", {"SNMP_AGENT_ADDRESS_CONFIG": {"10.250.0.11|161|mgmt": {"community": "x"}}},
     "SNMP_AGENT_ADDRESS_CONFIG|10.250.0.11|161|mgmt: community: unknown field"),
    # sonic-system-aaa
    ("aaa-tacacs-without-passkey", {"TACPLUS": {"global": {"passkey": None}}},
     "AAA|authentication: login 'tacacs+,local' needs TACPLUS|global.passkey"),
    ("aaa-login-space", {"AAA": {"authentication": {"login": "tacacs+, local"}}}, "AAA|authentication: login:"),
    ("aaa-login-kerberos", {"AAA": {"authorization": {"login": "kerberos"}}}, "AAA|authorization: login:"),
    ("aaa-failthrough-yes", {"AAA": {"authentication": {"failthrough": "yes"}}},
     "AAA|authentication: failthrough: 'yes' is not one of 'true', 'false', 'True' or 'False'"),
    ("aaa-key", {"AAA": {"authorisation": {"login": "local"}}}, "AAA|authorisation: key part type"),
    ("aaa-field", {"AAA": {"authentication": {"enable": "true"}}}, "AAA|authentication: enable: unknown field"),
    # sonic-system-tacacs
    ("tacacs-src-intf-unknown-mgmt-port", {"TACPLUS": {"global": {"src_intf": "eth1"}}},
     "TACPLUS|global: src_intf 'eth1' is not a PORT, LOOPBACK_INTERFACE or MGMT_PORT name, nor Vlan0..Vlan4094"),
    ("tacacs-src-intf-unknown-loopback", {"TACPLUS": {"global": {"src_intf": "Loopback7"}}},
     "TACPLUS|global: src_intf 'Loopback7' is not a PORT"),
    ("tacacs-timeout-0", {"TACPLUS": {"global": {"timeout": "0"}}},
     "TACPLUS|global: timeout: '0' is not an integer in 1..60"),
    ("tacacs-timeout-61", {"TACPLUS": {"global": {"timeout": "61"}}},
     "TACPLUS|global: timeout: '61' is not an integer in 1..60"),
    ("tacacs-auth-mschapv2", {"TACPLUS": {"global": {"auth_type": "mschapv2"}}},
     "TACPLUS|global: auth_type: 'mschapv2' is not one of 'pap', 'chap', 'mschap' or 'login'"),
    ("tacacs-passkey-hash", {"TACPLUS": {"global": {"passkey": "abc#def"}}},
     "TACPLUS|global: passkey: must not contain '#'"),
    ("tacacs-passkey-empty", {"TACPLUS": {"global": {"passkey": ""}}},
     "TACPLUS|global: passkey: must be 1..256 characters long (has 0)"),
    ("tacacs-passkey-257", {"TACPLUS": {"global": {"passkey": "a" * 257}}},
     "TACPLUS|global: passkey: must be 1..256 characters long (has 257)"),
    ("tacacs-key", {"TACPLUS": {"GLOBAL": {"timeout": "5"}}}, "TACPLUS|GLOBAL: key part name"),
    ("tacacs-server-priority-0", {"TACPLUS_SERVER": {"10.250.0.49": {"priority": "0"}}},
     "TACPLUS_SERVER|10.250.0.49: priority: '0' is not an integer in 1..64"),
    ("tacacs-server-priority-65", {"TACPLUS_SERVER": {"10.250.0.49": {"priority": "65"}}},
     "TACPLUS_SERVER|10.250.0.49: priority: '65' is not an integer in 1..64"),
    ("tacacs-server-port", {"TACPLUS_SERVER": {"10.250.0.49": {"tcp_port": "65536"}}},
     "TACPLUS_SERVER|10.250.0.49: tcp_port: '65536' is not an integer in 0..65535"),
    ("tacacs-server-vrf", {"TACPLUS_SERVER": {"10.250.0.49": {"vrf": "Vrf_red"}}},
     "TACPLUS_SERVER|10.250.0.49: vrf: 'Vrf_red' is not one of 'default' or 'mgmt'"),
    ("tacacs-server-nine", {"TACPLUS_SERVER": {f"10.250.2.{i}": {} for i in range(1, 8)}},
     "TACPLUS_SERVER: 9 entries, SONiC allows at most 8"),
    ("tacacs-server-passkey-comma", {"TACPLUS_SERVER": {"10.250.0.49": {"passkey": "a,b"}}},
     "TACPLUS_SERVER|10.250.0.49: passkey: must not contain ','"),
    ("tacacs-server-src-intf", {"TACPLUS_SERVER": {"10.250.0.49": {"src_intf": "Loopback0"}}},
     "TACPLUS_SERVER|10.250.0.49: src_intf: unknown field"),
    ("tacacs-server-bad-name", {"TACPLUS_SERVER": {"tac_server!": {}}},
     "TACPLUS_SERVER|tac_server!: key part ipaddress"),
    # sonic-system-radius
    ("radius-placeholder-too-long", {"RADIUS": {"global": {"passkey": _secret(48)}}},
     "RADIUS|global: passkey: must be 1..65 characters long (has 66; a placeholder's NAME may have at most 47"),
    ("radius-passkey-space", {"RADIUS": {"global": {"passkey": "a b"}}},
     "RADIUS|global: passkey: must not contain ' '"),
    ("radius-auth-mschap", {"RADIUS": {"global": {"auth_type": "mschap"}}},
     "RADIUS|global: auth_type: 'mschap' is not one of 'pap', 'chap' or 'mschapv2'"),
    ("radius-retransmit-11", {"RADIUS": {"global": {"retransmit": "11"}}},
     "RADIUS|global: retransmit: '11' is not an integer in 0..10"),
    ("radius-src-ip-hostname", {"RADIUS": {"global": {"src_ip": "radius.example.com"}}},
     "RADIUS|global: src_ip: 'radius.example.com' is not an IP address"),
    ("radius-statistics-python-boolean", {"RADIUS": {"global": {"statistics": "True"}}}, "RADIUS|global: statistics:"),
    ("radius-global-src-intf", {"RADIUS": {"global": {"src_intf": "Loopback0"}}},
     "RADIUS|global: src_intf: unknown field"),
    ("radius-server-src-intf-unknown", {"RADIUS_SERVER": {"10.250.0.18": {"src_intf": "Ethernet9999"}}},
     "RADIUS_SERVER|10.250.0.18: src_intf 'Ethernet9999' is not a PORT"),
    ("radius-server-src-intf-vlan-4095", {"RADIUS_SERVER": {"10.250.0.18": {"src_intf": "Vlan4095"}}},
     "RADIUS_SERVER|10.250.0.18: src_intf 'Vlan4095' is not a PORT"),
    ("radius-server-priority-0", {"RADIUS_SERVER": {"10.250.0.18": {"priority": "0"}}},
     "RADIUS_SERVER|10.250.0.18: priority: '0' is not an integer in 1..64"),
    ("radius-server-nine", {"RADIUS_SERVER": {f"10.250.3.{i}": {} for i in range(1, 9)}},
     "RADIUS_SERVER: 9 entries, SONiC allows at most 8"),
]

NETGEN_STRICTER: list[tuple[str, Patch, str]] = [
    # CONFIG_DB keeps NTP's src_intf leaf-list as one string; chrony.conf.j2 compares and prefix-matches
    # it as ONE name, so a JSON array breaks the template and a ';' list binds to nothing.
    ("ntp-src-intf-array", {"NTP": {"global": {"src_intf": ["eth0"]}}},
     "NTP|global: src_intf: must be one interface name, not a JSON array"),
    ("ntp-src-intf-two", {"NTP": {"global": {"src_intf": "eth0;Loopback0"}}},
     "NTP|global: src_intf: 'eth0;Loopback0' is not one interface name"),
    # YANG's domain-name pattern takes digits and dots: a mistyped address would pass as a host name.
    ("ntp-server-mistyped-address", {"NTP_SERVER": {"10.250.0.300": {}}},
     "NTP_SERVER|10.250.0.300: key part server_address: '10.250.0.300' is not an IP address"),
    # inet:ip-address takes a zone index; netgen writes none.
    ("ntp-server-zone-index", {"NTP_SERVER": {"fe80::1%eth0": {}}},
     "NTP_SERVER|fe80::1%eth0: key part server_address: 'fe80::1%eth0': netgen writes no zone index"),
    # YANG's pattern has an unescaped '.' before "cer" (any character); netgen wants the dot.
    ("gnmi-ca-any-character-before-cer", {"GNMI": {"certs": {"ca_crt": "/etc/sonic/caXcer"}}},
     "GNMI|certs: ca_crt: '/etc/sonic/caXcer'"),
    # An empty leaf-list is stored as one empty-string element (interfaces.j2 then iterates it).
    ("mgmt-interface-empty-routes", {"MGMT_INTERFACE": {"eth0|10.250.0.11/24": {"forced_mgmt_routes": []}}},
     "MGMT_INTERFACE|eth0|10.250.0.11/24: forced_mgmt_routes: is empty"),
    ("dns-search-empty", {"DNS_OPTIONS": {"GLOBAL": {"search": []}}}, "DNS_OPTIONS|GLOBAL: search: is empty"),
    # sonic_yang walks a string given for a leaf-list character by character ('r', 'o').
    ("gnmi-client-cert-role-string", {"GNMI_CLIENT_CERT": {"client2": {"role": "ro"}}},
     "GNMI_CLIENT_CERT|client2: role: is a leaf-list: must be a JSON array"),
    ("gnmi-client-cert-empty-name", {"GNMI_CLIENT_CERT": {"": {"role": ["ro"]}}}, "GNMI_CLIENT_CERT|: key part"),
    # YANG checks an SNMP auth password only when present: an AuthNoPriv/Priv user without one is useless.
    ("snmp-user-without-auth-password", {"SNMP_USER": {"netgen-ro": {"SNMP_USER_AUTH_PASSWORD": None}}},
     "SNMP_USER|netgen-ro: SNMP_USER_TYPE Priv needs SNMP_USER_AUTH_PASSWORD"),
]


def _with_management_plane(c: Config, patch: Patch) -> Config:
    """The rendered config with its management plane (whatever netgen renders) replaced by MANAGEMENT_PLANE."""
    for table in MANAGEMENT_PLANE:
        c.pop(table, None)
    return apply_patch(apply_patch(c, MANAGEMENT_PLANE), patch)


def test_management_plane_passes(cfg):
    assert check_config_db(_with_management_plane(cfg, {})) == []


@pytest.mark.parametrize("patch", [p for _, p in ACCEPTED], ids=[name for name, _ in ACCEPTED])
def test_management_plane_variation_passes(cfg, patch):
    assert check_config_db(_with_management_plane(cfg, patch)) == []


@pytest.mark.parametrize(("patch", "expected"), [(p, e) for _, p, e in REJECTED + NETGEN_STRICTER],
                         ids=[name for name, _, _ in REJECTED + NETGEN_STRICTER])
def test_management_plane_variation_is_caught_and_named(cfg, patch, expected):
    problems = check_config_db(_with_management_plane(cfg, patch))
    assert any(p.startswith(expected) for p in problems), problems
    table = expected.split("|")[0].split(":")[0]
    assert all(p.startswith(table) for p in problems), problems


def test_mgmt_vrf_off_fails_every_mgmt_vrf_user(cfg):
    problems = check_config_db(_with_management_plane(cfg, NO_MGMT_VRF))
    needs = "'mgmt' needs MGMT_VRF_CONFIG|vrf_global.mgmtVrfEnabled 'true'"
    assert sorted(problems) == [
        "GNMI|gnmi: vrf " + needs, "NTP|global: vrf " + needs, "SFLOW_COLLECTOR|collector1: collector_vrf " + needs,
        "SYSLOG_SERVER|10.250.0.50: vrf " + needs,
    ]
    # TACPLUS_SERVER and RADIUS_SERVER name vrf 'mgmt' too, but their YANG has no such must


def test_secrets_are_never_quoted(cfg):
    # Three values sonic_yang rejects ('#', 66 characters, a space); the number it would take as
    # text, netgen's strings-only rule (see number_not_string) does not.
    patch: Patch = {"TACPLUS": {"global": {"passkey": "s3cret#1"}}, "NTP_KEY": {"1": {"value": "s3cret" * 11}},
                    "RADIUS_SERVER": {"10.250.0.18": {"passkey": 1234567}},
                    "SNMP_USER": {"netgen-ro": {"SNMP_USER_AUTH_PASSWORD": "s3cret pw"}}}
    problems = check_config_db(_with_management_plane(cfg, patch))
    assert len(problems) == 4, problems
    assert not [p for p in problems if "s3cret" in p or "1234567" in p], problems


# ------------------------------------------------------------------ the per-process memo of keys and entries


def _forget_checked(monkeypatch):
    from netgen.nos.sonic import schema  # noqa: PLC0415

    monkeypatch.setattr(schema, "_PARSED_KEYS", {})
    monkeypatch.setattr(schema, "_VALID_ENTRIES", {})
    monkeypatch.setattr(schema, "_VALID_TABLES", {})


def _as_number(cfg):
    """Every all-digit string value as an int (and "true"/"false" as bools): equal-looking values of
    other types, which a memo compared by equality (1 == True) could confuse."""
    for table in cfg.values():
        for entry in table.values():
            for name, value in list(entry.items()):
                if isinstance(value, str) and value.isdigit():
                    entry[name] = int(value)
                elif value in ("true", "false"):
                    entry[name] = value == "true"
    return "numbers"


@pytest.mark.parametrize("mutate", [*MUTATIONS, _as_number], ids=lambda m: m.__name__)
def test_what_the_memo_kept_from_other_configs_changes_no_verdict(cfg, mutate, monkeypatch):
    """Keys, valid entries and tables are checked once per process (schema._PARSED_KEYS,
    _VALID_ENTRIES, _VALID_TABLES): a config checked after every small config (the memo full of
    their keys, entries and tables) gets the problems it gets from an empty memo, for each mutation."""
    for db in _small().values():
        assert check_config_db(copy.deepcopy(db)) == []
    mutate(cfg)
    warm = check_config_db(copy.deepcopy(cfg))
    _forget_checked(monkeypatch)
    assert check_config_db(copy.deepcopy(cfg)) == warm
    assert warm or mutate is _as_number


def test_a_table_kept_as_valid_is_still_checked_against_the_others(cfg):
    """A kept table skips only its own entries' checks: its references into other tables are
    checked on every config (here QUEUE, unchanged and kept, names schedulers that are gone)."""
    for db in _small().values():
        assert check_config_db(copy.deepcopy(db)) == []
    del cfg["SCHEDULER"]
    problems = check_config_db(cfg)
    assert problems and all(p.startswith("QUEUE|") and "SCHEDULER" in p for p in problems), problems


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"[0-9]{1,4}(\.[0-9]{1,4}){2,4}/[0-9]{0,3}", fullmatch=True)
       | st.text("0123456789./:", max_size=20))
def test_the_plain_ipv4_prefix_shortcut_agrees_with_the_full_check(value):
    """_ip_prefix decides netgen's own IPv4 prefixes by one regular expression: whatever it accepts,
    the full check accepts too, and whatever it leaves goes to the full check."""
    from netgen.nos.sonic import schema  # noqa: PLC0415

    def verdict():
        try:
            return schema._ip_prefix(value)
        except ValueError as exc:
            return str(exc)

    fast = verdict()
    with mock.patch.object(schema, "_PLAIN_IPV4_PREFIX", re.compile(r"(?!)")):
        assert verdict() == fast
