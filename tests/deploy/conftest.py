"""Fixtures of the deploy tier: EOS sites on the device emulator (see eos_site.py)."""

from __future__ import annotations

import pytest

from tests.conftest import SMALL
from tests.deploy.eos_site import make_site


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """The 14 EOS switches of the small example, knowing only their hostname and management."""
    yield from make_site(tmp_path, SMALL, None, False, monkeypatch)


@pytest.fixture
def converged(tmp_path, monkeypatch):
    """The same switches already running the small example's configs."""
    yield from make_site(tmp_path, SMALL, None, True, monkeypatch)
