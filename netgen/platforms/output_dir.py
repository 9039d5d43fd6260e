"""Reading a `netgen render` output directory back: the files a push or a lab takes from
`--configs DIR` (`netgen deploy`, `check`, `recover`, `rollout`, the Ansible module, `netgen lab`),
or, without DIR, rendered now (render_or_read).

The render cache's rules, read-only: only regular files inside DIR are read, and nothing is
followed through a symbolic link (DIR, a device folder or a file that is a link is refused, with or
without --accept-edited-configs). DIR is opened once without following a link and every name in it
is opened relative to that descriptor, again without following one, so a link put in place between
a check and the read is refused too, never followed. Each selected device's folder must hold the
files DIR's manifest lists for it, no fewer and no more.

What the manifest proves: a format-3 manifest whose MAC verifies with this user's key (see
netgen/output/manifest_mac.py) was written by this user's netgen on this machine, so a file whose size and
SHA-256 are the listed ones is what that render wrote. A file that differs was edited since: it is
refused, or used only when the caller accepts edited files (the deploy report and journal name
each one). A manifest that does not verify (rendered elsewhere, e.g. a CI artifact; written by a
netgen before format 3; edited) vouches for nothing: the selected devices are rendered now and
their files compared with DIR's, before any secret is filled; a file that is not what the fabric
renders now is treated as edited. Neither proves that DIR is the render of the fabric under review
when the manifest verifies: only that netgen wrote it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from netgen.context import DesignContext
from netgen.output.inspection import NAMED, output_path
from netgen.output.manifest import MARKER, MARKER_LIMIT, parse_marker
from netgen.platforms.render import render_devices
from netgen.topology.model import Device

EDITED_FLAG = "--accept-edited-configs"  # what a user passes to push edited files as they are


class RenderDirError(Exception):
    """DIR cannot be read as a `netgen render` output directory, or holds what netgen did not write
    or no longer vouches for: input (exit 2), the message names the path and why."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class RenderDirFiles:
    """The selected devices' files as read from DIR."""

    files: dict[str, dict[str, str]]  # device -> file name -> text, as rendered (secrets not filled)
    authenticated: bool  # the manifest's MAC verified with this user's key (or the files were rendered now)
    edited: dict[str, str] = field(default_factory=dict)  # "device/file" -> why it is not netgen's (accepted)
    distrust: str = ""  # why the manifest vouches for nothing ("" when authenticated)


_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class _Refused(Exception):
    """What a name in DIR is instead of what netgen wrote there (the message: "a symbolic link", ...)."""


@contextlib.contextmanager
def _opened(name: str | Path, *, folder: bool, dir_fd: int | None = None) -> Iterator[int]:
    """A descriptor of `name` (relative to dir_fd), opened without following a link (O_NOFOLLOW: a
    link is refused by the open itself, so none put in place after a look is ever followed); a
    link, or something other than a directory (`folder`) or a regular file, is _Refused."""
    try:
        fd = os.open(name, _OPEN | (os.O_DIRECTORY if folder else 0), dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        # refused by the open itself; the lstat only names what is there (a link to a directory is
        # ENOTDIR with O_DIRECTORY)
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode):
                raise _Refused("a symbolic link") from None
        raise _Refused("not a directory" if folder else "a symbolic link") from None
    try:
        if stat.S_IFMT(os.fstat(fd).st_mode) != (stat.S_IFDIR if folder else stat.S_IFREG):
            raise _Refused("not a directory" if folder else "not a regular file")
        yield fd
    finally:
        os.close(fd)


def _refusal(path: Path, why: _Refused) -> RenderDirError:
    return RenderDirError(f"{path} is {why}; netgen reads only what netgen render wrote in a render directory,"
                          " never through a link", path)


def _read(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total <= limit:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_render_dir(configs: Path, ctx: DesignContext, devices: list[Device], *,
                    accept_edited: bool = False) -> RenderDirFiles:
    """The files of `devices` in the render directory `configs` (see the module doc). RenderDirError
    when DIR is not one, a file is a link or not listed, or an edited file is not accepted;
    OSError for what the OS refuses (the caller names DIR). A render needed to vouch for the files
    of an unauthenticated manifest raises what render_devices raises."""
    try:
        return _read_render_dir(configs, ctx, devices, accept_edited)
    except _Refused as exc:
        raise _refusal(configs, exc) from None


def render_or_read(ctx: DesignContext, devices: list[Device], configs: Path | None, *,
                   accept_edited: bool = False) -> RenderDirFiles:
    """The files of `devices` a push or a lab takes: rendered now (and checked, as `netgen render`
    does) when `configs` is None, else read from that render directory (read_render_dir: the files
    its manifest lists, an edited one refused unless `accept_edited`, then named in `edited`).
    Input, exit 2: RenderDirError names the path (what the OS refuses included), RenderInputError
    the fabric file's block or secret; RenderError is a netgen bug."""
    if configs is None:
        rendered, _ = render_devices(ctx, devices)
        return RenderDirFiles({name: {f.name: f.content for f in files} for name, files in rendered.items()},
                              authenticated=True)
    try:
        return read_render_dir(configs, ctx, devices, accept_edited=accept_edited)
    except OSError as exc:
        raise RenderDirError(f"cannot read the render directory {configs}: {exc.strerror or exc}", configs) from None


def _read_render_dir(configs: Path, ctx: DesignContext, devices: list[Device], accept_edited: bool) -> RenderDirFiles:
    with _opened(output_path(configs), folder=True) as top:
        try:
            with _opened(MARKER, folder=False, dir_fd=top) as fd:
                data = _read(fd, MARKER_LIMIT)
        except FileNotFoundError:
            raise RenderDirError(f"{configs}: not a `netgen render` output directory (no {MARKER})", configs) from None
        except _Refused as exc:
            raise _refusal(configs / MARKER, exc) from None
        try:
            marker = parse_marker(data)
        except ValueError as exc:
            raise RenderDirError(f"{configs / MARKER}: not a manifest netgen render wrote ({exc})",
                                 configs / MARKER) from None
        if marker is None:
            raise RenderDirError(f"{configs / MARKER}: written by a netgen before manifests, which lists no files;"
                                 f" render again with `netgen render -o {configs}`", configs)
        listed: dict[str, dict[str, tuple[int, str]]] = {}
        for name, entry in marker.files.items():
            owner, file = name.split("/", 1)
            listed.setdefault(owner, {})[file] = entry
        found: dict[str, dict[str, bytes]] = {}
        refused: list[str] = []
        for device in devices:
            expected = listed.get(device.name, {})
            try:
                with _opened(device.name, folder=True, dir_fd=top) as folder:
                    found[device.name] = _device_files(folder, device.name, expected, refused)
            except FileNotFoundError:
                raise RenderDirError(f"{configs / device.name}: missing; render the fabric again with"
                                     f" `netgen render -o {configs}`", configs / device.name) from None
            except _Refused as exc:
                raise _refusal(configs / device.name, exc) from None
    if refused:
        raise RenderDirError(f"{configs}: {len(refused)} path(s) are not what netgen render wrote there:"
                             f" {_named(refused)}; netgen reads only the files its manifest lists: render again"
                             f" with `netgen render -o {configs}`", configs)
    if marker.trusted:
        edited = {f"{name}/{file}": "changed since netgen render wrote it (its size or SHA-256 is not the one"
                  f" {MARKER} lists)"
                  for name, files in found.items() for file, content in files.items()
                  if listed[name][file] != (len(content), hashlib.sha256(content).hexdigest())}
    else:
        edited = _unlike_a_render_now(ctx, devices, found, marker.distrust)
    if edited and not accept_edited:
        name, why = next(iter(edited.items()))
        more = f" (and {len(edited) - 1} more: {_named(list(edited)[1:])})" if len(edited) > 1 else ""
        raise RenderDirError(f"{configs / name}: {why}{more}; render again with `netgen render -o {configs}`, or"
                             f" pass {EDITED_FLAG} to use the files as they are (netgen's report names each one)",
                             configs / name)
    texts: dict[str, dict[str, str]] = {}
    for name, files in found.items():
        texts[name] = {}
        for file, content in files.items():
            try:
                texts[name][file] = content.decode("utf-8")
            except UnicodeDecodeError:
                raise RenderDirError(f"{configs / name / file}: not UTF-8 text, which netgen render never writes",
                                     configs / name / file) from None
    return RenderDirFiles(texts, marker.trusted, edited, marker.distrust)


def _device_files(folder: int, device: str, expected: dict[str, tuple[int, str]],
                  refused: list[str]) -> dict[str, bytes]:
    """The files of one device folder (by name, sorted); what is not a regular file listed in the
    manifest, and what is listed but missing, goes to `refused` (as "device/name (why)")."""
    files: dict[str, bytes] = {}
    names = sorted(os.listdir(folder))
    for name in names:
        if name not in expected:
            refused.append(f"{device}/{name} (not in {MARKER})")
            continue
        try:
            with _opened(name, folder=False, dir_fd=folder) as fd:
                content = _read(fd, MARKER_LIMIT)
            if len(content) > MARKER_LIMIT:  # never pushed cut short
                refused.append(f"{device}/{name} (larger than {MARKER_LIMIT} bytes, more than netgen renders)")
            else:
                files[name] = content
        except _Refused as exc:
            refused.append(f"{device}/{name} ({exc})")
        except FileNotFoundError:  # gone since the listing
            refused.append(f"{device}/{name} (listed in {MARKER}, missing)")
    refused.extend(f"{device}/{name} (listed in {MARKER}, missing)" for name in sorted(expected) if name not in names)
    return files


def _unlike_a_render_now(ctx: DesignContext, devices: list[Device], found: dict[str, dict[str, bytes]],
                         distrust: str) -> dict[str, str]:
    """The files of DIR that are not what the fabric renders now (placeholders for secrets, as
    both hold them), with why; a file the render has and DIR has not counts too."""
    rendered, _ = render_devices(ctx, devices)
    why = f"not what netgen renders from this fabric now, and {MARKER} cannot vouch for it ({distrust})"
    edited: dict[str, str] = {}
    for device in devices:
        now = {f.name: f.content.encode("utf-8") for f in rendered.get(device.name, [])}
        there = found.get(device.name, {})
        for name in sorted(now.keys() | there.keys()):
            if now.get(name) != there.get(name):
                edited[f"{device.name}/{name}"] = why if name in there else f"rendered now, not in DIR; {why}"
    return edited


def _named(paths: list[str]) -> str:
    more = f" (and {len(paths) - NAMED} more)" if len(paths) > NAMED else ""
    return ", ".join(paths[:NAMED]) + more


__all__ = ["EDITED_FLAG", "RenderDirError", "RenderDirFiles", "read_render_dir", "render_or_read"]
