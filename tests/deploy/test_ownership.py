"""What a deploy may remove (netgen/deploy/ownership.py): netgen's sections are replaced, the
device's own are kept, everything else follows deploy.yaml's policy. Against the EOS emulator,
with state read from the emulator, never from netgen's report."""

from __future__ import annotations

import json

import pytest

from netgen.checks import DesignContext
from netgen.deploy.ownership import DEVICE_OWNED, MANAGED, NosOwnership, Policy, resolve
from netgen.intent import load_fabric
from netgen.nos.eos.driver import EOS_OWNERSHIP, blocks, carried_over, identity
from netgen.nos.sonic.driver import MANAGED_IF_RENDERED as SONIC_MANAGED_IF_RENDERED
from netgen.nos.sonic.driver import MANAGED_TABLES
from netgen.platforms.render import render_devices
from netgen.topology import expand
from tests.conftest import META, SMALL
from tests.deploy.eos_site import make_site

pytestmark = pytest.mark.deploy

NAMES = ["z01-ctsw01", "z02-rtsw001"]
# Lines netgen does not render, and a stale sFlow destination and route-map in sections it does (the
# small example declares sFlow: `sflow ` is managed there; route-maps always are).
EXTRA = ("transceiver qsfp default-mode 4x10G\nno ip icmp redirect\nip tacacs source-interface Management1\n"
         "sflow destination 192.0.2.50\nroute-map OLD-POLICY permit 10\n")
# in the order the switch prints them
UNMANAGED = ["ip tacacs source-interface Management1", "transceiver qsfp default-mode 4x10G", "no ip icmp redirect"]


@pytest.fixture
def site(tmp_path, monkeypatch):
    """Two EOS switches running the small example's configs, plus lines netgen does not render."""
    yield from make_site(tmp_path, SMALL, NAMES, True, monkeypatch, extra=EXTRA)


def _lines(config: str) -> set[str]:
    return {line.strip() for line in config.splitlines()}


# --- classification ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("section", "kind"), [
    ("router bgp 4200000001", MANAGED), ("interface Ethernet3/1/1", MANAGED), ("route-map OLD", MANAGED),
    ("interface Management1", DEVICE_OWNED), ("username admin privilege 15", DEVICE_OWNED),
    ("management ssh", DEVICE_OWNED), ("queue-monitor length", "keep"), ("sflow run", "keep"),
    ("ip tacacs source-interface Management1", "keep"),
])
def test_eos_sections_are_classified(section, kind):
    assert EOS_OWNERSHIP.classify(section) == kind


@pytest.mark.parametrize(("section", "rendered", "kind"), [
    ("sflow destination 192.0.2.50", ["sflow sample 32768"], MANAGED),  # the intent declares sFlow
    ("sflow destination 192.0.2.50", ["hostname x"], "keep"),  # it does not: the device's
    ("interface Management1", ["interface Management0"], MANAGED),
    ("ntp server 192.0.2.1", [], DEVICE_OWNED), ("ntp server 192.0.2.1", ["ntp server vrf mgmt 192.0.2.9"], MANAGED),
    ("management ssh", ["management api gnmi"], DEVICE_OWNED),  # the longest entry is the section
    ("logging buffered 10000", ["logging vrf mgmt host 192.0.2.10 514"], DEVICE_OWNED),
])
def test_service_sections_are_netgens_only_where_the_intent_renders_them(section, rendered, kind):
    assert EOS_OWNERSHIP.classify(section, rendered) == kind


def test_sonic_tables_match_by_exact_name():
    from netgen.nos.sonic.driver import SONIC_OWNERSHIP  # noqa: PLC0415

    assert SONIC_OWNERSHIP.classify("NTP") == DEVICE_OWNED
    assert SONIC_OWNERSHIP.classify("NTP_KEY") == "keep"  # not the NTP table
    assert SONIC_OWNERSHIP.classify("SFLOW_SESSION") == "keep"
    assert SONIC_OWNERSHIP.classify("BUFFER_PG") == MANAGED


def test_per_section_policy_longest_prefix_wins_and_the_flag_removes_everything_unmanaged():
    configured = NosOwnership(unmanaged=Policy.REFUSE, sections={"sflow": Policy.KEEP, "sflow destination": "remove"})
    ownership = resolve(configured, EOS_OWNERSHIP)
    assert ownership.managed == EOS_OWNERSHIP.managed  # omitted lists keep the driver's defaults
    assert [ownership.classify(s) for s in ("sflow run", "sflow destination 192.0.2.50", "lldp timer 15")] == [
        "keep", "remove", "refuse"]
    forced = resolve(configured, EOS_OWNERSHIP, remove_unmanaged=True)
    assert {forced.classify(s) for s in ("sflow run", "lldp timer 15")} == {"remove"}
    assert forced.classify("interface Management1") == DEVICE_OWNED  # never removed by the flag


def test_a_rendered_block_replaces_a_device_owned_one_and_secrets_never_reach_the_report():
    running = ("interface Management1\n   ip address 192.0.2.10/24\nusername ops secret sha512 $6$abc\n"
               "sflow run\nsnmp-server community s3cret ro\n")
    intended = "interface Management1\n   ip address 192.0.2.99/24\nend\n"
    carry, report = carried_over(running, intended, EOS_OWNERSHIP)
    assert carry == ["username ops secret sha512 $6$abc", "sflow run", "snmp-server community s3cret ro"]
    assert report.kept_device_owned == ["username ops secret ***", "snmp-server community *** ro"]
    assert report.kept_unmanaged == ["sflow run"]
    assert "$6$abc" not in json.dumps(report.as_dict()) and "s3cret" not in json.dumps(report.as_dict())


def test_a_rendered_user_replaces_the_devices_line_for_that_user_only():
    """EOS keeps one line per user: carrying the device's `username netops` after the intent's would
    put the old secret back. Other users (the one the deploy logs in with) stay the device's."""
    running = ("username admin privilege 15 role network-admin secret sha512 $6$old-admin\n"
               "username netops privilege 15 role network-admin secret sha512 $6$old-netops\n"
               "username netops ssh-key ssh-ed25519 AAAAC3Nza netops@example\n")
    intended = "username netops privilege 15 role network-admin secret sha512 $6$new\nend\n"
    carry, report = carried_over(running, intended, EOS_OWNERSHIP)
    assert carry == ["username admin privilege 15 role network-admin secret sha512 $6$old-admin",
                     "username netops ssh-key ssh-ed25519 AAAAC3Nza netops@example"]
    assert report.kept_device_owned == ["username admin privilege 15 role network-admin secret ***",
                                        "username netops ssh-key *** AAAAC3Nza netops@example"]  # over-masked: safe


def test_every_rendered_section_is_one_netgen_manages():
    """The defaults must cover what the templates write, or a deploy would keep a stale copy."""
    for path in (SMALL, META):
        loaded = load_fabric(path)
        ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
        by_nos: dict[str, list] = {}
        for device in ctx.topology.devices.values():
            by_nos.setdefault(device.nos, []).append(device)
        sample = [d for devices in by_nos.values() for d in devices[:3]] + [
            d for d in ctx.topology.devices.values() if d.role.value != "rtsw"][:6]
        rendered, _ = render_devices(ctx, sample)
        for files in rendered.values():
            for f in files:
                if f.name.endswith(".cfg"):
                    # custom_config blocks are the user's: their lines follow the ownership policy
                    # (docs/how-to/custom-config.md)
                    ours = f.content.split("\n! custom_config ", 1)[0]
                    headers = [b[0] for b in blocks(ours)]
                    # a rendered account replaces the device's line of the same identity (`username
                    # NAME`, tested above) while the device's other accounts stay device-owned
                    unmanaged = [h for h in headers if EOS_OWNERSHIP.classify(h, headers) != MANAGED
                                 and identity(h) == h]
                    assert unmanaged == [], (f.name, unmanaged)
                elif f.name == "config_db.json":
                    custom = {row.split("|", 1)[0] for row in json.loads(
                        next((g.content for g in files if g.name == "custom-config.json"), '{"config_db": {}}'))[
                            "config_db"]}
                    tables = set(json.loads(f.content)) - custom  # custom_config rows: the user's tables
                    assert tables <= set(MANAGED_TABLES) | set(SONIC_MANAGED_IF_RENDERED), f.name


# --- end to end against the emulator ---------------------------------------------------------------

def test_dry_run_lists_what_it_keeps_and_what_it_would_remove(site):
    before = {n: site.running(n) for n in NAMES}
    code, report = site.deploy("--dry-run")
    assert code == 0 and report["counts"] == {"dry_run": 2}, json.dumps(report)[:800]
    for name in NAMES:
        owned = report["devices"][name]["ownership"]
        assert owned["kept_unmanaged"] == UNMANAGED
        assert owned["removed_unmanaged"] == [] and owned["refused"] == []
        # in the order the switch prints them (`username` lines come before `management ssh`)
        assert owned["kept_device_owned"] == ["username admin privilege 15 role network-admin secret ***",
                                              "management ssh"]
        # the stale route-map and sFlow destination are in sections netgen owns: the change removes them
        assert {"route-map OLD-POLICY permit 10", "sflow destination 192.0.2.50"} <= set(owned["would_remove"])
        assert not set(UNMANAGED) & set(owned["would_remove"])
    assert {n: site.running(n) for n in NAMES} == before


def test_deploy_keeps_unmanaged_lines_and_removes_stale_managed_ones(site):
    code, report = site.deploy()
    assert code == 0 and report["counts"] == {"changed": 2}, json.dumps(report)[:800]
    for name in NAMES:
        running = _lines(site.running(name))
        assert set(UNMANAGED) <= running  # read back from the switch
        assert "route-map OLD-POLICY permit 10" not in running and "sflow destination 192.0.2.50" not in running
        assert {"management ssh", "idle-timeout 60"} <= running
    code, again = site.deploy()
    assert code == 0 and again["counts"] == {"unchanged": 2}  # keeping them is not a change


def test_remove_unmanaged_removes_them_and_reports_each_line(site):
    code, report = site.deploy("--remove-unmanaged")
    assert code == 0 and report["counts"] == {"changed": 2}, json.dumps(report)[:800]
    for name in NAMES:
        running = _lines(site.running(name))
        assert not set(UNMANAGED) & running
        assert "management ssh" in running  # device-owned: never removed by the flag
        assert report["devices"][name]["ownership"]["removed_unmanaged"] == UNMANAGED


def test_refuse_policy_leaves_the_device_untouched_and_names_the_lines(tmp_path, monkeypatch):
    ownership = {"eos": {"sections": {"transceiver": "refuse", "no ip icmp": "refuse", "ip tacacs": "remove"}}}
    for site in make_site(tmp_path, SMALL, NAMES[:1], True, monkeypatch, extra=EXTRA, ownership=ownership):
        before = site.running(NAMES[0])
        code, report = site.deploy()
        outcome = report["devices"][NAMES[0]]
        assert code == 1 and outcome["status"] == "failed"
        assert ("2 line(s) in sections whose ownership policy is refuse: transceiver qsfp default-mode 4x10G;"
                " no ip icmp redirect") in outcome["error"]
        assert site.running(NAMES[0]) == before and site.commits(NAMES[0]) == []


def test_per_section_remove_takes_only_that_section(tmp_path, monkeypatch):
    ownership = {"eos": {"sections": {"no ip icmp": "remove"}}}
    for site in make_site(tmp_path, SMALL, NAMES[:1], True, monkeypatch, extra=EXTRA, ownership=ownership):
        code, report = site.deploy()
        assert code == 0, json.dumps(report)[:800]
        running = _lines(site.running(NAMES[0]))
        assert "no ip icmp redirect" not in running and "transceiver qsfp default-mode 4x10G" in running
        assert report["devices"][NAMES[0]]["ownership"]["removed_unmanaged"] == ["no ip icmp redirect"]


def test_ownership_for_a_nos_without_a_driver_is_a_clear_input_error(tmp_path, monkeypatch):
    for site in make_site(tmp_path, SMALL, NAMES[:1], True, monkeypatch, ownership={"junos": {"unmanaged": "keep"}}):
        code, report = site.deploy("--dry-run")
        assert code == 2
        assert "ownership.junos: no deploy driver for 'junos'; use one of eos, sonic" in report["error"]


def test_a_bad_policy_names_the_field(tmp_path, monkeypatch):
    for site in make_site(tmp_path, SMALL, NAMES[:1], True, monkeypatch, ownership={"eos": {"unmanaged": "ignore"}}):
        code, report = site.deploy("--dry-run")
        assert code == 2
        assert "ownership.eos.unmanaged" in json.dumps(report), report


def test_the_bundled_deploy_yaml_spells_out_the_drivers_defaults():
    from pathlib import Path  # noqa: PLC0415

    from netgen.deploy.inventory import load_deploy  # noqa: PLC0415
    from netgen.nos.sonic.driver import SONIC_OWNERSHIP  # noqa: PLC0415

    deploy = load_deploy(Path(SMALL).parent)
    assert resolve(deploy.ownership["eos"], EOS_OWNERSHIP) == EOS_OWNERSHIP
    assert resolve(deploy.ownership["sonic"], SONIC_OWNERSHIP) == SONIC_OWNERSHIP


def test_a_users_old_secret_on_the_switch_is_replaced_and_never_reported(tmp_path, monkeypatch):
    """The switch has `username netops` with another hash than the intent's (services.users): the
    deploy leaves the intent's line only, keeps the account it logs in with, and no hash reaches the
    report."""
    old = "username netops privilege 15 role network-admin secret sha512 $6$oldsalt$" + "A" * 86
    for site in make_site(tmp_path, SMALL, NAMES[:1], True, monkeypatch, extra=old + "\n"):
        assert old in _lines(site.running(NAMES[0]))
        code, report = site.deploy()
        assert code == 0 and report["counts"] == {"changed": 1}, json.dumps(report)[:800]
        running = _lines(site.running(NAMES[0]))
        assert old not in running
        assert [line.split()[-1][:16] for line in running if line.startswith("username netops ")] == [
            "$6$smalllabdemo$"]
        assert any(line.startswith("username admin privilege 15") for line in running)
        assert "$6$oldsalt$" not in json.dumps(report) and "$6$smalllabdemo$" not in json.dumps(report)
