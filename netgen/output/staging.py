"""The new output directory, built in a private directory beside DIR and swapped in whole by a
rename only when every device rendered and passed its checks, so a failure never leaves a partial
or mixed directory behind; the previous render's files of the devices it keeps are linked in, not
written again.

The new DIR keeps the old one's mode and owner (as far as the OS lets us); a new DIR gets the
default mode of the umask. When every device of DIR is kept, DIR's files already are the new ones:
only its manifest is renamed over (or left, if it is the same). The manifest records what netgen
saw of each file as it sealed it (_seen), so that the next render's first look can take a file it
finds the same without reading it (manifest.py: Marker.vouches_for). Every OS failure is an
OutputDirError naming the path and the OS reason, and leaves everything as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from netgen.output.files import (
    Writer,
    Written,
    beside,
    discard,
    link_or_copy,
    make_parents,
    path_component,
    remove_tree,
    take_owner,
    umask_mode,
    write_new,
)
from netgen.output.inspection import (
    OutputDirError,
    Survey,
    check_replaceable,
    inspect_dir,
    named,
    os_failure,
    output_path,
)
from netgen.output.lookahead import InspectionAhead
from netgen.output.manifest import MARKER, Manifest, Marker, Seen, WholeRender, manifest_bytes
from netgen.output.manifest_mac import manifest_key
from netgen.rendered import RenderedFile, RenderError


class Stage:
    """The new DIR, built in a private directory beside it and swapped in by `finish` (module doc).
    Use as a context manager: on any failure the staging directory goes, and an OSError becomes an
    OutputDirError naming the path as the user knows it."""

    def __init__(self, output: Path, ahead: InspectionAhead | None = None, *, verify: bool = False) -> None:
        self.output = output_path(output)
        self.verify = verify  # every look at DIR hashes every listed file, whatever the manifest recorded
        self.dir: Path | None = None
        self.made: list[Path] = []
        self.entries: dict[str, tuple[int, str]] = {}  # "device/file" -> (bytes, sha256)
        self.survey = Survey()  # what the inspection of DIR before the render verified
        self.ahead = ahead
        self.prestaged: frozenset[str] = frozenset()  # devices whose old files the staging dir links already

    def __enter__(self) -> Stage:
        try:
            looked = self.ahead.take(self.output) if self.ahead is not None else None
            if looked is not None:
                self.before, self.survey = looked.before, looked.survey
                self.dir, self.prestaged = looked.staging, looked.prestaged
            else:
                self.before = check_replaceable(self.output, self.survey, verify=self.verify)
            self.made = make_parents(self.output.parent)
            if self.dir is None:
                self.dir = beside(self.output, "new")
        except BaseException as exc:
            self.__exit__(type(exc), exc, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            return
        failure = os_failure(exc, self.output, self.dir) if isinstance(exc, OSError) else None
        discard(self.dir, self.made)
        if failure is not None:
            raise failure from None

    def record(self, written: Written) -> None:
        for name, size, digest in written.files or ():
            self.entries[name] = (size, digest)

    def _marker(self) -> Marker | None:
        """DIR's manifest as the inspection read it and checked DIR against it: kept_keys, keep and
        updated_in_place work from that one."""
        return self.survey.marker

    def kept_keys(self) -> dict[str, str]:
        """The render keys DIR was written with, of the devices all of whose files the inspection
        found there unchanged (a device with a file gone is rendered again); none from a manifest
        whose MAC does not verify."""
        marker = self._marker()
        if marker is None or not marker.trusted:
            return {}
        complete: dict[str, bool] = {}
        for name in marker.files:
            device = name.split("/", 1)[0]
            complete[device] = complete.get(device, True) and name in self.survey.files
        return {device: key for device, key in marker.keys.items() if complete.get(device)}

    def cache_notes(self, reuse: bool) -> list[str]:
        """What the render says about its cache, once: that there is none (no key to authenticate
        manifests with), or why nothing of the render DIR holds is kept (its manifest's MAC)."""
        key = manifest_key()
        if key.secret is None:
            return [f"no render cache ({key.problem}): every device is rendered, and {self.output / MARKER} is"
                    " written unauthenticated"]
        marker = self._marker()
        if not reuse or marker is None or marker.trusted or not marker.files:
            return []
        return [f"{self.output / MARKER} is not authenticated ({marker.distrust}): nothing of {self.output} is"
                " kept, every device is rendered again"]

    def kept_inputs(self) -> dict[str, str]:
        """The zone inputs DIR's manifest recorded per device (zone_inputs.py); render_fabric trusts
        one only for a device whose key kept_keys keeps."""
        marker = self._marker()
        return {} if marker is None or not marker.trusted else marker.inputs

    def _previous(self, devices: set[str]) -> Manifest:
        """The manifest entries of `devices` in DIR as it was inspected."""
        previous = self._marker()
        old = {name: entry for name, entry in (previous.files if previous else {}).items()
               if name.split("/", 1)[0] in devices}
        missing = devices - {name.split("/", 1)[0] for name in old}
        if missing:
            raise RenderError(f"{self.output}: the files of {sorted(missing)[:3]} to keep are not in its manifest")
        return old

    def keep(self, devices: set[str]) -> None:
        """The previous render's files of `devices` (verified unchanged), linked in (unless they
        were staged ahead)."""
        assert self.dir is not None
        old = self._previous(devices)
        for device in sorted(devices - self.prestaged):
            os.mkdir(self.dir / device)
        for name, entry in old.items():
            if name.split("/", 1)[0] not in self.prestaged:
                link_or_copy(self.output / name, self.dir / name)
            self.entries[name] = entry

    def drop_prestaged(self, devices: Iterable[str]) -> None:
        """The devices staged ahead that this render neither keeps nor writes (gone from the fabric,
        or not selected) out of the staging directory."""
        assert self.dir is not None
        for device in sorted(self.prestaged & set(devices)):
            shutil.rmtree(self.dir / device)

    def updated_in_place(self, devices: set[str], keys: Mapping[str, str], whole: WholeRender | None,
                         inputs: Mapping[str, str] | None = None) -> bool:
        """When nothing was written and every file of DIR is kept (no device gone), DIR's files already
        are the new DIR's: DIR is inspected once more (files added or changed meanwhile are refused,
        as the swap would refuse them), its manifest is replaced by a rename if it is not already
        the one `finish` would write (new keys or fabric entry), and the staging directory goes. DIR
        goes from the old render to the new one in that one rename. Otherwise False: nothing done."""
        assert self.dir is not None
        marker = self._marker()
        if marker is None or self.entries:
            return False
        old = self._previous(devices)
        if len(old) != len(marker.files):
            return False
        seen = _seen(self.output, old)  # before the look: what it verifies is what was seen
        if marker.seen is not None and marker.seen.files == seen.files:
            seen = marker.seen  # the files as the manifest saw them: its seal stands, the manifest may stay
        self._look_again()
        data = manifest_bytes(old, keys, whole, inputs, seen)
        if marker.data != data:
            assert self.before is not None
            write_new(self.dir / MARKER, data)
            take_owner(self.dir, [self.dir / MARKER], self.before.st_uid, self.before.st_gid)
            os.rename(self.dir / MARKER, self.output / MARKER)
        remove_tree(self.dir, self.output, len(self.prestaged))
        self.dir = None
        self.entries.update(old)
        return True

    def _look_again(self) -> None:
        """DIR inspected again, in place: refused if anything was added or changed since the first
        look, and an error if a listed file went away meanwhile."""
        again = Survey()
        inspect_dir(self.output, self.output, again, verified=self.survey, verify=self.verify)
        gone = sorted(set(self.survey.files) - set(again.files))
        if gone:
            raise OutputDirError(f"{self.output}: {named(gone)} went away while netgen rendered; run the render"
                                 " again", self.output)

    def finish(self, keys: Mapping[str, str], whole: WholeRender | None = None,
               inputs: Mapping[str, str] | None = None) -> tuple[int, int]:
        """Write the manifest and swap the new DIR in; (files, bytes)."""
        assert self.dir is not None
        before, staging = self.before, self.dir
        mode = stat.S_IMODE(before.st_mode) if before is not None else umask_mode()
        if before is None:  # keep the set-group-ID bit a new directory inherits from its parent
            mode |= stat.S_IMODE(os.lstat(staging).st_mode) & stat.S_ISGID
        # what netgen sees of the files is recorded before the swap's look at the old DIR, which
        # verifies the kept files (links to DIR's) as they were seen
        write_new(staging / MARKER, manifest_bytes(self.entries, keys, whole, inputs, _seen(staging, self.entries)))
        if before is not None:
            written = [staging / MARKER, *(staging / d for d in {n.split("/", 1)[0] for n in self.entries}),
                       *(staging / n for n in self.entries)]
            take_owner(staging, written, before.st_uid, before.st_gid)
        os.chmod(staging, mode)
        old = self.survey.marker
        _swap(staging, self.output, replacing=before is not None, verified=self.survey,
              devices=0 if old is None else len(old.keys) or len(old.files), verify=self.verify)
        return len(self.entries), sum(size for size, _ in self.entries.values())


def write_atomically(rendered: dict[str, list[RenderedFile]], output: Path, keys: Mapping[str, str] | None = None,
                     reused: Iterable[str] = ()) -> tuple[int, int]:
    """Write DIR/<device>/<file> and the manifest into a sibling staging directory, then swap it
    into place. OutputDirError (nothing changed) when DIR may not be replaced or the OS refuses.
    `keys`: render keys to record per device; `reused`: devices whose files in DIR (verified
    unchanged) go into the new directory as they are, linked rather than written again."""
    for device, files in rendered.items():  # every name is checked before anything is written
        path_component(device, "device")
        for item in files:
            path_component(item.name, "file")
    with Stage(output) as stage:
        writer = Writer(stage.dir)
        for device, files in rendered.items():
            stage.record(writer(device, None, files))
        if reused:
            stage.keep(set(reused))
        return stage.finish(keys or {})


def _file_system_now(folder: Path) -> int:
    """The file system's clock as it stamps mtimes in `folder`: a new file's own mtime (a private
    name, removed at once). Not this machine's clock: the file system rounds to its own tick (a
    jiffy on ext4, 2 s on FAT) and a network file system's server stamps with its clock, so only
    its own stamp compares with the mtimes it gives."""
    probe = folder / f".netgen-seal.{secrets.token_hex(4)}"
    handle = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        return os.fstat(handle).st_mtime_ns
    finally:
        os.close(handle)
        os.unlink(probe)


def _seen(folder: Path, entries: Mapping[str, tuple[int, str]]) -> Seen:
    """What netgen sees of the files it is about to list, in `folder` (the staging directory, or DIR
    when only the manifest is replaced): each one's inode and mtime (lstat; its ctime is not kept:
    linking a kept file into the staging directory, or giving it DIR's owner, changes it), and the
    seal, the file system's clock before the first lstat (_file_system_now), so that every mtime
    compares with a seal no later than its lstat, on the same clock (manifest.Marker.vouches_for). A
    file whose size is not the listed one, or that is gone, is not recorded: the next look reads it.
    A file of the render's own is seen as written, in its private staging directory; a kept one is a
    link to DIR's, which the look that follows (the swap's, or updated_in_place's) verifies as seen
    here."""
    sealed_ns = _file_system_now(folder)
    files: dict[str, tuple[int, int]] = {}
    for name, (size, _) in entries.items():
        try:
            st = os.lstat(folder / name)
        except FileNotFoundError:  # gone: the look that follows says so
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size == size:
            files[name] = (st.st_ino, st.st_mtime_ns)
    return Seen(files, sealed_ns)


def _swap(staging: Path, output: Path, replacing: bool, verified: Survey | None = None, devices: int = 0,
          verify: bool = False) -> None:
    """staging becomes output; the old output (`devices` directories) goes (remove_tree). A DIR
    that was not there at the first look but is now (another render into the same new folder
    finished first, and swapped its complete DIR in) is replaced as any earlier render is: looked
    at whole, and refused if it holds anything that render did not write."""
    if not replacing:
        try:
            os.rename(staging, output)
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        verified = None
    holder = beside(output, "old")
    old = holder / "old"
    try:
        os.rename(output, old)
        try:
            # DIR is out of everyone's reach now: check again what it held when it moved, since
            # files may have been added while the new one was written.
            inspect_dir(old, output, verified=verified, verify=verify)
            os.rename(staging, output)
        except BaseException:
            _put_back(old, output)
            raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.rmdir(holder)
        raise
    remove_tree(holder, output, devices)


def _put_back(old: Path, output: Path) -> None:
    try:
        os.rename(old, output)
    except OSError as exc:
        raise OutputDirError(f"cannot move the previous {output} back into place ({exc.strerror});"
                             f" it is at {old}", old) from None
