"""One command to an FRR daemon's vty socket (netgen/lab/frr_vty.py), against a stand-in daemon
that answers as FRR's lib/vty.c does: the output, three NUL bytes, the return code. The real
daemons are read this way in tests/lab/test_netns_lab.py."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from netgen.lab import frr_vty
from netgen.lab.frr_vty import vty_command

Answer = Callable[[socket.socket, bytes], None]  # (connection, the command as received)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Callable[[Answer], Path]]:
    """A unix socket at tmp_path/bgpd.vty whose one connection `answer` serves."""
    servers: list[tuple[socket.socket, threading.Thread]] = []
    received: list[bytes] = []

    def start(answer: Answer) -> Path:
        path = tmp_path / "bgpd.vty"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(1)

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                command = b""
                while not command.endswith(b"\0"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    command += chunk
                received.append(command)
                with contextlib.suppress(OSError):  # a client that stopped reading (the flood)
                    answer(conn, command)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        servers.append((server, thread))
        return path

    start.received = received  # type: ignore[attr-defined]
    yield start
    for server, thread in servers:
        server.close()
        thread.join(timeout=5)


def test_the_output_and_a_zero_return_code_are_success(daemon):
    path = daemon(lambda conn, _: conn.sendall(b'{"ipv4Unicast":{}}\n\0\0\0\0'))
    result = vty_command(path, "show bgp summary json")
    assert result.ok and result.stdout == '{"ipv4Unicast":{}}\n'
    assert daemon.received == [b"show bgp summary json\0"]  # NUL-terminated, as vtysh sends it


def test_a_failed_command_returns_frr_s_code_and_its_message(daemon):
    path = daemon(lambda conn, _: conn.sendall(b"% [BGP] Unknown command: show nonsense\n\0\0\0\2"))
    result = vty_command(path, "show nonsense")
    assert result.returncode == 2 and not result.ok and "Unknown command" in result.stdout


def test_an_answer_split_anywhere_is_read_to_its_end(daemon):
    body = b"x" * 70000 + b"\n"

    def dribble(conn: socket.socket, _: bytes) -> None:
        whole, start = body + b"\0\0\0\0", 0
        for cut in (1000, 69999, 70001, len(body) + 1, len(body) + 3, len(whole)):  # in the text, in the end mark
            conn.sendall(whole[start:cut])
            start = cut

    path = daemon(dribble)
    result = vty_command(path, "show running-config")
    assert result.ok and result.stdout == body.decode()


def test_a_daemon_that_hangs_up_mid_answer_is_a_failure(daemon):
    path = daemon(lambda conn, _: conn.sendall(b"partial output"))
    result = vty_command(path, "show bgp summary json")
    assert result.returncode == 1 and "closed before its answer ended" in result.stderr


def test_a_silent_daemon_times_out_with_124(daemon):
    hold = threading.Event()
    path = daemon(lambda conn, _: hold.wait(10))
    try:
        result = vty_command(path, "show bgp summary json", timeout=0.3)
    finally:
        hold.set()
    assert result.returncode == 124 and "timed out" in result.stderr and str(path) in result.stderr


def test_a_flooding_daemon_is_cut_off_at_the_limit(daemon, monkeypatch):
    monkeypatch.setattr(frr_vty, "OUTPUT_LIMIT", 100_000)
    path = daemon(lambda conn, _: [conn.sendall(b"y" * 65536) for _ in range(4)])
    result = vty_command(path, "show bgp summary json")
    assert result.returncode == 1 and "past" in result.stderr


def test_no_socket_and_a_second_line_are_failures_not_exceptions(tmp_path):
    missing = vty_command(tmp_path / "zebra.vty", "show version")
    assert missing.returncode == 1 and str(tmp_path / "zebra.vty") in missing.stderr
    injected = vty_command(tmp_path / "zebra.vty", "show version\nconfigure terminal")
    assert injected.returncode == 1 and "one line" in injected.stderr


def test_a_symlink_or_file_in_the_socket_s_place_is_not_followed(daemon, tmp_path):
    real = daemon(lambda conn, _: conn.sendall(b"answered\n\0\0\0\0"))
    link = tmp_path / "zebra.vty"
    link.symlink_to(real)
    refused = vty_command(link, "show version")
    assert refused.returncode == 1 and "not a socket" in refused.stderr
    planted = tmp_path / "bfdd.vty"
    planted.write_text("")
    assert "not a socket" in vty_command(planted, "show version").stderr
    assert vty_command(real, "show version").stdout == "answered\n"  # the real one still answers
