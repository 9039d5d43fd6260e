"""A real Nautobot for the sot tier: Nautobot and its BGP models app from PyPI in their own venv
(tests/sot/service/setup.sh; `.ci/run` runs it), Debian's PostgreSQL and Redis, all private to
the test session on loopback ports (service/start.sh). The first start migrates a template
database (about 5 minutes here), kept under /var/tmp/netgen-nautobot per Nautobot version; later
starts clone it (seconds). Outside CI the tier skips, naming what is missing."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from glob import glob
from pathlib import Path
from typing import Any

import pytest

SERVICE = Path(__file__).parent / "service"
ROOT = Path(os.environ.get("NETGEN_NAUTOBOT_ROOT", "/var/tmp/netgen-nautobot"))  # postgres cannot enter /root
VENV = Path(os.environ.get("NB_VENV", ROOT / "venv"))


def missing() -> list[str]:
    found = []
    if not (VENV / "bin" / "nautobot-server").exists():
        found.append(f"Nautobot in {VENV} (tests/sot/service/setup.sh)")
    if not glob("/usr/lib/postgresql/*/bin/initdb"):
        found.append("PostgreSQL (apt-get install postgresql)")
    if not shutil.which("redis-server"):
        found.append("Redis (apt-get install redis-server)")
    if os.geteuid() != 0 and not shutil.which("runuser"):
        found.append("root, or PostgreSQL's own user")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class NautobotService:
    url: str
    token: str
    state: Path

    def get(self, path: str, **query: str) -> list[dict[str, Any]]:
        """Every result of a list endpoint, read straight from the API (never through netgen)."""
        page: str | None = f"{path}?{urllib.parse.urlencode({'limit': '1000', **query})}"
        results: list[dict[str, Any]] = []
        while page:
            data = self.call("GET", page)
            results += data["results"]
            page = data["next"]
        return results

    def call(self, method: str, path: str, body: object = None) -> Any:
        url = path if path.startswith("http") else self.url + path
        request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                         headers={"Authorization": f"Token {self.token}",
                                                  "Content-Type": "application/json", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            text = answer.read().decode()
        return json.loads(text) if text else None

    def reset(self) -> None:
        """Back to the freshly migrated database, the server still running."""
        subprocess.run(["bash", str(SERVICE / "reset.sh"), str(self.state)], check=True)


@pytest.fixture(scope="session")
def nautobot() -> Iterator[NautobotService]:
    # .ci/run installs and migrates in the background (service/prepare.sh, under this lock): wait for it
    ROOT.mkdir(parents=True, exist_ok=True)
    with (ROOT / "prepare.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_UN)
    problems = missing()
    if problems:
        pytest.skip("the sot tier needs " + "; ".join(problems))
    version = subprocess.run([str(VENV / "bin" / "python"), "-c",
                              "import importlib.metadata as m; print(m.version('nautobot'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    state = ROOT / f"nb-{version}"
    port = _free_port()
    env = {**os.environ, "NB_VENV": str(VENV), "NB_PG_PORT": str(_free_port()), "NB_REDIS_PORT": str(_free_port()),
           "NB_UWSGI_PROCESSES": "4"}  # Nautobot spends its time per object: netgen sends batches side by side
    started = subprocess.run(["bash", str(SERVICE / "start.sh"), str(state), str(port)], env=env,
                             capture_output=True, text=True, timeout=1800, check=False)
    if started.returncode != 0:
        subprocess.run(["bash", str(SERVICE / "stop.sh"), str(state)], check=False)
        pytest.fail(f"Nautobot did not start:\n{started.stderr[-3000:]}")
    try:
        yield NautobotService(f"http://127.0.0.1:{port}", started.stdout.strip().splitlines()[-1], state)
    finally:
        subprocess.run(["bash", str(SERVICE / "stop.sh"), str(state)], check=False)
