"""containerlab tier: the zone-1 slice of the small example as cEOS (CTSWs), sonic-vs (RTSWs) and
Linux (hosts) containers booting their rendered files, judged by the same verification as the netns
lab, then destroyed. Needs a Docker engine, containerlab and the three images; where one is missing
(this machine class has none of them) the test skips and names what is missing.

Images can be pointed at local tags with NETGEN_CLAB_CEOS_IMAGE, NETGEN_CLAB_SONIC_VS_IMAGE and
NETGEN_CLAB_LINUX_IMAGE."""

from __future__ import annotations

import os
import subprocess

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab, rendered_files
from netgen.lab.containerlab import ClabImages, ContainerlabBackend, clab_prerequisites
from netgen.lab.plan import SliceRequest, select_devices
from netgen.lab.verify import verify
from netgen.topology import expand
from tests.conftest import ROOT

pytestmark = pytest.mark.clab

CONVERGE_S = 600.0  # cEOS and sonic-vs boot in minutes, not seconds


def _images() -> ClabImages:
    default = ClabImages()
    return ClabImages(ceos=os.environ.get("NETGEN_CLAB_CEOS_IMAGE", default.ceos),
                      sonic_vs=os.environ.get("NETGEN_CLAB_SONIC_VS_IMAGE", default.sonic_vs),
                      linux=os.environ.get("NETGEN_CLAB_LINUX_IMAGE", default.linux))


@pytest.fixture(scope="module")
def images() -> ClabImages:
    images = _images()
    missing = clab_prerequisites(images)
    if missing:
        pytest.skip("the containerlab tier needs: " + "; ".join(missing))
    return images


def test_zone1_slice_converges_verifies_and_goes_away(images, tmp_path, monkeypatch):
    monkeypatch.setenv("NETGEN_LAB_ROOT", str(tmp_path))
    loaded = load_fabric(ROOT / "inventory" / "small")
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    request = SliceRequest(zone=1)
    name = f"ct{os.getpid() % 100000}"
    plan = plan_lab(name, ctx, request)
    files = rendered_files(ctx, select_devices(ctx.topology, request), None)
    backend = ContainerlabBackend(name, files=files, images=images)
    backend.build(plan)
    try:
        report = verify(backend, wait=CONVERGE_S)
        failed = [r for r in report["results"] if not r["ok"]]
        assert report["sessions_expected"] == len(plan.sessions) > 0
        assert report["ok"], failed[:10]
    finally:
        backend.destroy()
    assert not backend.exists()
    left = subprocess.run(["docker", "ps", "-a", "--filter", f"name=clab-{name}-", "--format", "{{.Names}}"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert not left, f"containers left: {left}"
