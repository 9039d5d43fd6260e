"""`netgen sot push` against a real Nautobot: the small example into an empty Nautobot, a second push
that changes nothing, drift put back, a hand-made object left alone, and one more rack that pushes
exactly its own objects. What Nautobot holds is read from its API by the test, never from netgen's
report. The tests run in order on one Nautobot (each builds on the one before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import SMALL, run_cli, topology_of

pytestmark = pytest.mark.sot

# The small example with two racks a zone instead of four: every kind of object and every check of the
# whole push, in about half the objects. Nautobot's API is the slowest part of CI (a batch of cables
# takes seconds on a loaded machine); the push's own cost grows with the objects, not the racks.
FABRIC = yaml.safe_load(SMALL.read_text())
for _zone in FABRIC["zones"]:
    _zone["racks"] = 2
FABRIC["aggregation"]["expected_oversubscription"] = "1:4"  # 2 x 400G up for 2 racks x 4 x 400G down
NAME = FABRIC["name"]
ZONE = FABRIC["zones"][0]


@pytest.fixture(scope="module")
def site(nautobot, tmp_path_factory, monkeypatch_module):
    nautobot.reset()
    folder = tmp_path_factory.mktemp("sot")
    for item in SMALL.parent.glob("*.yaml"):
        (folder / item.name).write_text(item.read_text())
    (folder / "fabric.yaml").write_text(yaml.safe_dump(FABRIC, sort_keys=False))
    (folder / "secrets").mkdir()
    for item in (SMALL.parent / "secrets").iterdir():
        (folder / "secrets" / item.name).write_text(item.read_text())
    monkeypatch_module.setenv("NAUTOBOT_TOKEN", nautobot.token)
    # A busy machine slows Nautobot, not netgen: a batch of 50 cables took over 120 s (the default
    # read timeout) while other work loaded CI's two cores. The test waits for Nautobot's answers,
    # so it gives each request as long as CI could ever take; the limits themselves are tested
    # against a scripted server (test_hostile_server.py).
    monkeypatch_module.setenv("NETGEN_HTTP_READ_TIMEOUT", "1800")
    monkeypatch_module.setenv("NETGEN_HTTP_DEADLINE", "1800")
    return folder / "fabric.yaml"


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def push(nautobot, fabric: Path, *args: str) -> dict:
    result = run_cli("sot", "push", str(fabric), "--nautobot", nautobot.url, "--json", *args)
    assert result.exit_code == 0, result.output
    assert nautobot.token not in result.output
    return json.loads(result.stdout)


def kinds(report: dict) -> dict[str, dict]:
    return {k["kind"]: k for k in report["kinds"]}


def test_1_a_dry_run_into_an_empty_nautobot_changes_nothing(nautobot, site, monkeypatch):
    with monkeypatch.context() as mp:
        mp.setenv("NAUTOBOT_TOKEN", "0" * 40)
        refused = run_cli("sot", "push", str(site), "--nautobot", nautobot.url, "--dry-run")
        assert refused.exit_code == 2 and "Nautobot refused the token (" in refused.output
    report = push(nautobot, site, "--dry-run")
    assert report["dry_run"] and report["changes"] > 800
    assert kinds(report)["device"]["created"] == 22
    assert nautobot.get("/api/dcim/devices/") == [] and nautobot.get("/api/extras/custom-fields/") == []


def test_2_the_small_example_lands_whole(nautobot, site):
    report = push(nautobot, site)
    assert report["changes"] == sum(k["created"] for k in report["kinds"]) + len(report["prepared"])
    topo = topology_of(site)
    hosts = {nic.host for nic in topo.host_nics}
    devices = {d["name"]: d for d in nautobot.get("/api/dcim/devices/", location=NAME, depth="1")}
    assert set(devices) == set(topo.devices) | hosts  # 14 switches, 8 hosts
    for name, device in topo.devices.items():
        held = devices[name]
        assert held["custom_fields"]["netgen_asn"] == device.asn
        assert held["role"]["name"] == device.role.value and held["platform"]["name"] == device.nos
        assert held["device_type"]["model"] == device.model and held["status"]["name"] == "Active"
    # every cabled port, each host NIC and every loopback as an interface
    interfaces = nautobot.get("/api/dcim/interfaces/", location=NAME, depth="1")
    by_device: dict[str, set[str]] = {}
    for item in interfaces:
        by_device.setdefault(item["device"]["name"], set()).add(item["name"])
    for name in topo.devices:
        assert by_device[name] == {p.name for p in topo.ports[name]} | {"Loopback0"}
    assert all(by_device[h] == {f"nic{n}" for n in range(1, ZONE["nics_per_host"] + 1)} for h in hosts)
    # the cables are `netgen cabling`'s, end to end
    plan_file = site.parent / "cabling.json"
    assert run_cli("cabling", str(site), "--format", "json", "-o", str(plan_file)).exit_code == 0
    planned = {frozenset({(c["a_device"], c["a_port"]), (c["b_device"], c["b_port"])})
               for c in json.loads(plan_file.read_text())["cables"]}
    ends = {i["id"]: (i["device"]["name"], i["name"]) for i in interfaces}
    cables = nautobot.get("/api/dcim/cables/", location=NAME)
    held = {frozenset({ends[c["termination_a_id"]], ends[c["termination_b_id"]]}) for c in cables}
    assert held == planned and len(cables) == 144  # 2 x (2 racks x 16 NIC + 2 x 16 uplink + 4 CTSWs x 2 up)
    assert all(c["status"]["id"] and c["length_unit"]["value"] == "m" for c in cables)
    # addresses in the fabric's namespace, each on the interface the topology gives it
    addresses = {a["address"]: a for a in nautobot.get("/api/ipam/ip-addresses/", namespace=NAME)}
    rtsw = topo.devices["z01-rtsw001"]
    assert str(rtsw.loopback_ipv4) in addresses and str(rtsw.host_gateway_ipv4) in addresses
    link = next(k for k in topo.links if k.lower.device == "z01-rtsw001")
    on_port = nautobot.get("/api/ipam/ip-addresses/", device="z01-rtsw001", interfaces=next(
        i["id"] for i in interfaces if (i["device"]["name"], i["name"]) == ("z01-rtsw001", link.lower.port)))
    assert {a["address"] for a in on_port} == {str(link.lower.ipv4), str(link.lower.ipv6)}
    prefixes = {p["prefix"] for p in nautobot.get("/api/ipam/prefixes/", namespace=NAME)}
    assert {"10.0.0.0/20", "10.1.0.0/16", "10.128.0.0/16", str(rtsw.host_subnet_ipv4)} <= prefixes
    # one autonomous system per ASN in the BGP models app
    asns = {a["asn"]: a["description"] for a in nautobot.get("/api/plugins/bgp/autonomous-systems/")}
    assert set(asns) == {d.asn for d in topo.devices.values()}
    assert asns[rtsw.asn] == "z01-rtsw001"


def test_3_a_second_push_changes_nothing_and_says_so(nautobot, site):
    report = push(nautobot, site)
    assert report["changes"] == 0 and report["prepared"] == []
    assert all(k["created"] == k["updated"] == 0 and not k["stale"] for k in report["kinds"])
    text = run_cli("sot", "push", str(site), "--nautobot", nautobot.url)
    assert text.exit_code == 0 and "nothing to change" in text.output


def test_4_drift_is_put_back_and_what_netgen_did_not_make_is_left_alone(nautobot, site):
    port = next(i for i in nautobot.get("/api/dcim/interfaces/", device="z01-rtsw001") if i["name"] == "Ethernet448")
    nautobot.call("PATCH", f"/api/dcim/interfaces/{port['id']}/", {"description": "moved by hand", "mtu": 1500})
    # a device someone else made in the fabric's location: netgen has no such device and never touches it
    spare = nautobot.call("POST", "/api/dcim/devices/", {
        "name": "spare-switch", "device_type": {"model": "arista-7060x6-64pe-sonic"}, "role": {"name": "rtsw"},
        "location": {"name": NAME}, "status": "Planned"})
    dry = kinds(push(nautobot, site, "--dry-run"))
    assert dry["interface"]["updates"] == [
        "z01-rtsw001:Ethernet448: mtu 1500 -> 9100; description 'moved by hand' -> 'z01-ctsw01:Ethernet3/1/1'"]
    report = push(nautobot, site)
    assert report["changes"] == 1
    fixed = nautobot.call("GET", f"/api/dcim/interfaces/{port['id']}/")
    assert (fixed["mtu"], fixed["description"]) == (9100, "z01-ctsw01:Ethernet3/1/1")
    assert nautobot.call("GET", f"/api/dcim/devices/{spare['id']}/")["status"]["id"] == spare["status"]["id"]
    assert kinds(report)["device"]["stale"] == []  # not netgen's: not even reported as netgen's stale object


def test_5_one_more_rack_pushes_exactly_its_own_objects(nautobot, site):
    data = yaml.safe_load(site.read_text())
    data["zones"][0]["racks"] = ZONE["racks"] + 1
    # zone 1's CTSWs then run 1:6, not the declared 1:4: the declaration goes (it makes no object)
    del data["aggregation"]["expected_oversubscription"]
    site.write_text(yaml.safe_dump(data, sort_keys=False))
    hosts, nics = ZONE["hosts_per_rack"], ZONE["nics_per_host"]
    uplinks = ZONE["ctsw_count"] * ZONE["links_per_rtsw_ctsw"]
    before = {d["name"] for d in nautobot.get("/api/dcim/devices/", location=NAME)}
    report = kinds(push(nautobot, site))
    # the RTSW and its hosts; the RTSW's uplinks, host ports and loopback, the CTSWs' new downlinks,
    # the hosts' NICs; the NIC cables and the uplink cables; loopback v4+v6, both ends of each uplink
    # in v4 and v6, the host gateway and the hosts' addresses; the rack subnet; the RTSW's ASN
    expected = {"device": 1 + hosts, "interface": uplinks + hosts * nics + 1 + uplinks + hosts * nics,
                "cable": hosts * nics + uplinks, "ip_address": 2 + 4 * uplinks + 1 + hosts * nics,
                "prefix": 1, "asn": 1}
    assert {kind: report[kind]["created"] for kind in expected} == expected
    assert all(k["updated"] == 0 for k in report.values())
    after = {d["name"] for d in nautobot.get("/api/dcim/devices/", location=NAME)}
    assert after - before == {"z01-rtsw003", "z01-r003-h01", "z01-r003-h02"}
    assert push(nautobot, site)["changes"] == 0


def test_6_pull_feeds_a_dry_run_deploy(nautobot, site, tmp_path, monkeypatch):
    """The operator gives z02-rtsw001 its management address and serial in Nautobot and takes
    z02-rtsw002 out of service; `netgen sot pull` brings both into deploy.sot.yaml, and a dry-run
    deploy reaches the first at that address (deploy.yaml names no host: its pattern does not
    resolve) and leaves the second out."""
    device = nautobot.get("/api/dcim/devices/", name="z02-rtsw001")[0]
    loopback = nautobot.get("/api/dcim/interfaces/", device="z02-rtsw001", name="Loopback0")[0]
    nautobot.call("POST", "/api/ipam/prefixes/", {"prefix": "127.0.0.0/8", "namespace": {"name": NAME},
                                                   "status": "Active"})
    address = nautobot.call("POST", "/api/ipam/ip-addresses/", {"address": "127.0.0.1/8", "namespace": NAME,
                                                                 "status": "Active"})
    nautobot.call("POST", "/api/ipam/ip-address-to-interface/", {"ip_address": address["id"],
                                                                  "interface": loopback["id"]})
    nautobot.call("PATCH", f"/api/dcim/devices/{device['id']}/", {"primary_ip4": address["id"], "serial": "JPE1234"})
    other = nautobot.get("/api/dcim/devices/", name="z02-rtsw002")[0]
    nautobot.call("PATCH", f"/api/dcim/devices/{other['id']}/", {"status": "Offline"})

    pulled = run_cli("sot", "pull", str(site), "--nautobot", nautobot.url, "--json")
    assert pulled.exit_code == 0, pulled.output
    data = json.loads(pulled.stdout)
    assert data["devices"]["z02-rtsw001"] == {"host": "127.0.0.1", "serial": "JPE1234", "status": "Active"}
    assert data["out_of_service"] == {"z02-rtsw002": "Offline"} and data["missing"] == []
    written = yaml.safe_load((site.parent / "deploy.sot.yaml").read_text())
    assert written["devices"]["z02-rtsw001"]["host"] == "127.0.0.1" and nautobot.token not in pulled.output

    # the two switches as emulated EOS devices behind SSH on 127.0.0.1, converged on the fabric
    from tests.deploy.eos_site import make_site  # noqa: PLC0415

    sites = make_site(tmp_path, site, ["z02-rtsw001", "z02-rtsw002"], True, monkeypatch)
    eos = next(sites)
    try:
        access = yaml.safe_load((eos.fabric.parent / "deploy.yaml").read_text())
        access["management"] = {"host_pattern": "{name}.invalid",  # only Nautobot's address can work
                                "devices": {n: {"port": d["port"]} for n, d in access["management"]["devices"].items()}}
        (eos.fabric.parent / "deploy.yaml").write_text(yaml.safe_dump(access))
        assert (eos.fabric.parent / "deploy.sot.yaml").exists()  # the site copied the fabric's folder
        code, report = eos.deploy("--dry-run")
        assert code == 0, report
        assert report["devices"]["z02-rtsw001"]["status"] == "dry_run"
        assert "z02-rtsw002" not in report["devices"]
        assert report["excluded"] == {
            "z02-rtsw002": "deploy.sot.yaml: status Offline (a change needs Active or Staged)"}
    finally:
        sites.close()


def test_7_a_replacement_joins_and_its_serial_lands_in_nautobot(nautobot, site, tmp_path, monkeypatch):
    """`netgen replace --join --nautobot`: z01-ctsw01 replaced by an emulated EOS switch booted from
    its day-0 startup-config (drained); once it joins, the serial it reports over SSH is what
    Nautobot holds, read from Nautobot's API by the test; the switch is undrained last."""
    from tests.deploy.eos_site import make_site  # noqa: PLC0415

    folder = tmp_path / "ztp"
    made = run_cli("replace", str(SMALL), "z01-ctsw01", "--day0", str(folder), "--url", "http://ztp.test/n")
    assert made.exit_code == 0, made.output
    booted = {"z01-ctsw01": (folder / "z01-ctsw01" / "startup-config").read_text()}
    sites = make_site(tmp_path, SMALL, ["z01-ctsw01"], True, monkeypatch, booted=booted)
    eos = next(sites)
    try:
        result = run_cli("replace", str(eos.fabric), "z01-ctsw01", "--join", "--wait", "5", "--nautobot", nautobot.url,
                         "--json")
        report = json.loads(result.stdout)
        assert result.exit_code == 0, report
        serial = eos.fleet.device("z01-ctsw01").serial
        assert report["serial"] == serial and report["sot"] == {"serial": serial, "error": ""}
        assert nautobot.get("/api/dcim/devices/", name="z01-ctsw01")[0]["serial"] == serial
        assert report["undrain"]["switches"][0]["action"] == "undrained"
        assert nautobot.token not in result.output
    finally:
        sites.close()
