"""What the benchmarks share: how a command is run and measured (wall, CPU and peak RSS of it and
the processes it waits for), the pause before each measured command, dropping a folder's pages, and
meta-24k copied with a one-line change. Run by hand, as the scripts that import it."""

from __future__ import annotations

import copy
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
META = ROOT / "inventory" / "meta-24k"
NETGEN = [sys.executable, "-m", "netgen.cli"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.net", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.net"}
# Bytecode is written as on a user's machine (a wheel install compiles it): some sandboxes set
# PYTHONDONTWRITEBYTECODE, and every run would then compile netgen's changed modules again.
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **GIT_ENV}


@dataclass(frozen=True)
class Run:
    seconds: float  # wall
    peak_mb: float  # the largest of the command and the processes it waited for (its render workers)
    cpu_s: float  # user + system, the command's and its workers'


def run(*args: str, cwd: Path | None = None, out: Path | None = None) -> Run:
    """One command, which must succeed; its output into `out` (default: discarded)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err, open(out or os.devnull, "wb") as stdout:
        child = subprocess.Popen(list(args), stdout=stdout, stderr=err, cwd=cwd, env=ENV)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        if child.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(args)} failed ({child.returncode}): {err.read()[-2000:].decode()}")
    return Run(seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def settle() -> None:
    """Before each measured command: flush the file system and wait a second, so that what the
    previous command or the setup left to the kernel (the writeback of a cold render's 120 MB, a
    copied DIR's metadata, the detached removal of a swapped-out DIR) is not billed to the next
    command, as it is not to a user who edits the fabric between renders. Without it, back-to-back
    runs of "one more rack" measured 0.1 to 0.25 s more on this machine."""
    os.sync()
    time.sleep(1)


def drop_pages(folder: Path) -> None:
    """Every file under `folder` out of the page cache (see the module doc): its next read goes to
    the disk, as a file the kernel reclaimed."""
    os.sync()
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def median(times: list[float]) -> float:
    return statistics.median(times)


def measure(label: str, goal: float | None, runs: int, setup: Callable[[int], list[str]], cwd: Path | None = None,
            rss_goal: float | None = None, out: Path | None = None) -> list[Run]:
    """`goal`: seconds (None: a figure to compare with, no goal of its own)."""
    done = []
    for n in range(runs):
        command = setup(n)
        settle()
        done.append(run(*command, cwd=cwd, out=out))
    times, peaks = [r.seconds for r in done], [r.peak_mb for r in done]
    value = median(times)
    verdict = "no goal" if goal is None else f"goal <= {goal:g} s: {'met' if value <= goal else 'not met'}"
    rss = f"; peak RSS {max(peaks):.0f} MB" + (f" (goal <= {rss_goal:g} MB)" if rss_goal else "")
    print(f"{label:22} {value:7.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times)}; {verdict}{rss})", flush=True)
    return done


def copy_fabric(dest: Path, racks_delta: int = 0, cable_delta: int = 0, mtu: int | None = None) -> Path:
    """meta-24k's files in `dest`, zone 1 with `racks_delta` racks more and its RTSW-CTSW cables
    `cable_delta` metres longer, the fabric's MTU `mtu` (each a one-line change of the file)."""
    dest.mkdir(parents=True, exist_ok=True)
    for item in META.iterdir():
        if item.is_file():
            shutil.copy(item, dest / item.name)
    data = yaml.safe_load((META / "fabric.yaml").read_text())
    # zones share their nested sections through the file's YAML anchor: give zone 1 its own copies,
    # so that a change to it stays a change to zone 1 (as editing its line in the file would)
    data["zones"][0] = copy.deepcopy(data["zones"][0])
    data["zones"][0]["racks"] += racks_delta
    data["mtu"] = mtu or data["mtu"]
    if cable_delta:
        cables = data["zones"][0].setdefault("cable_length_m", {})
        cables["rtsw_ctsw_m"] = cables.get("rtsw_ctsw_m", 100) + cable_delta
    (dest / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest / "fabric.yaml"
