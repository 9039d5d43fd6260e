"""Hand-reviewed golden files (see golden/README.md): any change to them must be deliberate."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms.render import render_devices
from netgen.topology import expand
from tests.conftest import SMALL

pytestmark = pytest.mark.render

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize(("nos", "device"), [("sonic", "z01-rtsw001"), ("eos", "z01-ctsw01"), ("eos", "z02-rtsw001")])
def test_rendered_files_match_the_reviewed_goldens(nos, device):
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    rendered, _ = render_devices(ctx, [ctx.topology.devices[device]])
    files = {f.name: f.content for f in rendered[device]}
    folder = GOLDEN / nos / device
    assert sorted(files) == sorted(p.name for p in folder.iterdir())
    for name, content in files.items():
        expected = (folder / name).read_text()
        if content != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), content.splitlines(True),
                                                f"golden/{nos}/{device}/{name}", "rendered", n=2))
            pytest.fail(f"{name} differs from the reviewed golden (see golden/README.md):\n{diff[:4000]}")
