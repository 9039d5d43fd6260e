"""bgp.password: the TCP MD5 key of every fabric session, by reference. Rendered files carry only a
placeholder, once per peer group (both address families), on both NOSes; render never reads the key."""

from __future__ import annotations

import json
import re

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms.render import render_devices
from netgen.topology import expand
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

PLACEHOLDER = "<netgen-secret/bgp.password>"


def _render(path, *names):
    loaded = load_fabric(path)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    rendered, _ = render_devices(ctx, [ctx.topology.devices[n] for n in names])
    return {n: {f.name: f.content for f in files} for n, files in rendered.items()}


def _lines(text: str, pattern: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if re.search(pattern, line)]


def test_every_peer_group_gets_the_placeholder_and_no_file_the_key(small_data, write_fabric, monkeypatch):
    monkeypatch.setenv("NETGEN_TEST_BGP_KEY", "Never-In-A-File-42")
    small_data["bgp"]["password"] = {"env": "NETGEN_TEST_BGP_KEY"}
    path = write_fabric(small_data)
    cfg = _render(path, "z01-rtsw001", "z01-ctsw01", "z02-rtsw001")
    assert "Never-In-A-File-42" not in json.dumps(cfg)
    frr = cfg["z01-rtsw001"]["frr.conf"]
    assert _lines(frr, r"password") == [f"neighbor UPLINK password {PLACEHOLDER}",
                                        f"neighbor UPLINK_V6 password {PLACEHOLDER}"]
    # a spine: both directions, both families
    assert _lines(cfg["z01-ctsw01"]["z01-ctsw01.cfg"], r"password") == [
        f"neighbor {group} password 0 {PLACEHOLDER}" for group in ("DOWNLINK", "DOWNLINK_V6", "UPLINK", "UPLINK_V6")]
    assert len(_lines(cfg["z02-rtsw001"]["z02-rtsw001.cfg"], r"password 0 ")) == 2
    # the key is not read at render: a render without it gives the same files
    monkeypatch.delenv("NETGEN_TEST_BGP_KEY")
    assert _render(path, "z01-rtsw001", "z01-ctsw01", "z02-rtsw001") == cfg


def test_without_a_password_no_session_is_authenticated(small_data, write_fabric):
    del small_data["bgp"]["password"]
    cfg = _render(write_fabric(small_data), "z01-rtsw001", "z02-rtsw001")
    assert "password" not in cfg["z01-rtsw001"]["frr.conf"]
    assert not _lines(cfg["z02-rtsw001"]["z02-rtsw001.cfg"], r"neighbor .* password")


@pytest.mark.parametrize(("value", "message"), [
    ("clear-text-key", "bgp.password"),
    ({"env": "A", "file": "b"}, "give exactly one of env, file"),
])
def test_a_password_must_be_a_reference(small_data, write_fabric, value, message):
    small_data["bgp"]["password"] = value
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and message in result.stderr
    assert "clear-text-key" not in result.stderr


def test_show_names_where_the_key_is_never_the_key():
    result = run_cli("show", str(SMALL), "--device", "z01-rtsw001", "--json")
    assert result.exit_code == 0, result.output
    settings = {s["name"]: s for s in json.loads(result.stdout)["settings"]}
    key = (SMALL.parent / "secrets" / "bgp.key").read_text().strip()
    assert settings["bgp_authentication"]["source"] == "bgp.password"
    assert "file " in settings["bgp_authentication"]["value"] and key not in result.stdout
