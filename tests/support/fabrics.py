"""Edited copies of the small example for tests: the fabric file changed by a function, everything
beside it (catalog, secrets) copied as it is."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import SMALL


def edited_small(folder: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """The small example copied into FOLDER (new) with its fabric file edited; its path."""
    folder.mkdir(parents=True)
    for item in SMALL.parent.glob("*.yaml"):
        shutil.copy(item, folder / item.name)
    shutil.copytree(SMALL.parent / "secrets", folder / "secrets")
    data = yaml.safe_load((folder / "fabric.yaml").read_text())
    edit(data)
    (folder / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder / "fabric.yaml"


def one_more_rack(data: dict[str, Any]) -> None:
    """A fifth rack in each zone, with the ATSW oversubscription it gives (20 x 400G down, 2 up per
    CTSW: 1:10)."""
    for zone in data["zones"]:
        zone["racks"] = 5
    data["aggregation"]["expected_oversubscription"] = "1:10"
