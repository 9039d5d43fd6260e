"""Work done inside a lab namespace by a thread of this process, without a process per namespace.

setns(2) with CLONE_NEWNET moves only the calling thread; a thread made for the work enters the
namespace, does it and ends, so this process's own threads never leave home. A socket made there
stays in that namespace after the thread ends (rtnetlink reads routes through one).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

NETNS_DIR = Path("/run/netns")  # where `ip netns add` pins a namespace
CLONE_NEWNET = 0x40000000  # <sched.h>

T = TypeVar("T")
_LIBC = ctypes.CDLL(None, use_errno=True)  # this process's C library, for setns(2)


class NamespaceError(OSError):
    """A namespace that cannot be entered; the message names it."""


def in_namespace(namespace: str, work: Callable[[], T]) -> T:
    """`work()` run by a thread of this process that entered `namespace` (under NETNS_DIR) and
    nothing else; the thread ends with it, so this process's own threads never leave home."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            fd = os.open(NETNS_DIR / namespace, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            failure.append(NamespaceError(f"{namespace}: {exc.strerror}"))
            return
        try:
            if _LIBC.setns(fd, CLONE_NEWNET) != 0:
                failure.append(NamespaceError(f"{namespace}: entering it: {os.strerror(ctypes.get_errno())}"))
                return
        finally:
            os.close(fd)
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=run, name=f"netgen-in-{namespace}")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]
