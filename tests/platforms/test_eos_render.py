"""Facts about rendered EOS configs, each derived from the intent (not from a golden file)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.nos.eos.structure import check_eos_config
from netgen.platforms.render import render_devices
from netgen.topology import expand
from tests.conftest import META, SMALL

pytestmark = pytest.mark.render

CTSW, RTSW = "z01-ctsw01", "z02-rtsw001"  # Jericho 7804R3 spine; Tomahawk 5 7060X6 leaf on EOS


def _configs(path: Path, names: list[str] | None = None) -> dict[str, str]:
    loaded = load_fabric(path)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    devices = [ctx.topology.devices[n] for n in names] if names else [
        d for d in ctx.topology.devices.values() if d.nos == "eos"]
    rendered, _ = render_devices(ctx, devices)
    return {name: files[0].content for name, files in rendered.items()}


@pytest.fixture(scope="module")
def small() -> dict[str, str]:
    return _configs(SMALL)


def _block(config: str, header: str) -> list[str]:
    """The lines of one top-level block: its header and every indented line under it."""
    lines = config.splitlines()
    start = lines.index(header)
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    return lines[start:end]


def test_every_eos_file_of_both_examples_is_well_formed(small):
    meta = _configs(META)
    assert len(small) == 14 and len(meta) == 156
    for name, config in {**small, **meta}.items():
        assert check_eos_config(config) == [], name


def test_queue_keyword_follows_the_platform_family(small):
    assert "   tx-queue 3" in small[CTSW] and "uc-tx-queue" not in small[CTSW]
    assert "   uc-tx-queue 3" in small[RTSW] and "   tx-queue" not in small[RTSW]
    # the global map takes tx-queue on both families
    for name in (CTSW, RTSW):
        assert "qos map traffic-class 3 to tx-queue 3" in small[name]


def test_cts_queue_is_strict_and_the_others_are_weighted(small):
    for name, keyword in ((CTSW, "tx-queue"), (RTSW, "uc-tx-queue")):
        config = small[name]
        profile = "\n".join(_block(config, "qos profile BACKEND-ROCE"))
        assert re.search(rf"   {keyword} 6\n      priority strict\n", profile)
        assert re.search(rf"   {keyword} 3\n      no priority\n      bandwidth percent 50\n", profile)
        assert re.search(rf"   {keyword} 0\n      no priority\n      bandwidth percent 50\n", profile)


def test_pfc_only_on_the_lossless_priority_and_only_on_backend_ports(small):
    config = small[RTSW]
    profile = _block(config, "qos profile BACKEND-ROCE")
    assert [line for line in profile if "no-drop" in line] == ["   priority-flow-control priority 3 no-drop"]
    interfaces = re.findall(r"^interface (Ethernet\S+)\n((?:   .*\n)*)", config, re.M)
    backend = [name for name, body in interfaces if "shutdown" not in body]
    spare = [name for name, body in interfaces if "   shutdown" in body]
    assert len(backend) == 32 and len(spare) == 64 - 16  # 16 cages carry 2x400G; the rest are spare
    for name, body in interfaces:
        assert ("service-profile BACKEND-ROCE" in body) == (name in backend), name
    assert "priority-flow-control all off" not in config


def test_watchdog_only_where_the_tier_runs_it_and_the_platform_has_it(small):
    # tiers: [rtsw]; and the 7800R3 (Jericho) has no confirmed watchdog
    assert "   priority-flow-control pause watchdog" in small[RTSW]
    assert "priority-flow-control pause watchdog default timeout 0.2" in small[RTSW]
    assert "pause watchdog" not in small[CTSW]


def test_qp_hashing_lines_only_where_supported(small):
    assert "load-balance sand profile default" in small[CTSW]
    assert "         payload bytes 5-7" in small[CTSW]
    assert "load-balance" not in small[RTSW]  # Tomahawk: falls back to the 5-tuple hash (NG501 warning)


def test_maximum_paths_equals_the_uplink_count(small):
    assert "   maximum-paths 16 ecmp 16" in small[RTSW]  # 4 CTSWs x 4 links
    assert small[RTSW].count("peer group UPLINK\n") == 16


def test_ecn_toggles_the_random_detect_line(small_data, write_fabric):
    on = copy.deepcopy(small_data)
    on["qos"]["ecn"]["enabled"] = True
    before = _configs(write_fabric(small_data), [CTSW, RTSW])
    after = _configs(write_fabric(on), [CTSW, RTSW])
    for name in (CTSW, RTSW):
        assert "random-detect" not in before[name]
        added = [line for line in after[name].splitlines() if line not in before[name].splitlines()]
        assert added == ["      random-detect ecn count",
                         "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes"
                         " max-mark-probability 5"]
        # on the lossless queue only
        keyword = "tx-queue" if name == CTSW else "uc-tx-queue"
        lossless = f"   {keyword} 3\n      no priority\n      bandwidth percent 50\n      random-detect ecn count\n"
        assert lossless in after[name]


def test_routed_and_host_ports(small):
    config = small[RTSW]
    uplink = re.search(r"^interface Ethernet57/1\n((?:   .*\n)*)", config, re.M)
    assert uplink is not None
    assert uplink.group(1).splitlines() == [
        "   description z02-ctsw01:Ethernet3/1/1", "   mtu 9100", "   speed 400g-4", "   no switchport",
        "   ip address 10.1.32.1/31", "   ipv6 address fd00:0:1:2000::1/127", "   service-profile BACKEND-ROCE"]
    assert "interface Vlan1000\n   description GPU-HOSTS\n   mtu 9100\n   ip address 10.128.32.1/27\n" in config
    assert config.endswith("!\nend\n")
