"""`netgen lab` contract without building a lab: exit codes, clear errors, the containerlab export."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render


def _json(*args: str) -> tuple[int, dict]:
    result = run_cli(*args, "--json")
    assert "Traceback" not in result.output
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == result.exit_code
    return result.exit_code, payload


@pytest.fixture(autouse=True)
def private_lab_root(tmp_path, monkeypatch):
    monkeypatch.setenv("NETGEN_LAB_ROOT", str(tmp_path / "labs"))


def test_missing_prerequisites_is_exit_2_naming_them(monkeypatch):
    from netgen.lab import netns  # noqa: PLC0415

    monkeypatch.setattr(netns, "prerequisites", lambda: ["root (network namespaces and FRR need it)"])
    code, payload = _json("lab", "up", str(SMALL), "--name", "prereq", "--zone", "1")
    assert code == 2
    assert "needs: root" in payload["error"] and "nothing of lab 'prereq' was left behind" in payload["error"]


def test_missing_containerlab_is_exit_2(monkeypatch):
    import netgen.lab.containerlab as clab  # noqa: PLC0415

    monkeypatch.setattr(clab, "clab_prerequisites", lambda images=None: ["containerlab (not on PATH)"])
    code, payload = _json("lab", "up", str(SMALL), "--name", "nodocker", "--backend", "containerlab")
    assert code == 2 and "containerlab (not on PATH)" in payload["error"]


@pytest.mark.parametrize(("args", "needle"), [
    (["--zone", "9"], "--zone 9: the fabric has zones 1, 2"),
    (["--zone", "1", "--racks", "5"], "--racks 5: zone 1 has 4 RTSW(s); choose 1 to 4"),
    (["--ctsw", "0"], "--ctsw 0: zone 1 has 4 CTSW(s); choose 1 to 4"),
    (["--name", "Bad-Name"], "lowercase letters and digits"),
])
def test_bad_slice_or_name_is_exit_2(args, needle):
    code, payload = _json("lab", "up", str(SMALL), *args)
    assert code == 2 and needle in payload["error"]


def test_design_errors_stop_the_lab_with_exit_1(small_data, write_fabric):
    small_data["zones"][0]["ctsw_count"] = 2  # blocking zone: NG101
    code, payload = _json("lab", "up", str(write_fabric(small_data)), "--name", "blocked")
    assert code == 1 and "design error" in payload["error"]


def test_bad_fabric_is_exit_2(tmp_path):
    bad = tmp_path / "fabric.yaml"
    bad.write_text("name: [unclosed\n")
    code, payload = _json("lab", "up", str(bad))
    assert code == 2 and payload["input_errors"]


def test_verify_and_down_of_an_unknown_lab_are_exit_2():
    for command in ("verify", "down"):
        code, payload = _json("lab", command, "--name", "ghost")
        assert code == 2 and "no lab named 'ghost'" in payload["error"]


def test_list_with_no_labs():
    code, payload = _json("lab", "list")
    assert code == 0 and payload["labs"] == []


def test_export_containerlab_whole_fabric(tmp_path):
    out = tmp_path / "clab"
    code, payload = _json("lab", "export", str(SMALL), "--containerlab", str(out), "--name", "small")
    assert code == 0
    # 18 switches + one host per rack; 8 RTSW x 16 uplinks + 8 CTSW x 2 ATSW uplinks + 8 host links
    assert payload["nodes"] == 26 and payload["links"] == 8 * 16 + 8 * 2 + 8
    assert payload["kinds"] == {"arista_ceos": 14, "sonic-vs": 4, "linux": 8}
    topology = yaml.safe_load((out / "small.clab.yml").read_text())
    assert topology["name"] == "small"
    assert len(topology["topology"]["links"]) == payload["links"]
    rendered = tmp_path / "rendered"
    assert run_cli("render", str(SMALL), "-o", str(rendered)).exit_code == 0
    ctsw = topology["topology"]["nodes"]["z01-ctsw01"]
    assert (out / ctsw["startup-config"]).read_text() == (rendered / "z01-ctsw01" / "z01-ctsw01.cfg").read_text()


def test_export_refuses_a_foreign_directory(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("not netgen's")
    code, payload = _json("lab", "export", str(SMALL), "--containerlab", str(out), "--zone", "1")
    assert code == 2 and "netgen" in payload["error"]
    assert (out / "notes.txt").read_text() == "not netgen's"


def test_export_rejects_a_bad_image_reference(tmp_path):
    code, payload = _json("lab", "export", str(SMALL), "--containerlab", str(tmp_path / "x"), "--zone", "1",
                          "--ceos-image", "ceos;rm -rf /")
    assert code == 2 and "not a Docker image reference" in payload["error"]


# --- deploy / check input errors (no device is contacted) ------------------------------------------


@pytest.fixture
def no_credentials(monkeypatch):
    for name in ("NETGEN_USERNAME", "NETGEN_PASSWORD", "NETGEN_SSH_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_deploy_without_credentials_is_exit_2(no_credentials):
    code, payload = _json("deploy", str(SMALL), "--dry-run")
    assert code == 2 and "NETGEN_USERNAME" in payload["error"]


def test_deploy_limit_matching_nothing_is_exit_2(no_credentials):
    code, payload = _json("deploy", str(SMALL), "--limit", "nothing-*")
    assert code == 2 and "matches no device" in payload["error"]


def test_deploy_rejects_a_world_readable_credentials_file(tmp_path, no_credentials):
    creds = tmp_path / "creds.yaml"
    creds.write_text("username: netops\npassword: hunter2-Secret\n")
    creds.chmod(0o644)
    result = run_cli("deploy", str(SMALL), "--credentials", str(creds), "--json")
    assert result.exit_code == 2 and "chmod 600" in result.stdout and "hunter2-Secret" not in result.output


def test_deploy_bad_policy_option_is_exit_2(monkeypatch):
    monkeypatch.setenv("NETGEN_USERNAME", "u")
    monkeypatch.setenv("NETGEN_PASSWORD", "p")
    code, payload = _json("deploy", str(SMALL), "--insecure-no-host-key-check", "--max-zone-share", "1.5")
    assert code == 2 and "max_zone_share" in payload["error"]
