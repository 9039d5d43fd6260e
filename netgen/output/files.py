"""The file operations an output directory is written with: a device's files streamed into the
staging directory (Writer), files made new and never written over, private directories beside DIR,
hard links (copies where the file system has none), and removing a tree, a large one by a detached
process."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from netgen.output.inspection import STAGE_TAG, lstat_or_none
from netgen.output.manifest import MARKER
from netgen.rendered import RenderedFile, RenderError


@dataclass(frozen=True, slots=True)
class Written:
    """A device streamed to the staging directory (or only measured, for --check)."""

    key: str | None
    files: tuple[tuple[str, int, str], ...] | None  # ("device/file", bytes, sha256); None: reused
    unchecked: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Writer:
    """What becomes of a device's files where it was rendered (in a render worker): written into the
    staging directory, so that only their sizes and digests travel back."""

    staging: Path | None  # None: measure only (render --check)
    prestaged: frozenset[str] = frozenset()  # devices whose old files the staging directory links

    def __call__(self, name: str, key: str | None, files: list[RenderedFile] | None) -> Written:
        if files is None:
            return Written(key, None)
        if self.staging is not None:
            folder = self.staging / path_component(name, "device")
            if name in self.prestaged:  # links the child made in this private directory: unlinked
                with os.scandir(folder) as linked:
                    for entry in list(linked):
                        os.unlink(entry.path)
            else:
                os.mkdir(folder)
        entries = []
        for item in files:
            data = item.content.encode("utf-8")
            path = f"{name}/{path_component(item.name, 'file')}"
            if self.staging is not None:
                write_new(self.staging / path, data)
            entries.append((path, len(data), hashlib.sha256(data).hexdigest() if self.staging else ""))
        return Written(key, tuple(entries), tuple(f.unchecked for f in files if f.unchecked))


def path_component(name: str, what: str) -> str:
    """`name` when it can be one file or folder name in DIR (not the manifest's); else RenderError."""
    if name in ("", ".", "..", MARKER) or "/" in name or "\0" in name:
        raise RenderError(f"{what} {name!r} cannot be a file name in the output directory")
    return name


def write_new(path: Path, data: bytes) -> None:
    """A new file holding `data`: never one already there, never through a symbolic link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:  # a failed write or close (ENOSPC, EDQUOT, EIO) names no file: name it
        if exc.filename is None:
            exc.filename = str(path)
        raise


def umask_mode() -> int:
    """The mode a new directory gets from the umask (0o777 & ~umask)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return 0o777 & ~mask


def make_parents(folder: Path) -> list[Path]:
    """mkdir -p folder; returns the directories it created, deepest last (to undo on failure)."""
    missing: list[Path] = []
    while lstat_or_none(folder) is None:
        missing.append(folder)
        folder = folder.parent
    made: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:  # made meanwhile (another render into the same new folder): used
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    raise
                continue
            made.append(path)
    except BaseException:
        _remove_dirs(made)
        raise
    return made


def _remove_dirs(made: list[Path]) -> None:
    for path in reversed(made):
        with contextlib.suppress(OSError):
            os.rmdir(path)


def beside(output: Path, kind: str) -> Path:
    """A new private directory next to output (mode 0700 until the swap)."""
    for _ in range(100):
        path = output.parent / f".{output.name[:STAGE_TAG]}.{kind}-{secrets.token_hex(4)}"
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(output.parent))


_NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV)  # link(2): none made here


def hard_link(source: Path, target: Path) -> bool:
    """A hard link, or False where the file system makes none."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        return False
    return True


def link_or_copy(source: Path, target: Path) -> None:
    """The previous render's file in the new directory without writing it again: a hard link (the
    same file system: staging is beside DIR), or a copy where the file system has no links. If the
    old file changes before the swap, the swap's second look at the old DIR refuses."""
    if not hard_link(source, target):
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            write_new(target, fh.read())


def take_owner(staging: Path, written: Iterable[Path], uid: int, gid: int) -> None:
    """Give the new tree DIR's owner where the OS lets us (root can; others only their own groups)."""
    st = os.lstat(staging)
    if (st.st_uid, st.st_gid) == (uid, gid):
        return
    with contextlib.suppress(PermissionError):
        for path in (staging, *written):
            os.chown(path, uid, gid, follow_symlinks=False)


# Trees of more device directories than this are removed by a detached process (remove_tree).
BACKGROUND_MIN_DEVICES = 256
# What that process runs: remove the tree, then any trash beside DIR an earlier one left unfinished.
_REMOVER = ("import os, shutil, sys\n"
            "tree, parent, prefix = sys.argv[1:]\n"
            "shutil.rmtree(tree, ignore_errors=True)\n"
            "for name in os.listdir(parent):\n"
            "    if name.startswith(prefix):\n"
            "        shutil.rmtree(os.path.join(parent, name), ignore_errors=True)\n")


def remove_tree(path: Path, output: Path, devices: int) -> None:
    """Remove a tree of this render's own: the previous DIR once swapped out, or a staging directory
    not needed after all. One of more than BACKGROUND_MIN_DEVICES device directories is renamed to
    `.DIR.trash-*` beside DIR and removed by a Python process of its own, in its own session, holding
    none of this one's files or pipes, so that the command does not wait on its thousands of unlinks
    and rmdirs; DIR itself is already
    the new one. That process also removes trash an earlier one left (killed before it finished).
    Where it cannot be started, or the rename fails, the tree is removed here."""
    if devices <= BACKGROUND_MIN_DEVICES:
        shutil.rmtree(path, ignore_errors=True)
        return
    _REMOVERS[:] = [started for started in _REMOVERS if started.poll() is None]  # reaped when done
    prefix = f".{output.name[:STAGE_TAG]}.trash-"
    trash = output.parent / f"{prefix}{secrets.token_hex(4)}"
    try:
        os.rename(path, trash)
        _REMOVERS.append(subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _REMOVER, str(trash), str(output.parent), prefix],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    except OSError:
        shutil.rmtree(trash if trash.exists() else path, ignore_errors=True)


_REMOVERS: list[subprocess.Popen[bytes]] = []  # started by this process and maybe still running


def discard(staging: Path | None, made: list[Path]) -> None:
    """After a failure: the staging directory, and the parents of DIR this render made (make_parents)."""
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
    _remove_dirs(made)
