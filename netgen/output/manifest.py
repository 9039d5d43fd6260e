"""The manifest of a render directory (DIR/.netgen-render): every file netgen wrote there with its
size and SHA-256 and what netgen saw of it when it sealed the manifest (its inode and mtime, and
when it looked: Seen), each device's render key and zone inputs, and what a render of every device
recorded (its fabric key); parsed as netgen reads it back, and written as the bytes its MAC covers
(manifest_mac.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from netgen.output.manifest_mac import distrust, sealed

MARKER = ".netgen-render"  # the manifest of an output directory: netgen may replace what it lists
# 3 adds "mac" (the manifest authenticated), 2 "devices" (each device's render key); 1 and 2 are
# still read, as unauthenticated manifests. A format-3 manifest may also hold what netgen saw of
# its files ("sealed_ns", and each file's "inode" and "mtime_ns"): optional fields, so the format
# stays 3 (a netgen that does not know them reads the manifest as before, and hashes every file),
# and a manifest without them has its files hashed.
MANIFEST_FORMAT = 3
READABLE_FORMATS = (1, 2, 3)
LEGACY_MARKER = b"rendered by netgen"  # the plain-text marker of netgen before the manifest
LEGACY_FILES = ("config_db.json", "frr.conf")  # what those wrote per device, besides <device>.cfg
MARKER_LIMIT = 64 << 20  # bytes; a manifest of 100k files is ~15 MB

Manifest = dict[str, tuple[int, str]]  # "device/file" -> (bytes, sha256)
# Survey's margin (inspection.py), within one render, where "now" is this machine's clock: a file
# modified within it before the first look is read again. 2 s is the coarsest tick of a file system
# netgen may write to (FAT and SMB shares backed by it keep mtimes in 2 s steps). A manifest's seal
# needs no margin: it is read off the file system's own clock (staging.py: _seen).
RACY_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class Seen:
    """What netgen saw of the files a manifest lists when it sealed it: each file's inode and mtime
    (its lstat just before the manifest was written; "device/file" -> (inode, mtime_ns)), and the
    seal: the file system's clock when it began looking (a new file's mtime, taken before the first
    lstat), in the units and ticks of the mtimes it is compared with."""

    files: dict[str, tuple[int, int]]
    sealed_ns: int


@dataclass(frozen=True, slots=True)
class WholeRender:
    """What a render of every device of a fabric recorded about its inputs: the fabric's key
    (netgen/platforms/render.py: fabric_key), and what it reported besides the files (its design
    warnings, the devices whose NOS has no renderer)."""

    key: str
    warnings: int
    skipped: dict[str, list[str]]

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "warnings": self.warnings, "skipped": self.skipped}


@dataclass(frozen=True, slots=True)
class Marker:
    """A manifest as netgen read it (parse_marker): what DIR may hold, and what the render cache may
    keep of it when its MAC verifies."""

    files: Manifest
    keys: dict[str, str]  # device -> render key
    inputs: dict[str, str]  # device -> the digest of its inputs it was keyed with (zone_inputs.py)
    whole: WholeRender | None
    data: bytes  # as read
    distrust: str = ""  # why its MAC does not vouch for it ("": it does; manifest_mac.distrust)
    seen: Seen | None = None  # None: a manifest that recorded no stat (its files are read)

    @property
    def trusted(self) -> bool:
        return not self.distrust

    def vouches_for(self, name: str, st: os.stat_result) -> bool:
        """Whether the listed file `name`, whose lstat is `st`, is taken as the file netgen listed
        without reading it: the manifest's MAC verifies, the file has the inode, size and mtime
        netgen saw when it sealed the manifest, that mtime is older than the seal (git's racy
        timestamp rule: a file stamped in the seal's own tick of the file system's clock could be
        written again in that tick and keep its mtime, so it is read; any later write is stamped at
        or after the seal, newer than the recorded mtime), and the file is this user's (the MAC's key
        is: a file of another account's, e.g. a group member's with write access to DIR, who may have
        been given a freed inode's number and set its mtime, is read). As git and rsync trust a
        file's stat, this misses an edit in place that keeps the size and puts the mtime back
        (`netgen render --verify` reads every file); it decides only whether DIR may be replaced and
        what it keeps, never what a deploy pushes (output_dir.py reads and hashes every file it
        pushes)."""
        seen = self.seen
        if seen is None or self.distrust:
            return False
        recorded = seen.files.get(name)
        return (recorded is not None and recorded == (st.st_ino, st.st_mtime_ns)
                and st.st_size == self.files[name][0] and recorded[1] < seen.sealed_ns
                and st.st_uid == os.geteuid())


def _whole_render(entry: object) -> WholeRender | None:
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise ValueError("bad fabric entry")
    key, warnings, skipped = entry.get("key"), entry.get("warnings"), entry.get("skipped")
    if (not isinstance(key, str) or len(key) != 64 or type(warnings) is not int or not isinstance(skipped, dict)
            or not all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in skipped.values())):
        raise ValueError("bad fabric entry")
    return WholeRender(key, warnings, {str(nos): list(names) for nos, names in skipped.items()})


def parse_marker(data: bytes) -> Marker | None:
    """A marker's bytes as netgen reads them: None for the plain-text marker of a netgen before
    manifests; ValueError (what is wrong) when they are not a manifest netgen wrote. Whether the
    manifest is authenticated is in the result (`distrust`), not an error."""
    if data.startswith(LEGACY_MARKER):
        return None
    try:
        if len(data) > MARKER_LIMIT:
            raise ValueError(f"larger than {MARKER_LIMIT} bytes")
        doc = json.loads(data)
        if (not isinstance(doc, dict) or doc.get("format") not in READABLE_FORMATS
                or not isinstance(doc.get("files"), dict) or not isinstance(doc.get("devices", {}), dict)):
            raise ValueError(f"not a format {' or '.join(map(str, READABLE_FORMATS))} manifest")
        manifest: Manifest = {}
        stats: dict[str, tuple[int, int]] = {}
        for name, entry in doc["files"].items():
            parts = name.split("/")
            if len(parts) != 2 or any(p in ("", ".", "..") for p in parts) or not isinstance(entry, dict):
                raise ValueError(f"bad entry {name!r}")
            size, digest = entry.get("bytes"), entry.get("sha256")
            if type(size) is not int or not isinstance(digest, str) or len(digest) != 64:
                raise ValueError(f"bad entry {name!r}")
            manifest[name] = (size, digest)
            inode, mtime = entry.get("inode"), entry.get("mtime_ns")
            if inode is not None or mtime is not None:
                if type(inode) is not int or type(mtime) is not int:
                    raise ValueError(f"bad entry {name!r}")
                stats[name] = (inode, mtime)
        sealed_ns = doc.get("sealed_ns")
        if sealed_ns is not None and type(sealed_ns) is not int:
            raise ValueError("bad sealed_ns")
        keys: dict[str, str] = {}
        inputs: dict[str, str] = {}
        for device, entry in doc.get("devices", {}).items():
            key = entry.get("key") if isinstance(entry, dict) else None
            zone = entry.get("inputs") if isinstance(entry, dict) else None
            if any(value is not None and not (isinstance(value, str) and len(value) == 64) for value in (key, zone)):
                raise ValueError(f"bad device entry {device!r}")
            if key is not None:
                keys[device] = key
                if zone is not None:
                    inputs[device] = zone
        whole = _whole_render(doc.get("fabric"))
    except UnicodeDecodeError as exc:
        raise ValueError(str(exc)) from None
    seen = Seen(stats, sealed_ns) if sealed_ns is not None else None
    return Marker(manifest, keys, inputs, whole, data, distrust(data, doc), seen)


def manifest_bytes(entries: Mapping[str, tuple[int, str]], keys: Mapping[str, str],
              whole: WholeRender | None = None, inputs: Mapping[str, str] | None = None,
              seen: Seen | None = None) -> bytes:
    """The manifest of `entries` ("device/file" -> (bytes, sha256)), with what netgen saw of them
    when it sealed it (`seen`; a file it did not see is read at the next look)."""
    stats = seen.files if seen is not None else {}
    files = {name: _file_entry(size, digest, stats.get(name)) for name, (size, digest) in sorted(entries.items())}
    doc: dict[str, Any] = {
        "written_by": "netgen render",
        "note": "`netgen render -o` replaces this directory whole, and refuses while it holds anything"
                " not listed here (or a listed file changed); a device whose render key is unchanged"
                " keeps its files, when the mac (HMAC-SHA256 of every byte after it, with a key of the"
                " user who rendered, kept outside this directory) verifies. A listed file whose inode, size"
                " and mtime are the ones recorded here, its mtime older than sealed_ns, is taken as"
                " unchanged without being read (`netgen render --verify` reads every file; `netgen deploy`"
                " always reads and checks what it pushes)",
        "format": MANIFEST_FORMAT, "files": files,
        "devices": {device: _device_entry(key, (inputs or {}).get(device)) for device, key in sorted(keys.items())}}
    if seen is not None:
        doc["sealed_ns"] = seen.sealed_ns
    if whole is not None:
        doc["fabric"] = whole.as_dict()
    return seal_manifest(doc)


def _file_entry(size: int, digest: str, stat: tuple[int, int] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"bytes": size, "sha256": digest}
    if stat is not None:
        entry["inode"], entry["mtime_ns"] = stat
    return entry


def seal_manifest(doc: Mapping[str, Any]) -> bytes:
    """The bytes of a format-3 manifest holding `doc` (without its mac), authenticated with this
    user's key (or marked as written without one)."""
    text = json.dumps(doc, indent=1) + "\n"
    assert text.startswith("{\n")
    return sealed(text[1:].encode("utf-8"))


def _device_entry(key: str, inputs: str | None) -> dict[str, str]:
    return {"key": key} if inputs is None else {"key": key, "inputs": inputs}
