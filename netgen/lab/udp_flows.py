"""Sequence-numbered UDP flows between lab hosts, run inside a host's namespace by
netgen/lab/traffic.py (`python3 udp_flows.py send|receive ...`). The standard library only, and no
netgen import: it runs as a script by its path. It ships in the wheel, not with the test doubles in
tests/support/, because `netgen lab verify --drill --traffic` runs it.

`send` paces rounds at a fixed rate: each round sends one datagram on every flow (one socket per
flow, each its own UDP source port, so the routers' 5-tuple hash spreads the flows over their
ECMP next hops), the round's number as the sequence number. It prints `started` once the first
round is out and, when its stdin closes, one JSON line: each round's send time (CLOCK_MONOTONIC,
which every namespace shares) and the sends that failed.

`receive` binds one port, prints `ready`, and records per flow (source address and port) which
sequence numbers arrived; when its stdin closes it reads what is still queued and prints them as
ranges, with the kernel's count of datagrams its namespace dropped for a full socket buffer."""

from __future__ import annotations

import argparse
import json
import select
import socket
import struct
import sys
import threading
import time
from typing import Any

HEADER = struct.Struct("!I")  # the round's sequence number
RECEIVE_BUFFER = 32 << 20  # room for the whole lab's datagrams should the receiver fall behind a while


def _stdin_closed() -> threading.Event:
    closed = threading.Event()

    def wait() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        closed.set()

    threading.Thread(target=wait, daemon=True).start()
    return closed


def send(source: str, targets: list[str], port: int, sport_base: int, rate: float) -> dict[str, Any]:
    sockets = []
    for i in range(len(targets)):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((source, sport_base + i))
        sockets.append(sock)
    destinations = [(address, port) for address in targets]
    stop = _stdin_closed()
    rounds: list[int] = []
    failed: list[list[int]] = []  # [round, flow]
    interval = 1.0 / rate
    start = time.monotonic()
    padding = b"\0" * 28
    while not stop.is_set():
        due = start + len(rounds) * interval
        ahead = due - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
        seq = len(rounds)
        payload = HEADER.pack(seq) + padding
        rounds.append(time.monotonic_ns())
        for flow, (sock, destination) in enumerate(zip(sockets, destinations, strict=True)):
            try:
                sock.sendto(payload, destination)
            except OSError:
                failed.append([seq, flow])
        if seq == 0:
            print("started", flush=True)
    for sock in sockets:
        sock.close()
    return {"rounds_ns": rounds, "failed": failed}


def _udp_rcvbuf_errors() -> int:
    """This namespace's UDP RcvbufErrors (/proc/net/snmp is per network namespace)."""
    try:
        with open("/proc/net/snmp", encoding="ascii") as snmp:
            lines = [line.split() for line in snmp if line.startswith("Udp:")]
    except OSError:
        return 0
    header, values = lines[0], lines[1]
    return int(values[header.index("RcvbufErrors")]) if "RcvbufErrors" in header else 0


def receive(port: int) -> dict[str, Any]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, 33, RECEIVE_BUFFER)  # SO_RCVBUFFORCE: root, past rmem_max
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    sock.bind(("0.0.0.0", port))
    sock.setblocking(False)
    drops_before = _udp_rcvbuf_errors()
    seen: dict[tuple[str, int], bytearray] = {}
    stop = _stdin_closed()
    print("ready", flush=True)

    def drain() -> None:
        while True:
            try:
                data, sender = sock.recvfrom(2048)
            except BlockingIOError:
                return
            if len(data) < HEADER.size:
                continue
            (seq,) = HEADER.unpack_from(data)
            marks = seen.setdefault(sender, bytearray())
            if seq >= len(marks):
                marks.extend(b"\0" * (seq + 1 - len(marks) + 1024))
            marks[seq] = 1

    while not stop.is_set():
        ready, _, _ = select.select([sock], [], [], 0.1)
        if ready:
            drain()
    drain()
    sock.close()
    flows = {}
    for (address, sport), marks in seen.items():
        ranges, begin = [], None
        for seq, mark in enumerate([*marks, 0]):
            if mark and begin is None:
                begin = seq
            elif not mark and begin is not None:
                ranges.append([begin, seq])
                begin = None
        flows[f"{address}:{sport}"] = ranges
    return {"flows": flows, "rcvbuf_drops": _udp_rcvbuf_errors() - drops_before}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="udp_flows")
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("send")
    s.add_argument("--source", required=True)
    s.add_argument("--flow", action="append", default=[], help="TARGET_IP: one flow each time it is given")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--sport-base", type=int, required=True)
    s.add_argument("--rate", type=float, required=True, help="rounds (datagrams per flow) per second")
    r = sub.add_parser("receive")
    r.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    if args.role == "send":
        result = send(args.source, args.flow, args.port, args.sport_base, args.rate)
    else:
        result = receive(args.port)
    sys.stdout.write(json.dumps(result, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
