"""A namespace's forwarding table read over rtnetlink from this process, without a process.

Waiting for a zone to converge reads every RTSW's BGP routes each poll: as `ip -j route` through
nsenter that was 384 processes a poll (two families, 192 RTSWs), most of a poll's time, its CPU
taken from the routers (docs/developer/benchmarks.md, "Lab: a whole zone"). Here a thread made for
it enters the namespace (setns.in_namespace) and opens a NETLINK_ROUTE socket there, which stays in
that namespace; the dump is read and parsed in the caller's thread, as `ip route show` shows it:
table main, the given routing protocol, each route's next hops counted (RTA_MULTIPATH's entries,
else one).

Layouts are the kernel's uapi headers: <linux/netlink.h>, <linux/rtnetlink.h>.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from ipaddress import ip_address, ip_network

from netgen.lab.setns import in_namespace

_NLMSG = struct.Struct("=IHHII")  # struct nlmsghdr: len, type, flags, seq, pid
_NLMSGERR = struct.Struct("=i")  # struct nlmsgerr starts with the (negative) errno
_RTMSG = struct.Struct("=BBBBBBBBI")  # struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags
_RTATTR = struct.Struct("=HH")  # struct rtattr: len, type
_RTNH = struct.Struct("=HBBi")  # struct rtnexthop: len, flags, hops, ifindex
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
RTM_NEWROUTE, RTM_GETROUTE = 24, 26
RTA_DST, RTA_MULTIPATH, RTA_TABLE = 1, 9, 15
RT_TABLE_MAIN = 254
# <linux/rtnetlink.h> RTPROT_*, the names `ip route show proto` takes (iproute2's rt_protos)
PROTOCOLS = {"kernel": 2, "boot": 3, "static": 4, "bgp": 186, "isis": 187, "ospf": 188, "rip": 189}

DUMP_LIMIT = 256 << 20  # bytes a dump may take: a zone RTSW's IPv4 dump, 398 routes, is about 120 KB


class NetlinkError(Exception):
    """A namespace's table that cannot be read; the message names the namespace."""


def route_widths(namespace: str, protocol: str, timeout: float = 30.0) -> dict[str, int]:
    """The namespace's routes of `protocol` (a PROTOCOLS name) in table main, both families:
    prefix -> next hops."""
    if protocol not in PROTOCOLS:
        raise NetlinkError(f"namespace {namespace}: no routing protocol {protocol!r} (one of {', '.join(PROTOCOLS)})")
    sock = in_namespace(namespace, lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE))
    routes: dict[str, int] = {}
    with sock:
        for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), 1):
            sock.sendto(_NLMSG.pack(_NLMSG.size + _RTMSG.size, RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
                        + _RTMSG.pack(family, 0, 0, 0, 0, 0, 0, 0, 0), (0, 0))
            for message in _dump(sock, seq, namespace, time.monotonic() + timeout):
                route = parse_route(message, PROTOCOLS[protocol])
                if route is not None:
                    routes[route[0]] = route[1]
    return routes


def _dump(sock: socket.socket, seq: int, namespace: str, deadline: float) -> list[bytes]:
    """The RTM_NEWROUTE payloads of one dump, up to NLMSG_DONE."""
    payloads: list[bytes] = []
    total = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise NetlinkError(f"namespace {namespace}: the route dump timed out")
        sock.settimeout(left)
        try:
            data = sock.recv(1 << 20)
        except TimeoutError:
            raise NetlinkError(f"namespace {namespace}: the route dump timed out") from None
        total += len(data)
        if total > DUMP_LIMIT:
            raise NetlinkError(f"namespace {namespace}: the route dump passed {DUMP_LIMIT >> 20} MiB")
        offset = 0
        while offset + _NLMSG.size <= len(data):
            length, kind, _, got_seq, _ = _NLMSG.unpack_from(data, offset)
            if length < _NLMSG.size or offset + length > len(data):
                raise NetlinkError(f"namespace {namespace}: a malformed netlink message")
            body = data[offset + _NLMSG.size:offset + length]
            offset += (length + 3) & ~3
            # NLM_F_DUMP_INTR (the table changed during the dump) is not retried: as with `ip route`,
            # a poll reads what the dump gave and the next poll reads again
            if got_seq != seq:
                continue
            if kind == NLMSG_DONE:
                return payloads
            if kind == NLMSG_ERROR:
                if len(body) < _NLMSGERR.size:
                    raise NetlinkError(f"namespace {namespace}: a malformed netlink message")
                errno = -_NLMSGERR.unpack_from(body)[0]
                if errno:
                    raise NetlinkError(f"namespace {namespace}: the route dump failed: {os.strerror(errno)}")
                continue
            if kind == RTM_NEWROUTE:
                payloads.append(body)


def _attributes(data: bytes, offset: int) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    while offset + _RTATTR.size <= len(data):
        length, kind = _RTATTR.unpack_from(data, offset)
        if length < _RTATTR.size:
            break
        found[kind & 0x3FFF] = data[offset + _RTATTR.size:offset + length]  # without NLA_F_NESTED / BYTEORDER
        offset += (length + 3) & ~3
    return found


def parse_route(payload: bytes, protocol: int) -> tuple[str, int] | None:
    """An RTM_NEWROUTE payload as (prefix, next hops) when it is a `protocol` route of table
    main, else None. A route through a kernel nexthop object still lists its next hops while the
    kernel's net.ipv4.nexthop_compat_mode is on (its default); the lab's zebra uses none
    (lab_only.ZEBRA_SETTING)."""
    if len(payload) < _RTMSG.size:
        return None
    family, dst_len, _, _, table, proto, _, _, _ = _RTMSG.unpack_from(payload)
    attrs = _attributes(payload, _RTMSG.size)
    if len(attrs.get(RTA_TABLE, b"")) == 4:
        table = struct.unpack("=I", attrs[RTA_TABLE])[0]
    if proto != protocol or table != RT_TABLE_MAIN or family not in (socket.AF_INET, socket.AF_INET6):
        return None
    v6 = family == socket.AF_INET6
    dst = attrs.get(RTA_DST, bytes(16 if v6 else 4))
    prefix = str(ip_network(f"{ip_address(dst)}/{dst_len}", strict=False))
    multipath = attrs.get(RTA_MULTIPATH)
    if multipath is None:
        return prefix, 1
    hops, offset = 0, 0
    while offset + _RTNH.size <= len(multipath):
        length = _RTNH.unpack_from(multipath, offset)[0]
        if length < _RTNH.size:
            break
        hops += 1
        offset += (length + 3) & ~3
    return prefix, hops
