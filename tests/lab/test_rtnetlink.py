"""A namespace's routes read over rtnetlink (netgen/lab/rtnetlink.py): messages built as the
kernel's uapi lays them out, and a real namespace's table against `ip -j route`."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess

import pytest

from netgen.lab.rtnetlink import PROTOCOLS, RT_TABLE_MAIN, NetlinkError, parse_route, route_widths
from netgen.lab.setns import NamespaceError, in_namespace
from tests.lab.conftest import lab_name, needs_lab

BGP = PROTOCOLS["bgp"]


def _attr(kind: int, data: bytes) -> bytes:
    length = 4 + len(data)
    return struct.pack("=HH", length, kind) + data + bytes((4 - length % 4) % 4)


def _route(family: int, dst: bytes | None, dst_len: int, proto: int = BGP, table: int = RT_TABLE_MAIN,
           hops: int = 0) -> bytes:
    attrs = _attr(15, struct.pack("=I", table))  # RTA_TABLE
    if dst is not None:
        attrs += _attr(1, dst)  # RTA_DST
    if hops:
        gateway = _attr(5, bytes(4 if family == socket.AF_INET else 16))
        nexthops = b"".join(struct.pack("=HBBi", 8 + len(gateway), 0, 0, 10 + i) + gateway for i in range(hops))
        attrs += _attr(9, nexthops)  # RTA_MULTIPATH
    else:
        attrs += _attr(4, struct.pack("=i", 3))  # RTA_OIF
    return struct.pack("=BBBBBBBBI", family, dst_len, 0, 0, min(table, 255), proto, 0, 1, 0) + attrs


def test_a_multipath_route_counts_its_next_hops():
    assert parse_route(_route(socket.AF_INET, bytes([10, 0, 1, 2]), 32, hops=16), BGP) == ("10.0.1.2/32", 16)
    v6 = socket.inet_pton(socket.AF_INET6, "fd00:0:0:2::")
    assert parse_route(_route(socket.AF_INET6, v6, 64, hops=3), BGP) == ("fd00:0:0:2::/64", 3)


def test_a_single_path_and_a_default_route_count_one():
    assert parse_route(_route(socket.AF_INET, bytes([10, 128, 16, 32]), 27), BGP) == ("10.128.16.32/27", 1)
    assert parse_route(_route(socket.AF_INET, None, 0), BGP) == ("0.0.0.0/0", 1)
    assert parse_route(_route(socket.AF_INET6, None, 0, hops=2), BGP) == ("::/0", 2)


def test_other_protocols_tables_and_short_messages_are_not_counted():
    dst = bytes([10, 0, 1, 2])
    assert parse_route(_route(socket.AF_INET, dst, 32, proto=PROTOCOLS["static"]), BGP) is None
    assert parse_route(_route(socket.AF_INET, dst, 32, table=255), BGP) is None  # local
    assert parse_route(_route(socket.AF_INET, dst, 32, table=1000), BGP) is None  # past 255: RTA_TABLE says
    assert parse_route(b"\x02\x20", BGP) is None


@needs_lab
def test_a_namespace_s_bgp_routes_read_as_ip_shows_them():
    namespace = f"{lab_name('rn')}-a"
    home = os.stat("/proc/thread-self/ns/net").st_ino
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        def ip(*args: str) -> str:
            return subprocess.run(["ip", "-n", namespace, *args], check=True, capture_output=True, text=True).stdout

        for i in range(4):  # veth pairs: the dummy module may not be loadable here
            ip("link", "add", f"d{i}", "type", "veth", "peer", "name", f"e{i}")
            ip("link", "set", f"d{i}", "up")
            ip("link", "set", f"e{i}", "up")
            ip("addr", "add", f"192.0.2.{4 * i + 1}/30", "dev", f"d{i}")
            ip("addr", "add", f"2001:db8:{i}::1/64", "dev", f"d{i}")
        paths = [arg for i in range(4) for arg in ("nexthop", "via", f"192.0.2.{4 * i + 2}", "dev", f"d{i}")]
        ip("route", "add", "10.0.1.2/32", "proto", "bgp", *paths)
        ip("route", "add", "10.128.16.32/27", "proto", "bgp", "via", "192.0.2.2", "dev", "d0")
        ip("route", "add", "10.9.9.0/24", "proto", "static", "via", "192.0.2.2", "dev", "d0")
        ip("route", "add", "10.8.8.0/24", "proto", "bgp", "table", "100", "via", "192.0.2.2", "dev", "d0")
        v6_paths = [arg for i in range(2) for arg in ("nexthop", "via", f"2001:db8:{i}::2", "dev", f"d{i}")]
        ip("-6", "route", "add", "fd00::ff:1000:0:0:2/128", "proto", "bgp", *v6_paths)
        read = route_widths(namespace, "bgp")
        assert read == {"10.0.1.2/32": 4, "10.128.16.32/27": 1, "fd00::ff:1000:0:0:2/128": 2}
        shown = {}
        for flag in ("-4", "-6"):
            for route in json.loads(ip("-j", flag, "route", "show", "proto", "bgp")):
                dst = route["dst"] if "/" in route["dst"] else f"{route['dst']}/{32 if flag == '-4' else 128}"
                shown[dst] = len(route.get("nexthops") or [route])
        assert read == shown
        assert os.stat("/proc/thread-self/ns/net").st_ino == home  # this thread never left
        with pytest.raises(NetlinkError, match="no routing protocol 'bgpx'"):
            route_widths(namespace, "bgpx")
        with pytest.raises(NamespaceError, match=f"{namespace}x: No such file"):
            in_namespace(f"{namespace}x", lambda: None)
    finally:
        subprocess.run(["ip", "netns", "del", namespace], check=False, capture_output=True)
