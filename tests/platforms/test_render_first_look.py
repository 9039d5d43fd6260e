"""The render cache's first look (issue 33, 4): a listed file whose inode, size and mtime are those an
authenticated manifest recorded when netgen sealed it is taken as unchanged without being read, as
git and rsync do; a file whose mtime is not older than the seal (the file system's own clock when
netgen began looking) is read anyway (git's racy timestamps); `netgen render --verify` reads every
file; a manifest without the stat fields has its files read, as before. A deploy still reads and checks
every file it pushes.

Timestamps are set with os.utime(ns=...) relative to the seal the manifest recorded, never by
sleeping, so that which side of the seal a file falls on does not depend on the machine's speed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from netgen.checks import load_and_check
from netgen.output import inspection, manifest
from netgen.output.inspection import Survey, check_replaceable, output_path
from netgen.output.manifest import MARKER, RACY_NS
from netgen.platforms.output_dir import RenderDirError, read_render_dir
from tests.conftest import run_cli

pytestmark = pytest.mark.render

TARGET = "atsw01/atsw01.cfg"  # an EOS switch's config: "hostname atsw01" edited keeps its size
HOUR_NS = 3600 * 10**9


def _cacheable(small_data: dict) -> dict:
    data = json.loads(json.dumps(small_data))
    data.pop("custom_config", None)  # zone 1's custom FRR lines are never cached
    return data


def _render(fabric: Path, out: Path, *extra: str) -> dict:
    result = run_cli("render", str(fabric), "-o", str(out), "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _refused(fabric: Path, out: Path, *extra: str) -> str:
    result = run_cli("render", str(fabric), "-o", str(out), "--json", *extra)
    assert result.exit_code == 2, result.output
    return json.loads(result.stdout)["error"]


def _doc(out: Path) -> dict[str, Any]:
    return json.loads((out / MARKER).read_text())


def _reseal(out: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """The manifest changed by `change` and sealed again with this user's key, as netgen would have
    written it (its MAC verifies)."""
    doc = _doc(out)
    del doc["mac"]
    change(doc)
    (out / MARKER).write_bytes(manifest.seal_manifest(doc))


def _set_mtime(out: Path, name: str, mtime_ns: int) -> None:
    """The file's mtime, and the manifest's record of it, set to mtime_ns (the file otherwise as
    netgen wrote it, and recorded with its inode)."""
    os.utime(out / name, ns=(mtime_ns, mtime_ns))

    def record(doc: dict[str, Any]) -> None:
        doc["files"][name]["mtime_ns"] = mtime_ns

    _reseal(out, record)


def _settled(small_data: dict, write_fabric: Callable[..., Path], out: Path) -> Path:
    """A fabric rendered into `out` long enough ago that no file is racy: every file's mtime an hour
    back, then a render of the fabric with a new description (every device kept, the manifest
    sealed again over the files as they are). Returns that fabric."""
    data = _cacheable(small_data)
    _render(write_fabric(data), out)
    for name in _doc(out)["files"]:
        st = (out / name).stat()
        os.utime(out / name, ns=(st.st_atime_ns - HOUR_NS, st.st_mtime_ns - HOUR_NS))
    data["description"] = "settled"
    fabric = write_fabric(data)
    assert _render(fabric, out)["reused"] == 18
    doc = _doc(out)
    assert all(entry["mtime_ns"] < doc["sealed_ns"] for entry in doc["files"].values())
    return fabric


def _edit_in_place(path: Path) -> None:
    """What git and rsync cannot see either: the same file (inode) and size, its mtime put back."""
    st = path.stat()
    text = path.read_text()
    assert "hostname atsw01" in text
    with path.open("r+") as fh:  # in place: no truncation, no new inode
        fh.write(text.replace("hostname atsw01", "hostname atsw99", 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)


def _hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the inspection opens and hashes (in this process), in order."""
    opened: list[str] = []
    real = inspection._unchanged

    def counting(path: str, size: int, digest: str) -> bool:
        opened.append(path)
        return real(path, size, digest)

    monkeypatch.setattr(inspection, "_unchanged", counting)
    return opened


def _never_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any file read and hashed by an inspection, in this process or a forked look-ahead (which then
    answers nothing, so that the render looks itself), fails the render."""

    def opened(path: str, size: int, digest: str) -> bool:
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(inspection, "_unchanged", opened)


def _first_look(out: Path, verify: bool = False) -> Survey:
    survey = Survey()
    check_replaceable(output_path(out), survey, verify=verify)
    return survey


# --- what the manifest records ---------------------------------------------------------------------


def test_the_manifest_records_each_file_as_netgen_saw_it_when_it_sealed_it(small_data, write_fabric, tmp_path):
    out = tmp_path / "out"
    _render(write_fabric(_cacheable(small_data)), out)
    doc = _doc(out)
    assert doc["format"] == manifest.MANIFEST_FORMAT == 3
    for name, entry in doc["files"].items():
        st = (out / name).stat()
        assert (entry["inode"], entry["bytes"], entry["mtime_ns"]) == (st.st_ino, st.st_size, st.st_mtime_ns)
        assert entry["mtime_ns"] <= doc["sealed_ns"]  # the seal is taken before any file is looked at
    marker = manifest.parse_marker((out / MARKER).read_bytes())
    assert marker is not None and marker.trusted and marker.seen is not None
    assert set(marker.seen.files) == set(marker.files)


def test_the_rule_inode_size_mtime_and_the_racy_seal(small_data, write_fabric, tmp_path):
    out = tmp_path / "out"
    _render(write_fabric(_cacheable(small_data)), out)
    doc = _doc(out)
    sealed, size = doc["sealed_ns"], doc["files"][TARGET]["bytes"]
    inode = doc["files"][TARGET]["inode"]
    old = sealed - RACY_NS - 1

    def record(doc: dict[str, Any]) -> None:
        doc["files"][TARGET]["mtime_ns"] = old

    _reseal(out, record)
    marker = manifest.parse_marker((out / MARKER).read_bytes())
    assert marker is not None and marker.trusted

    def lstat(ino: int = inode, st_size: int = size, mtime: int = old, uid: int = os.geteuid()) -> Any:
        return SimpleNamespace(st_ino=ino, st_size=st_size, st_mtime_ns=mtime, st_uid=uid)

    assert marker.vouches_for(TARGET, lstat())
    assert not marker.vouches_for(TARGET, lstat(ino=inode + 1))
    assert not marker.vouches_for(TARGET, lstat(st_size=size + 1))
    assert not marker.vouches_for(TARGET, lstat(mtime=old + 1))
    assert not marker.vouches_for(TARGET, lstat(uid=os.geteuid() + 1))  # another account's file

    def racy(doc: dict[str, Any]) -> None:  # stamped in the seal's own tick: racy
        doc["files"][TARGET]["mtime_ns"] = sealed

    _reseal(out, racy)
    marker = manifest.parse_marker((out / MARKER).read_bytes())
    assert marker is not None and not marker.vouches_for(TARGET, lstat(mtime=sealed))

    def just_older(doc: dict[str, Any]) -> None:  # one tick (here a nanosecond) before the seal: vouched for
        doc["files"][TARGET]["mtime_ns"] = sealed - 1

    _reseal(out, just_older)
    marker = manifest.parse_marker((out / MARKER).read_bytes())
    assert marker is not None and marker.vouches_for(TARGET, lstat(mtime=sealed - 1))


# --- a vouched file is not read; what is read ----------------------------------------------------


def test_a_settled_dir_is_looked_at_without_reading_a_file(small_data, write_fabric, tmp_path, monkeypatch):
    out = tmp_path / "out"
    fabric = _settled(small_data, write_fabric, out)
    listed = set(_doc(out)["files"])
    opened = _hashed(monkeypatch)
    survey = _first_look(out)
    assert opened == [] and set(survey.files) == listed  # noted as verified: the second look stays cheap
    assert len(_first_look(out, verify=True).files) == len(listed) and len(opened) == len(listed)
    monkeypatch.undo()
    # whole renders, read nowhere: the unchanged fabric (its manifest's shortcut), and a changed one
    # (the forked look-ahead, the render, the look before the manifest is renamed over)
    _never_hashed(monkeypatch)
    assert _render(fabric, out)["reused"] == 18
    data = _cacheable(small_data)
    data["description"] = "changed again"
    assert _render(write_fabric(data), out)["reused"] == 18
    # and the spy can fail: --verify reads every file
    result = run_cli("render", str(fabric), "-o", str(out), "--json", "--verify")
    assert result.exit_code != 0 and "was read" in result.output


def test_a_just_written_dir_reads_what_was_stamped_in_the_seals_tick(small_data, write_fabric, tmp_path, monkeypatch):
    """Right after a render, the files stamped in the seal's own tick of the file system's clock are
    racy: read and hashed at the next look; the others are vouched for. One file put in that tick,
    then the rest an hour back, makes the count certain."""
    out = tmp_path / "out"
    _render(write_fabric(_cacheable(small_data)), out)

    def stamps(doc: dict[str, Any]) -> None:
        for name, entry in doc["files"].items():
            entry["mtime_ns"] = doc["sealed_ns"] if name == TARGET else doc["sealed_ns"] - HOUR_NS
            st = (out / name).stat()
            os.utime(out / name, ns=(st.st_atime_ns, entry["mtime_ns"]))

    _reseal(out, stamps)
    opened = _hashed(monkeypatch)
    _first_look(out)
    assert [Path(p).relative_to(out).as_posix() for p in opened] == [TARGET]


def test_a_manifest_without_the_stat_fields_is_read_and_still_keeps_devices(small_data, write_fabric, tmp_path,
                                                                            monkeypatch):
    out = tmp_path / "out"
    fabric = _settled(small_data, write_fabric, out)

    def older(doc: dict[str, Any]) -> None:  # as a netgen before the stat fields wrote it
        del doc["sealed_ns"]
        for entry in doc["files"].values():
            del entry["inode"], entry["mtime_ns"]

    _reseal(out, older)
    marker = manifest.parse_marker((out / MARKER).read_bytes())
    assert marker is not None and marker.trusted and marker.seen is None
    opened = _hashed(monkeypatch)
    _first_look(out)
    assert len(opened) == len(marker.files)
    _edit_in_place(out / TARGET)
    assert f"{TARGET} (changed since netgen wrote it)" in _refused(fabric, out)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another user)")
def test_a_file_of_another_account_is_read(small_data, write_fabric, tmp_path, monkeypatch):
    """Its inode, size and mtime the recorded ones, but another user's: read and hashed."""
    out = tmp_path / "out"
    _settled(small_data, write_fabric, out)
    os.chown(out / TARGET, 65534, 65534)
    opened = _hashed(monkeypatch)
    _first_look(out)
    assert opened == [str(out / TARGET)]


def test_a_manifest_whose_mac_does_not_verify_vouches_for_nothing(small_data, write_fabric, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _settled(small_data, write_fabric, out)
    text = (out / MARKER).read_text()
    (out / MARKER).write_text(text.replace('"written_by": "netgen render"', '"written_by": "netgen render!"'))
    marker = manifest.parse_marker((out / MARKER).read_bytes())
    assert marker is not None and not marker.trusted and marker.seen is not None
    opened = _hashed(monkeypatch)
    _first_look(out)
    assert len(opened) == len(marker.files)


# --- edits: which are caught, and the known trade-off --------------------------------------------


def test_an_edit_put_in_place_by_a_rename_is_caught(small_data, write_fabric, tmp_path):
    """The same size and the recorded mtime, but another inode (written beside and renamed over)."""
    out = tmp_path / "out"
    fabric = _settled(small_data, write_fabric, out)
    recorded = _doc(out)["files"][TARGET]
    replacement = tmp_path / "replacement"
    replacement.write_text((out / TARGET).read_text().replace("hostname atsw01", "hostname atsw99", 1))
    os.utime(replacement, ns=(recorded["mtime_ns"], recorded["mtime_ns"]))
    os.replace(replacement, out / TARGET)
    st = (out / TARGET).stat()
    assert (st.st_size, st.st_mtime_ns) == (recorded["bytes"], recorded["mtime_ns"]) and st.st_ino != recorded["inode"]
    assert f"{TARGET} (changed since netgen wrote it)" in _refused(fabric, out)
    assert "hostname atsw99" in (out / TARGET).read_text()


@pytest.mark.parametrize(("before_seal_ns", "caught"), [(0, True), (10**9, False)],
                         ids=["racy-in-the-seals-tick", "older-than-the-seal"])
def test_an_edit_in_place_keeping_size_and_mtime(small_data, write_fabric, tmp_path, before_seal_ns, caught):
    """The file's recorded mtime set relative to the seal, then the file edited in place with its
    size kept and its mtime put back. Stamped in the seal's tick it is racy: read, and the edit
    refused. Older than the seal, the stat vouches for it and the edit is missed (the trade-off git and
    rsync make; the render keeps the file, and a deploy would still refuse it); --verify reads it
    and refuses."""
    out = tmp_path / "out"
    fabric = _settled(small_data, write_fabric, out)
    _set_mtime(out, TARGET, _doc(out)["sealed_ns"] - before_seal_ns)
    _edit_in_place(out / TARGET)
    if caught:
        assert f"{TARGET} (changed since netgen wrote it)" in _refused(fabric, out)
    else:
        assert _render(fabric, out)["reused"] == 18  # missed: the documented trade-off
        assert f"{TARGET} (changed since netgen wrote it)" in _refused(fabric, out, "--verify")
    assert "hostname atsw99" in (out / TARGET).read_text()  # refused, DIR as it was


def test_a_deploy_reads_what_the_stat_vouched_for(small_data, write_fabric, tmp_path):
    """The edit the render's first look misses is refused by the deploy's reader, which reads and
    hashes every file it pushes whatever the manifest recorded of it."""
    out = tmp_path / "out"
    fabric = _settled(small_data, write_fabric, out)
    _edit_in_place(out / TARGET)
    assert _render(fabric, out)["reused"] == 18  # missed by the render's look
    _, ctx, _ = load_and_check(fabric)
    with pytest.raises(RenderDirError, match=r"atsw01\.cfg: changed since netgen render wrote it"):
        read_render_dir(out, ctx, [ctx.topology.devices["atsw01"]])
