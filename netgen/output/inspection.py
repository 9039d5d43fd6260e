"""What an output directory holds, and whether netgen may replace it: DIR must be new, empty, or
an earlier render that holds nothing but the files its manifest lists, unchanged (each read and
hashed, or, without --verify, vouched for by the inode, size and mtime an authenticated manifest
recorded: Marker.vouches_for); nothing is followed through a symbolic link. Every refusal, and
every OS failure, is an OutputDirError naming the path (as the user knows it) and the reason."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from netgen.output.manifest import LEGACY_FILES, MARKER, MARKER_LIMIT, RACY_NS, Marker, parse_marker

NAMED = 10  # paths named in a refusal; the rest are counted
STAGE_TAG = 32  # characters of DIR's name in the staging names (which must stay under NAME_MAX)


class OutputDirError(Exception):
    """The output directory cannot be written or replaced; `path` is what the message is about."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def output_path(output: Path) -> Path:
    """DIR as an absolute path whose parent is resolved; DIR's own name is kept, never followed."""
    if output.name in ("", ".", ".."):
        output = Path(os.path.realpath(output))
    return Path(os.path.realpath(output.parent)) / output.name if output.name else output


def lstat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def named(paths: list[str]) -> str:
    more = f" (and {len(paths) - NAMED} more)" if len(paths) > NAMED else ""
    return ", ".join(paths[:NAMED]) + more


def read_marker(folder: Path, shown: Path) -> Marker | None:
    """The manifest in folder's marker, its render keys per device and what a whole render recorded
    (None: a plain-text marker)."""
    marker, where = folder / MARKER, shown / MARKER
    st = os.lstat(marker)
    if not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise OutputDirError(f"{where} is {kind}; netgen render never follows links and will not replace {shown}",
                             where)
    fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MARKER_LIMIT + 1)
    try:
        return parse_marker(data)
    except ValueError as exc:
        raise OutputDirError(f"{where}: not a manifest netgen render wrote ({exc}), so netgen cannot tell its files"
                             f" from yours; move what you need out of {shown} and remove it by hand", where) from None


def _unchanged(path: str, size: int, digest: str) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if os.fstat(fd).st_size != size:
            return False
        return hashlib.file_digest(fh, "sha256").hexdigest() == digest


@dataclass
class Survey:
    """What one inspection of DIR verified: each listed file's (inode, size, mtime) when its digest
    matched or the manifest vouched for it (Marker.vouches_for), and when the inspection began. A
    later inspection in the same render (the look at DIR before the swap) takes a file whose inode,
    size and mtime are still the ones verified and reads only the others. A file last modified
    within RACY_NS (manifest.py) before the first inspection began is read again anyway: a write
    after that look could fall in the same tick of the file system's clock and leave the mtime as
    it was."""

    began_ns: int = field(default_factory=time.time_ns)
    files: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    marker: Marker | None = None  # DIR's manifest, as this inspection read and checked it

    def vouches_for(self, name: str, st: os.stat_result) -> bool:
        return (self.files.get(name) == (st.st_ino, st.st_size, st.st_mtime_ns)
                and st.st_mtime_ns < self.began_ns - RACY_NS)


def _not_written(folder: Path, marker: Marker | None, survey: Survey | None = None,
                 verified: Survey | None = None, verify: bool = False) -> list[str]:
    """Every path in folder (relative, sorted) that netgen render did not write, or that changed since.
    A listed file is read and hashed unless, at a later look of this render, its first look's survey
    (`verified`) vouches for it, or, at the first look and but with `verify`, the manifest
    (Marker.vouches_for: its inode, size and mtime as netgen saw them when it sealed the manifest).
    A later look is there to catch an edit made while this render ran, which the manifest cannot
    speak for. `survey`: where to note each file found unchanged."""
    found: list[str] = []
    manifest = marker.files if marker is not None else None
    vouching = marker if marker is not None and not verify and verified is None else None
    devices = {name.split("/")[0] for name in manifest} if manifest is not None else None
    with os.scandir(folder) as top:
        entries = sorted(top, key=lambda e: e.name)
    for entry in entries:
        if entry.name == MARKER:
            continue
        if entry.is_symlink():
            found.append(f"{entry.name} (a symbolic link)")
            continue
        if not entry.is_dir(follow_symlinks=False):
            found.append(entry.name)
            continue
        if devices is not None and entry.name not in devices:
            found.append(f"{entry.name}/")
            continue
        with os.scandir(entry.path) as inner:
            items = sorted(inner, key=lambda e: e.name)
        for item in items:
            name = f"{entry.name}/{item.name}"
            if item.is_symlink():
                found.append(f"{name} (a symbolic link)")
            elif item.is_dir(follow_symlinks=False):
                found.append(f"{name}/")
            elif not item.is_file(follow_symlinks=False):
                found.append(f"{name} (not a regular file)")
            elif manifest is None:
                if item.name not in (*LEGACY_FILES, f"{entry.name}.cfg"):
                    found.append(name)
            elif name not in manifest:
                found.append(name)
            else:
                st = item.stat(follow_symlinks=False)
                if not ((verified is not None and verified.vouches_for(name, st))
                        or (vouching is not None and vouching.vouches_for(name, st))
                        or _unchanged(item.path, *manifest[name])):
                    found.append(f"{name} (changed since netgen wrote it)")
                elif survey is not None:
                    survey.files[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def inspect_dir(folder: Path, shown: Path, survey: Survey | None = None,
             verified: Survey | None = None, *, verify: bool = False) -> os.stat_result | None:
    """folder's lstat (None: it does not exist) if netgen may replace it; else OutputDirError.
    Messages name `shown`, the path the user gave (folder may be DIR moved aside for the swap).
    `survey`, `verified`, `verify`: as _not_written."""
    st = lstat_or_none(folder)
    if st is None:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise OutputDirError(f"{shown} is a symbolic link; netgen render never follows links: give the directory"
                             " it points to, or a new path", shown)
    if not stat.S_ISDIR(st.st_mode):
        raise OutputDirError(f"{shown} exists and is not a directory", shown)
    names = os.listdir(folder)
    if not names:
        return st
    if MARKER not in names:
        raise OutputDirError(f"{shown} exists and was not written by netgen render (no {MARKER});"
                             " choose a new or empty directory", shown)
    marker = read_marker(folder, shown)
    if survey is not None:
        survey.marker = marker
    found = _not_written(folder, marker, survey, verified, verify)
    if found:
        raise OutputDirError(f"{shown} holds {len(found)} path(s) netgen render did not write: {named(found)};"
                             f" replacing {shown} would delete them: move them out of it, or choose another"
                             " directory", shown)
    return st


def os_failure(exc: OSError, output: Path, staging: Path | None = None) -> OutputDirError:
    """An OSError as a one-line OutputDirError: the path involved (as the user knows it) and the OS reason."""
    reason = exc.strerror or str(exc)
    code = errno.errorcode.get(exc.errno or 0)
    if code:
        reason += f" ({code})"
    path = Path(os.fsdecode(exc.filename)) if exc.filename is not None else output
    where = ""
    if staging is not None and path.is_relative_to(staging) and path != staging:
        path = output / path.relative_to(staging)  # the file as it would have been named in DIR
    elif path.parent == output.parent and path.name.startswith(f".{output.name[:STAGE_TAG]}."):
        path = output.parent  # the staging or set-aside directory beside DIR
        where = f" (netgen builds the new directory beside {output.name} and swaps it in)"
    if exc.errno == errno.ENOTDIR:
        for ancestor in (path, *path.parents):
            with contextlib.suppress(OSError):
                if not stat.S_ISDIR(os.stat(ancestor).st_mode):
                    path, where = ancestor, " (not a directory)"
                    break
    what = f"cannot write {output}: {reason}"
    if path != output:
        what += f" at {path}{where}"
    return OutputDirError(what + "; nothing was changed", path)


def check_output_dir(output: Path) -> None:
    """OutputDirError unless netgen may write `output` (see the module doc); changes nothing."""
    output = output_path(output)
    try:
        check_replaceable(output)
    except OSError as exc:
        raise os_failure(exc, output) from None


def check_replaceable(output: Path, survey: Survey | None = None, *, verify: bool = False) -> os.stat_result | None:
    """DIR's first look (inspect_dir); `verify`: hash every listed file, whatever the manifest recorded."""
    if not output.name:
        raise OutputDirError(f"{output}: a file system root cannot be an output directory", output)
    st = inspect_dir(output, output, survey, verify=verify)
    if st is not None and st.st_dev != os.stat(output.parent).st_dev:
        raise OutputDirError(f"{output} is a mount point, which cannot be swapped by a rename: give a directory"
                             " inside it", output)
    return st


def recorded_whole_render(output: Path, key: str, *, verify: bool = False) -> Marker | None:
    """DIR's manifest when DIR already holds a render of every device whose fabric key is `key`
    (netgen/platforms/render.py: unchanged_render): written by a whole render with that key, each
    listed file there and unchanged, nothing else in it. DIR is inspected as a render inspects it
    (`verify`: every listed file hashed), and refused as a render refuses it (OutputDirError).
    None: it does not hold that render."""
    path = output_path(output)
    survey = Survey()
    try:  # the manifest first: DIR is read whole only when it was written with this key
        st = lstat_or_none(path)
        if st is None or not stat.S_ISDIR(st.st_mode) or lstat_or_none(path / MARKER) is None:
            return None
        marker = read_marker(path, path)
        if marker is None or not marker.trusted or marker.whole is None or marker.whole.key != key:
            return None
        check_replaceable(path, survey, verify=verify)
    except OSError as exc:
        raise os_failure(exc, path) from None
    if set(marker.files) - set(survey.files):
        return None
    return marker
