"""netgen as a library inside a daemonic process (a multiprocessing pool's worker, as job runners and
test harnesses call it), and where fork is refused: a render large enough for worker processes
renders in this process instead (issue 36, 11), with the same bytes."""

from __future__ import annotations

import errno
import multiprocessing
import os
from pathlib import Path

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.output.lookahead import InspectionAhead
from netgen.output.manifest import MARKER
from netgen.platforms import render
from netgen.platforms.render import render_fabric
from netgen.topology import expand
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render


@pytest.fixture
def parallel_small(monkeypatch):
    """The 18 switches of the small example are enough for 2 worker processes."""
    monkeypatch.setattr(render, "PARALLEL_MIN_DEVICES", 1)
    monkeypatch.setattr(render, "CHUNK_DEVICES", 4)
    monkeypatch.setenv(render.WORKERS_ENV, "2")


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != MARKER}


def _library_render(out: str) -> tuple[bool, dict[str, bytes]]:
    """What a job runner's task does: load, expand and render the fabric into `out`."""
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    ahead = InspectionAhead.start(Path(out))
    try:
        render_fabric(ctx, Path(out), ahead=ahead)
    finally:
        if ahead is not None:
            ahead.close()
    return multiprocessing.current_process().daemon, _tree(Path(out))


def _cli_render(out: str) -> tuple[int, str]:
    result = run_cli("render", str(SMALL), "-o", out)
    return result.exit_code, result.output


def test_a_render_in_a_daemonic_pool_worker_renders_in_that_worker(parallel_small, tmp_path):
    assert render.render_workers(18) == 2  # in this (not daemonic) process: workers
    pool = multiprocessing.get_context("fork").Pool(1)
    try:
        daemonic, tree = pool.apply(_library_render, (str(tmp_path / "library"),))
        code, output = pool.apply(_cli_render, (str(tmp_path / "cli"),))
    finally:  # the worker ends by itself (close, join): no signal it might handle decides the test's end
        pool.close()
        pool.join()
    assert daemonic
    assert code == 0, output
    assert _tree(tmp_path / "cli") == tree
    assert run_cli("render", str(SMALL), "-o", str(tmp_path / "here")).exit_code == 0
    assert _tree(tmp_path / "here") == tree


def test_a_refused_fork_renders_in_this_process(parallel_small, tmp_path, monkeypatch):
    assert run_cli("render", str(SMALL), "-o", str(tmp_path / "forked")).exit_code == 0

    def refused(*args, **kwargs):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    assert InspectionAhead.start(tmp_path / "forked") is None
    result = run_cli("render", str(SMALL), "-o", str(tmp_path / "unforked"))
    assert result.exit_code == 0, result.output
    assert _tree(tmp_path / "unforked") == _tree(tmp_path / "forked")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
