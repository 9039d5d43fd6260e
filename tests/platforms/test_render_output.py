"""`netgen render -o DIR`: what may be replaced, symbolic links, modes and owners, and OS failures.

Every failure is exit 2 naming the path and the OS reason (never exit 3, never a traceback), and
leaves everything as it was: no staging directory, the previous output and any user file intact.
The tests that need real conditions (tmpfs, a read-only remount, another user) need root: CI runs
as root; elsewhere they skip and say why.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from netgen.output import files as output_files
from netgen.output import lookahead, manifest
from netgen.output import staging as output_staging
from netgen.output.inspection import OutputDirError, Survey, check_replaceable, output_path
from netgen.output.lookahead import InspectionAhead
from netgen.output.manifest import MARKER
from netgen.output.staging import write_atomically
from netgen.platforms import render
from netgen.rendered import RenderedFile
from tests.conftest import SMALL, render_tree, run_cli

pytestmark = pytest.mark.render

RTSW, RTSW2 = "z01-rtsw001", "z01-rtsw002"
ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root (mount, remount read-only, chown, another user)")
NETGEN = Path(sys.executable).parent / "netgen"

State = dict[str, tuple[int, int, int, Any]]


def snapshot(root: Path) -> State:
    """Every path under root (root itself too): mode, owner, group and content (or link target)."""
    state: State = {}
    paths = [root]
    for dirpath, dirnames, filenames in os.walk(root):
        paths += [Path(dirpath) / name for name in dirnames + filenames]
    for path in paths:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            data: Any = os.readlink(path)
        elif stat.S_ISREG(st.st_mode):
            data = path.read_bytes()
        else:
            data = None
        state[str(path.relative_to(root))] = (st.st_mode, st.st_uid, st.st_gid, data)
    return state


def without(state: State, top: str) -> State:
    return {k: v for k, v in state.items() if k != top and not k.startswith(f"{top}/")}


def files(device: str = "dev1", text: str = "x") -> dict[str, list[RenderedFile]]:
    return {device: [RenderedFile("config_db.json", "{}\n"), RenderedFile("frr.conf", f"! {text}\n")]}


def cli_render(out: Path, *devices: str, json_out: bool = True) -> Result:
    args = ["render", str(SMALL), "-o", str(out), *[a for d in devices for a in ("--device", d)]]
    return run_cli(*args, *(["--json"] if json_out else []))


def refused(result: Result, *named: str) -> dict[str, Any]:
    """An exit-2 JSON refusal whose error names every string in `named`; never an internal error."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    payload = json.loads(result.stdout)  # exactly one JSON document on stdout
    assert payload["ok"] is False and payload["exit_code"] == 2 and payload["written"] is False
    for text in named:
        assert text in payload["error"], payload["error"]
    return dict(payload)


def no_staging(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if ".new-" in p.name or ".old-" in p.name] == []


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    """tmp_path/out: a real one-device render."""
    out = tmp_path / "out"
    assert cli_render(out, RTSW).exit_code == 0
    return out


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


# --- A: the OS refuses: exit 2 naming the path and the reason; nothing partial left ----------------


@needs_root
@pytest.mark.parametrize("existing", [True, False], ids=["replacing", "new"])
def test_a_read_only_file_system_is_exit_2_and_changes_nothing(tmp_path, existing):
    with tmpfs(tmp_path / "fs", "4m") as fs:
        out = fs / "out"
        if existing:
            assert cli_render(out, RTSW).exit_code == 0
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        before = snapshot(fs)
        payload = refused(cli_render(out / "deeper" if not existing else out),
                          str(out), "Read-only file system", "EROFS")
        assert payload["path"].startswith(str(fs))
        assert snapshot(fs) == before


@needs_root
@pytest.mark.parametrize("existing", [True, False], ids=["replacing", "new"])
def test_a_full_file_system_is_exit_2_and_leaves_no_partial_output(tmp_path, existing):
    with tmpfs(tmp_path / "fs", "256k") as fs:  # one device fits, the whole small fabric (600 kB) does not
        out = fs / "out"
        if existing:
            assert cli_render(out, RTSW).exit_code == 0
        before = snapshot(fs)
        refused(cli_render(out), str(out), "No space left on device", "ENOSPC")
        assert snapshot(fs) == before
        no_staging(fs)


def test_a_name_too_long_is_exit_2(tmp_path):
    out = tmp_path / ("n" * 300)
    refused(cli_render(out), str(out), "File name too long", "ENAMETOOLONG")
    assert list(tmp_path.iterdir()) == []


def test_the_longest_allowed_name_still_renders(tmp_path):
    # The staging directory beside DIR must fit NAME_MAX too (255 bytes on Linux).
    out = tmp_path / ("n" * 255)
    assert cli_render(out, RTSW).exit_code == 0
    assert cli_render(out, RTSW).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_a_path_under_proc_is_exit_2():
    out = Path(f"/proc/netgen-render-test-{os.getpid()}")
    refused(cli_render(out), str(out), "/proc", "No such file or directory")
    link = refused(cli_render(Path("/proc/self")), "/proc/self is a symbolic link")
    assert link["path"] == "/proc/self"


def test_a_parent_that_is_a_file_is_exit_2_and_named(tmp_path):
    (tmp_path / "file").write_text("mine")
    before = snapshot(tmp_path)
    payload = refused(cli_render(tmp_path / "file" / "out"), "Not a directory", "ENOTDIR",
                      f"at {tmp_path / 'file'} (not a directory)")
    assert payload["path"] == str(tmp_path / "file")
    refused(cli_render(tmp_path / "file"), f"{tmp_path / 'file'} exists and is not a directory")
    assert snapshot(tmp_path) == before


@needs_root
def test_permission_denied_is_exit_2_and_changes_nothing(tmp_path):
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    # tmp_path is private to root: work in a directory that another user can reach.
    base = Path(tempfile.mkdtemp(prefix="netgen-eacces-"))
    try:
        base.chmod(0o755)
        theirs = base / "theirs"  # root's, 0700, an earlier render: the user may not even list it
        assert cli_render(theirs, RTSW).exit_code == 0
        theirs.chmod(0o700)
        before = snapshot(base)
        as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", str(NETGEN), "render", str(SMALL)]
        for out, reason in ((base / "out", f"at {base}"), (theirs, str(theirs))):
            proc = subprocess.run([*as_nobody, "-o", str(out), "--json"], capture_output=True, text=True,
                                  check=False, env={"PATH": os.environ.get("PATH", "/usr/bin"), "HOME": "/"})
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert "Traceback" not in proc.stderr
            payload = json.loads(proc.stdout)
            assert payload["exit_code"] == 2
            assert str(out) in payload["error"] and "Permission denied (EACCES)" in payload["error"]
            assert reason in payload["error"]
        assert snapshot(base) == before
    finally:
        shutil.rmtree(base)


@pytest.mark.skipif(not ROOT or shutil.which("chattr") is None, reason="needs root and chattr")
def test_an_immutable_parent_is_exit_2(rendered, tmp_path):
    before = snapshot(tmp_path)
    if subprocess.run(["chattr", "+i", str(tmp_path)], capture_output=True, check=False).returncode != 0:
        pytest.skip(f"the file system under {tmp_path} has no immutable attribute")
    try:
        refused(cli_render(rendered), str(rendered), "Operation not permitted (EPERM)", f"at {tmp_path}")
    finally:
        subprocess.run(["chattr", "-i", str(tmp_path)], check=True)
    assert snapshot(tmp_path) == before


def test_a_failed_swap_puts_the_previous_output_back(rendered, tmp_path, monkeypatch):
    before = snapshot(tmp_path)
    real = os.rename

    def rename(src, dst, **kw):
        if ".new-" in os.fspath(src):
            raise OSError(28, os.strerror(28), os.fspath(src), os.fspath(dst))
        return real(src, dst, **kw)

    monkeypatch.setattr(os, "rename", rename)
    refused(cli_render(rendered), str(rendered), "No space left on device (ENOSPC)")
    assert snapshot(tmp_path) == before


def test_created_parents_are_removed_again_on_failure(tmp_path, monkeypatch):
    real = output_files.write_new

    def full(path, data):
        if path.name == "frr.conf":
            raise OSError(28, os.strerror(28), str(path))
        real(path, data)

    monkeypatch.setattr(output_files, "write_new", full)
    with pytest.raises(OutputDirError, match=r"No space left on device \(ENOSPC\) at .*/a/b/out/dev1/frr.conf"):
        write_atomically(files(), tmp_path / "a" / "b" / "out")
    assert list(tmp_path.iterdir()) == []


# --- B1: only what netgen wrote may be replaced ----------------------------------------------------


def test_the_marker_is_a_manifest_of_what_was_written(rendered):
    doc = json.loads((rendered / MARKER).read_text())
    assert doc["format"] == manifest.MANIFEST_FORMAT and doc["written_by"] == "netgen render"
    # no render key: its custom FRR lines are judged by the FRR here at every render (test_render_cache.py)
    assert doc["devices"] == {}
    assert sorted(doc["files"]) == [f"{RTSW}/config_db.json", f"{RTSW}/custom-config.json", f"{RTSW}/frr.conf"]
    entry = doc["files"][f"{RTSW}/frr.conf"]
    assert entry["bytes"] == (rendered / RTSW / "frr.conf").stat().st_size and len(entry["sha256"]) == 64


def test_files_netgen_wrote_are_replaced_byte_identically(rendered, tmp_path):
    assert cli_render(rendered, RTSW2).exit_code == 0  # the RTSW folder it wrote goes; nothing else was there
    assert sorted(p.name for p in rendered.iterdir()) == [MARKER, RTSW2]
    fresh = tmp_path / "fresh"
    assert cli_render(fresh, RTSW2).exit_code == 0
    assert without(snapshot(rendered), MARKER) == without(snapshot(fresh), MARKER)
    assert render_tree(rendered) == render_tree(fresh)  # the manifest too, but for its record of inodes and mtimes
    no_staging(tmp_path)


def test_user_files_in_an_earlier_render_are_refused_and_kept(rendered, tmp_path):
    (rendered / "notes.txt").write_text("mine")
    (rendered / "mine").mkdir()
    (rendered / "mine" / "deep.txt").write_text("mine")
    (rendered / RTSW / "frr.conf.orig").write_text("mine")
    before = snapshot(tmp_path)
    payload = refused(cli_render(rendered, RTSW2), str(rendered), "3 path(s) netgen render did not write",
                      "notes.txt", "mine/", f"{RTSW}/frr.conf.orig")
    assert payload["path"] == str(rendered)
    assert snapshot(tmp_path) == before


def test_a_changed_rendered_file_is_refused_and_kept(rendered, tmp_path):
    frr = rendered / RTSW / "frr.conf"
    frr.write_text(frr.read_text().replace("router bgp", "router  bgp"))  # hand edit
    before = snapshot(tmp_path)
    refused(cli_render(rendered), f"{RTSW}/frr.conf (changed since netgen wrote it)")
    assert snapshot(tmp_path) == before


def test_a_refusal_names_at_most_ten_paths(tmp_path):
    out = tmp_path / "out"
    write_atomically(files(), out)
    for i in range(13):
        (out / f"user{i:02}.txt").write_text("mine")
    with pytest.raises(OutputDirError, match=r"13 path\(s\) .*user09\.txt \(and 3 more\)") as exc:
        write_atomically(files(), out)
    assert "user10" not in str(exc.value)
    assert len(list(out.iterdir())) == 15


def test_a_file_added_while_rendering_is_caught_at_the_swap(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_atomically(files(), out)
    real = output_files.write_new

    def racing(path, data):  # a user writes into DIR after it was checked, before the swap
        (out / "late.txt").write_text("mine")
        real(path, data)

    monkeypatch.setattr(output_files, "write_new", racing)
    with pytest.raises(OutputDirError, match=r"1 path\(s\) netgen render did not write: late\.txt"):
        write_atomically(files(text="new"), out)
    assert (out / "late.txt").read_text() == "mine"
    assert (out / "dev1" / "frr.conf").read_text() == "! x\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("age_s", [0, 3600], ids=["written-just-now", "written-an-hour-ago"])
def test_a_file_edited_while_rendering_is_caught_at_the_swap(tmp_path, monkeypatch, age_s):
    """The swap's second look takes a file as verified by the first only while its inode, size and
    mtime are unchanged and it was not written within seconds of that first look. The edit keeps the
    inode and size; a file written just now gets its mtime put back too (an edit in the same clock
    tick) and is still caught, because it is read again."""
    out = tmp_path / "out"
    write_atomically(files(text="y"), out)
    target = out / "dev1" / "frr.conf"
    old = target.stat()
    os.utime(target, ns=(old.st_atime_ns - age_s * 10**9, old.st_mtime_ns - age_s * 10**9))
    before = target.stat()
    real = output_files.write_new

    def editing(path, data):  # a user edits a listed file after DIR was checked, before the swap
        if target.read_text() == "! y\n":
            with target.open("r+") as fh:
                fh.write("! z\n")
            if not age_s:
                os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        real(path, data)

    monkeypatch.setattr(output_files, "write_new", editing)
    with pytest.raises(OutputDirError, match=r"dev1/frr\.conf \(changed since netgen wrote it\)"):
        write_atomically(files(text="new"), out)
    assert target.read_text() == "! z\n" and target.stat().st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_marker_of_an_older_netgen_allows_only_rendered_file_names(tmp_path):
    out = tmp_path / "out"
    (out / "a").mkdir(parents=True)
    (out / MARKER).write_text("rendered by netgen; `netgen render` replaces this directory whole\n")
    for name in ("config_db.json", "frr.conf", "a.cfg"):
        (out / "a" / name).write_text("old")
    (out / "a" / "todo.txt").write_text("mine")
    with pytest.raises(OutputDirError, match=r"a/todo\.txt"):
        write_atomically(files(), out)
    (out / "a" / "todo.txt").unlink()
    write_atomically(files(), out)
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "dev1"]


@pytest.mark.parametrize("marker", ["{not json", '{"format": 99, "files": {}}', '{"format": 1, "files": {"../x": 1}}'])
def test_a_marker_netgen_cannot_read_is_refused(tmp_path, marker):
    out = tmp_path / "out"
    (out / "dev1").mkdir(parents=True)
    (out / MARKER).write_text(marker)
    with pytest.raises(OutputDirError, match="not a manifest netgen render wrote"):
        write_atomically(files(), out)
    assert (out / MARKER).read_text() == marker


def test_foreign_and_non_directory_outputs_are_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    refused(cli_render(tmp_path), f"{tmp_path} exists and was not written by netgen render")
    refused(cli_render(tmp_path / "notes.txt"), "exists and is not a directory")
    refused(cli_render(Path("/")), "a file system root cannot be an output directory")
    assert (tmp_path / "notes.txt").read_text() == "mine"


# --- B2: never follow a symbolic link --------------------------------------------------------------


@pytest.mark.parametrize("target", ["empty", "render", "dangling"])
def test_dir_that_is_a_symbolic_link_is_refused(rendered, tmp_path, target):
    real = {"empty": tmp_path / "empty", "render": rendered, "dangling": tmp_path / "nowhere"}[target]
    if target == "empty":
        real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    before = snapshot(tmp_path)
    payload = refused(cli_render(link), f"{link} is a symbolic link")
    assert payload["path"] == str(link)
    assert snapshot(tmp_path) == before  # in particular: nothing written through the dangling link
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("where", ["top", "device"])
def test_a_symbolic_link_inside_is_refused_and_its_target_untouched(rendered, tmp_path, where):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "data").write_text("mine")
    link = rendered / "precious" if where == "top" else rendered / RTSW / "precious"
    link.symlink_to(target)
    before = snapshot(tmp_path)
    refused(cli_render(rendered), f"{link.relative_to(rendered)} (a symbolic link)")
    assert snapshot(tmp_path) == before


def test_a_marker_that_is_a_symbolic_link_is_refused(tmp_path):
    out = tmp_path / "out"
    (out / "dev1").mkdir(parents=True)
    (tmp_path / "elsewhere").write_text("rendered by netgen")
    (out / MARKER).symlink_to(tmp_path / "elsewhere")
    before = snapshot(tmp_path)
    refused(cli_render(out), f"{out / MARKER} is a symbolic link")
    assert snapshot(tmp_path) == before


@needs_root
def test_a_mount_point_is_refused(tmp_path):
    with tmpfs(tmp_path / "mnt", "1m") as mnt:
        refused(cli_render(mnt), f"{mnt} is a mount point")
        assert list(mnt.iterdir()) == []
    no_staging(tmp_path)


# --- B3: modes and owners ----------------------------------------------------------------------------


@pytest.mark.parametrize("earlier", [False, True], ids=["empty", "earlier-render"])
def test_a_0700_directory_stays_0700(tmp_path, earlier):
    out = tmp_path / "out"
    if earlier:
        assert cli_render(out, RTSW).exit_code == 0
    else:
        out.mkdir()
    out.chmod(0o700)
    outside = without(snapshot(tmp_path), "out")
    assert cli_render(out, RTSW2).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert (out / RTSW2 / "frr.conf").is_file()
    assert without(snapshot(tmp_path), "out") == outside
    no_staging(tmp_path)


def test_a_new_directory_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomically(files(), tmp_path / "out")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "out" / "dev1").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "out" / "dev1" / "frr.conf").stat().st_mode) == 0o640


@needs_root
def test_the_owner_of_the_directory_is_kept(tmp_path):
    out = tmp_path / "out"
    write_atomically(files(), out)
    for path in (out, *out.rglob("*")):
        os.chown(path, 65534, 65534, follow_symlinks=False)
    out.chmod(0o750)
    write_atomically(files(text="again"), out)
    assert {(p.lstat().st_uid, p.lstat().st_gid) for p in (out, *out.rglob("*"))} == {(65534, 65534)}
    assert stat.S_IMODE(out.stat().st_mode) == 0o750
    assert (out / "dev1" / "frr.conf").read_text() == "! again\n"


# --- DIR's first look, taken ahead by a forked child (InspectionAhead) ---------------------------


def test_the_look_ahead_answers_for_a_replaceable_dir_only(rendered, tmp_path):
    where = output_path(rendered)
    ahead = InspectionAhead.start(rendered)
    assert ahead is not None
    look = ahead.take(where)
    assert look.before.st_ino == where.stat().st_ino
    assert set(look.survey.files) == set(json.loads((rendered / MARKER).read_text())["files"]) != set()
    assert look.survey.marker is not None and set(look.survey.marker.files) == set(look.survey.files)
    shutil.rmtree(look.staging)  # the stage's to remove, once taken
    (rendered / "mine.txt").write_text("mine")
    refused_ahead = InspectionAhead.start(rendered)
    assert refused_ahead.take(where) is None  # the stage looks itself, and reports what it finds
    other = InspectionAhead.start(rendered)
    assert other.take(output_path(tmp_path / "elsewhere")) is None  # not the DIR it looked at
    no_staging(rendered.parent)  # neither left the staging directory its child had begun


def test_the_look_ahead_stages_every_verified_file_as_a_link(rendered):
    look = InspectionAhead.start(rendered).take(output_path(rendered))
    try:
        assert look.prestaged == {RTSW}
        staged = {str(p.relative_to(look.staging)): p.stat().st_ino for p in look.staging.rglob("*") if p.is_file()}
        assert staged == {str(p.relative_to(rendered)): p.stat().st_ino
                          for p in rendered.rglob("*") if p.is_file() and p.name != MARKER}
        assert stat.S_IMODE(look.staging.stat().st_mode) == 0o700  # private until the swap
    finally:
        shutil.rmtree(look.staging)


def test_a_look_ahead_of_a_new_dir_stages_nothing(tmp_path):
    look = InspectionAhead.start(tmp_path / "new").take(output_path(tmp_path / "new"))
    assert look.before is None and look.staging is None and look.prestaged == frozenset()
    no_staging(tmp_path)


def test_a_render_takes_the_look_ahead_as_its_first_look(rendered, monkeypatch):
    from netgen.checks import load_and_check  # noqa: PLC0415

    _, ctx, _ = load_and_check(SMALL)
    ahead = InspectionAhead.start(rendered)

    def no_second_first_look(*args, **kwargs):
        raise AssertionError("DIR inspected again before the render")

    monkeypatch.setattr(output_staging, "check_replaceable", no_second_first_look)
    result = render.render_fabric(ctx, rendered, [RTSW], ahead=ahead)
    assert result.devices == [RTSW]  # rendered into DIR from the child's look alone
    no_staging(rendered.parent)


def test_an_edit_after_the_look_ahead_is_caught_at_the_swap(rendered, monkeypatch):
    from netgen.checks import load_and_check  # noqa: PLC0415

    _, ctx, _ = load_and_check(SMALL)
    target = next(p for p in (rendered / RTSW).iterdir())
    real_take = InspectionAhead.take

    def take_then_edit(self, output):  # a user edits a listed file after the child looked
        looked = real_take(self, output)
        with target.open("a") as fh:
            fh.write("# mine\n")
        return looked

    monkeypatch.setattr(InspectionAhead, "take", take_then_edit)
    with pytest.raises(OutputDirError, match=r"changed since netgen wrote it"):
        render.render_fabric(ctx, rendered, [RTSW], ahead=InspectionAhead.start(rendered))
    assert target.read_text().endswith("# mine\n")
    no_staging(rendered.parent)


def test_a_look_ahead_not_taken_is_stopped_and_reaped(rendered):
    ahead = InspectionAhead.start(rendered)
    pid = ahead._pid
    ahead.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert ahead.take(output_path(rendered)) is None
    no_staging(rendered.parent)  # and what its child had staged is gone


def test_a_device_rendered_again_over_its_staged_files_keeps_none_of_them(small_data, write_fabric, tmp_path):
    """Zone 1's RTSWs lose their custom FRR block: their custom-config.json, staged ahead as a link
    to the old file, must not survive into the new DIR; devices gone from the fabric go too."""
    out = tmp_path / "out"
    fabric = write_fabric(small_data)
    assert run_cli("render", str(fabric), "-o", str(out)).exit_code == 0
    assert (out / RTSW / "custom-config.json").exists()
    small_data.pop("custom_config")
    small_data["zones"][0] = {**json.loads(json.dumps(small_data["zones"][0])), "racks": 3}
    del small_data["aggregation"]["expected_oversubscription"]  # three racks: another ratio
    fabric.write_text(yaml.safe_dump(small_data, sort_keys=False))
    result = run_cli("render", str(fabric), "-o", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / RTSW).iterdir()) == ["config_db.json", "frr.conf"]
    assert not (out / "z01-rtsw004").exists()
    manifest = json.loads((out / MARKER).read_text())["files"]
    assert set(manifest) == {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != MARKER}
    no_staging(tmp_path)


def _trash(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".trash-" in p.name]


def _gone_soon(folder: Path) -> bool:
    for _ in range(200):
        if not _trash(folder):
            return True
        time.sleep(0.05)
    return False


def test_a_large_old_dir_is_removed_by_a_detached_process(tmp_path, monkeypatch):
    """Above BACKGROUND_MIN_DEVICES the swapped-out DIR goes to trash beside it, removed after the
    command by a process of its own, which also removes trash a killed one left."""
    monkeypatch.setattr(output_files, "BACKGROUND_MIN_DEVICES", 0)
    out, eos = tmp_path / "out", "z02-rtsw001"  # an EOS switch: kept when unchanged (zone 1's take FRR lines)
    assert cli_render(out, eos).exit_code == 0
    left = tmp_path / ".out.trash-0badc0de"  # what a deleter killed half-way leaves
    (left / "old" / RTSW).mkdir(parents=True)
    (left / "old" / RTSW / "frr.conf").write_text("old")
    inode = (out / eos / f"{eos}.cfg").stat().st_ino
    assert cli_render(out, eos, RTSW).exit_code == 0
    assert _gone_soon(tmp_path), _trash(tmp_path)
    no_staging(tmp_path)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [RTSW, eos]
    assert (out / eos / f"{eos}.cfg").stat().st_ino == inode  # kept: the same file, linked


def test_a_small_old_dir_is_removed_in_place(rendered, tmp_path):
    assert cli_render(rendered, RTSW, RTSW2).exit_code == 0
    assert _trash(tmp_path) == [] and no_staging(tmp_path) is None


def _surveyed(out: Path) -> Any:
    survey = Survey()
    check_replaceable(output_path(out), survey)
    return survey


def test_a_file_put_in_place_of_the_one_read_is_not_staged(rendered, tmp_path):
    """Between the look and the link a file is replaced (another inode, same bytes): its device is
    left for `keep`, which the swap's second look guards."""
    survey = _surveyed(rendered)
    target = next((rendered / RTSW).iterdir())
    replacement = tmp_path / "replacement"
    replacement.write_bytes(target.read_bytes())
    os.replace(replacement, target)
    staging = tmp_path / "staging"
    staging.mkdir()
    assert lookahead._prestage(output_path(rendered), staging, survey) == frozenset()
    assert list(staging.iterdir()) == []


def test_without_hard_links_nothing_is_staged_and_kept_files_are_copied(small_data, write_fabric, tmp_path,
                                                                        monkeypatch):
    out, eos = tmp_path / "out", "z02-rtsw001"
    assert cli_render(out, eos, RTSW).exit_code == 0
    survey = _surveyed(out)
    staging = tmp_path / "staging"
    staging.mkdir()

    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    assert lookahead._prestage(output_path(out), staging, survey) == frozenset()
    assert list(staging.iterdir()) == []
    before = (out / eos / f"{eos}.cfg").read_bytes()
    result = cli_render(out, eos, RTSW)
    assert result.exit_code == 0 and json.loads(result.stdout)["reused"] == 1
    assert (out / eos / f"{eos}.cfg").read_bytes() == before
    no_staging(tmp_path)
