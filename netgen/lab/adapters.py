"""From a fabric to a lab: each device's rendered files (rendered now, or read from a render
directory) turned into what its lab node needs, L3 interfaces with their addresses and an FRR
config, by its NOS's lab adapter (the `lab_adapter` part of the NOS's bundle, netgen/registry.py:
SONiC's applies its config_db.json and runs its frr.conf, EOS's runs an FRR stand-in from its view),
then the lab plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import cast

from netgen.context import DesignContext
from netgen.intent.secrets import MARK, SecretError, fill_placeholders
from netgen.lab.backend import check_lab_name
from netgen.lab.plan import LabPlan, LabSliceError, NodeFacts, SliceRequest, build_plan, select_devices
from netgen.platforms.output_dir import RenderDirError, RenderDirFiles, render_or_read
from netgen.registry import NOS
from netgen.rendered import RenderInputError
from netgen.topology.model import Device

# A NOS's lab adapter: one device's rendered files (file name -> text) -> its lab node's facts.
Adapter = Callable[[DesignContext, Device, Mapping[str, str]], NodeFacts]


def lab_adapter(nos: str) -> Adapter:
    """The lab adapter of `nos` (its bundle's `lab_adapter` part, imported on first use)."""
    adapter = NOS.part(nos, "lab_adapter")
    if not callable(adapter):
        raise NOS.wrong_part(nos, "lab_adapter", "a lab adapter (context, device, files) -> NodeFacts")
    return cast(Adapter, adapter)


def node_facts(ctx: DesignContext, device: Device, files: Mapping[str, str]) -> NodeFacts:
    if not NOS.has_part(device.nos, "lab_adapter"):
        raise LabSliceError(f"{device.name}: no lab adapter for NOS {device.nos!r}")
    return lab_adapter(device.nos)(ctx, device, files)


def rendered_files(ctx: DesignContext, devices: list[Device], configs: Path | None,
                   accept_edited: bool = False) -> dict[str, dict[str, str]]:
    """Each device's rendered files: rendered now (and checked, as `netgen render` does), or read
    from a `netgen render` output directory so the lab runs exactly the files under review."""
    return _rendered_inputs(ctx, devices, configs, accept_edited).files


def _rendered_inputs(ctx: DesignContext, devices: list[Device], configs: Path | None,
                     accept_edited: bool) -> RenderDirFiles:
    """platforms/output_dir.py's render_or_read, its input errors (the render directory's path, the
    fabric file's block or secret) as LabSliceError: exit 2 like any input error."""
    try:
        return render_or_read(ctx, devices, configs, accept_edited=accept_edited)
    except (RenderDirError, RenderInputError) as exc:
        raise LabSliceError(str(exc)) from None


def lab_inputs(lab: str, ctx: DesignContext, request: SliceRequest, configs: Path | None = None,
               accept_edited: bool = False,
               edited: dict[str, str] | None = None) -> tuple[LabPlan, dict[str, dict[str, str]]]:
    """The lab plan and the rendered files it was built from (containerlab boots the files).
    `accept_edited`: files of `configs` changed since netgen rendered them are used, each put in
    `edited` ("device/file" -> why) for the caller to report."""
    check_lab_name(lab)
    devices = select_devices(ctx.topology, request)
    read = _rendered_inputs(ctx, devices, configs, accept_edited)
    files = read.files
    if edited is not None:
        edited.update(read.edited)
    facts = {d.name: node_facts(ctx, d, files.get(d.name, {})) for d in devices}
    # FRR runs what a deploy would push: placeholders (the BGP session key) filled, each secret read
    # once. The returned files keep their placeholders (a containerlab export writes them out).
    secrets, values = ctx.fabric.shared_secrets(), dict[str, str]()
    try:
        facts = {name: replace(f, frr_conf=fill_placeholders(f.frr_conf, secrets, f"{name}/frr.conf", values))
                 if MARK in f.frr_conf else f for name, f in facts.items()}
    except SecretError as exc:
        raise LabSliceError(f"the lab's FRR runs with the fabric's secrets: {exc}") from None
    return build_plan(lab, ctx, request, facts), files


def plan_lab(lab: str, ctx: DesignContext, request: SliceRequest, configs: Path | None = None,
             accept_edited: bool = False) -> LabPlan:
    return lab_inputs(lab, ctx, request, configs, accept_edited)[0]
