"""The render manifest is authenticated: an HMAC-SHA256 over its exact bytes, with a key kept in the
user's state directory (never in DIR). Whoever can write DIR can edit a file and its size and digest
in the manifest, but not make the MAC verify: such a DIR is rendered again, not kept, and the render
says why. Without a key (a read-only home) renders still work, uncached, and say so once."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from netgen.output import manifest_mac
from netgen.output.manifest import MARKER
from netgen.platforms import render
from tests.conftest import run_cli

pytestmark = pytest.mark.render

DEVICE = "atsw01"


def _cacheable(small_data: dict) -> dict:
    data = json.loads(json.dumps(small_data))
    data.pop("custom_config", None)  # zone 1's custom FRR lines are never cached
    return data


def _render(fabric: Path, out: Path, *extra: str) -> dict:
    result = run_cli("render", str(fabric), "-o", str(out), "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != MARKER}


def _forge(out: Path, name: str) -> None:
    """What anyone who can write DIR can do: the manifest's size and SHA-256 of `name` made to
    match the file as it is now."""
    data = (out / name).read_bytes()
    text = (out / MARKER).read_text()
    old = json.loads(text)["files"][name]
    forged = text.replace(f'"bytes": {old["bytes"]},\n   "sha256": "{old["sha256"]}"',
                          f'"bytes": {len(data)},\n   "sha256": "{hashlib.sha256(data).hexdigest()}"')
    assert forged != text
    (out / MARKER).write_text(forged)


@pytest.fixture
def fabric(small_data, write_fabric) -> Path:
    return write_fabric(_cacheable(small_data))


@pytest.fixture
def own_key(tmp_path, monkeypatch):
    """A state directory of this test's own (a key made by its first render)."""
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder / "netgen" / "keys" / "render-manifest.key"


def test_a_line_appended_with_a_forged_manifest_is_not_kept(fabric, tmp_path):
    """Issue 36, 9: append a line to a .cfg and update its size and hash in the manifest. The MAC
    does not verify, so nothing is kept: every device is rendered again and the line is gone."""
    out, cold = tmp_path / "out", tmp_path / "cold"
    _render(fabric, out)
    cfg = out / DEVICE / f"{DEVICE}.cfg"
    cfg.write_text(cfg.read_text() + "username intruder privilege 15 nopassword\n")
    _forge(out, f"{DEVICE}/{DEVICE}.cfg")
    report = _render(fabric, out)
    assert "intruder" not in cfg.read_text()
    assert report["reused"] == 0
    [note] = report["notes"]
    assert f"{out / MARKER} is not authenticated" in note and "MAC does not verify" in note
    _render(fabric, cold, "--no-reuse")
    assert _tree(out) == _tree(cold)
    # the render wrote an authenticated manifest again: the next one keeps every device
    again = _render(fabric, out)
    assert again["reused"] == 18 and again["notes"] == []


def test_the_key_is_private_outside_dir_and_the_mac_covers_the_exact_bytes(fabric, tmp_path, own_key):
    out = tmp_path / "out"
    _render(fabric, out)
    folder = own_key.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(own_key.stat().st_mode) == 0o600
    key = own_key.read_bytes()
    assert len(key) == 32
    data = (out / MARKER).read_bytes()
    head = b'{"mac": "hmac-sha256:'
    assert data.startswith(head)
    mac, signed = data[len(head):len(head) + 64], data[len(head) + 66:]
    assert data[len(head) + 64:len(head) + 66] == b'",'
    assert mac.decode() == hmac.new(key, b"netgen render manifest\0" + signed, hashlib.sha256).hexdigest()
    doc = json.loads(data)
    assert doc["format"] == 3 and doc["mac"] == f"hmac-sha256:{mac.decode()}"
    # one byte changed after the MAC (here: only the JSON's whitespace) is enough to distrust it
    (out / MARKER).write_bytes(data.replace(b'\n "written_by"', b'\n  "written_by"', 1))
    assert "MAC does not verify" in _render(fabric, out)["notes"][0]


def test_a_manifest_written_under_another_account_is_rendered_again(fabric, tmp_path):
    """Another key (another user, another machine, or a CI runner): its DIR may still be replaced,
    as before, but nothing of it is kept."""
    out = tmp_path / "out"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "other-account")}
    done = subprocess.run([sys.executable, "-m", "netgen.cli", "render", str(fabric), "-o", str(out), "--json"],
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = _render(fabric, out)
    assert report["reused"] == 0 and "MAC does not verify" in report["notes"][0]
    assert _render(fabric, out)["reused"] == 18


def test_an_older_format_is_read_as_unauthenticated(fabric, tmp_path):
    out = tmp_path / "out"
    _render(fabric, out)
    doc = json.loads((out / MARKER).read_text())
    doc.pop("mac", None)
    doc["format"] = 2
    (out / MARKER).write_text(json.dumps(doc, indent=1))
    report = _render(fabric, out)
    assert report["reused"] == 0 and "format 2" in report["notes"][0]
    assert json.loads((out / MARKER).read_text())["format"] == 3


def test_without_a_key_renders_work_uncached_and_say_so_once(fabric, tmp_path, monkeypatch):
    blocker = tmp_path / "read-only-home"  # a file: no state directory can be made under it
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    out = tmp_path / "out"
    for _ in range(2):
        report = _render(fabric, out)
        assert report["reused"] == 0
        [note] = report["notes"]
        assert note.startswith("no render cache (") and "written unauthenticated" in note
    assert (out / MARKER).read_bytes().startswith(b'{"mac": null,\n')
    text = run_cli("render", str(fabric), "-o", str(out))
    assert text.exit_code == 0 and text.stdout.count("no render cache") == 1


def test_a_key_file_others_can_read_is_not_used(fabric, tmp_path, own_key):
    out = tmp_path / "out"
    _render(fabric, out)
    own_key.chmod(0o644)
    manifest_mac._load_key.cache_clear()
    try:
        report = _render(fabric, out)
        assert report["reused"] == 0 and "not a regular file of this user's" in report["notes"][0]
    finally:
        manifest_mac._load_key.cache_clear()


def test_a_key_link_is_not_followed(fabric, tmp_path, own_key):
    out = tmp_path / "out"
    _render(fabric, out)
    target = tmp_path / "planted.key"
    target.write_bytes(b"k" * 32)
    target.chmod(0o600)
    own_key.unlink()
    own_key.symlink_to(target)
    manifest_mac._load_key.cache_clear()
    try:
        assert "a symbolic link" in _render(fabric, out)["notes"][0]
    finally:
        manifest_mac._load_key.cache_clear()


def test_the_unchanged_fabric_shortcut_needs_an_authenticated_manifest(fabric, tmp_path, monkeypatch):
    """The same fabric into its own render is reported from the manifest without expanding: never
    from a manifest whose MAC does not verify."""
    out = tmp_path / "out"
    _render(fabric, out)
    cfg = out / DEVICE / f"{DEVICE}.cfg"
    cfg.write_text(cfg.read_text() + "! kept?\n")
    _forge(out, f"{DEVICE}/{DEVICE}.cfg")
    assert render.unchanged_render(out, json.loads((out / MARKER).read_text())["fabric"]["key"]) is None
    _render(fabric, out)
    assert "kept?" not in cfg.read_text()
