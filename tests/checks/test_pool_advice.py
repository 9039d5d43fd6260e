"""NG201's advice is actionable: applying the suggested prefix length removes the finding."""

from __future__ import annotations

import re
from ipaddress import ip_network

import pytest

from tests.conftest import findings_of

pytestmark = pytest.mark.render


@pytest.mark.parametrize(
    ("pool", "tiny"),
    [
        ("loopback_ipv4", "10.0.0.0/27"),
        ("p2p_ipv4", "10.1.0.0/24"),
        ("host_ipv4", "10.128.0.0/24"),
        ("p2p_ipv4", "255.255.255.254/31"),  # smaller than its slot count, at the top of the space
        ("p2p_ipv6", "fd00:0:1::/120"),
    ],
)
def test_following_the_advice_fixes_exhaustion(small_data, write_fabric, pool, tiny):
    small_data["addressing"][pool] = tiny
    exhausted = [f for f in findings_of(write_fabric(small_data)) if f.code == "NG201"]
    assert exhausted, "a tiny pool must be reported"
    assert all(f.subject.startswith(f"addressing.{pool}") for f in exhausted)
    advised = min(int(re.search(r"use a /(\d+) or larger", f.fix).group(1)) for f in exhausted)
    net = ip_network(tiny)
    # same start address family, shorter prefix; place it where it overlaps nothing else
    base = "10.64.0.0" if net.version == 4 else "fd00:0:100::"
    small_data["addressing"][pool] = str(ip_network(f"{base}/{min(advised, net.prefixlen)}", strict=False))
    assert [f for f in findings_of(write_fabric(small_data)) if f.code == "NG201"] == []
