"""A git revision's tree, exported for `netgen diff` to render: `git archive` of the commit,
extracted only once the whole archive is checked, so that nothing a revision holds (a symbolic
link, a hard link, a `..` name) makes a path in the tree lead outside it."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path


class RevisionError(Exception):
    """A revision cannot be read or rendered; the message says which and why."""


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def export_revision(repo: Path, ref: str, dest: Path) -> str:
    """Write the tree of `ref` into `dest` (git archive); returns the full commit id."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        raise RevisionError(f"{ref!r} is not a commit in {repo}")
    archive = _git(repo, "archive", "--format=tar", commit.stdout.decode().strip())
    if archive.returncode != 0:
        raise RevisionError(f"git archive {ref}: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryFile() as buffer:
        buffer.write(archive.stdout)
        buffer.seek(0)
        try:
            with tarfile.open(fileobj=buffer) as tar:
                extract_tree(tar, dest, ref)
        except tarfile.TarError as exc:
            raise RevisionError(f"{ref}: cannot read the archive of this revision: {exc}") from exc
    return commit.stdout.decode().strip()


# --- extraction -----------------------------------------------------------------------------------
# A revision's tree is the pull request author's, not ours to trust, and Debian 12's Python 3.11.2
# has no tarfile extraction filters (and the filters of later versions decide member by member, in
# archive order, against what is already on disk, which a symlink chain laid out in the right order
# gets past). So netgen checks the archive as a whole before it writes anything, with a rule that
# does not depend on member order:
#   1. only regular files, directories and symbolic links: no hard links (a tar hard link names any
#      path, and writing to the in-tree name would write the linked file; git never makes them), no
#      devices, fifos or other types; no member twice (git never makes that either);
#   2. every member name is relative and has no `..` component;
#   3. no member's path passes through a symlink (or a file) member: every directory a file or
#      link is created in is then a real directory of the tree;
#   4. every symlink target is relative, and resolving it from the link's directory the way the
#      kernel does -- component by component, following the archive's own symlinks (whatever their
#      order in the archive), `..` taken from the directory a link resolved to -- never leaves the
#      tree (nor loops more than 40 times).
# By 3, every path a member is written to is made of real in-tree directories; by 4, every symlink
# that exists afterwards resolves inside the tree, so a path inside the tree that does not itself
# climb with `..` stays inside. Extraction does not rely on the rules alone: it creates directories
# and files first and symlinks last, walks to each member's directory from the tree's root one
# component at a time with O_NOFOLLOW (so no write ever goes through a symlink, whatever the file
# system's case or Unicode folding), creates files with O_EXCL and plain 0644/0755 modes, owned by
# us, and finally checks every symlink on disk with os.path.realpath.
_MAX_SYMLINK_HOPS = 40  # Linux's MAXSYMLINKS


def _parts(name: str) -> tuple[str, ...] | None:
    """A member name's components, or None when the name is absolute or climbs with `..`."""
    if name.startswith("/") or "\x00" in name:
        return None
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    return None if ".." in parts else parts


class _Outside(Exception):
    """A symlink target resolves outside the tree: `why`, and the archive's symlinks it went through."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why, self.via = why, list[str]()

    def __str__(self) -> str:
        return self.why + (f" (through {', '.join(self.via[:3])})" if self.via else "")


def _resolve_link(links: Mapping[tuple[str, ...], str], start: tuple[str, ...], target: str,
                  hops: list[int]) -> tuple[str, ...]:
    """Where `target`, read from directory `start`, ends up, following the archive's own symlinks
    (`links`: path -> target) as the kernel would; raises _Outside when that leaves the tree."""
    if target.startswith("/"):
        raise _Outside("an absolute target")
    here = list(start)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                raise _Outside("climbs out of the tree")
            here.pop()
            continue
        here.append(part)
        link = links.get(tuple(here))
        if link is not None:
            hops[0] += 1
            if hops[0] > _MAX_SYMLINK_HOPS:
                raise _Outside("a symlink loop")
            try:
                here = list(_resolve_link(links, tuple(here[:-1]), link, hops))
            except _Outside as exc:
                exc.via.insert(0, f"{'/'.join(here)} -> {link}")
                raise
    return tuple(here)


def _safe_members(tar: tarfile.TarFile, ref: str) -> list[tarfile.TarInfo]:
    """The archive's members in the order to create them (directories, files, then symlinks), after
    checking the whole archive against the rules above (which look at the archive alone, never at
    the disk); raises RevisionError naming the revision and the first member refused."""

    def refuse(member: tarfile.TarInfo, why: str) -> RevisionError:
        return RevisionError(f"{ref}: refusing archive member {member.name!r} ({why})")

    nodes: dict[tuple[str, ...], tarfile.TarInfo] = {}
    for member in tar.getmembers():
        parts = _parts(member.name)
        if parts is None:
            raise refuse(member, "outside the tree: an absolute path or a `..` component")
        if member.islnk():
            raise refuse(member, f"a hard link to {member.linkname!r}: not a file, directory or symlink")
        if not (member.isreg() or member.isdir() or member.issym()):
            raise refuse(member, "not a file, directory or symlink: a device, fifo or other special file")
        if not parts:
            if member.isdir():  # the tree's own top directory ("./")
                continue
            raise refuse(member, "outside the tree: names the tree itself")
        if parts in nodes:
            raise refuse(member, f"appears twice in the archive, as a {_kind(nodes[parts])} and as a {_kind(member)}")
        nodes[parts] = member
    links = {parts: member.linkname for parts, member in nodes.items() if member.issym()}
    for parts, member in nodes.items():
        for depth in range(1, len(parts)):
            above = nodes.get(parts[:depth])
            if above is not None and not above.isdir():
                raise refuse(member, f"its path passes through the {_kind(above)} {above.name!r}")
        if member.issym():
            if not member.linkname:
                raise refuse(member, "a symlink with an empty target")
            try:
                _resolve_link(links, parts[:-1], member.linkname, [0])
            except _Outside as exc:
                raise refuse(member, f"symlink to {member.linkname!r} points outside the tree: {exc}") from None
    return sorted(nodes.values(), key=_creation_order)


def _kind(member: tarfile.TarInfo) -> str:
    return "directory" if member.isdir() else "symlink" if member.issym() else "file"


def _creation_order(member: tarfile.TarInfo) -> int:
    """Directories, then files, then symlinks: nothing is written while any symlink exists."""
    return 0 if member.isdir() else 2 if member.issym() else 1


def extract_tree(tar: tarfile.TarFile, dest: Path, ref: str) -> None:
    """Extract a revision's archive into the empty directory `dest`, refusing (RevisionError, naming
    the revision and the member) anything that could make a path in the tree lead outside it."""
    members = _safe_members(tar, ref)
    root = Path(os.path.realpath(dest))
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for member in members:
            parts = _parts(member.name) or ()
            try:
                folder = _open_folder(root_fd, parts if member.isdir() else parts[:-1])
                try:
                    if member.issym():
                        os.symlink(member.linkname, parts[-1], dir_fd=folder)
                    elif not member.isdir():
                        _write_file(tar, member, folder, parts[-1])
                finally:
                    os.close(folder)
            except OSError as exc:
                raise RevisionError(f"{ref}: cannot extract archive member {member.name!r}: {exc}") from exc
    finally:
        os.close(root_fd)
    for folder_name, dirs, files in os.walk(root):
        for name in dirs + files:
            link = os.path.join(folder_name, name)
            if stat.S_ISLNK(os.lstat(link).st_mode) and not Path(os.path.realpath(link)).is_relative_to(root):
                raise RevisionError(f"{ref}: refusing archive member {os.path.relpath(link, root)!r} (symlink to "
                                    f"{os.readlink(link)!r} points outside the tree)")


def _open_folder(root_fd: int, parts: tuple[str, ...]) -> int:
    """A descriptor of the tree's directory `parts`, made as needed and opened one component at a
    time with O_NOFOLLOW: a symlink anywhere on the way is an error, never followed."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, folder: int, name: str) -> None:
    """A new regular file (never an existing one, never through a symlink), mode 0644 or 0755."""
    source = tar.extractfile(member)
    mode = 0o755 if member.mode & 0o111 else 0o644
    descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=folder)
    with os.fdopen(descriptor, "wb") as target:
        if source is not None:
            shutil.copyfileobj(source, target)
