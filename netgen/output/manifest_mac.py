"""The key that authenticates render manifests, and the MAC over a manifest's bytes.

A manifest is authenticated by an HMAC-SHA256 over its exact bytes with a key kept outside DIR, in
the user's state directory (manifest_key). Whoever can write DIR can edit a file and the manifest's
size and digest for it, but cannot make the MAC verify, so only a manifest this user's netgen wrote
on this machine is trusted for reuse: a device is kept only from a manifest whose MAC verifies. One
that does not (edited, written under another account or on another machine, by a netgen before
format 3, or with no key to check it) still says which files DIR may hold for DIR to be replaced,
as before; its devices are rendered again, and the render's notes say why. Where no key can be
kept (a read-only home), renders write unauthenticated manifests and keep nothing.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.resources import owned_by_user, user_owned_dir, user_state_dir

KEY_FOLDER = "keys"  # in the user's state directory: a private folder (mode 0700) of the user's own
KEY_FILE = "render-manifest.key"
KEY_BYTES = 32
# A format-3 manifest starts with its MAC, in fixed-width JSON: `{"mac": "hmac-sha256:<64 hex>",`
# (or `{"mac": null,` where there was no key); the MAC covers every byte after that prefix, so a
# manifest is checked byte for byte as written, never as parsed and dumped again.
_MAC_OPEN, _MAC_CLOSE = b'{"mac": "hmac-sha256:', b'",'
_MAC_END = len(_MAC_OPEN) + 64 + len(_MAC_CLOSE)
_NO_MAC = b'{"mac": null,'
_MAC_CONTEXT = b"netgen render manifest\0"  # what the key signs here, should it ever sign anything else


@dataclass(frozen=True, slots=True)
class ManifestKey:
    """The key that authenticates this user's render manifests, or why there is none."""

    secret: bytes | None = field(repr=False)  # never in a message or a log
    problem: str = ""  # where and why no key could be read or made

    def mac(self, signed: bytes) -> str:
        assert self.secret is not None
        return hmac.new(self.secret, _MAC_CONTEXT + signed, hashlib.sha256).hexdigest()


def manifest_key() -> ManifestKey:
    """This user's manifest key: $XDG_STATE_HOME/netgen/keys/render-manifest.key (else under
    ~/.local/state/netgen), 32 random bytes made on first use. Read once per process."""
    state = user_state_dir()
    if state is None:
        return ManifestKey(None, "no home directory to keep a key in")
    return _load_key(state / KEY_FOLDER)


@functools.lru_cache(maxsize=4)
def _load_key(folder: Path) -> ManifestKey:
    """The key in `folder`, made there if there is none: written to a private file of its own
    (O_CREAT | O_EXCL, mode 0600) and linked to its name, so that a process reading it never sees
    part of a key, and of two processes making one at once both use the one linked first. A key
    file or folder that is not the user's own and private is not used (nor replaced)."""
    if user_owned_dir(folder, private=True) is None:
        return ManifestKey(None, f"{folder} cannot be made, or is not a private directory of this user's")
    path = folder / KEY_FILE
    try:
        found = _read_key(path)
        if found is None:
            made = folder / f".{KEY_FILE}.{secrets.token_hex(4)}"
            fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(secrets.token_bytes(KEY_BYTES))
                    fh.flush()
                    os.fsync(fh.fileno())
                with contextlib.suppress(FileExistsError):  # another process linked its key first: that one
                    os.link(made, path, follow_symlinks=False)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(made)
            found = _read_key(path)
    except OSError as exc:
        return ManifestKey(None, f"{path}: {exc.strerror or exc}")
    if isinstance(found, str) or found is None:
        return ManifestKey(None, f"{path}: {found or 'could not be made'}")
    return ManifestKey(found)


def _read_key(path: Path) -> bytes | str | None:
    """The key in `path`; None: there is none; a string: why the file there is not used."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link, not a key file"
        raise
    with os.fdopen(fd, "rb") as fh:
        if not owned_by_user(os.fstat(fd), stat.S_IFREG, private=True):
            return "not a regular file of this user's that only they can read (mode 0600); remove it"
        data = fh.read(KEY_BYTES + 1)
    return data if len(data) == KEY_BYTES else f"not a key of {KEY_BYTES} bytes; remove it"


def sealed(signed: bytes) -> bytes:
    """The manifest whose bytes after the MAC prefix are `signed`, with the prefix."""
    key = manifest_key()
    if key.secret is None:
        return _NO_MAC + signed
    return _MAC_OPEN + key.mac(signed).encode("ascii") + _MAC_CLOSE + signed


def distrust(data: bytes, doc: dict[str, Any]) -> str:
    """'' when `data` is a manifest this user's key authenticates; else why it is not trusted."""
    if doc["format"] < 3:
        return f"written by a netgen before manifests were authenticated: format {doc['format']}"
    if data.startswith(_NO_MAC):
        return "written where netgen could keep no key"
    key = manifest_key()
    if key.secret is None:
        return f"no key to check it with: {key.problem}"
    head = data[:_MAC_END]
    if (not head.startswith(_MAC_OPEN) or not head.endswith(_MAC_CLOSE)
            or not hmac.compare_digest(head[len(_MAC_OPEN):-len(_MAC_CLOSE)],
                                       key.mac(data[_MAC_END:]).encode("ascii"))):
        return ("its MAC does not verify with this user's key: edited since netgen wrote it, or written under"
                " another account or on another machine")
    return ""
