"""Render every selected device with its NOS plugin and write the files atomically.

Output layout: DIR/<device>/<file>, plus DIR/.netgen-render: the manifest of what netgen wrote.
The whole directory is built next to DIR and swapped into place only when every device rendered
and passed its checks, so a failure never leaves a partial or mixed output directory behind.

DIR may be replaced only when it is new, empty, or an earlier render that holds nothing but the
files its manifest lists, unchanged. Nothing is followed through a symbolic link: a link as DIR,
as the marker or anywhere inside DIR is refused. The new DIR keeps the old one's mode and owner
(as far as the OS lets us); a new DIR gets the default mode of the umask. Every OS failure is an
OutputDirError naming the path and the OS reason, and leaves everything as it was.

Render cache: the manifest keeps each device's key, a digest of everything its files depend on
(the plugin's prepared inputs, netgen's code and templates, Jinja and Python). A device whose key
matches the one DIR was written with is not rendered again: its files, verified unchanged, are
hard-linked into the new directory (copied where links cannot be made), so the output is the same
bytes a cold render writes and is still swapped in whole. When every device of DIR is kept, DIR's
files already are the new ones: only its manifest is renamed over (or left, if it is the same).

A render of every device also records the fabric's key (fabric_key: the validated fabric and
catalog, the local users' hashes, netgen's code, the renderers). The same key into a DIR that holds
what its manifest lists, unchanged, is that render already: it is reported from the manifest
without expanding, checking or keying the fabric (unchanged_render).

A changed fabric is keyed without building every view: the manifest also keeps each switch's zone
inputs (zone_inputs.py), and a switch whose inputs are the recorded ones has the recorded key. Its
files are linked into the staging directory before the render knows it keeps them: the child that
takes DIR's first look (InspectionAhead) stages every device while this process expands the fabric,
and the render clears the devices it writes again. The swapped-out DIR of a large render is removed
by a detached process after the command (_remove_tree).

The manifest is authenticated: an HMAC-SHA256 over its exact bytes with a key kept outside DIR, in
the user's state directory (manifest_key). Whoever can write DIR can edit a file and the manifest's
size and digest for it, but cannot make the MAC verify, so only a manifest this user's netgen wrote
on this machine is trusted for reuse: a device is kept only from a manifest whose MAC verifies. One
that does not (edited, written under another account or on another machine, by a netgen before
format 3, or with no key to check it) still says which files DIR may hold for DIR to be replaced,
as before; its devices are rendered again, and the render's notes say why. Where no key can be
kept (a read-only home), renders write unauthenticated manifests and keep nothing.

Where worker processes cannot be started (this process is a daemonic multiprocessing worker, or
fork is refused), the devices are rendered in this process: the same files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import hashlib
import hmac
import io
import ipaddress
import json
import multiprocessing
import operator
import os
import pickle
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from netgen.context import DesignContext
from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Fabric
from netgen.platforms import base
from netgen.platforms.base import Prepared, RenderedFile, RenderError
from netgen.platforms.services import read_local_users
from netgen.platforms.zone_inputs import zone_inputs
from netgen.resources import owned_by_user, user_owned_dir, user_state_dir
from netgen.topology.model import Device

ProgressHook = Callable[[Device], None]
MARKER = ".netgen-render"  # the manifest of an output directory: netgen may replace what it lists
# 3 adds "mac" (the manifest authenticated), 2 "devices" (each device's render key); 1 and 2 are
# still read, as unauthenticated manifests
MANIFEST_FORMAT = 3
READABLE_FORMATS = (1, 2, 3)
LEGACY_MARKER = b"rendered by netgen"  # the plain-text marker of netgen before the manifest
LEGACY_FILES = ("config_db.json", "frr.conf")  # what those wrote per device, besides <device>.cfg
MARKER_LIMIT = 64 << 20  # bytes; a manifest of 100k files is ~15 MB
NAMED = 10  # paths named in a refusal; the rest are counted
_STAGE_TAG = 32  # characters of DIR's name in the staging names (which must stay under NAME_MAX)

Manifest = dict[str, tuple[int, str]]  # "device/file" -> (bytes, sha256)


class OutputDirError(Exception):
    """The output directory cannot be written or replaced; `path` is what the message is about."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def load_plugins() -> dict[str, base.RendererPlugin]:
    """Import the built-in plugins (each registers itself) and return the registry."""
    import netgen.platforms.eos  # noqa: PLC0415  (registration side effect)
    import netgen.platforms.sonic  # noqa: F401, PLC0415

    return base.PLUGINS


@dataclass
class RenderResult:
    output: Path
    devices: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)  # nos -> devices without a renderer
    unchecked: list[str] = field(default_factory=list)  # what no check here could read (RenderedFile.unchecked)
    reused: list[str] = field(default_factory=list)  # devices taken unchanged from the previous render in DIR
    # said once per render: that there is no render cache (no key), or why nothing of DIR was kept
    notes: list[str] = field(default_factory=list)


@functools.cache
def code_digest() -> bytes:
    """What a render key must change with besides the device's inputs: netgen's code (a plugin's
    `render` is code), the templates, and the Jinja and Python that run them."""
    digest = hashlib.sha256(f"{sys.version}\0{jinja2.__version__}\0".encode())
    package = Path(__file__).resolve().parents[1]
    for root, pattern in ((package, "*.py"), (Path(base.TEMPLATE_ROOT), "*")):
        for path in sorted(p for p in root.rglob(pattern) if p.is_file() and "__pycache__" not in p.parts):
            digest.update(f"{path.relative_to(root)}\0".encode() + path.read_bytes() + b"\0")
    return digest.digest()


# How the stable pickler writes an object of each type (None: pickle's own way), worked out once per
# type. Dataclasses: class and field values read in one C call (pickle's own route for slotted
# dataclasses calls dataclasses.fields() per object, which was half the cost of a key). Addresses:
# class and integers (their own reduction formats each address as text, a third of the rest).
_Reducer = Callable[[Any], Any]
_REDUCERS: dict[type, _Reducer | None] = {}
_ADDRESSES = (ipaddress.IPv4Address, ipaddress.IPv6Address)
_INTERFACES = (ipaddress.IPv4Interface, ipaddress.IPv6Interface)
_NETWORKS = (ipaddress.IPv4Network, ipaddress.IPv6Network)


def _fields_of(cls: type) -> _Reducer:
    names = [f.name for f in dataclasses.fields(cls)]
    if not names:
        return lambda obj: (cls, ())
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (cls, (one(obj),))
    getter = operator.attrgetter(*names)
    return lambda obj: (cls, getter(obj))


def _reducer(cls: type) -> _Reducer | None:
    if cls not in _REDUCERS:
        reducer: _Reducer | None = None
        if dataclasses.is_dataclass(cls):
            reducer = _fields_of(cls)
        elif issubclass(cls, _INTERFACES):  # before addresses: an interface is an address too
            reducer = lambda obj: (cls, ((int(obj), obj.network.prefixlen),))  # noqa: E731
        elif issubclass(cls, _ADDRESSES):
            reducer = lambda obj: (cls, (int(obj),))  # noqa: E731
        elif issubclass(cls, _NETWORKS):
            reducer = lambda obj: (cls, ((int(obj.network_address), obj.prefixlen),))  # noqa: E731
        elif issubclass(cls, BaseModel):
            reducer = lambda obj: (str, (f"{type(obj).__qualname__}{obj.model_dump_json()}",))  # noqa: E731
        _REDUCERS[cls] = reducer
    return _REDUCERS[cls]


class _StablePickler(pickle.Pickler):
    """Pickles the same value to the same bytes in every process: pydantic models as their JSON,
    dataclasses as their class and field values, addresses as integers. Exact sets never reach
    reducer_override (pickle writes them itself, in an order that follows the per-process string hash
    seed): prepared inputs hold sorted sequences instead, which test_render_cache checks across
    processes with different seeds."""

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        reducer = _REDUCERS[cls] if cls in _REDUCERS else _reducer(cls)
        return NotImplemented if reducer is None else reducer(obj)


def render_key(nos: str, prepared: Prepared) -> str | None:
    """The device's render key (None: not cacheable). Equal keys mean equal files."""
    if not prepared.cacheable:
        return None
    buffer = io.BytesIO()
    _StablePickler(buffer, protocol=5).dump((nos, prepared.device, prepared.inputs))
    return hashlib.sha256(code_digest() + buffer.getvalue()).hexdigest()


# A device's outcome: its key, and its files (None: the previous render's files are reused).
Outcome = tuple[str | None, list[RenderedFile] | None]


def _render_one(ctx: DesignContext, plugin: base.RendererPlugin, device: Device,
                previous: Mapping[str, str] | None) -> Outcome:
    """`previous`: the keys of the files in DIR (None: an in-memory render, which needs no key)."""
    prepared = plugin.prepare(ctx, device)
    key = render_key(plugin.nos, prepared) if previous is not None else None
    if key is not None and previous is not None and previous.get(device.name) == key:
        return key, None
    return key, _checked(ctx, plugin, device, plugin.render(prepared))


def _key_only(ctx: DesignContext, plugin: base.RendererPlugin, device: Device,
              previous: Mapping[str, str] | None) -> Outcome:
    return render_key(plugin.nos, plugin.prepare(ctx, device)), None


def _checked(ctx: DesignContext, plugin: base.RendererPlugin, device: Device,
             files: list[RenderedFile]) -> list[RenderedFile]:
    # Every file is checked against what the NOS accepts before anything is written.
    problems = plugin.check_device(ctx, device, files)
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise RenderError(f"{device.name}: rendered config would be rejected by {device.nos}: "
                          + "; ".join(problems[:5]) + more)
    return files


# What a worker does with one device: render it (unless its key is `previous`'s), or only key it.
_Work = Callable[[DesignContext, base.RendererPlugin, Device, Mapping[str, str] | None], Outcome]


# Worker processes (Linux fork: the checked fabric is inherited, never pickled): rendering is pure
# CPU, one device independent of the next. Below PARALLEL_MIN_DEVICES a pool costs more than it saves.
PARALLEL_MIN_DEVICES = 64
CHUNK_DEVICES = 32
WORKERS_ENV = "NETGEN_RENDER_WORKERS"  # 1: render in this process only
# What becomes of a device's outcome where it was rendered (in the worker): kept in memory, or
# written into the staging directory so that only sizes and digests travel back.
Sink = Callable[[str, str | None, list[RenderedFile] | None], Any]


def _in_memory(name: str, key: str | None, files: list[RenderedFile] | None) -> Outcome:
    return key, files


@dataclass(frozen=True, slots=True)
class Written:
    """A device streamed to the staging directory (or only measured, for --check)."""

    key: str | None
    files: tuple[tuple[str, int, str], ...] | None  # ("device/file", bytes, sha256); None: reused
    unchecked: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Writer:
    staging: Path | None  # None: measure only (render --check)
    prestaged: frozenset[str] = frozenset()  # devices whose old files the staging directory links

    def __call__(self, name: str, key: str | None, files: list[RenderedFile] | None) -> Written:
        if files is None:
            return Written(key, None)
        if self.staging is not None:
            folder = self.staging / _component(name, "device")
            if name in self.prestaged:  # links the child made in this private directory: unlinked
                with os.scandir(folder) as linked:
                    for entry in list(linked):
                        os.unlink(entry.path)
            else:
                os.mkdir(folder)
        entries = []
        for item in files:
            data = item.content.encode("utf-8")
            path = f"{name}/{_component(item.name, 'file')}"
            if self.staging is not None:
                _write_new(self.staging / path, data)
            entries.append((path, len(data), hashlib.sha256(data).hexdigest() if self.staging else ""))
        return Written(key, tuple(entries), tuple(f.unchecked for f in files if f.unchecked))


# what the workers inherit: set just before the pool forks, emptied after
_FORKED: list[tuple[DesignContext, dict[str, base.RendererPlugin], Mapping[str, str] | None, Sink, _Work]] = []


def _render_chunk(names: list[str]) -> list[tuple[str, Any]]:
    ctx, plugins, previous, sink, one = _FORKED[0]
    done = []
    for name in names:
        device = ctx.topology.devices[name]
        done.append((name, sink(name, *one(ctx, plugins[device.nos], device, previous))))
    return done


def render_workers(count: int) -> int:
    """How many processes render `count` devices: NETGEN_RENDER_WORKERS (a positive integer; any
    other value is ignored), else one per CPU this process may use; 1 for small selections, where
    fork is not available, and in a daemonic process (a multiprocessing pool's worker, as job
    runners and test harnesses call netgen in), which multiprocessing allows no children."""
    configured = os.environ.get(WORKERS_ENV, "")
    if configured.isdigit() and int(configured) >= 1:
        wanted = int(configured)
    else:
        wanted = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if (count < PARALLEL_MIN_DEVICES or "fork" not in multiprocessing.get_all_start_methods()
            or multiprocessing.current_process().daemon):
        return 1
    return max(1, min(wanted, count // CHUNK_DEVICES or 1))


def render_devices(ctx: DesignContext, devices: Iterable[Device],
                   progress: ProgressHook | None = None) -> tuple[dict[str, list[RenderedFile]], dict[str, list[str]]]:
    """Render in memory: device name -> files, plus the devices whose NOS has no renderer yet. Devices
    keep their order whatever the number of worker processes; a worker's RenderError or
    RenderInputError reaches the caller as itself."""
    outcomes, skipped = _render_outcomes(ctx, devices, None, progress)
    return {name: files for name, (_, files) in outcomes.items() if files is not None}, skipped


def render_keys(ctx: DesignContext, devices: Iterable[Device],
                progress: ProgressHook | None = None) -> tuple[dict[str, str | None], dict[str, list[str]]]:
    """Each device's render key (None: not cacheable, always rendered) without rendering it, plus
    the devices whose NOS has no renderer. Two renders of a device with equal keys give equal files,
    whichever fabric or revision they come from: `netgen diff` renders only the devices whose keys
    differ between its revisions."""
    outcomes, skipped = _render_outcomes(ctx, devices, {}, progress, one=_key_only)
    return {name: key for name, (key, _) in outcomes.items()}, skipped


def _render_outcomes(ctx: DesignContext, devices: Iterable[Device], previous: Mapping[str, str] | None,
                     progress: ProgressHook | None, sink: Sink = _in_memory,
                     one: _Work = _render_one) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Each device's outcome through `sink` (where it was rendered), with its key when `previous`
    is given; a device whose key is its `previous` one is not rendered (its files: None)."""
    plugins = load_plugins()
    skipped: dict[str, list[str]] = {}
    todo: list[Device] = []
    for device in devices:
        if device.nos in plugins:
            todo.append(device)
        else:
            skipped.setdefault(device.nos, []).append(device.name)
            if progress:
                progress(device)
    workers = render_workers(len(todo))
    rendered: dict[str, Any] = {}
    if workers > 1:
        # Striped, not cut in runs: a fabric lists a zone's CTSWs together, and after one rack more they
        # are most of what is rendered, so one run of them would keep one worker busy while the other idles.
        count = -(-len(todo) // CHUNK_DEVICES)
        chunks = [[d.name for d in todo[i::count]] for i in range(count)]
        _FORKED[:] = [(ctx, plugins, previous, sink, one)]
        try:
            children = set(multiprocessing.active_children())
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                try:  # the first submit forks every worker, before any of them is handed work
                    first = pool.submit(_render_chunk, chunks[0])
                except OSError:  # fork refused (EAGAIN, ENOMEM): nothing ran, this process renders
                    _stop_idle_workers(children)
                    pool.shutdown(wait=False, cancel_futures=True)
                    workers = 1
                else:
                    results = [first, *(pool.submit(_render_chunk, chunk) for chunk in chunks[1:])]
                    try:
                        for chunk, future in zip(chunks, results, strict=True):
                            rendered.update(future.result())
                            if progress:
                                for name in chunk:
                                    progress(ctx.topology.devices[name])
                    except BaseException:  # the first error stands: the chunks not started are not
                        for future in results:
                            future.cancel()
                        raise
        finally:
            _FORKED.clear()
        if workers > 1:
            return {d.name: rendered[d.name] for d in todo}, skipped
    for device in todo:
        rendered[device.name] = sink(device.name, *one(ctx, plugins[device.nos], device, previous))
        if progress:
            progress(device)
    return rendered, skipped


def _stop_idle_workers(before: set[multiprocessing.process.BaseProcess]) -> None:
    """The pool's workers forked before a fork failed: they wait for work that never comes, and
    the interpreter would wait for them at exit."""
    for child in set(multiprocessing.active_children()) - before:
        child.terminate()
        child.join()


# --- the output directory: what may be replaced ---------------------------------------------------


def output_path(output: Path) -> Path:
    """DIR as an absolute path whose parent is resolved; DIR's own name is kept, never followed."""
    if output.name in ("", ".", ".."):
        output = Path(os.path.realpath(output))
    return Path(os.path.realpath(output.parent)) / output.name if output.name else output


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _named(paths: list[str]) -> str:
    more = f" (and {len(paths) - NAMED} more)" if len(paths) > NAMED else ""
    return ", ".join(paths[:NAMED]) + more


@dataclass(frozen=True, slots=True)
class WholeRender:
    """What a render of every device of a fabric recorded about its inputs (see fabric_key): the
    fabric's key, and what it reported besides the files (its design warnings, the devices whose NOS
    has no renderer)."""

    key: str
    warnings: int
    skipped: dict[str, list[str]]

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "warnings": self.warnings, "skipped": self.skipped}


@dataclass(frozen=True, slots=True)
class _Marker:
    files: Manifest
    keys: dict[str, str]  # device -> render key
    inputs: dict[str, str]  # device -> the digest of its inputs it was keyed with (zone_inputs.py)
    whole: WholeRender | None
    data: bytes  # as read
    distrust: str = ""  # why its MAC does not vouch for it ("": it does; _distrust)

    @property
    def trusted(self) -> bool:
        return not self.distrust


# --- the manifest's key and MAC ----------------------------------------------------------------------

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


def _sealed(signed: bytes) -> bytes:
    """The manifest whose bytes after the MAC prefix are `signed`, with the prefix."""
    key = manifest_key()
    if key.secret is None:
        return _NO_MAC + signed
    return _MAC_OPEN + key.mac(signed).encode("ascii") + _MAC_CLOSE + signed


def _distrust(data: bytes, doc: dict[str, Any]) -> str:
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


def _read_marker(folder: Path, shown: Path) -> _Marker | None:
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


def parse_marker(data: bytes) -> _Marker | None:
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
    return _Marker(manifest, keys, inputs, whole, data, _distrust(data, doc))


def _unchanged(path: str, size: int, digest: str) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if os.fstat(fd).st_size != size:
            return False
        return hashlib.file_digest(fh, "sha256").hexdigest() == digest


@dataclass
class _Survey:
    """What one inspection of DIR verified: each listed file's (inode, size, mtime) when its digest
    matched, and when the inspection began. A later inspection in the same render (the look at DIR
    before the swap) takes a file whose inode, size and mtime are still the ones verified and reads
    only the others. A file last modified within RACY_NS before the first inspection began is read
    again anyway: a write after that look could fall in the same tick of the file system's clock
    and leave the mtime as it was."""

    began_ns: int = field(default_factory=time.time_ns)
    files: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    marker: _Marker | None = None  # DIR's manifest, as this inspection read and checked it

    def vouches_for(self, name: str, st: os.stat_result) -> bool:
        return (self.files.get(name) == (st.st_ino, st.st_size, st.st_mtime_ns)
                and st.st_mtime_ns < self.began_ns - RACY_NS)


RACY_NS = 2_000_000_000


def _not_written(folder: Path, manifest: Manifest | None, survey: _Survey | None = None,
                 verified: _Survey | None = None) -> list[str]:
    """Every path in folder (relative, sorted) that netgen render did not write, or that changed since.
    `survey`: where to note each file found unchanged; `verified`: an earlier survey of this render."""
    found: list[str] = []
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
                        or _unchanged(item.path, *manifest[name])):
                    found.append(f"{name} (changed since netgen wrote it)")
                elif survey is not None:
                    survey.files[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def _inspect(folder: Path, shown: Path, survey: _Survey | None = None,
             verified: _Survey | None = None) -> os.stat_result | None:
    """folder's lstat (None: it does not exist) if netgen may replace it; else OutputDirError.
    Messages name `shown`, the path the user gave (folder may be DIR moved aside for the swap).
    `survey`, `verified`: as _not_written."""
    st = _lstat(folder)
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
    marker = _read_marker(folder, shown)
    if survey is not None:
        survey.marker = marker
    found = _not_written(folder, None if marker is None else marker.files, survey, verified)
    if found:
        raise OutputDirError(f"{shown} holds {len(found)} path(s) netgen render did not write: {_named(found)};"
                             f" replacing {shown} would delete them: move them out of it, or choose another"
                             " directory", shown)
    return st


def _os_failure(exc: OSError, output: Path, staging: Path | None = None) -> OutputDirError:
    """An OSError as a one-line OutputDirError: the path involved (as the user knows it) and the OS reason."""
    reason = exc.strerror or str(exc)
    code = errno.errorcode.get(exc.errno or 0)
    if code:
        reason += f" ({code})"
    path = Path(os.fsdecode(exc.filename)) if exc.filename is not None else output
    where = ""
    if staging is not None and path.is_relative_to(staging) and path != staging:
        path = output / path.relative_to(staging)  # the file as it would have been named in DIR
    elif path.parent == output.parent and path.name.startswith(f".{output.name[:_STAGE_TAG]}."):
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
        _check_replaceable(output)
    except OSError as exc:
        raise _os_failure(exc, output) from None


def _check_replaceable(output: Path, survey: _Survey | None = None) -> os.stat_result | None:
    if not output.name:
        raise OutputDirError(f"{output}: a file system root cannot be an output directory", output)
    st = _inspect(output, output, survey)
    if st is not None and st.st_dev != os.stat(output.parent).st_dev:
        raise OutputDirError(f"{output} is a mount point, which cannot be swapped by a rename: give a directory"
                             " inside it", output)
    return st


# --- writing -----------------------------------------------------------------------------------------


def _component(name: str, what: str) -> str:
    if name in ("", ".", "..", MARKER) or "/" in name or "\0" in name:
        raise RenderError(f"{what} {name!r} cannot be a file name in the output directory")
    return name


def _manifest(entries: Mapping[str, tuple[int, str]], keys: Mapping[str, str],
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
    return _sealed(text[1:].encode("utf-8"))


def _device_entry(key: str, inputs: str | None) -> dict[str, str]:
    return {"key": key} if inputs is None else {"key": key, "inputs": inputs}


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:  # a failed write or close (ENOSPC, EDQUOT, EIO) names no file: name it
        if exc.filename is None:
            exc.filename = str(path)
        raise


def _umask_mode() -> int:
    """The mode a new directory gets from the umask (0o777 & ~umask)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return 0o777 & ~mask


def _make_parents(folder: Path) -> list[Path]:
    """mkdir -p folder; returns the directories it created, deepest last (to undo on failure)."""
    missing: list[Path] = []
    while _lstat(folder) is None:
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


def _beside(output: Path, kind: str) -> Path:
    """A new private directory next to output (mode 0700 until the swap)."""
    for _ in range(100):
        path = output.parent / f".{output.name[:_STAGE_TAG]}.{kind}-{secrets.token_hex(4)}"
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(output.parent))


@dataclass(frozen=True, slots=True)
class _Look:
    """DIR's first look, taken ahead (InspectionAhead.take): its lstat and survey, and the staging
    directory already holding links to the files of `prestaged` devices (None: not staged ahead)."""

    before: os.stat_result | None
    survey: _Survey
    staging: Path | None
    prestaged: frozenset[str]


def _prestage(output: Path, staging: Path, survey: _Survey) -> frozenset[str]:
    """Every device of DIR whose listed files the survey verified, linked into the staging directory
    the way `keep` links them: the devices a warm render keeps are there before it knows which. A
    device counts only if each link is the very file the survey read (not one put in its place
    since); where the file system has no links, `keep` copies the kept devices' files instead."""
    marker = survey.marker
    if marker is None or not marker.trusted:  # nothing of DIR is kept: every device is written again
        return frozenset()
    files: dict[str, list[str]] = {}
    for name in marker.files:
        files.setdefault(name.split("/", 1)[0], []).append(name)
    staged = []
    for device in sorted(device for device, names in files.items() if all(n in survey.files for n in names)):
        os.mkdir(staging / device)
        linked = [_link(output / name, staging / name) for name in files[device]]
        if not all(linked):  # no links on this file system: nothing more to stage
            shutil.rmtree(staging / device)
            break
        if any(os.lstat(staging / name).st_ino != survey.files[name][0] for name in files[device]):
            shutil.rmtree(staging / device)  # a file put in place of the one read: `keep` decides
            continue
        staged.append(device)
    return frozenset(staged)


def _link(source: Path, target: Path) -> bool:
    """A hard link, or False where the file system makes none."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        return False
    return True


class InspectionAhead:
    """The first look at DIR (_check_replaceable: every listed file read and hashed) taken by a
    forked child while this process expands and checks the fabric, then handed to the render's
    stage as its own first look (the swap's second look still checks DIR again).
    When DIR holds a render, the child also builds the new DIR's staging directory ahead: a
    directory per device linking its files, as `keep` would (thousands of mkdir and links on meta-24k;
    figures in docs/developer/benchmarks.md), on the core the expansion leaves free; the render then
    clears the devices it writes again and drops those it no longer has.
    The child answers only when DIR may be replaced; on a refusal, an OS error or a failed child the
    stage inspects DIR itself, as without it, to report what it finds, and the staging directory
    goes. `start` gives None where processes cannot be forked (no fork, or fork refused: the render
    then takes the first look itself). A daemonic process may fork this way: only multiprocessing's
    own children are refused to it."""

    def __init__(self, output: Path, pid: int, fd: int, staging: Path | None) -> None:
        self.output, self._pid, self._fd, self._staging = output, pid, fd, staging

    @classmethod
    def start(cls, output: Path) -> InspectionAhead | None:
        if not hasattr(os, "fork"):
            return None
        path = output_path(output)
        staging = None
        with contextlib.suppress(OSError):  # made here, so that whatever becomes of the child it is removed
            if path.name and not os.path.islink(path) and _lstat(path / MARKER) is not None:
                staging = _beside(path, "new")
        try:
            read, write = os.pipe()
        except OSError:
            _drop(staging)
            return None
        try:
            pid = os.fork()
        except OSError:  # EAGAIN, ENOMEM: the render looks at DIR itself
            os.close(read)
            os.close(write)
            _drop(staging)
            return None
        if pid == 0:  # the child: answer through the pipe, then leave without running anything else
            try:
                os.close(read)
                survey = _Survey()
                before = _check_replaceable(path, survey)
                prestaged = _prestage(path, staging, survey) if staging is not None else frozenset()
                answer = pickle.dumps(_Look(before, survey, staging, prestaged), protocol=5)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(answer)
            finally:
                os._exit(0)
        os.close(write)
        return cls(path, pid, read, staging)

    def take(self, output: Path) -> _Look | None:
        """DIR's first look, or None (inspect DIR here) if the child has none or `output` is not the
        DIR it looked at."""
        if self._fd < 0:
            return None
        fd, self._fd = self._fd, -1
        try:
            with os.fdopen(fd, "rb") as pipe:
                answer = pipe.read()
            looked = pickle.loads(answer) if answer and output == self.output else None
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError):
            looked = None
        finally:
            self._reap(stop=False)
        if isinstance(looked, _Look) and looked.staging == self._staging:
            self._staging = None  # the stage's now
            return looked
        self._drop_staging()
        return None

    def close(self) -> None:
        """Stop the child if its answer was not taken (the command ends without rendering), and
        remove the staging directory it was building."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
            self._reap(stop=True)
        self._drop_staging()

    def _drop_staging(self) -> None:
        _drop(self._staging)
        self._staging = None

    def _reap(self, stop: bool) -> None:
        if self._pid <= 0:
            return
        with contextlib.suppress(OSError):
            if stop:
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        self._pid = -1  # reaped: the number may be another process's now


def _drop(staging: Path | None) -> None:
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)


def _take_owner(staging: Path, written: Iterable[Path], uid: int, gid: int) -> None:
    """Give the new tree DIR's owner where the OS lets us (root can; others only their own groups)."""
    st = os.lstat(staging)
    if (st.st_uid, st.st_gid) == (uid, gid):
        return
    with contextlib.suppress(PermissionError):
        for path in (staging, *written):
            os.chown(path, uid, gid, follow_symlinks=False)


class _Stage:
    """The new DIR, built in a private directory beside it and swapped in by `finish` (module doc).
    Use as a context manager: on any failure the staging directory goes, and an OSError becomes an
    OutputDirError naming the path as the user knows it."""

    def __init__(self, output: Path, ahead: InspectionAhead | None = None) -> None:
        self.output = output_path(output)
        self.dir: Path | None = None
        self.made: list[Path] = []
        self.entries: dict[str, tuple[int, str]] = {}  # "device/file" -> (bytes, sha256)
        self.survey = _Survey()  # what the inspection of DIR before the render verified
        self.ahead = ahead
        self.prestaged: frozenset[str] = frozenset()  # devices whose old files the staging dir links already

    def __enter__(self) -> _Stage:
        try:
            looked = self.ahead.take(self.output) if self.ahead is not None else None
            if looked is not None:
                self.before, self.survey = looked.before, looked.survey
                self.dir, self.prestaged = looked.staging, looked.prestaged
            else:
                self.before = _check_replaceable(self.output, self.survey)
            self.made = _make_parents(self.output.parent)
            if self.dir is None:
                self.dir = _beside(self.output, "new")
        except BaseException as exc:
            self.__exit__(type(exc), exc, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            return
        failure = _os_failure(exc, self.output, self.dir) if isinstance(exc, OSError) else None
        _discard(self.dir, self.made)
        if failure is not None:
            raise failure from None

    def record(self, written: Written) -> None:
        for name, size, digest in written.files or ():
            self.entries[name] = (size, digest)

    def _marker(self) -> _Marker | None:
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
                _link_or_copy(self.output / name, self.dir / name)
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
        self._look_again()
        data = _manifest(old, keys, whole, inputs)
        if marker.data != data:
            assert self.before is not None
            _write_new(self.dir / MARKER, data)
            _take_owner(self.dir, [self.dir / MARKER], self.before.st_uid, self.before.st_gid)
            os.rename(self.dir / MARKER, self.output / MARKER)
        _remove_tree(self.dir, self.output, len(self.prestaged))
        self.dir = None
        self.entries.update(old)
        return True

    def _look_again(self) -> None:
        """DIR inspected again, in place: refused if anything was added or changed since the first
        look, and an error if a listed file went away meanwhile."""
        again = _Survey()
        _inspect(self.output, self.output, again, verified=self.survey)
        gone = sorted(set(self.survey.files) - set(again.files))
        if gone:
            raise OutputDirError(f"{self.output}: {_named(gone)} went away while netgen rendered; run the render"
                                 " again", self.output)

    def finish(self, keys: Mapping[str, str], whole: WholeRender | None = None,
               inputs: Mapping[str, str] | None = None) -> tuple[int, int]:
        """Write the manifest and swap the new DIR in; (files, bytes)."""
        assert self.dir is not None
        before, staging = self.before, self.dir
        mode = stat.S_IMODE(before.st_mode) if before is not None else _umask_mode()
        if before is None:  # keep the set-group-ID bit a new directory inherits from its parent
            mode |= stat.S_IMODE(os.lstat(staging).st_mode) & stat.S_ISGID
        _write_new(staging / MARKER, _manifest(self.entries, keys, whole, inputs))
        if before is not None:
            written = [staging / MARKER, *(staging / d for d in {n.split("/", 1)[0] for n in self.entries}),
                       *(staging / n for n in self.entries)]
            _take_owner(staging, written, before.st_uid, before.st_gid)
        os.chmod(staging, mode)
        old = self.survey.marker
        _swap(staging, self.output, replacing=before is not None, verified=self.survey,
              devices=0 if old is None else len(old.keys) or len(old.files))
        return len(self.entries), sum(size for size, _ in self.entries.values())


def write_atomically(rendered: dict[str, list[RenderedFile]], output: Path, keys: Mapping[str, str] | None = None,
                     reused: Iterable[str] = ()) -> tuple[int, int]:
    """Write DIR/<device>/<file> and the manifest into a sibling staging directory, then swap it
    into place. OutputDirError (nothing changed) when DIR may not be replaced or the OS refuses.
    `keys`: render keys to record per device; `reused`: devices whose files in DIR (verified
    unchanged) go into the new directory as they are, linked rather than written again."""
    for device, files in rendered.items():  # every name is checked before anything is written
        _component(device, "device")
        for item in files:
            _component(item.name, "file")
    with _Stage(output) as stage:
        writer = _Writer(stage.dir)
        for device, files in rendered.items():
            stage.record(writer(device, None, files))
        if reused:
            stage.keep(set(reused))
        return stage.finish(keys or {})


_NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV)  # link(2): none made here


def _link_or_copy(source: Path, target: Path) -> None:
    """The previous render's file in the new directory without writing it again: a hard link (the
    same file system: staging is beside DIR), or a copy where the file system has no links. If the
    old file changes before the swap, the swap's second look at the old DIR refuses."""
    if not _link(source, target):
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            _write_new(target, fh.read())


def _swap(staging: Path, output: Path, replacing: bool, verified: _Survey | None = None, devices: int = 0) -> None:
    """staging becomes output; the old output (`devices` directories) goes (_remove_tree). A DIR
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
    holder = _beside(output, "old")
    old = holder / "old"
    try:
        os.rename(output, old)
        try:
            # DIR is out of everyone's reach now: check again what it held when it moved, since
            # files may have been added while the new one was written.
            _inspect(old, output, verified=verified)
            os.rename(staging, output)
        except BaseException:
            _put_back(old, output)
            raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.rmdir(holder)
        raise
    _remove_tree(holder, output, devices)


# Trees of more device directories than this are removed by a detached process (_remove_tree).
BACKGROUND_MIN_DEVICES = 256
# What that process runs: remove the tree, then any trash beside DIR an earlier one left unfinished.
_REMOVER = ("import os, shutil, sys\n"
            "tree, parent, prefix = sys.argv[1:]\n"
            "shutil.rmtree(tree, ignore_errors=True)\n"
            "for name in os.listdir(parent):\n"
            "    if name.startswith(prefix):\n"
            "        shutil.rmtree(os.path.join(parent, name), ignore_errors=True)\n")


def _remove_tree(path: Path, output: Path, devices: int) -> None:
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
    prefix = f".{output.name[:_STAGE_TAG]}.trash-"
    trash = output.parent / f"{prefix}{secrets.token_hex(4)}"
    try:
        os.rename(path, trash)
        _REMOVERS.append(subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _REMOVER, str(trash), str(output.parent), prefix],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    except OSError:
        shutil.rmtree(trash if trash.exists() else path, ignore_errors=True)


_REMOVERS: list[subprocess.Popen[bytes]] = []  # started by this process and maybe still running


def _put_back(old: Path, output: Path) -> None:
    try:
        os.rename(old, output)
    except OSError as exc:
        raise OutputDirError(f"cannot move the previous {output} back into place ({exc.strerror});"
                             f" it is at {old}", old) from None


def _discard(staging: Path | None, made: list[Path]) -> None:
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
    _remove_dirs(made)


def render_fabric(ctx: DesignContext, output: Path | None, names: list[str] | None = None,
                  progress: ProgressHook | None = None, *, reuse: bool = True,
                  whole: tuple[str, int] | None = None, ahead: InspectionAhead | None = None) -> RenderResult:
    """Render and check every selected device; write them to `output` unless it is None (check only).
    Files go to the staging directory as each device is rendered (by the worker that rendered it),
    so memory does not grow with the fabric. `reuse`: keep the files of devices whose render key is
    the one `output` was written with. `whole`: (fabric_key, design warnings) of a render of every
    device, recorded in the manifest when every device has a render key (see unchanged_render).
    `ahead`: DIR's first look, already taken (InspectionAhead)."""
    devices = [ctx.topology.devices[n] for n in names] if names else list(ctx.topology.devices.values())
    if output is None:
        measured, skipped = _render_outcomes(ctx, devices, None, progress, _Writer(None))
        return _result(Path(), measured, skipped)
    with _Stage(output, ahead) as stage:  # refuses (nothing changed) before spending the render time
        notes = stage.cache_notes(reuse)
        previous = stage.kept_keys() if reuse else {}
        inputs = zone_inputs(ctx, load_plugins(), code_digest(), _StablePickler)
        # a zone switch whose zone inputs are those it was keyed with has that key: no view built
        recorded = stage.kept_inputs()
        same = {d.name for d in devices if d.name in previous and d.name in inputs
                and recorded.get(d.name) == inputs[d.name]}
        written, skipped = _render_outcomes(ctx, [d for d in devices if d.name not in same], previous, progress,
                                            _Writer(stage.dir, stage.prestaged))
        for name in same:
            written[name] = Written(previous[name], None)
            if progress:
                progress(ctx.topology.devices[name])
        written = {d.name: written[d.name] for d in devices if d.name in written}
        for outcome in written.values():
            stage.record(outcome)
        reused = {name for name, outcome in written.items() if outcome.files is None}
        keys = {name: outcome.key for name, outcome in written.items() if outcome.key is not None}
        record = (WholeRender(whole[0], whole[1], {nos: sorted(found) for nos, found in skipped.items()})
                  if whole is not None and names is None and len(keys) == len(written) else None)
        if not stage.updated_in_place(reused, keys, record, inputs):
            stage.drop_prestaged(stage.prestaged - written.keys())
            if reused:
                stage.keep(reused)
            stage.finish(keys, record, inputs)
    return _result(output, written, skipped, files=len(stage.entries),
                   size=sum(size for size, _ in stage.entries.values()), notes=notes)


def _result(output: Path, written: Mapping[str, Written], skipped: dict[str, list[str]], files: int | None = None,
            size: int | None = None, notes: list[str] | None = None) -> RenderResult:
    entries = [entry for outcome in written.values() for entry in outcome.files or ()]
    return RenderResult(output=output, devices=sorted(written),
                        files=len(entries) if files is None else files,
                        bytes=sum(e[1] for e in entries) if size is None else size, skipped=skipped,
                        unchecked=[note for name in sorted(written) for note in written[name].unchecked],
                        reused=sorted(name for name, outcome in written.items() if outcome.files is None),
                        notes=notes or [])


def fabric_key(fabric: Fabric, catalog: Catalog) -> str:
    """The key of a render of every device of this fabric: equal keys, equal files and findings.
    What such a render reads: the fabric and catalog as validated (everything the loader read is in
    them; a secret is in them as its reference only), the local users' hashes, read now as a render
    reads them (RenderInputError as it would), netgen's code digest and the renderers registered.
    The render key of each device still decides what is rendered; this one only lets a render of an
    unchanged fabric into the DIR it wrote stop before the fabric is expanded (unchanged_render)."""
    users = read_local_users(fabric)
    digest = hashlib.sha256(code_digest())
    parts = (fabric.model_dump_json(), catalog.model_dump_json(),
             json.dumps([dataclasses.astuple(u) for u in users]), json.dumps(sorted(load_plugins())))
    for part in parts:
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


def unchanged_render(output: Path, key: str) -> tuple[RenderResult, int] | None:
    """A render of every device of the fabric whose fabric_key is `key`, and its warning count, when
    DIR already holds one: written by a whole render with that key, each listed file there and
    unchanged, nothing else in it (DIR is inspected as a render inspects it, and refused as a render
    refuses it: OutputDirError). None: render it."""
    path = output_path(output)
    survey = _Survey()
    try:  # the manifest first: DIR is read whole only when it was written with this key
        st = _lstat(path)
        if st is None or not stat.S_ISDIR(st.st_mode) or _lstat(path / MARKER) is None:
            return None
        marker = _read_marker(path, path)
        if marker is None or not marker.trusted or marker.whole is None or marker.whole.key != key:
            return None
        _check_replaceable(path, survey)
    except OSError as exc:
        raise _os_failure(exc, path) from None
    if set(marker.files) - set(survey.files):
        return None
    devices = sorted(marker.keys)
    result = RenderResult(output=output, devices=devices, files=len(marker.files),
                          bytes=sum(size for size, _ in marker.files.values()),
                          skipped={nos: list(names) for nos, names in marker.whole.skipped.items()}, reused=devices)
    return result, marker.whole.warnings
