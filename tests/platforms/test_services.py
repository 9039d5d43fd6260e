"""Switch services (intent services:): addresses by position, and the lines and tables each NOS gets,
checked against values worked out by hand from the small example's fabric file."""

from __future__ import annotations

import json
from ipaddress import IPv4Interface

import pytest
import yaml

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms.render import render_devices
from netgen.topology import expand
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render


def _ctx(path):
    loaded = load_fabric(path)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def _render(path, *names):
    ctx = _ctx(path)
    rendered, _ = render_devices(ctx, [ctx.topology.devices[n] for n in names])
    return {n: {f.name: f.content for f in files} for n, files in rendered.items()}


def test_management_addresses_by_position():
    # 192.168.0.0/20 in 16 slots of /24: slot 0 = ATSWs (upper half), slot N = zone N; RTSW r -> .r,
    # CTSW k -> .128+k
    devices = _ctx(SMALL).topology.devices
    got = {n: devices[n].mgmt_ipv4 for n in ("atsw01", "atsw02", "z01-rtsw001", "z01-rtsw004", "z01-ctsw01",
                                            "z02-rtsw003", "z02-ctsw04")}
    assert got == {n: IPv4Interface(f"{a}/20") for n, a in (
        ("atsw01", "192.168.0.129"), ("atsw02", "192.168.0.130"), ("z01-rtsw001", "192.168.1.1"),
        ("z01-rtsw004", "192.168.1.4"), ("z01-ctsw01", "192.168.1.129"), ("z02-rtsw003", "192.168.2.3"),
        ("z02-ctsw04", "192.168.2.132"))}
    assert len({d.mgmt_ipv4 for d in devices.values()}) == len(devices) == 18


def test_adding_a_rack_moves_no_management_address_and_a_pin_wins(small_data, write_fabric):
    before = {n: d.mgmt_ipv4 for n, d in _ctx(SMALL).topology.devices.items()}
    small_data["zones"][0]["racks"] = 5
    small_data["services"]["management"]["devices"] = {"z01-ctsw02": "192.168.15.10"}
    after = {n: d.mgmt_ipv4 for n, d in _ctx(write_fabric(small_data)).topology.devices.items()}
    assert after["z01-rtsw005"] == IPv4Interface("192.168.1.5/20")
    assert after["z01-ctsw02"] == IPv4Interface("192.168.15.10/20")
    assert {n: a for n, a in after.items() if n in before and n != "z01-ctsw02"} == {
        n: a for n, a in before.items() if n != "z01-ctsw02"}


def test_eos_lines_of_every_service():
    cfg = _render(SMALL, "z02-rtsw001", "z01-ctsw01")
    rtsw, ctsw = cfg["z02-rtsw001"]["z02-rtsw001.cfg"], cfg["z01-ctsw01"]["z01-ctsw01.cfg"]
    for line in ("vrf instance mgmt", "interface Management1\n   vrf mgmt\n   ip address 192.168.2.1/20",
                 "ip route vrf mgmt 0.0.0.0/0 192.168.0.1", "ntp local-interface vrf mgmt Management1",
                 "ntp server vrf mgmt 192.0.2.127 iburst",  # services.overrides[1]: this rack's own
                 "logging vrf mgmt host 192.0.2.10 514\n", "logging vrf mgmt host 192.0.2.11 6514 protocol tcp",
                 "logging vrf mgmt source-interface Management1", "ip name-server vrf mgmt 192.0.2.53",
                 "dns domain mgmt.small-lab.example.net", "lldp timer 30", "lldp hold-time 120",
                 "sflow sample 32768", "sflow polling-interval 20", "sflow vrf mgmt destination 192.0.2.60 6343",
                 "sflow vrf mgmt source-interface Management1", "sflow run",
                 "management api gnmi\n   !\n   transport grpc mgmt\n      port 6030\n      vrf mgmt",
                 "banner login\nsmall-lab backend fabric. Authorized use only.\n"
                 "Changes go through netgen; manual edits are reverted.\nEOF\n"):
        assert line in rtsw, line
    # a modular chassis: Management0 follows the active supervisor
    assert "interface Management0\n   vrf mgmt\n   ip address 192.168.1.129/20" in ctsw
    assert "Management1" not in ctsw


def test_sonic_tables_of_every_service():
    db = json.loads(_render(SMALL, "z01-rtsw001")["z01-rtsw001"]["config_db.json"])
    assert db["MGMT_VRF_CONFIG"] == {"vrf_global": {"mgmtVrfEnabled": "true"}}
    assert db["MGMT_PORT"] == {"eth0": {"admin_status": "up", "alias": "eth0"}}
    assert db["MGMT_INTERFACE"] == {"eth0|192.168.1.1/20": {"gwaddr": "192.168.0.1"}}
    assert db["NTP"] == {"global": {"vrf": "mgmt", "src_intf": "eth0", "dhcp": "disabled"}}
    assert sorted(db["NTP_SERVER"]) == ["192.0.2.123", "192.0.2.124"]
    assert db["SYSLOG_SERVER"]["192.0.2.11"] == {"port": "6514", "protocol": "tcp", "vrf": "mgmt"}
    assert db["DNS_NAMESERVER"] == {"192.0.2.53": {}}
    assert db["DNS_OPTIONS"] == {"GLOBAL": {"search": ["mgmt.small-lab.example.net"]}}
    assert db["LLDP"] == {"GLOBAL": {"hello_time": "30", "multiplier": "4"}}
    assert db["SFLOW"]["global"] == {"admin_state": "up", "polling_interval": "20", "agent_id": "Loopback0"}
    assert db["SFLOW_COLLECTOR"] == {"collector1": {"collector_ip": "192.0.2.60", "collector_port": "6343",
                                                    "collector_vrf": "mgmt"}}
    # one session per fabric port: 16 host ports (2 hosts x 8 NICs) + 16 uplinks
    assert len(db["SFLOW_SESSION"]) == 32 and {v["sample_rate"] for v in db["SFLOW_SESSION"].values()} == {"32768"}
    assert db["GNMI"] == {"gnmi": {"port": "6030", "user_auth": "password", "vrf": "mgmt"}}
    assert db["BANNER_MESSAGE"]["global"]["login"].count("\n") == 1


def test_overrides_replace_a_section_for_their_scope_and_the_narrowest_wins():
    # the example: services.ntp 192.0.2.123/.124; zone 2 -> .125/.126; z02-rtsw001 -> .127;
    # ATSWs -> sFlow 1:65536 (everyone else 1:32768)
    cfg = _render(SMALL, "z02-rtsw001", "z02-rtsw002", "z02-ctsw01", "z01-ctsw01", "atsw01", "z01-rtsw001")

    def ntp(name):
        text = cfg[name][f"{name}.cfg"]
        return [line.split()[4] for line in text.splitlines() if line.startswith("ntp server vrf mgmt ")]

    assert ntp("z02-rtsw001") == ["192.0.2.127"]
    assert ntp("z02-rtsw002") == ntp("z02-ctsw01") == ["192.0.2.125", "192.0.2.126"]
    assert ntp("z01-ctsw01") == ntp("atsw01") == ["192.0.2.123", "192.0.2.124"]
    db = json.loads(cfg["z01-rtsw001"]["config_db.json"])
    assert sorted(db["NTP_SERVER"]) == ["192.0.2.123", "192.0.2.124"]
    assert "sflow sample 65536\n" in cfg["atsw01"]["atsw01.cfg"]
    assert "sflow sample 32768\n" in cfg["z01-ctsw01"]["z01-ctsw01.cfg"]
    assert {s["sample_rate"] for s in db["SFLOW_SESSION"].values()} == {"32768"}


@pytest.mark.parametrize(("override", "expected"), [
    ({"ntp": {"servers": ["192.0.2.9"]}}, "an override needs tiers, zones or devices"),
    ({"zones": [1]}, "give at least one of ntp, syslog, dns, lldp, sflow, telemetry, banner"),
    ({"zones": [1], "management": {"prefix": "10.0.0.0/24", "gateway": "10.0.0.1"}}, "management"),
])
def test_bad_overrides_are_exit_2_naming_the_field(small_data, write_fabric, override, expected):
    small_data["services"]["overrides"] = [override]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "services.overrides[0]" in result.stderr and expected in result.stderr, result.stderr


def test_an_override_needs_the_management_network_too(small_data, write_fabric):
    for name in ("ntp", "syslog", "dns", "sflow", "telemetry", "aaa", "snmp"):
        small_data["services"].pop(name)
    del small_data["services"]["management"]
    small_data["services"]["overrides"] = [{"zones": [2], "ntp": {"servers": ["192.0.2.125"]}}]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "ntp reach their servers through the management network" in result.stderr


def test_a_fabric_without_services_renders_none_of_them(small_data, write_fabric):
    del small_data["services"]
    del small_data["bgp"]["password"]  # the one secret outside services
    cfg = _render(write_fabric(small_data), "z02-rtsw001", "z01-rtsw001")
    eos = cfg["z02-rtsw001"]["z02-rtsw001.cfg"]
    assert not any(w in eos for w in ("Management", "vrf instance", "ntp ", "sflow", "lldp", "banner", "logging",
                                      "tacacs", "aaa ", "netgen-secret", "snmp"))
    db = json.loads(cfg["z01-rtsw001"]["config_db.json"])
    assert not {"MGMT_INTERFACE", "NTP", "SYSLOG_SERVER", "SFLOW", "GNMI", "BANNER_MESSAGE", "AAA", "TACPLUS",
                "TACPLUS_SERVER", "SNMP_USER", "SNMP_AGENT_ADDRESS_CONFIG"} & set(db)


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("banner.login", "hello\nEOF\nmore", "a line 'EOF' would end the banner early"),
    ("banner.login", "! not a comment", "starting with '!'"),
    ("banner.login", "tab\there", "allowed: text matching ^[ -~\\n]*$"),
    ("sflow.sample_rate", 1024, "greater than or equal to 16384"),
    ("sflow.collectors", [{"address": "192.0.2.1"}] * 3, "at most 2"),
    ("management.gateway", "10.0.0.1", "gateway 10.0.0.1 is outside prefix 192.168.0.0/20"),
    ("dns.domain", "bad_domain!", "services.dns.domain"),
    ("aaa.login", ["ldap", "local"], "services.aaa.login"),
    ("aaa.login", ["local", "local"], "login: a method is given twice"),
    ("aaa.tacacs.servers", ["192.0.2.49", "192.0.2.49"], "servers: an address is given twice"),
    ("aaa.tacacs.servers", [f"192.0.2.{n}" for n in range(9)], "at most 8"),
    ("aaa.tacacs.timeout_s", 61, "less than or equal to 60"),
    ("aaa.tacacs.key", {"env": "A", "file": "b"}, "give exactly one of env, file"),
    ("aaa.tacacs.key", "clear-text-key", "services.aaa.tacacs.key"),
    ("snmp.users", [], "at least 1 item"),
    ("snmp.users", [{"name": "abc", "auth_key": {"env": "A"}, "priv_key": {"env": "B"}}],
     "services.snmp.users[0].name"),
    ("snmp.users", [{"name": "net:mon", "auth_key": {"env": "A"}, "priv_key": {"env": "B"}}], "services.snmp"),
    ("snmp.users", [{"name": "netmon", "auth_key": {"env": "A"}, "priv_key": {"env": "B"}}] * 2,
     "users: a name is given twice"),
])
def test_bad_service_input_is_exit_2_naming_the_field(small_data, write_fabric, path, value, expected):
    node = small_data["services"]
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"services.{parents[0]}" in result.stderr and expected in result.stderr, result.stderr
    assert "clear-text-key" not in result.stderr  # a secret written in place of its reference is not echoed


def test_aaa_login_and_servers_must_agree(small_data, write_fabric):
    small_data["services"]["aaa"]["login"] = ["local"]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "tacacs: its servers are not used: put 'tacacs' in login" in result.stderr
    del small_data["services"]["aaa"]["tacacs"]
    small_data["services"]["aaa"]["login"] = ["tacacs", "local"]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "login: 'tacacs' needs aaa.tacacs (servers, key)" in result.stderr


def test_aaa_renders_a_placeholder_never_the_key(small_data, write_fabric, monkeypatch):
    """The key is read only by the deploy: render works without it, and even with it set no
    rendered file holds it."""
    monkeypatch.setenv("NETGEN_TEST_TACACS_KEY", "Never-In-A-File-77")
    small_data["services"]["aaa"]["tacacs"]["key"] = {"env": "NETGEN_TEST_TACACS_KEY"}
    path = write_fabric(small_data)
    cfg = _render(path, "z02-rtsw001", "z01-rtsw001", "z01-ctsw01")
    every = json.dumps(cfg)
    assert "Never-In-A-File-77" not in every
    rtsw, ctsw = cfg["z02-rtsw001"]["z02-rtsw001.cfg"], cfg["z01-ctsw01"]["z01-ctsw01.cfg"]
    assert ("\n!\ntacacs-server host 192.0.2.49 vrf mgmt timeout 5 key 0 <netgen-secret/services.aaa.tacacs.key>\n"
            "tacacs-server host 192.0.2.50 vrf mgmt timeout 5 key 0 <netgen-secret/services.aaa.tacacs.key>\n!\n"
            "ip tacacs vrf mgmt source-interface Management1\n!\n"
            "aaa authentication login default group tacacs+ local\n"
            "aaa authorization exec default group tacacs+ local\n") in rtsw
    assert "ip tacacs vrf mgmt source-interface Management0" in ctsw  # the chassis' management port
    db = json.loads(cfg["z01-rtsw001"]["config_db.json"])
    assert db["AAA"] == {"authentication": {"login": "tacacs+,local"}}
    assert db["TACPLUS"] == {"global": {"auth_type": "pap", "timeout": "5", "src_intf": "eth0",
                                        "passkey": "<netgen-secret/services.aaa.tacacs.key>"}}
    # hostcfgd tries the highest priority first: the intent's first server
    assert db["TACPLUS_SERVER"] == {"192.0.2.49": {"priority": "2", "tcp_port": "49", "vrf": "mgmt"},
                                    "192.0.2.50": {"priority": "1", "tcp_port": "49", "vrf": "mgmt"}}
    monkeypatch.delenv("NETGEN_TEST_TACACS_KEY")
    assert _render(path, "z02-rtsw001") == {"z02-rtsw001": cfg["z02-rtsw001"]}


def test_snmpv3_renders_placeholders_for_both_passphrases():
    cfg = _render(SMALL, "z02-rtsw001", "z01-rtsw001")
    rtsw = cfg["z02-rtsw001"]["z02-rtsw001.cfg"]
    assert ("\n!\nsnmp-server view netgen-all iso included\nsnmp-server group netgen-ro v3 priv read netgen-all\n"
            "snmp-server user netmon netgen-ro v3 auth sha <netgen-secret/services.snmp.users[0].auth_key>"
            " priv aes <netgen-secret/services.snmp.users[0].priv_key>\nsnmp-server vrf mgmt\n") in rtsw
    db = json.loads(cfg["z01-rtsw001"]["config_db.json"])
    assert db["SNMP_USER"] == {"netmon": {
        "SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO", "SNMP_USER_AUTH_TYPE": "SHA",
        "SNMP_USER_AUTH_PASSWORD": "<netgen-secret/services.snmp.users[0].auth_key>",
        "SNMP_USER_ENCRYPTION_TYPE": "AES",
        "SNMP_USER_ENCRYPTION_PASSWORD": "<netgen-secret/services.snmp.users[0].priv_key>"}}
    # the agent on this switch's management address, default port, in VRF mgmt
    assert db["SNMP_AGENT_ADDRESS_CONFIG"] == {"192.168.1.1||mgmt": {}}


def test_local_login_only_renders_no_tacacs(small_data, write_fabric):
    small_data["services"]["aaa"] = {"login": ["local"]}
    cfg = _render(write_fabric(small_data), "z02-rtsw001", "z01-rtsw001")
    rtsw = cfg["z02-rtsw001"]["z02-rtsw001.cfg"]
    assert "aaa authentication login default local\naaa authorization exec default local\n" in rtsw
    assert "tacacs" not in rtsw and "netgen-secret/services.aaa" not in rtsw
    db = json.loads(cfg["z01-rtsw001"]["config_db.json"])
    assert db["AAA"] == {"authentication": {"login": "local"}} and "TACPLUS" not in db


def test_services_need_a_management_network(small_data, write_fabric):
    del small_data["services"]["management"]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2
    assert "reach their servers through the management network: add services.management" in result.stderr


def test_the_small_example_declares_every_section():
    services = yaml.safe_load(SMALL.read_text())["services"]
    from netgen.intent.services import Services  # noqa: PLC0415

    assert set(services) == set(Services.model_fields)


def _radius(data, key_env="NETGEN_TEST_RADIUS_KEY"):
    data["services"]["aaa"] = {"radius": {"servers": ["192.0.2.81", "192.0.2.82"], "key": {"env": key_env},
                                          "timeout_s": 7, "retransmit": 2}, "login": ["radius", "local"]}
    return data


def test_radius_renders_placeholders_in_both_nos_and_sonic_orders_by_priority(small_data, write_fabric, monkeypatch):
    monkeypatch.setenv("NETGEN_TEST_RADIUS_KEY", "Radius-Never-In-A-File-9")
    cfg = _render(write_fabric(_radius(small_data)), "z02-rtsw001", "z01-rtsw001", "z01-ctsw01")
    assert "Radius-Never-In-A-File-9" not in json.dumps(cfg)
    rtsw = cfg["z02-rtsw001"]["z02-rtsw001.cfg"]
    ph = "<netgen-secret/services.aaa.radius.key>"
    assert (f"\n!\nradius-server host 192.0.2.81 vrf mgmt timeout 7 retransmit 2 key 0 {ph}\n"
            f"radius-server host 192.0.2.82 vrf mgmt timeout 7 retransmit 2 key 0 {ph}\n!\n"
            "ip radius vrf mgmt source-interface Management1\n!\n"
            "aaa authentication login default group radius local\n"
            "aaa authorization exec default group radius local\n") in rtsw
    assert "tacacs" not in rtsw
    assert "ip radius vrf mgmt source-interface Management0" in cfg["z01-ctsw01"]["z01-ctsw01.cfg"]
    db = json.loads(cfg["z01-rtsw001"]["config_db.json"])  # passed SONiC's YANG rules (schema.py) at render
    assert db["AAA"] == {"authentication": {"login": "radius,local"}}
    assert db["RADIUS"] == {"global": {"auth_type": "pap", "timeout": "7", "retransmit": "2", "passkey": ph}}
    # hostcfgd sorts servers by priority, highest first: the intent's first server is tried first
    assert db["RADIUS_SERVER"] == {
        "192.0.2.81": {"priority": "2", "auth_port": "1812", "vrf": "mgmt", "src_intf": "eth0"},
        "192.0.2.82": {"priority": "1", "auth_port": "1812", "vrf": "mgmt", "src_intf": "eth0"}}
    assert "TACPLUS" not in db and "TACPLUS_SERVER" not in db


@pytest.mark.parametrize(("change", "expected"), [
    (lambda aaa: aaa.update(login=["radius", "tacacs"],
                            tacacs={"servers": ["192.0.2.49"], "key": {"env": "A"}}),
     "login: use one remote method, tacacs or radius"),
    (lambda aaa: aaa.update(login=["local"]), "radius: its servers are not used: put 'radius' in login"),
    (lambda aaa: aaa.pop("radius"), "login: 'radius' needs aaa.radius (servers, key)"),
    (lambda aaa: aaa["radius"].update(retransmit=11), "less than or equal to 10"),
    (lambda aaa: aaa["radius"].update(servers=["192.0.2.81"] * 2), "servers: an address is given twice"),
])
def test_bad_radius_input_is_exit_2_naming_the_field(small_data, write_fabric, change, expected):
    data = _radius(small_data)
    change(data["services"]["aaa"])
    result = run_cli("validate", str(write_fabric(data)))
    assert result.exit_code == 2 and "services.aaa" in result.stderr and expected in result.stderr, result.stderr


def test_an_aaa_override_gives_the_atsws_radius_and_keeps_tacacs_elsewhere():
    cfg = _render(SMALL, "atsw01", "z01-ctsw01")
    atsw, ctsw = cfg["atsw01"]["atsw01.cfg"], cfg["z01-ctsw01"]["z01-ctsw01.cfg"]
    ph = "<netgen-secret/services.overrides[3].aaa.radius.key>"  # named by the section it comes from
    assert f"radius-server host 192.0.2.81 vrf mgmt timeout 5 retransmit 3 key 0 {ph}\n" in atsw
    assert "aaa authentication login default group radius local\n" in atsw and "tacacs" not in atsw
    assert "tacacs-server host 192.0.2.49 vrf mgmt timeout 5 key 0 <netgen-secret/services.aaa.tacacs.key>" in ctsw
    assert "radius" not in ctsw
    result = run_cli("show", str(SMALL), "--device", "atsw01", "--json")
    settings = {s["name"]: s for s in json.loads(result.stdout)["settings"]}
    assert settings["aaa"]["source"] == "services.overrides[3].aaa"
    assert settings["aaa"]["value"].startswith("login radius, local; RADIUS 192.0.2.81, 192.0.2.82")


def test_two_aaa_overrides_of_one_layer_on_a_switch_are_a_design_error(small_data, write_fabric):
    small_data["services"]["overrides"].append({"tiers": ["atsw"], "aaa": {"login": ["local"]}})
    result = run_cli("validate", str(write_fabric(small_data)))
    shown = result.stdout + result.stderr
    assert result.exit_code == 1 and "NG603" in shown
    assert "services.overrides[3].aaa and services.overrides[4].aaa (both of layer tier)" in shown
