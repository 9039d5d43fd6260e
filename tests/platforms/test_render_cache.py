"""The render cache: a device whose render key (its prepared inputs, netgen's code and templates)
is the one DIR was written with keeps its files, linked into the new DIR rather than rendered and
written again; the output is byte for byte what a cold render writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from netgen import render_cache
from netgen.output import manifest
from netgen.output.manifest import MARKER
from netgen.platforms import base, render
from tests.conftest import SMALL, render_tree, run_cli

pytestmark = pytest.mark.render

# zone 1's SONiC RTSWs take custom FRR lines (frr-log-precision), which only FRR here can judge:
# they are rendered every time
NEVER_KEPT = {"z01-rtsw001", "z01-rtsw002", "z01-rtsw003", "z01-rtsw004"}


def _render(fabric: Path, out: Path, *extra: str) -> dict:
    result = run_cli("render", str(fabric), "-o", str(out), "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _inodes(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_ino for p in out.rglob("*") if p.is_file() and p.name != MARKER}


def _kept(before: dict[str, int], after: dict[str, int]) -> set[str]:
    """Devices all of whose files are the very files (inodes) of the previous render."""
    devices = {name.split("/")[0] for name in after}
    return {d for d in devices
            if all(before.get(n) == i for n, i in after.items() if n.split("/")[0] == d)}


def test_an_unchanged_fabric_keeps_every_cacheable_device_and_the_bytes(tmp_path):
    out, cold = tmp_path / "out", tmp_path / "cold"
    first = _render(SMALL, out)
    assert first["reused"] == 0 and first["devices"] == 18
    inodes = _inodes(out)
    again = _render(SMALL, out)
    assert again["reused"] == 18 - len(NEVER_KEPT) and again["devices"] == 18
    assert again["files"] == first["files"] and again["bytes"] == first["bytes"]
    assert _kept(inodes, _inodes(out)) == {p.split("/")[0] for p in inodes} - NEVER_KEPT
    _render(SMALL, cold, "--no-reuse")
    assert render_tree(out) == render_tree(cold)  # the manifest too: the same keys, sizes and digests


def test_a_change_re_renders_only_the_devices_it_reaches(small_data, write_fabric, tmp_path):
    out, cold = tmp_path / "out", tmp_path / "cold"
    _render(write_fabric(small_data), out)
    inodes = _inodes(out)
    # zone 2's NTP pair changes: zone 2's switches but z02-rtsw001 (which has its own server)
    small_data["services"]["overrides"][0]["ntp"]["servers"] = ["192.0.2.200"]
    changed = write_fabric(small_data)
    report = _render(changed, out)
    every = {p.split("/")[0] for p in inodes}
    reached = {d for d in every if d.startswith("z02-")} - {"z02-rtsw001"}
    assert _kept(inodes, _inodes(out)) == every - reached - NEVER_KEPT
    assert report["reused"] == len(every - reached - NEVER_KEPT)
    _render(changed, cold, "--no-reuse")
    assert render_tree(out) == render_tree(cold)


def test_new_netgen_code_re_renders_everything(tmp_path, monkeypatch):
    out = tmp_path / "out"
    _render(SMALL, out)
    inodes = _inodes(out)
    monkeypatch.setattr(render_cache, "code_digest", lambda: b"another netgen")
    assert _render(SMALL, out)["reused"] == 0
    assert _kept(inodes, _inodes(out)) == set()


def test_no_reuse_renders_everything_and_writes_the_same_bytes(tmp_path):
    out = tmp_path / "out"
    _render(SMALL, out)
    before = render_tree(out)
    assert _render(SMALL, out, "--no-reuse")["reused"] == 0
    assert render_tree(out) == before


def test_a_directory_written_without_keys_is_rendered_whole(tmp_path):
    """A format-1 manifest (netgen before the cache) is still replaceable; nothing is reused from it."""
    out = tmp_path / "out"
    _render(SMALL, out)
    doc = json.loads((out / MARKER).read_text())
    doc["format"] = 1
    del doc["devices"]
    (out / MARKER).write_text(json.dumps(doc))
    assert _render(SMALL, out)["reused"] == 0
    assert json.loads((out / MARKER).read_text())["format"] == manifest.MANIFEST_FORMAT


def test_a_changed_file_is_refused_not_reused(tmp_path):
    out = tmp_path / "out"
    _render(SMALL, out)
    target = out / "z02-rtsw001" / "z02-rtsw001.cfg"
    target.write_text(target.read_text() + "! hand edit\n")
    result = run_cli("render", str(SMALL), "-o", str(out), "--json")
    assert result.exit_code == 2 and "changed since netgen wrote it" in json.loads(result.stdout)["error"]
    assert target.read_text().endswith("! hand edit\n")


def test_keys_are_the_same_in_every_process(tmp_path):
    """Another process (another string hash seed, so another set order) computes the same keys."""
    out = tmp_path / "out"
    reused = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-m", "netgen.cli", "render", str(SMALL), "-o", str(out), "--json"],
                              capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
        reused.append(json.loads(done.stdout)["reused"])
    assert reused == [0, 18 - len(NEVER_KEPT)]


def test_keys_only_gives_the_keys_a_render_writes_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli("render", str(SMALL), "--keys-only")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "out"
    _render(SMALL, out)
    written = json.loads((out / MARKER).read_text())["devices"]
    keys = {name: entry["key"] for name, entry in doc["devices"].items()}
    assert keys == {name: written.get(name, {}).get("key") for name in keys}
    assert {name for name, key in keys.items() if key is None} == NEVER_KEPT
    assert doc["devices"]["atsw01"]["tier"] == "atsw" and doc["devices"]["atsw01"]["zone"] is None
    assert doc["devices"]["z02-ctsw01"] | {"key": None} == {"key": None, "tier": "ctsw", "zone": 2}


@pytest.mark.parametrize("extra", [["-o", "x"], ["--check"]])
def test_keys_only_refuses_an_output_or_check(tmp_path, extra):
    result = run_cli("render", str(SMALL), "--keys-only", *extra)
    assert result.exit_code == 2
    assert "--keys-only writes nothing" in result.output


def _cacheable_small(small_data: dict) -> dict:
    """The small example without the custom FRR lines that keep zone 1's RTSWs from being cached."""
    data = json.loads(json.dumps(small_data))
    data.pop("custom_config", None)
    return data


def _marker(out: Path) -> dict:
    return json.loads((out / MARKER).read_text())


def test_an_unchanged_fabric_into_its_own_render_stops_before_expanding(small_data, write_fabric, tmp_path,
                                                                       monkeypatch):
    """The manifest of a render of every device records the fabric's key (fabric, catalog, local
    users' hashes, netgen's code); the same fabric into that DIR, found unchanged, is reported from
    it: not expanded, not checked, not rendered, DIR not touched."""
    fabric = write_fabric(_cacheable_small(small_data))
    out = tmp_path / "out"
    first = _render(fabric, out)
    assert first["reused"] == 0 and len(_marker(out)["fabric"]["key"]) == 64
    directory, inodes, tree = out.stat().st_ino, _inodes(out), render_tree(out)

    def not_again(*args, **kwargs):
        raise AssertionError("expanded")

    monkeypatch.setattr("netgen.checks.check_loaded", not_again)
    again = _render(fabric, out)
    assert again == {**first, "reused": 18}
    assert out.stat().st_ino == directory and _inodes(out) == inodes and render_tree(out) == tree
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # --no-reuse means what it says
    monkeypatch.undo()
    assert _render(fabric, out, "--no-reuse")["reused"] == 0 and render_tree(out) == tree


def test_a_fabric_change_no_device_sees_only_replaces_the_manifest(small_data, write_fabric, tmp_path):
    """A new fabric description changes the fabric's key and no device's: DIR stays (the same
    directory and files), its manifest is renamed over with the new key, and the result is what a
    cold render of the new fabric writes."""
    data = _cacheable_small(small_data)
    out, cold = tmp_path / "out", tmp_path / "cold"
    _render(write_fabric(data), out)
    key, directory, inodes = _marker(out)["fabric"]["key"], out.stat().st_ino, _inodes(out)
    data["description"] = "renamed"
    changed = write_fabric(data)
    assert _render(changed, out)["reused"] == 18
    assert out.stat().st_ino == directory and _inodes(out) == inodes and _marker(out)["fabric"]["key"] != key
    _render(changed, cold, "--no-reuse")
    assert render_tree(out) == render_tree(cold)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_subset_render_again_leaves_dir_in_place(small_data, write_fabric, tmp_path):
    """--device renders record no fabric key; the same subset again keeps every device and the same
    manifest, so DIR is left as it is."""
    fabric = write_fabric(_cacheable_small(small_data))
    out = tmp_path / "out"
    _render(fabric, out, "--device", "z01-rtsw001", "--device", "atsw01")
    assert "fabric" not in _marker(out)
    directory, tree, marker = out.stat().st_ino, render_tree(out), (out / MARKER).read_bytes()
    assert _render(fabric, out, "--device", "z01-rtsw001", "--device", "atsw01")["reused"] == 2
    assert out.stat().st_ino == directory and render_tree(out) == tree
    assert (out / MARKER).read_bytes() == marker  # the files as it saw them: its seal stands


def test_a_device_with_a_file_gone_is_rendered_again(small_data, write_fabric, tmp_path):
    fabric = write_fabric(_cacheable_small(small_data))
    out, cold = tmp_path / "out", tmp_path / "cold"
    _render(fabric, out)
    (out / "z01-rtsw002" / "frr.conf").unlink()
    assert _render(fabric, out)["reused"] == 17
    _render(fabric, cold, "--no-reuse")
    assert render_tree(out) == render_tree(cold)


def test_a_hand_edit_is_refused_even_when_the_fabric_is_unchanged(small_data, write_fabric, tmp_path):
    fabric = write_fabric(_cacheable_small(small_data))
    out = tmp_path / "out"
    _render(fabric, out)
    target = out / "atsw01" / "atsw01.cfg"
    target.write_text(target.read_text().replace("hostname atsw01", "hostname atsw99", 1))
    result = run_cli("render", str(fabric), "-o", str(out), "--json")
    assert result.exit_code == 2, result.output
    assert "atsw01/atsw01.cfg (changed since netgen wrote it)" in json.loads(result.stdout)["error"]
    assert "hostname atsw99" in target.read_text()


def test_a_rotated_local_user_hash_is_rendered_though_the_fabric_file_is_unchanged(small_data, write_fabric,
                                                                                   tmp_path, monkeypatch):
    """The fabric's key holds the local users' hashes as read at each render: a rotation in the
    environment reaches the EOS configs, with not a byte of the fabric file changed."""
    data = _cacheable_small(small_data)
    data.setdefault("services", {})["users"] = [{"name": "netops", "role": "network-admin", "privilege": 15,
                                                 "sha512": {"env": "NETGEN_TEST_HASH"}}]
    fabric = write_fabric(data)
    out = tmp_path / "out"
    old, new = "$6$saltsalt$" + "a" * 86, "$6$saltsalt$" + "b" * 86
    monkeypatch.setenv("NETGEN_TEST_HASH", old)
    _render(fabric, out)
    assert old in (out / "atsw01" / "atsw01.cfg").read_text()
    monkeypatch.setenv("NETGEN_TEST_HASH", new)
    report = _render(fabric, out)
    text = (out / "atsw01" / "atsw01.cfg").read_text()
    assert new in text and old not in text
    assert report["reused"] == 18 - sum(1 for d in (out).iterdir() if (d / f"{d.name}.cfg").exists())


@pytest.mark.parametrize("age_s", [0, 3600], ids=["written-just-now", "written-an-hour-ago"])
def test_a_file_edited_while_the_manifest_is_renewed_is_refused(small_data, write_fabric, tmp_path,
                                                                 monkeypatch, age_s):
    """DIR is looked at again before its manifest is replaced in place: an edit after the first look
    (same inode and size; for a file written just now, the same mtime too) is refused, and the old
    manifest stays."""
    data = _cacheable_small(small_data)
    out = tmp_path / "out"
    _render(write_fabric(data), out)
    data["description"] = "renamed"
    changed = write_fabric(data)
    target = out / "atsw01" / "atsw01.cfg"
    for path in out.rglob("*"):
        if path.is_file():
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns - age_s * 10**9, st.st_mtime_ns - age_s * 10**9))
    before, manifest = target.stat(), (out / MARKER).read_bytes()
    real = render._render_outcomes

    def editing(*args, **kwargs):  # the user edits a file while its device's key is worked out
        found = real(*args, **kwargs)
        target.write_text(target.read_text().replace("hostname atsw01", "hostname atsw99", 1))
        if not age_s:
            os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        return found

    monkeypatch.setattr(render, "_render_outcomes", editing)
    result = run_cli("render", str(changed), "-o", str(out), "--json")
    assert result.exit_code == 2, result.output
    assert "atsw01/atsw01.cfg (changed since netgen wrote it)" in json.loads(result.stdout)["error"]
    assert "hostname atsw99" in target.read_text() and target.stat().st_ino == before.st_ino
    assert (out / MARKER).read_bytes() == manifest
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_design_errors_come_before_a_hash_that_cannot_be_read(small_data, write_fabric, tmp_path, monkeypatch):
    """The fabric's key reads the local users' hashes; one that cannot be read keeps the render's
    order of reports: the design errors (exit 1) first, then, with them fixed, the hash (exit 2)."""
    data = _cacheable_small(small_data)
    data.setdefault("services", {})["users"] = [{"name": "netops", "role": "network-admin", "privilege": 15,
                                                 "sha512": {"env": "NETGEN_TEST_HASH"}}]
    monkeypatch.delenv("NETGEN_TEST_HASH", raising=False)
    broken = json.loads(json.dumps(data))
    del broken["aggregation"]  # two zones and no ATSW layer: NG103
    out = tmp_path / "out"
    result = run_cli("render", str(write_fabric(broken)), "-o", str(out), "--json")
    assert result.exit_code == 1, result.output
    assert "NG103" in {f["code"] for f in json.loads(result.stdout)["findings"]}
    result = run_cli("render", str(write_fabric(data)), "-o", str(out), "--json")
    assert result.exit_code == 2 and "NETGEN_TEST_HASH" in json.loads(result.stdout)["error"]
    assert not out.exists()


def _prepared_devices(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the devices whose views are built from now on (renders of small run in this process)."""
    built: list[str] = []
    for plugin in base.renderers().values():
        original = plugin.prepare

        def prepare(ctx, device, original=original):
            built.append(device.name)
            return original(ctx, device)
        monkeypatch.setattr(plugin, "prepare", prepare)
    return built


def test_a_rack_added_to_one_zone_builds_no_view_of_another_zone(small_data, write_fabric, tmp_path, monkeypatch):
    """zone_inputs.py: zone 1's switches keep their keys from their zone's digest, unbuilt."""
    data = _cacheable_small(small_data)
    del data["aggregation"]["expected_oversubscription"]  # a fifth rack in zone 2 changes its CTSWs' ratio
    fabric, out, cold = write_fabric(data), tmp_path / "out", tmp_path / "cold"
    _render(fabric, out)
    recorded = _marker(out)["devices"]
    assert {d for d, entry in recorded.items() if "inputs" in entry} == set(recorded)
    data["zones"][1] = {**json.loads(json.dumps(data["zones"][1])), "racks": 5}
    fabric.write_text(yaml.safe_dump(data, sort_keys=False))  # the same file: its secrets' paths stay
    built = _prepared_devices(monkeypatch)
    report = _render(fabric, out)
    assert not [d for d in built if d.startswith("z01-")]
    assert not [d for d in built if d.startswith("atsw")]  # their links are those they had
    assert "z02-rtsw005" in built and report["devices"] == 19
    monkeypatch.undo()
    _render(fabric, cold, "--no-reuse")
    assert render_tree(out) == render_tree(cold)


def test_a_manifest_without_zone_inputs_builds_every_view_and_keeps_the_same_devices(small_data, write_fabric,
                                                                                    tmp_path, monkeypatch):
    """A DIR written before zone inputs (keys only): every view is built and keyed, as before."""
    data = _cacheable_small(small_data)
    fabric, out = write_fabric(data), tmp_path / "out"
    _render(fabric, out)
    doc = _marker(out)
    del doc["mac"]
    doc["devices"] = {d: {"key": entry["key"]} for d, entry in doc["devices"].items()}
    (out / MARKER).write_bytes(manifest.seal_manifest(doc))  # as netgen wrote it: authenticated
    data["description"] = "another description, which no switch sees"
    fabric.write_text(yaml.safe_dump(data, sort_keys=False))
    built = _prepared_devices(monkeypatch)
    assert _render(fabric, out)["reused"] == 18
    assert sorted(built) == sorted(doc["devices"])
    assert all("inputs" in entry for entry in _marker(out)["devices"].values())
