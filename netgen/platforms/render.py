"""Render every selected device with its NOS plugin and write the files atomically.

Output layout: DIR/<device>/<file>. The whole directory is built next to DIR and swapped into
place only when every device rendered and passed its checks, so a failure never leaves a partial
or mixed output directory behind.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from netgen.checks import DesignContext
from netgen.platforms import base
from netgen.platforms.base import RenderedFile, RenderError
from netgen.topology.model import Device

ProgressHook = Callable[[Device], None]
MARKER = ".netgen-render"  # marks a directory netgen may replace wholesale


class OutputDirError(Exception):
    """The output path exists and is not a netgen render directory."""


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


def render_devices(ctx: DesignContext, devices: Iterable[Device],
                   progress: ProgressHook | None = None) -> tuple[dict[str, list[RenderedFile]], dict[str, list[str]]]:
    """Render in memory: device name -> files, plus the devices whose NOS has no renderer yet."""
    plugins = load_plugins()
    rendered: dict[str, list[RenderedFile]] = {}
    skipped: dict[str, list[str]] = {}
    for device in devices:
        plugin = plugins.get(device.nos)
        if plugin is None:
            skipped.setdefault(device.nos, []).append(device.name)
        else:
            files = plugin.render_device(ctx, device)
            # Every file is checked against what the NOS accepts before anything is written.
            problems = plugin.check_device(ctx, device, files)
            if problems:
                more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
                raise RenderError(f"{device.name}: rendered config would be rejected by {device.nos}: "
                                  + "; ".join(problems[:5]) + more)
            rendered[device.name] = files
        if progress:
            progress(device)
    return rendered, skipped


def write_atomically(rendered: dict[str, list[RenderedFile]], output: Path) -> tuple[int, int]:
    """Write DIR/<device>/<file> into a sibling temp dir, then swap it into place."""
    output = output.resolve()
    if output.exists() and not (output.is_dir() and (not any(output.iterdir()) or (output / MARKER).is_file())):
        raise OutputDirError(f"{output} exists and was not written by netgen render (no {MARKER});"
                             " choose a new or empty directory")
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.new-", dir=output.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; rendered configs are not secrets
    files = size = 0
    try:
        (staging / MARKER).write_text("rendered by netgen; `netgen render` replaces this directory whole\n")
        for device, device_files in rendered.items():
            folder = staging / device
            folder.mkdir()
            for item in device_files:
                data = item.content.encode("utf-8")
                (folder / item.name).write_bytes(data)
                files += 1
                size += len(data)
        old = None
        if output.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{output.name}.old-", dir=output.parent))
            output.rename(old / output.name)
        staging.rename(output)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files, size


def render_fabric(ctx: DesignContext, output: Path | None, names: list[str] | None = None,
                  progress: ProgressHook | None = None) -> RenderResult:
    """Render and check every selected device; write them to `output` unless it is None (check only)."""
    devices = [ctx.topology.devices[n] for n in names] if names else list(ctx.topology.devices.values())
    rendered, skipped = render_devices(ctx, devices, progress)
    if output is None:
        sizes = [len(f.content.encode("utf-8")) for files in rendered.values() for f in files]
        return RenderResult(output=Path(), devices=sorted(rendered), files=len(sizes), bytes=sum(sizes),
                            skipped=skipped)
    files, size = write_atomically(rendered, output)
    return RenderResult(output=output, devices=sorted(rendered), files=files, bytes=size, skipped=skipped)
