"""Debian's real etcd (package etcd-server, 3.4) for the change lock's etcd store: one member on
loopback ports, its data in a temporary folder, stopped at the end of the session."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.slurm_controller import free_port

START_WAIT_S = 60.0  # a busy two-core machine may take a while to start it: the wait ends as soon as it answers


def prerequisites() -> str | None:
    return None if shutil.which("etcd") else "etcd not installed (Debian: etcd-server)"


@contextlib.contextmanager
def etcd_server() -> Iterator[str]:
    """The client URL of a fresh single-member etcd."""
    client, peer = free_port(), free_port()
    folder = Path(tempfile.mkdtemp(prefix="netgen-etcd-"))
    log = (folder / "etcd.log").open("wb")
    process = subprocess.Popen(
        ["etcd", "--name", "netgen-test", "--data-dir", str(folder / "data"),
         "--listen-client-urls", f"http://127.0.0.1:{client}", "--advertise-client-urls", f"http://127.0.0.1:{client}",
         "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"netgen-test=http://127.0.0.1:{peer}", "--log-level", "error"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{client}"
    try:
        deadline = time.monotonic() + START_WAIT_S
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"etcd did not start: {(folder / 'etcd.log').read_text()[-2000:]}")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
