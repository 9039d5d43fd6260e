"""Render every selected device with its NOS's renderer plugin (the `renderer` part of the NOS's
bundle, netgen/registry.py): plugin dispatch and the worker pool, and what the render decides with
the render cache (netgen/render_cache.py) and the output directory (netgen/output/: built beside
DIR and swapped in whole, its manifest authenticated).

A device whose render key matches the one DIR was written with is not rendered again: its files,
verified unchanged, are kept in the new directory. A render of every device also records the
fabric's key (fabric_key: the validated fabric and catalog, the local users' hashes, netgen's code,
the renderers). The same key into a DIR that holds what its manifest lists, unchanged, is that
render already: it is reported from the manifest without expanding, checking or keying the fabric
(unchanged_render).

A changed fabric is keyed without building every view: the manifest also keeps each switch's zone
inputs (zone_inputs.py), and a switch whose inputs are the recorded ones has the recorded key. Its
files are linked into the staging directory before the render knows it keeps them: the child that
takes DIR's first look (InspectionAhead) stages every device while this process expands the fabric,
and the render clears the devices it writes again. The swapped-out DIR of a large render is removed
by a detached process after the command (netgen/output/files.py: remove_tree).

Where worker processes cannot be started (this process is a daemonic multiprocessing worker, or
fork is refused), the devices are rendered in this process: the same files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen import render_cache
from netgen.context import DesignContext
from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Fabric
from netgen.output.files import Writer, Written
from netgen.output.inspection import recorded_whole_render
from netgen.output.lookahead import InspectionAhead
from netgen.output.manifest import WholeRender
from netgen.output.staging import Stage
from netgen.platforms import base
from netgen.platforms.services import read_local_users
from netgen.platforms.zone_inputs import zone_inputs
from netgen.registry import NOS
from netgen.rendered import RenderedFile, RenderError
from netgen.topology.model import Device

ProgressHook = Callable[[Device], None]


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


# A device's outcome: its key, and its files (None: the previous render's files are reused).
Outcome = tuple[str | None, list[RenderedFile] | None]


def _render_one(ctx: DesignContext, plugin: base.RendererPlugin, device: Device,
                previous: Mapping[str, str] | None) -> Outcome:
    """`previous`: the keys of the files in DIR (None: an in-memory render, which needs no key)."""
    prepared = plugin.prepare(ctx, device)
    key = render_cache.render_key(plugin.nos, prepared) if previous is not None else None
    if key is not None and previous is not None and previous.get(device.name) == key:
        return key, None
    return key, _checked(ctx, plugin, device, plugin.render(prepared))


def _key_only(ctx: DesignContext, plugin: base.RendererPlugin, device: Device,
              previous: Mapping[str, str] | None) -> Outcome:
    return render_cache.render_key(plugin.nos, plugin.prepare(ctx, device)), None


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
    plugins = base.renderers()
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


def render_fabric(ctx: DesignContext, output: Path | None, names: list[str] | None = None,
                  progress: ProgressHook | None = None, *, reuse: bool = True,
                  whole: tuple[str, int] | None = None, ahead: InspectionAhead | None = None,
                  verify: bool = False) -> RenderResult:
    """Render and check every selected device; write them to `output` unless it is None (check only).
    Files go to the staging directory as each device is rendered (by the worker that rendered it),
    so memory does not grow with the fabric. `reuse`: keep the files of devices whose render key is
    the one `output` was written with. `whole`: (fabric_key, design warnings) of a render of every
    device, recorded in the manifest when every device has a render key (see unchanged_render).
    `ahead`: DIR's first look, already taken (InspectionAhead). `verify`: every look at DIR reads
    and hashes every file it lists, whatever its manifest recorded of them."""
    devices = [ctx.topology.devices[n] for n in names] if names else list(ctx.topology.devices.values())
    if output is None:
        measured, skipped = _render_outcomes(ctx, devices, None, progress, Writer(None))
        return _result(Path(), measured, skipped)
    with Stage(output, ahead, verify=verify) as stage:  # refuses (nothing changed) before spending the render time
        notes = stage.cache_notes(reuse)
        previous = stage.kept_keys() if reuse else {}
        inputs = zone_inputs(ctx, base.renderers(), render_cache.code_digest(), render_cache.StablePickler)
        # a zone switch whose zone inputs are those it was keyed with has that key: no view built
        recorded = stage.kept_inputs()
        same = {d.name for d in devices if d.name in previous and d.name in inputs
                and recorded.get(d.name) == inputs[d.name]}
        written, skipped = _render_outcomes(ctx, [d for d in devices if d.name not in same], previous, progress,
                                            Writer(stage.dir, stage.prestaged))
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
    digest = hashlib.sha256(render_cache.code_digest())
    parts = (fabric.model_dump_json(), catalog.model_dump_json(),
             json.dumps([dataclasses.astuple(u) for u in users]), json.dumps(NOS.names("renderer")))
    for part in parts:
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


def unchanged_render(output: Path, key: str, *, verify: bool = False) -> tuple[RenderResult, int] | None:
    """A render of every device of the fabric whose fabric_key is `key`, and its warning count, when
    DIR already holds one: written by a whole render with that key, each listed file there and
    unchanged, nothing else in it (DIR is inspected as a render inspects it, `verify` as render_fabric's,
    and refused as a render refuses it: OutputDirError). None: render it."""
    marker = recorded_whole_render(output, key, verify=verify)
    if marker is None or marker.whole is None:
        return None
    devices = sorted(marker.keys)
    result = RenderResult(output=output, devices=devices, files=len(marker.files),
                          bytes=sum(size for size, _ in marker.files.values()),
                          skipped={nos: list(names) for nos, names in marker.whole.skipped.items()}, reused=devices)
    return result, marker.whole.warnings
