"""What `netgen sot pull` writes: the source of truth's facts about each switch (management
address, serial, status) as deploy.sot.yaml, which `netgen deploy` reads beside the fabric file
(netgen.deploy.inventory.SOT_FILE): a switch is reached at that address unless deploy.yaml gives it
a host of its own, and left out of a change when its status is not one a deploy may touch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml

from netgen.sot.base import DeviceFacts


@dataclass(frozen=True)
class Pulled:
    """The pulled facts: `devices` (name -> host, serial, status, each when known), the switches the
    source of truth does not know (`missing`), the file's text, and those whose status keeps them
    out of deploys (`out_of_service`, name -> status)."""

    devices: dict[str, dict[str, str]]
    missing: list[str]
    text: str
    out_of_service: dict[str, str]


def pulled(url: str, switches: Iterable[str], facts: Mapping[str, DeviceFacts],
           deployable: Iterable[str]) -> Pulled:
    """deploy.sot.yaml for `switches` (fabric order) from what the source of truth at `url` said
    (`facts`); `deployable`: the statuses a deploy may touch."""
    names = list(switches)
    devices = {name: {key: value for key, value in (("host", facts[name].management), ("serial", facts[name].serial),
                                                     ("status", facts[name].status)) if value}
               for name in names if name in facts}
    document: dict[str, Any] = {"source": {"backend": "nautobot", "url": url,
                                           "pulled": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")},
                                "devices": devices}
    text = (f"# written by `netgen sot pull` from {url}; replaced whole by the next pull\n"
            + yaml.safe_dump(document, sort_keys=False))
    allowed = set(deployable)
    out_of_service = {n: d["status"] for n, d in devices.items() if d.get("status") and d["status"] not in allowed}
    return Pulled(devices, [name for name in names if name not in facts], text, out_of_service)


__all__ = ["Pulled", "pulled"]
