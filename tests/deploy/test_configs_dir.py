"""`--configs DIR` (deploy, check, recover, rollout, the Ansible module, lab): only the files netgen
render wrote there, as its manifest lists them. A symbolic link anywhere is refused, never followed;
an edited file is refused unless --accept-edited-configs, which the report and the journal record;
a manifest netgen cannot authenticate vouches for nothing, so the files must be what the fabric
renders now (platforms/output_dir.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netgen.deploy.target import TargetError, load_context, prepare_target
from netgen.output.manifest import MARKER
from tests.conftest import SMALL, run_cli
from tests.deploy.eos_site import make_site

pytestmark = pytest.mark.render

EOS, SONIC = "z02-rtsw001", "z01-rtsw001"  # an EOS switch and a SONiC one of the small example
OUTSIDE = "hostname stolen\nusername root secret 0 from-outside-the-directory\n"


@pytest.fixture(autouse=True)
def credentials(monkeypatch):
    monkeypatch.setenv("NETGEN_USERNAME", "ops")
    monkeypatch.setenv("NETGEN_PASSWORD", "not-used")  # nothing here connects but the emulator test


@pytest.fixture(scope="module")
def small_ctx():
    return load_context(SMALL)[1]


@pytest.fixture
def rendered(tmp_path) -> Path:
    out = tmp_path / "rendered"
    result = run_cli("render", str(SMALL), "-o", str(out), "--device", EOS, "--device", SONIC)
    assert result.exit_code == 0, result.output
    return out


def _target(ctx, configs: Path, limit: str = f"{EOS},{SONIC}", **kwargs):
    return prepare_target(ctx, SMALL, limit=limit, configs=configs, verify_host_keys=False, **kwargs)


def _forge(out: Path, name: str) -> None:
    """The manifest's size and SHA-256 of `name` made to match the file (as anyone who can write DIR
    can), the rest of the manifest's bytes untouched."""
    data = (out / name).read_bytes()
    doc = json.loads((out / MARKER).read_text())
    old = doc["files"][name]
    text = (out / MARKER).read_text().replace(
        f'"{name}": {{\n   "bytes": {old["bytes"]},\n   "sha256": "{old["sha256"]}"',
        f'"{name}": {{\n   "bytes": {len(data)},\n   "sha256": "{hashlib.sha256(data).hexdigest()}"')
    assert text != (out / MARKER).read_text()
    (out / MARKER).write_text(text)


def test_an_untouched_render_is_read_as_written(small_ctx, rendered):
    target = _target(small_ctx, rendered)
    assert target.files[EOS][f"{EOS}.cfg"].startswith("! ")
    assert sorted(target.files[SONIC]) == sorted(p.name for p in (rendered / SONIC).iterdir())
    assert getattr(target, "edited_configs", {}) == {}


def test_a_cfg_replaced_by_a_link_out_of_dir_is_refused_and_never_read(small_ctx, rendered, tmp_path):
    secret = tmp_path / "elsewhere.cfg"
    secret.write_text(OUTSIDE)
    cfg = rendered / EOS / f"{EOS}.cfg"
    cfg.unlink()
    cfg.symlink_to(secret)
    with pytest.raises(TargetError) as raised:
        _target(small_ctx, rendered)
    message = str(raised.value)
    assert f"{EOS}/{EOS}.cfg (a symbolic link)" in message and "from-outside" not in message
    # no flag lets a link through
    with pytest.raises(TargetError, match="a symbolic link"):
        _target(small_ctx, rendered, accept_edited_configs=True)


@pytest.mark.parametrize("where", ["dir", "device"])
def test_a_linked_directory_is_refused(small_ctx, rendered, tmp_path, where):
    if where == "dir":
        link = tmp_path / "link-to-rendered"
        link.symlink_to(rendered)
        configs = link
    else:
        moved = tmp_path / "moved-device"
        (rendered / EOS).rename(moved)
        (rendered / EOS).symlink_to(moved)
        configs = rendered
    with pytest.raises(TargetError, match=r"is a symbolic link; netgen reads only what netgen render wrote"):
        _target(small_ctx, configs)
    with pytest.raises(TargetError, match=r"is a symbolic link; netgen reads only what netgen render wrote"):
        _target(small_ctx, configs, accept_edited_configs=True)


def test_an_edited_file_is_refused_naming_it_and_accepted_only_with_the_flag(small_ctx, rendered):
    cfg = rendered / EOS / f"{EOS}.cfg"
    cfg.write_text(cfg.read_text() + "ip name-server vrf default 192.0.2.53\n")
    with pytest.raises(TargetError) as raised:
        _target(small_ctx, rendered)
    assert f"{cfg}: changed since netgen render wrote it" in str(raised.value)
    assert "--accept-edited-configs" in str(raised.value)
    target = _target(small_ctx, rendered, accept_edited_configs=True)
    assert target.files[EOS][f"{EOS}.cfg"].endswith("ip name-server vrf default 192.0.2.53\n")
    assert list(target.edited_configs) == [f"{EOS}/{EOS}.cfg"]
    assert "changed since netgen render wrote it" in target.edited_configs[f"{EOS}/{EOS}.cfg"]


@pytest.mark.parametrize("change", ["extra", "missing", "fifo"])
def test_a_file_the_manifest_does_not_list_or_misses_is_refused_even_with_the_flag(small_ctx, rendered, change):
    if change == "extra":
        (rendered / SONIC / "startup.sh").write_text("#!/bin/sh\n")
        expected = f"{SONIC}/startup.sh (not in {MARKER})"
    elif change == "missing":
        (rendered / SONIC / "frr.conf").unlink()
        expected = f"{SONIC}/frr.conf (listed in {MARKER}, missing)"
    else:
        (rendered / SONIC / "frr.conf").unlink()
        os.mkfifo(rendered / SONIC / "frr.conf")  # a reader that followed it would block
        expected = f"{SONIC}/frr.conf (not a regular file)"
    for flag in (False, True):
        with pytest.raises(TargetError) as raised:
            _target(small_ctx, rendered, **({"accept_edited_configs": True} if flag else {}))
        assert expected in str(raised.value)


def test_a_forged_manifest_does_not_vouch_for_an_edit(small_ctx, rendered):
    """Edit a file and its size and digest in the manifest: the MAC no longer verifies, so the
    files must be what the fabric renders now, and the edited one is not."""
    cfg = rendered / EOS / f"{EOS}.cfg"
    cfg.write_text(cfg.read_text() + "ip name-server vrf default 192.0.2.53\n")
    _forge(rendered, f"{EOS}/{EOS}.cfg")
    with pytest.raises(TargetError) as raised:
        _target(small_ctx, rendered)
    assert f"{cfg}: not what netgen renders from this fabric now" in str(raised.value)
    assert "MAC does not verify" in str(raised.value)
    target = _target(small_ctx, rendered, accept_edited_configs=True)
    assert list(target.edited_configs) == [f"{EOS}/{EOS}.cfg"]


def test_a_directory_rendered_under_another_account_is_accepted_when_it_is_what_the_fabric_renders(
        small_ctx, tmp_path):
    """A CI artifact: rendered with another key (another user's state directory), so netgen cannot
    authenticate its manifest; its files are the ones the fabric renders now, so they are used."""
    out = tmp_path / "artifact"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "ci-runner-state")}
    done = subprocess.run([sys.executable, "-m", "netgen.cli", "render", str(SMALL), "-o", str(out), "--device", EOS,
                           "--device", SONIC], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    target = _target(small_ctx, out)
    assert getattr(target, "edited_configs", {}) == {} and sorted(target.files) == sorted([EOS, SONIC])
    # and one of its files changed (its manifest's digest too) is not the fabric's render
    frr = out / SONIC / "frr.conf"
    frr.write_text(frr.read_text().replace("remote-as", "remote-as ", 1))
    _forge(out, f"{SONIC}/frr.conf")
    with pytest.raises(TargetError, match=r"frr\.conf: not what netgen renders from this fabric now"):
        _target(small_ctx, out)


def test_an_older_manifest_is_unauthenticated(small_ctx, rendered):
    doc = json.loads((rendered / MARKER).read_text())
    doc.pop("mac", None)
    doc["format"] = 2
    (rendered / MARKER).write_text(json.dumps(doc, indent=1))
    assert getattr(_target(small_ctx, rendered), "edited_configs", {}) == {}  # what the fabric renders now
    cfg = rendered / EOS / f"{EOS}.cfg"
    cfg.write_text(cfg.read_text() + "! edited\n")
    _forge(rendered, f"{EOS}/{EOS}.cfg")
    with pytest.raises(TargetError, match=r"before manifests were authenticated: format 2"):
        _target(small_ctx, rendered)


def test_the_cli_refuses_an_edited_file_with_exit_2(rendered, tmp_path):
    cfg = rendered / EOS / f"{EOS}.cfg"
    cfg.write_text(cfg.read_text() + "ip name-server vrf default 192.0.2.53\n")
    access = ["--limit", EOS, "--configs", str(rendered), "--known-hosts", str(tmp_path / "none"), "--json"]
    for verb in (["deploy", "--dry-run"], ["check"]):
        result = run_cli(*verb, str(SMALL), *access)
        assert result.exit_code == 2, result.output
        assert f"{cfg}: changed since netgen render wrote it" in json.loads(result.stdout)["error"]
        # with the flag the files are taken: the next refusal is the host-key file's
        result = run_cli(*verb, str(SMALL), *access, "--accept-edited-configs")
        assert result.exit_code == 2 and "known_hosts" in json.loads(result.stdout)["error"], result.output
    result = run_cli("rollout", str(SMALL), *access[:-1], "--insecure-no-host-key-check", "--json")
    assert result.exit_code == 2 and "changed since netgen render wrote it" in json.loads(result.stdout)["error"]


def test_the_lab_reads_through_the_same_rules(tmp_path):
    out = tmp_path / "whole"
    assert run_cli("render", str(SMALL), "-o", str(out)).exit_code == 0
    cfg = out / EOS / f"{EOS}.cfg"
    elsewhere = tmp_path / "elsewhere.cfg"
    elsewhere.write_text(cfg.read_text())
    cfg.unlink()
    cfg.symlink_to(elsewhere)
    args = ["lab", "export", str(SMALL), "--containerlab", str(tmp_path / "clab"), "--zone", "2", "--racks", "1",
            "--ctsw", "1", "--configs", str(out), "--json"]
    for flag in ((), ("--accept-edited-configs",)):
        result = run_cli(*args, *flag)
        assert result.exit_code == 2, result.output
        assert f"{EOS}/{EOS}.cfg (a symbolic link)" in json.loads(result.stdout)["error"]
    cfg.unlink()
    cfg.write_text("hostname edited\n")
    assert "changed since netgen render wrote it" in json.loads(run_cli(*args).stdout)["error"]
    result = run_cli(*args, "--accept-edited-configs")
    assert result.exit_code == 0, result.output
    assert list(json.loads(result.stdout)["accepted_edited_configs"]) == [f"{EOS}/{EOS}.cfg"]


def test_an_unreadable_manifest_key_leaves_the_directory_unauthenticated(small_ctx, rendered, monkeypatch,
                                                                       tmp_path):
    """Another user's netgen (no key of this user's) vouches by rendering."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    assert getattr(_target(small_ctx, rendered), "edited_configs", {}) == {}
    cfg = rendered / EOS / f"{EOS}.cfg"
    cfg.write_text(cfg.read_text() + "! edited\n")
    with pytest.raises(TargetError, match=r"no key to check it with"):
        _target(small_ctx, rendered)


@pytest.mark.deploy
def test_a_push_of_an_accepted_edit_is_in_the_report_and_the_journal(tmp_path, monkeypatch, state_dir):
    site = make_site(tmp_path, SMALL, [EOS], False, monkeypatch)
    fresh = next(site)
    try:
        configs = tmp_path / "rendered"  # make_site's render of the site's fabric
        cfg = configs / EOS / f"{EOS}.cfg"
        cfg.write_text(cfg.read_text().replace("description z02-r001-h01:nic1", "description edited-by-hand", 1))
        code, refused = fresh.deploy("--configs", str(configs))
        assert code == 2 and "changed since netgen render wrote it" in refused["error"]
        report_file = tmp_path / "report.json"
        code, report = fresh.deploy("--configs", str(configs), "--accept-edited-configs", "--change-id", "edited-1",
                                    "--report", str(report_file))
        assert code == 0, report.get("stopped_reason") or report.get("error")
        assert report["counts"] == {"changed": 1}
        assert "description edited-by-hand" in fresh.running(EOS)
        edited = {f"{EOS}/{EOS}.cfg": report["accepted_edited_configs"][f"{EOS}/{EOS}.cfg"]}
        assert report["accepted_edited_configs"] == edited and report["configs"] == str(configs)
        assert json.loads(report_file.read_text())["accepted_edited_configs"] == edited
        lines = [json.loads(line) for line in (state_dir / "deploy" / "edited-1.jsonl").read_text().splitlines()]
        [record] = [line for line in lines if line["state"] == "accepted_edited_configs"]
        assert record["files"] == edited and record["configs"] == str(configs) and record["device"] is None
        assert lines.index(record) < [line["state"] for line in lines].index("rollout")  # before any push
        text = run_cli("deploy", str(fresh.fabric), "--limit", EOS, "--configs", str(configs),
                       "--accept-edited-configs", "--change-id", "edited-2")
        assert text.exit_code == 0, text.output
        assert f"edited {EOS}/{EOS}.cfg pushed as it is" in text.stdout
    finally:
        next(site, None)


def test_render_keeps_the_key_outside_dir(rendered, state_home):
    assert not [p for p in rendered.rglob("*") if "key" in p.name]
    assert (state_home / "netgen" / "keys" / "render-manifest.key").stat().st_size == 32
