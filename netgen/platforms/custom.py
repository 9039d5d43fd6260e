"""Custom configuration blocks (intent/custom.py) merged into a device's rendered files.

The rule for every NOS: a custom block adds to netgen's output, never changes it. An EOS block may
not repeat a top-level line netgen renders (use the intent for that), a CONFIG_DB field netgen
renders is not overwritten, and the merged file goes through the same check as netgen's own
(EOS structure, SONiC's YANG models, FRR's own parser). Each merged piece is marked with the block's
name (an EOS / FRR comment line; `custom-config.json` beside a SONiC config_db.json lists the rows),
so a diff shows what came from where.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.intent.custom import CustomConfig, layered
from netgen.rendered import RenderInputError
from netgen.topology.model import Device

MARK = "! custom_config "
PROVENANCE_FILE = "custom-config.json"


class CustomConfigError(RenderInputError):
    """A custom block the NOS or netgen's own output does not allow: input, not a netgen bug."""

    def __init__(self, block: str, device: str, message: str) -> None:
        super().__init__(f"custom_config {block!r} on {device}: {message}")
        self.block = block
        self.device = device


def blocks_for(all_blocks: Iterable[CustomConfig], device: Device) -> list[CustomConfig]:
    return layered(list(all_blocks), device.role.value, device.zone, device.name)


def _top_level(lines: list[str]) -> list[list[str]]:
    result: list[list[str]] = []
    for line in lines:
        if line[0] != " " or not result:
            result.append([line])
        else:
            result[-1].append(line)
    return result


def merge_eos(rendered: str, blocks: list[CustomConfig], device: str) -> str:
    """The rendered running-config with the blocks' EOS lines before its final `end`."""
    taken = {line: "netgen" for line in rendered.splitlines() if line and line[0] not in " !"}
    out: list[str] = []
    for block in blocks:
        if block.eos_cli is None:
            continue
        for lines in _top_level(block.eos_cli.split("\n")):
            owner = taken.get(lines[0])
            if owner == "netgen":
                raise CustomConfigError(block.name, device, f"'{lines[0]}' is a line netgen renders: a custom block may"
                                        " add to the config, not change netgen's blocks (set it in the intent)")
            if owner is not None:
                raise CustomConfigError(block.name, device, f"'{lines[0]}' is also in custom_config {owner!r}: give"
                                        " the blocks one name so the narrower replaces the wider")
            taken[lines[0]] = block.name
        out += [f"{MARK}{block.name}", *block.eos_cli.split("\n"), "!"]
    if not out:
        return rendered
    body = rendered.removesuffix("end\n")
    if body == rendered or not body.endswith("!\n"):
        raise ValueError("an EOS config netgen renders ends with '!' and 'end'")
    return body + "\n".join(out) + "\nend\n"


@dataclass
class ConfigDbMerge:
    config: dict[str, Any]
    provenance: dict[str, str] = field(default_factory=dict)  # "TABLE|key.field" -> block name


def merge_config_db(rendered: dict[str, Any], blocks: list[CustomConfig], device: str) -> ConfigDbMerge:
    """config_db with the blocks' rows added; a field netgen (or another block) sets is never overwritten."""
    result = ConfigDbMerge(copy.deepcopy(rendered))
    for block in blocks:
        for table, rows in (block.sonic_config_db or {}).items():
            for key, fields in rows.items():
                for name, value in fields.items():
                    if name in rendered.get(table, {}).get(key, {}):
                        raise CustomConfigError(block.name, device, f"{table}|{key}.{name} is rendered by netgen: a"
                                                " custom block may add rows and fields, not change netgen's (set it"
                                                " in the intent)")
                    other = result.provenance.get(f"{table}|{key}.{name}")
                    if other is not None:
                        raise CustomConfigError(block.name, device, f"{table}|{key}.{name} is also set by"
                                                f" custom_config {other!r}: give the blocks one name so the narrower"
                                                " replaces the wider")
                    result.config.setdefault(table, {}).setdefault(key, {})[name] = copy.deepcopy(value)
                    result.provenance[f"{table}|{key}.{name}"] = block.name
    return result


def merge_frr(rendered: str, blocks: list[CustomConfig]) -> str:
    """frr.conf with the blocks' lines appended, each after a comment naming it."""
    parts = [f"{MARK}{block.name}\n{block.frr}\n!\n" for block in blocks if block.frr is not None]
    return rendered + "".join(parts)


def frr_problems(text: str) -> list[str] | None:
    """FRR's own verdict on a whole frr.conf (`vtysh --dryrun`), or None when FRR is not installed."""
    vtysh = shutil.which("vtysh")
    if vtysh is None:
        return None
    with tempfile.TemporaryDirectory(prefix="netgen-frr-") as folder:
        path = Path(folder) / "frr.conf"
        path.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run([vtysh, "--dryrun", "-f", str(path)], capture_output=True, text=True,
                                  timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [f"vtysh --dryrun failed to run: {exc}"]
    if done.returncode == 0:
        return []
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return lines[:5] or [f"vtysh --dryrun exited {done.returncode}"]


__all__ = ["MARK", "PROVENANCE_FILE", "ConfigDbMerge", "CustomConfigError", "blocks_for", "frr_problems",
           "merge_config_db", "merge_eos", "merge_frr"]
