"""One command to one FRR daemon over its vty socket, as vtysh sends it, without a process.

vtysh writes the command line NUL-terminated to `<daemon>.vty` in FRR's run directory; the daemon
answers with the command's output followed by three NUL bytes and the command's return code
(lib/command.h CMD_SUCCESS 0, CMD_WARNING 1, CMD_ERR_NO_MATCH 2, ...). Reading a zone's 208 BGP
summaries through `nsenter vtysh` was 208 processes a poll; here each is one connection.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path

from netgen.lab.backend import ExecResult

END = b"\0\0\0"  # before the one-byte return code that ends every answer
OUTPUT_LIMIT = 64 << 20  # bytes an answer may take: a zone CTSW's BGP summary (220 neighbours) is 120 KB


def vty_command(path: Path, command: str, timeout: float = 30.0) -> ExecResult:
    """The daemon's answer to `command` (one line) as vtysh would give it: return code 0 and the
    output, or the command's non-zero return code; 124 when it does not answer within `timeout`
    seconds, 1 when the socket is missing or not a socket itself (never followed through a
    symlink), cannot be reached, closes early or answers past OUTPUT_LIMIT."""
    if "\n" in command or "\0" in command:
        return ExecResult(1, "", "a vty command is one line")
    deadline = time.monotonic() + timeout
    answer = bytearray()
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):  # a symlink or a file planted in its place
            return ExecResult(1, "", f"{path}: not a socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            sock.sendall(command.encode() + b"\0")
            while len(answer) < 4 or answer[-4:-1] != END:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                chunk = sock.recv(1 << 20)
                if not chunk:
                    return ExecResult(1, "", f"{path}: closed before its answer ended")
                answer += chunk
                if len(answer) > OUTPUT_LIMIT:
                    return ExecResult(1, "", f"{path}: answer past {OUTPUT_LIMIT >> 20} MiB")
    except TimeoutError:
        return ExecResult(124, "", f"timed out after {timeout:.0f} s: {command} ({path})")
    except OSError as exc:
        return ExecResult(1, "", f"{path}: {exc.strerror or exc}")
    return ExecResult(answer[-1], answer[:-4].decode(errors="replace"), "")
