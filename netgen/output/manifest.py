"""The manifest of a render directory (DIR/.netgen-render): every file netgen wrote there with its
size and SHA-256, each device's render key and zone inputs, and what a render of every device
recorded (its fabric key); parsed as netgen reads it back, and written as the bytes its MAC covers
(manifest_mac.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from netgen.output.manifest_mac import distrust, sealed

MARKER = ".netgen-render"  # the manifest of an output directory: netgen may replace what it lists
# 3 adds "mac" (the manifest authenticated), 2 "devices" (each device's render key); 1 and 2 are
# still read, as unauthenticated manifests
MANIFEST_FORMAT = 3
READABLE_FORMATS = (1, 2, 3)
LEGACY_MARKER = b"rendered by netgen"  # the plain-text marker of netgen before the manifest
LEGACY_FILES = ("config_db.json", "frr.conf")  # what those wrote per device, besides <device>.cfg
MARKER_LIMIT = 64 << 20  # bytes; a manifest of 100k files is ~15 MB

Manifest = dict[str, tuple[int, str]]  # "device/file" -> (bytes, sha256)


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

    @property
    def trusted(self) -> bool:
        return not self.distrust


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
        for name, entry in doc["files"].items():
            parts = name.split("/")
            if len(parts) != 2 or any(p in ("", ".", "..") for p in parts) or not isinstance(entry, dict):
                raise ValueError(f"bad entry {name!r}")
            size, digest = entry.get("bytes"), entry.get("sha256")
            if type(size) is not int or not isinstance(digest, str) or len(digest) != 64:
                raise ValueError(f"bad entry {name!r}")
            manifest[name] = (size, digest)
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
    return Marker(manifest, keys, inputs, whole, data, distrust(data, doc))


def manifest_bytes(entries: Mapping[str, tuple[int, str]], keys: Mapping[str, str],
              whole: WholeRender | None = None, inputs: Mapping[str, str] | None = None) -> bytes:
    files = {name: {"bytes": size, "sha256": digest} for name, (size, digest) in sorted(entries.items())}
    doc: dict[str, Any] = {
        "written_by": "netgen render",
        "note": "`netgen render -o` replaces this directory whole, and refuses while it holds anything"
                " not listed here (or a listed file changed); a device whose render key is unchanged"
                " keeps its files, when the mac (HMAC-SHA256 of every byte after it, with a key of the"
                " user who rendered, kept outside this directory) verifies",
        "format": MANIFEST_FORMAT, "files": files,
        "devices": {device: _device_entry(key, (inputs or {}).get(device)) for device, key in sorted(keys.items())}}
    if whole is not None:
        doc["fabric"] = whole.as_dict()
    return seal_manifest(doc)


def seal_manifest(doc: Mapping[str, Any]) -> bytes:
    """The bytes of a format-3 manifest holding `doc` (without its mac), authenticated with this
    user's key (or marked as written without one)."""
    text = json.dumps(doc, indent=1) + "\n"
    assert text.startswith("{\n")
    return sealed(text[1:].encode("utf-8"))


def _device_entry(key: str, inputs: str | None) -> dict[str, str]:
    return {"key": key} if inputs is None else {"key": key, "inputs": inputs}
