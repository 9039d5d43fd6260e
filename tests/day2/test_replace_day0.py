"""`netgen replace --day0`: the replacement's files for each NOS of the small example (SONiC RTSW,
EOS CTSW), built without a switch: drained, no secret, the ZTP file first and as SONiC's ZTP
document describes it; a URL that could break out of the script or the JSON is refused."""

from __future__ import annotations

import json

import pytest

from netgen.api import check
from netgen.day2.replace import ReplaceError, day0_of, served_url
from netgen.nos.eos.drain import drain_state as eos_drain_state
from netgen.platforms.frr_drain import drained_state
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

URL = "http://ztp.example.net:8080/netgen"
TACACS_KEY = (SMALL.parent / "secrets" / "tacacs.key").read_text().strip()


@pytest.fixture(scope="module")
def ctx():
    return check(SMALL).ctx


def test_sonic_boots_drained_from_ztp_json_frr_conf_first(ctx):
    made = day0_of(ctx, "z01-rtsw001", URL)
    assert next(iter(made.files)) == made.ztp_file == "ztp.json"
    ztp = json.loads(made.files["ztp.json"])["ztp"]
    base = f"{URL}/z01-rtsw001"
    # lexical order: frr.conf in place before configdb-json's `config reload` starts FRR from it
    assert sorted(ztp) == ["01-frr-conf", "02-configdb-json"]
    assert ztp["01-frr-conf"]["plugin"]["url"]["source"] == f"{base}/install-frr-conf.sh"
    assert ztp["02-configdb-json"]["url"] == {"source": f"{base}/config_db.json",
                                              "destination": "/etc/sonic/config_db.json"}
    assert all(section["halt-on-failure"] is True for section in ztp.values())
    assert drained_state(made.files["frr.conf"]) is True
    script = made.files["install-frr-conf.sh"]
    assert script.startswith("#!/bin/sh\n") and f"{base}/frr.conf\n" in script
    assert all(TACACS_KEY not in text for text in made.files.values())
    assert made.as_dict()["dhcp_option_67"] == f"{base}/ztp.json"


def test_eos_boots_drained_from_its_startup_config(ctx):
    made = day0_of(ctx, "z01-ctsw01", URL)
    assert list(made.files) == ["startup-config"]
    assert eos_drain_state(made.files["startup-config"]) is True
    assert TACACS_KEY not in made.files["startup-config"]


@pytest.mark.parametrize("url", ["ftp://x/y", "http://", "http://x/y?a=b", "http://x/$(reboot)", "http://x/a b",
                                 "http://x/a'b", "http://x/a\nb", 'http://x/"', "http://x/a;b"])
def test_a_url_that_is_no_plain_http_folder_is_refused(url):
    with pytest.raises(ReplaceError, match="--url"):
        served_url(url, "z01-rtsw001")


def test_the_command_writes_the_files_and_says_where_dhcp_points(tmp_path):
    result = run_cli("replace", str(SMALL), "z01-rtsw001", "--day0", str(tmp_path), "--url", URL, "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report
    assert sorted(p.name for p in (tmp_path / "z01-rtsw001").iterdir()) == [
        "config_db.json", "frr.conf", "install-frr-conf.sh", "ztp.json"]
    result = run_cli("replace", str(SMALL), "z01-rtsw001", "--day0", str(tmp_path), "--url", "http://x/$(id)", "--json")
    assert result.exit_code == 2 and "--url" in json.loads(result.stdout)["error"]


@pytest.mark.parametrize(("name", "files", "why"), [
    ("z01-rtsw001", {"frr.conf": "hostname z01-rtsw001\n", "config_db.json": "{}\n"}, "router bgp"),
    ("z01-rtsw001", {"config_db.json": "{}\n"}, "frr.conf"),
    ("z02-rtsw001", {"z02-rtsw001.cfg": "hostname z02-rtsw001\n"}, "outbound route-map"),
])
def test_files_it_cannot_drain_are_a_replace_error_naming_the_switch(ctx, name, files, why):
    """A config with nothing to drain through (or a file missing) gives no day-0 files: a ReplaceError
    (exit 2 at the command), never a traceback."""
    from netgen.day2.replace import day0  # noqa: PLC0415

    with pytest.raises(ReplaceError, match=name) as caught:
        day0(ctx, ctx.topology.devices[name], files, "http://ztp.example.net/day0")
    assert why in str(caught.value)


@pytest.mark.parametrize("link", ["dir", "device", "file"])
def test_day0_is_never_written_through_a_link(tmp_path, link):
    """As `render -o`: DIR, its device folder or a file in it that is a symbolic link is refused
    (exit 2) and nothing lands where it points. Before: written through the link."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    day0 = tmp_path / "day0"
    if link == "dir":
        day0.symlink_to(elsewhere)
    else:
        day0.mkdir()
        if link == "device":
            (day0 / "z01-rtsw001").symlink_to(elsewhere)
        else:
            (day0 / "z01-rtsw001").mkdir()
            (day0 / "z01-rtsw001" / "config_db.json").symlink_to(elsewhere / "stolen.json")
    result = run_cli("replace", str(SMALL), "z01-rtsw001", "--day0", str(day0), "--url", URL, "--json")
    assert result.exit_code == 2 and "symbolic link" in result.stdout, result.output
    assert list(elsewhere.iterdir()) == []
