"""Rendering in worker processes (netgen/platforms/render.py): the same files, in the same order,
as in one process, and a worker's error reaches the caller as itself."""

from __future__ import annotations

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms import render
from netgen.rendered import RenderInputError
from netgen.topology import expand
from tests.conftest import SMALL

pytestmark = pytest.mark.render


def _ctx(path=SMALL):
    loaded = load_fabric(path)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Workers for the 18 switches of the small example: 2 processes, chunks of 4."""
    monkeypatch.setattr(render, "PARALLEL_MIN_DEVICES", 1)
    monkeypatch.setattr(render, "CHUNK_DEVICES", 4)
    monkeypatch.setenv(render.WORKERS_ENV, "2")


def _as_text(rendered):
    return [(name, [(f.name, f.content, f.unchecked) for f in files]) for name, files in rendered.items()]


def test_workers_render_the_same_files_in_the_same_order(tiny_chunks, monkeypatch):
    ctx = _ctx()
    devices = list(ctx.topology.devices.values())
    assert render.render_workers(len(devices)) == 2
    seen = []
    parallel, skipped = render.render_devices(ctx, devices, progress=lambda d: seen.append(d.name))
    monkeypatch.setenv(render.WORKERS_ENV, "1")
    assert render.render_workers(len(devices)) == 1
    serial, _ = render.render_devices(ctx, devices)
    assert _as_text(parallel) == _as_text(serial) and skipped == {}
    assert sorted(seen) == sorted(d.name for d in devices)  # progress for every device


def test_a_workers_input_error_reaches_the_caller_as_itself(tiny_chunks, small_data, write_fabric, monkeypatch):
    monkeypatch.delenv("NETGEN_TEST_NO_SUCH_HASH", raising=False)
    small_data["services"]["users"] = [{"name": "ops2", "sha512": {"env": "NETGEN_TEST_NO_SUCH_HASH"}}]
    ctx = _ctx(write_fabric(small_data))
    with pytest.raises(RenderInputError, match=r"services\.users\[0\]\.sha512: environment variable"):
        render.render_devices(ctx, list(ctx.topology.devices.values()))


def test_small_selections_render_in_this_process(monkeypatch):
    monkeypatch.delenv(render.WORKERS_ENV, raising=False)
    assert render.render_workers(render.PARALLEL_MIN_DEVICES - 1) == 1
    assert render.render_workers(10_000) >= 1
