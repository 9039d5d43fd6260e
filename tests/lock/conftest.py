"""Both stores of the change lock under one contract: the file store in a fresh directory, the etcd
store against Debian's real etcd (tests/support/etcd_server.py)."""

from __future__ import annotations

import secrets

import pytest

from netgen.lock.etcd import EtcdStore
from netgen.lock.store import FileStore


@pytest.fixture(params=["file", "etcd"])
def store_factory(request, tmp_path):
    """A function giving a new handle on ONE store (as a second operator's netgen opens it)."""
    identity = f"fabric-{secrets.token_hex(4)}"
    if request.param == "file":
        root = tmp_path / "lock"
        return lambda: FileStore(root, identity)
    url = request.getfixturevalue("etcd_url")
    return lambda: EtcdStore(url, identity)
