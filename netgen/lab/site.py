"""The site folder `netgen lab up --ssh` writes into the lab's directory: the fabric as the user keeps
it (its YAML files and the secret files it names, relative to it) and a deploy.yaml pointing at
the lab's SSH management endpoints, so `netgen deploy` runs against the lab as it is."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import yaml

from netgen.intent import LoadedFabric


class Endpoint(Protocol):
    """Where `netgen deploy` reaches one lab router, and as whom (netgen.lab.endpoints.Endpoint)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def username(self) -> str: ...
    @property
    def key_file(self) -> Path: ...
    @property
    def known_hosts(self) -> Path: ...


def write_site(folder: Path, loaded: LoadedFabric, endpoints: Mapping[str, Endpoint], first: str) -> dict[str, Any]:
    """Write the site folder into `folder` (made if missing) and say how to reach the lab: the
    endpoints, the login, its key and known_hosts files, and the folder. `endpoints`: the
    routers with SSH management; `first`'s login and key stand for all."""
    folder.mkdir(exist_ok=True)
    source = loaded.source
    for item in source.parent.glob("*.yaml"):  # the fabric and its catalog; the deploy.yaml is the lab's
        if item.name != "deploy.yaml":
            shutil.copy(item, folder / item.name)
    for ref in loaded.fabric.references().values():  # secret files named relative to the fabric: beside it too
        path = Path(ref.path) if ref.path else None
        if path is not None and path.is_file() and path.is_relative_to(source.parent):
            _copy_beside(path, source.parent, folder)
    lead = endpoints[first]
    deploy = {"management": {"devices": {n: {"host": e.host, "port": e.port} for n, e in endpoints.items()}},
              "ssh": {"known_hosts": str(lead.known_hosts)}}
    (folder / "deploy.yaml").write_text(yaml.safe_dump(deploy, sort_keys=False))
    return {"endpoints": {n: {"host": e.host, "port": e.port} for n, e in endpoints.items()},
            "username": lead.username, "key_file": str(lead.key_file), "known_hosts": str(lead.known_hosts),
            "fabric_dir": str(folder)}


def _copy_beside(path: Path, fabric_dir: Path, folder: Path) -> None:
    """A file under the fabric's folder, copied to the same place under `folder` (never above it)."""
    relative = path.relative_to(fabric_dir)
    if ".." not in relative.parts:
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, folder / relative)  # its mode too: readable by its owner only, if it was


__all__ = ["Endpoint", "write_site"]
